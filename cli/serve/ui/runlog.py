"""The runs the UI can show, each as one in-memory log of trace records.

A live run's log is filled from the trace writer (records arrive on the event loop in
``seq`` order, after they are on disk); a finished run's log is read from its
``trace.jsonl``. Either way one ``RecordLog`` per run is held, however many tabs watch
it: each tab keeps only its own cursor into it. Runs are named by their place under
the log root (``log_<stamp>~turn_1~attempt_1``), and a name is only ever resolved
inside that root, so no request can open a file elsewhere: a ``trace.jsonl`` that is a
symlink is never opened (it could name any file the server can read).

Traces on disk are input like any other: a line that is not a trace record (bad JSON,
bad UTF-8, ``[1]``, a record without its fields) is skipped, and a run whose first
line is not its ``RunStarted`` is listed as "unreadable", never an error of the list.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import json
import os
import re
import warnings
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TypeGuard

from massgen import ATTEMPT_GLOB, TRACE_FILE, TraceError, escape_value, messages, read_trace

_RUN_ID = re.compile(r"^log_[A-Za-z0-9_]+~turn_\d+~attempt_\d+$")
_KEEP_FINISHED = 8  # finished runs' logs kept in memory for tabs that come back to them


class RecordLog:
    """An append-only list of trace records, with a way to wait for the next one."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self._seqs: list[int] = []
        self.finished = False
        self._changed = asyncio.Event()

    def append(self, record: dict[str, Any]) -> None:
        if self.finished or (self._seqs and record["seq"] <= self._seqs[-1]):
            return
        self.records.append(record)
        self._seqs.append(int(record["seq"]))
        self._wake()

    def finish(self) -> None:
        self.finished = True
        self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def index_after(self, seq: int) -> int:
        """Cursor of the first record with a ``seq`` above ``seq`` (resuming from Last-Event-ID)."""
        return bisect.bisect_right(self._seqs, seq)

    async def wait(self, timeout: float) -> None:
        """Until something is appended or the log finishes, or ``timeout`` passes."""
        changed = self._changed
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(changed.wait(), timeout)

    @classmethod
    def from_file(cls, path: Path) -> RecordLog:
        log = cls()
        # The one reader: references to earlier records come back whole; a bad line is left out, unsaid.
        with contextlib.suppress(TraceError), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for record in read_trace(path):
                if well_formed(record):
                    log.append(record)
        log.finished = True
        return log


def parse_record(line: bytes) -> dict[str, Any] | None:
    """One trace line as a record the page and the stream can rely on, or None for anything else."""
    try:
        record = json.loads(line)
    except ValueError:  # bad JSON or bad UTF-8
        return None
    # A trace written before text was escaped where it entered may hold lone surrogates (as JSON
    # escapes), which no UTF-8 response can carry: they are escaped here, as every reader does.
    return escape_value(record, "") if well_formed(record) else None


def well_formed(record: object) -> TypeGuard[dict[str, Any]]:
    """A record with the envelope the page and the stream rely on (a positive seq, names, a payload)."""
    if not isinstance(record, dict):
        return False
    seq = record.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        return False
    if not all(isinstance(record.get(name), str) for name in ("type", "kind", "sender")):
        return False
    return isinstance(record.get("payload"), dict)


def open_trace(path: Path) -> BinaryIO:
    """Open a trace for reading, refusing a symlink (O_NOFOLLOW: no window between a check and the open)."""
    return os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)), "rb")


def trace_in(directory: Path) -> Path | None:
    """``directory``'s trace, if it is a regular file (not a symlink to one elsewhere)."""
    trace = directory / TRACE_FILE
    return trace if trace.is_file() and not trace.is_symlink() else None


def run_id_of(root: Path, log_dir: Path) -> str | None:
    """``log_<stamp>~turn_N~attempt_M`` for a log directory under ``root``, else None."""
    try:
        relative = log_dir.resolve().relative_to(root)
    except ValueError:
        return None
    name = "~".join(relative.parts)
    return name if _RUN_ID.match(name) else None


