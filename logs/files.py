"""Writing the derived log files, live and from a trace read back from disk."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

from massgen.logs.paths import path_part
from massgen.logs.projection import LogProjection

TRACE_FILE = "trace.jsonl"


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` in one step, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        # Text that is not valid Unicode (lone surrogates) is written escaped, never refused.
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def render_status(projection: LogProjection) -> str:
    return _json(projection.status())


def render_all(projection: LogProjection) -> dict[str, str]:
    """Every derived file as relative path -> text."""
    files = {
        "coordination_events.json": _json(projection.events),
        "vote.json": _json(projection.vote_file()),
        "status.json": render_status(projection),
        "execution_metadata.yaml": yaml.safe_dump(projection.metadata(), sort_keys=False, allow_unicode=True),
    }
    for agent_id, text in projection.agent_outputs().items():
        files[f"agent_outputs/{path_part(agent_id)}.txt"] = text
    finished = projection.finished or {}
    if finished.get("final_answer") is not None:
        owner = finished.get("winner") or "best_so_far"
        files[f"final/{path_part(owner)}/answer.txt"] = str(finished["final_answer"]).rstrip("\n") + "\n"
    return files


def write_all(log_dir: Path, projection: LogProjection) -> None:
    for relative, text in render_all(projection).items():
        write_atomic(log_dir / relative, text)


def read_trace(log_dir: Path) -> list[dict[str, Any]]:
    """Records of ``trace.jsonl``; a torn last line (a crash mid-write) is skipped."""
    records: list[dict[str, Any]] = []
    with open(log_dir / TRACE_FILE, encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                break
    return records


def rebuild_from_trace(log_dir: Path, out_dir: Path | None = None) -> dict[str, str]:
    """Recompute every derived file from ``trace.jsonl`` alone; write them to ``out_dir`` if given."""
    projection = LogProjection()
    for record in read_trace(log_dir):
        projection.apply(record)
    files = render_all(projection)
    if out_dir is not None:
        for relative, text in files.items():
            write_atomic(out_dir / relative, text)
    return files
