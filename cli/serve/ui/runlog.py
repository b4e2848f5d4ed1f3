"""The runs the UI can show, each as one in-memory log of trace records.

A live run's log is filled from the trace writer (records arrive on the event loop in
``seq`` order, after they are on disk); a finished run's log is read from its
``trace.jsonl``. Either way one ``RecordLog`` per run is held, however many tabs watch
it: each tab keeps only its own cursor into it. Runs are named by their place under
the log root (``log_<stamp>~turn_1~attempt_1``), and a name is only ever resolved
inside that root, so no request can open a file elsewhere.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import json
import re
import warnings
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from massgen import ATTEMPT_GLOB, TRACE_FILE, TraceError, read_trace

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
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    log.append(record)
        log.finished = True
        return log


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
        if not path.is_relative_to(self.root) or not (path / TRACE_FILE).is_file():
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
            if run_id is not None:
                yield run_id, trace.parent


def summary(run_id: str, log_dir: Path, live: bool) -> dict[str, Any]:
    """What the run list shows, from the first and the last lines of the trace."""
    first, finished = _ends(log_dir / TRACE_FILE)
    payload = first.get("payload", {}) if first.get("type") == "RunStarted" else {}
    end = finished.get("payload", {}) if finished.get("type") == "RunFinished" else {}
    return {
        "id": run_id, "live": live, "question": payload.get("question", ""),
        "agents": list(payload.get("agents", [])), "started_ts": first.get("ts"),
        "status": "running" if live else end.get("status", "incomplete"),
        "partial": end.get("partial"), "winner_label": end.get("winner_label"),
    }


def _ends(trace: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    first: dict[str, Any] = {}
    finished: dict[str, Any] = {}
    with contextlib.suppress(OSError, ValueError), open(trace, "rb") as handle:
        first = json.loads(handle.readline() or b"{}")
        handle.seek(0, 2)
        size = handle.tell()
        handle.seek(max(0, size - 1_048_576))
        for line in reversed(handle.read().splitlines()):
            if b'"RunFinished"' in line:
                with contextlib.suppress(ValueError):
                    finished = json.loads(line)
                    break
    return first, finished