@dataclass
class RunIndex:
    """Run ids -> logs, for live runs (held while they run) and runs on disk under ``root``."""

    root: Path
    live: dict[str, RecordLog] = field(default_factory=dict)
    _finished: OrderedDict[str, RecordLog] = field(default_factory=OrderedDict)

    def directory(self, run_id: str) -> Path | None:
        """The run's directory, only if the id is well formed and it lies inside the root."""
        if not _RUN_ID.match(run_id):
            return None
        path = (self.root / Path(*run_id.split("~"))).resolve()
        if not path.is_relative_to(self.root) or trace_in(path) is None:
            return None
        return path

    def log(self, run_id: str) -> RecordLog | None:
        if run_id in self.live:
            return self.live[run_id]
        if run_id in self._finished:
            self._finished.move_to_end(run_id)
            return self._finished[run_id]
        path = self.directory(run_id)
        if path is None:
            return None
        log = RecordLog.from_file(path / TRACE_FILE)
        self._finished[run_id] = log
        while len(self._finished) > _KEEP_FINISHED:
            self._finished.popitem(last=False)
        return log

    def retire(self, run_id: str) -> None:
        """A live run ended: keep its (complete) log among the finished ones."""
        log = self.live.pop(run_id, None)
        if log is not None:
            log.finish()
            self._finished[run_id] = log
            while len(self._finished) > _KEEP_FINISHED:
                self._finished.popitem(last=False)

    def on_disk(self, limit: int = 200) -> Iterator[tuple[str, Path]]:
        """(id, directory) of the newest runs under the root, newest first."""
        if not self.root.is_dir():
            return
        found = sorted(self.root.glob(f"{ATTEMPT_GLOB}/{TRACE_FILE}"), reverse=True)
        for trace in found[:limit]:
            run_id = run_id_of(self.root, trace.parent)
            if run_id is not None and trace_in(trace.parent) is not None:
                yield run_id, trace.parent


def summary(run_id: str, log_dir: Path, live: bool) -> dict[str, Any]:
    """What the run list shows, from the first and the last lines of the trace."""
    first, finished = _ends(log_dir / TRACE_FILE)
    started = first is not None and messages.message_class(first) is messages.RunStarted
    payload = first["payload"] if first is not None and started else {}
    end = finished["payload"] if finished is not None else {}
    agents = payload.get("agents")
    question = payload.get("question")
    if live:
        status = "running"
    elif not started:
        status = "unreadable"  # its first line is not a RunStarted record: shown, never opened as a run
    else:
        status = str(end.get("status", "incomplete"))
    return {
        "id": run_id, "live": live, "question": question if isinstance(question, str) else "",
        "agents": [a for a in agents if isinstance(a, str)] if isinstance(agents, list) else [],
        "started_ts": first.get("ts") if first is not None else None,
        "status": status, "partial": end.get("partial"), "winner_label": end.get("winner_label"),
    }


# The JSON text a RunFinished record's line holds: lines without it are not parsed.
_FINISHED_TAG = json.dumps(messages.RunFinished.__name__).encode()


def _ends(trace: Path) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The trace's first record and its last ``RunFinished`` (searched in the last MiB), if well formed."""
    first: dict[str, Any] | None = None
    finished: dict[str, Any] | None = None
    with contextlib.suppress(OSError), open_trace(trace) as handle:
        first = parse_record(handle.readline())
        handle.seek(0, 2)
        size = handle.tell()
        handle.seek(max(0, size - 1_048_576))
        for line in reversed(handle.read().splitlines()):
            if _FINISHED_TAG in line:
                record = parse_record(line)
                if record is not None and messages.message_class(record) is messages.RunFinished:
                    finished = record
                    break
    return first, finished
