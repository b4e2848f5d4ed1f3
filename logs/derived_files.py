"""Writing the derived log files, live and from a trace read back from disk."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import warnings
from pathlib import Path
from typing import Any

import yaml

from massgen.logs import layout
from massgen.logs.layout import TRACE_FILE
from massgen.logs.projection import LogProjection
from massgen.logs.reading import TraceReadError, read_trace_file, trace_path
from massgen.logs.run_lock import run_holder
from massgen.logs.status_text import StatusText, status_text

__all__ = ["TRACE_FILE", "StatusText", "TraceWarning", "link_run_status", "publish_turn_final", "read_trace",
           "rebuild_from_trace", "render_all", "render_status", "write_all", "write_atomic"]


class TraceWarning(UserWarning):
    """Lines of a trace were skipped while reading it; the message names them."""


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` in one step, so a reader never sees half a file. The file gets the mode any file the
    run writes gets (0666 less the umask, as ``trace.jsonl``), not ``mkstemp``'s 0600."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        # Text that is not valid Unicode (lone surrogates) is written escaped, never refused.
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# libyaml's emitter where PyYAML has it (the same text, ~2.5x faster): metadata.yaml holds the whole
# config, and is written when RunFinished is, before any subscriber (a screen) sees the run end.
_YAML_DUMPER = yaml.CSafeDumper if yaml.__with_libyaml__ else yaml.SafeDumper


def _json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def render_status(projection: LogProjection, text: StatusText | None = None) -> str:
    """This version's status, then upstream MassGen's keys (logs/upstream_status.py) for its scripts;
    ``text`` keeps the unchanged agents' parts from its last render of this projection (the live writer's)."""
    return status_text(projection) if text is None else text.render(projection)


def _yaml(data: object) -> str:
    """YAML of ``data``; libyaml's emitter is several times faster, but refuses lone surrogates
    (any text a model or a user sends may hold them), which the Python emitter escapes."""
    try:
        return yaml.dump(data, Dumper=_YAML_DUMPER, sort_keys=False, allow_unicode=True)
    except UnicodeEncodeError:
        return yaml.dump(data, Dumper=yaml.SafeDumper, sort_keys=False, allow_unicode=True)


def render_all(projection: LogProjection, status: StatusText | None = None) -> dict[str, str]:
    """Every derived file as relative path -> text (``status``: as for ``render_status``)."""
    files = {
        layout.EVENTS_FILE: _json(projection.events),
        layout.VOTE_FILE: _json(projection.vote_file()),
        layout.STATUS_FILE: render_status(projection, status),
        layout.METADATA_FILE: _yaml(projection.metadata()),
    }
    for agent_id, text in projection.agent_outputs().items():
        files[layout.agent_output_name(agent_id)] = text
    finished = projection.finished or {}
    if finished.get("final_answer") is not None:
        files[layout.final_answer_name(finished.get("winner"))] = str(finished["final_answer"]).rstrip("\n") + "\n"
    return files


def write_all(log_dir: Path, projection: LogProjection, status: StatusText | None = None) -> None:
    files = render_all(projection, status)
    for relative, text in files.items():
        write_atomic(log_dir / relative, text)
    publish_turn_final(log_dir, files)


def link_run_status(log_dir: Path) -> None:
    """``<log_<stamp>>/status.json``: a link to this attempt's live ``status.json``, so ``$LOG_DIR/status.json``
    (upstream's LOG_DIR is the run root) is the live status, as upstream's skills and review_watcher.sh read
    it; upstream itself writes status.json only in the attempt. Relinked by each new turn or attempt;
    nothing when the log directory is not in the ``turn_N/attempt_M`` layout or links cannot be made."""
    turn = layout.turn_dir_of(log_dir)
    if turn is None:
        return
    root = turn.parent
    staging = root / f".{layout.STATUS_FILE}.{os.getpid()}.link"
    try:
        staging.unlink(missing_ok=True)
        staging.symlink_to(Path(turn.name) / log_dir.name / layout.STATUS_FILE)
        os.replace(staging, root / layout.STATUS_FILE)
    except OSError:
        staging.unlink(missing_ok=True)  # a file system without links: the attempt's STATUS path still works


def publish_turn_final(log_dir: Path, files: dict[str, str]) -> None:
    """Copy the attempt's ``final/`` to ``turn_N/final/``, replacing an older attempt's, as upstream MassGen
    does after each run: its ``ANSWER:`` line and scripts read the turn-level copy. Written with the
    attempt's files, so it is a copy of them; nothing when the attempt has no final answer yet or the
    log directory is not in the ``turn_N/attempt_M`` layout."""
    turn = layout.turn_dir_of(log_dir)
    finals = {relative: text for relative, text in files.items() if relative.startswith(f"{layout.FINAL_DIR}/")}
    if turn is None or not finals:
        return
    shutil.rmtree(turn / layout.FINAL_DIR, ignore_errors=True)
    for relative, text in finals.items():
        write_atomic(turn / relative, text)


def read_trace(log_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Records of a trace (any path ``trace_path`` takes: a run's LOG_DIR, a turn, an attempt, a
    ``trace.jsonl``). A torn last line (a crash mid-write) is dropped; a bad line in the middle is skipped
    with a ``TraceWarning``."""
    trace = trace_path(log_dir)
    read = read_trace_file(trace)
    if read.skipped:
        warnings.warn(f"{trace}: {'; '.join(read.skipped)}", TraceWarning, stacklevel=2)
    return read.records


def rebuild_from_trace(
    log_dir: str | os.PathLike[str], out_dir: str | os.PathLike[str] | None = None, *, write: bool = True
) -> dict[str, str]:
    """Recompute every derived file from the trace alone (any path ``trace_path`` takes), as relative
    path -> text.

    The files are written into the trace's log directory (or ``out_dir``), unless ``write=False``. A trace
    with no readable ``RunStarted`` (empty, damaged, not a trace) holds no run: a ``TraceReadError`` naming
    it, and nothing is written (an empty run written over a run's files would lose them). So is a run that
    is still going (its process holds the run's lock, ``logs/run_lock.py``) when the files would go into its
    own folder: the live writer writes them, and a rebuild from the trace as it was a moment ago would
    write an older state over its last ones. ``out_dir`` elsewhere, or ``write=False``, reads it as it is.
    """
    trace = trace_path(log_dir)
    target = Path(out_dir) if out_dir is not None else trace.parent
    if write and _same_folder(target, trace.parent):
        holder = run_holder(layout.run_root_of(trace.parent))
        if holder is not None:
            who = f"process {holder}" if holder else "another process"
            raise TraceReadError(f"{trace.parent}: the run is still going in {who}, which writes these files "
                                 "itself; a rebuild now would write an older state over them. Wait for the run "
                                 "to end, or give out_dir (another folder) or write=False")
    projection = LogProjection()
    for record in read_trace(trace):
        projection.apply(record)
    if projection.started is None:
        raise TraceReadError(f"{trace}: the trace has no RunStarted record, so there is no run to rebuild; "
                             "the files beside it are left as they are")
    files = render_all(projection)
    if write:
        for relative, text in files.items():
            write_atomic(target / relative, text)
    return files


def _same_folder(one: Path, other: Path) -> bool:
    try:
        return one.resolve() == other.resolve()
    except OSError:
        return False
