"""Reading ``trace.jsonl`` back, whatever a crash or a disk did to it.

A process killed mid-write leaves a last line cut anywhere, even inside a multibyte
character; that line is the only one that can be torn, and it is dropped. Any other
line that is not a record (bad bytes, bad JSON, missing fields) is skipped and named,
because silently dropping it, or everything after it, would lose work without a word.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from massgen.logs.layout import TRACE_FILE, newest_attempt
from massgen.logs.question_ref import QuestionRef
from massgen.messages.text import escape_value
from massgen.messages.trace_refs import TraceDecoder, TraceReferenceError
from massgen.outcome.errors import TraceError

_REQUIRED = ("seq", "ts", "kind", "type", "payload")


class TraceReadError(TraceError):
    """A trace that cannot be read at all (missing or unreadable file)."""


@dataclass(frozen=True)
class TraceRead:
    records: list[dict[str, Any]]
    # "line N: why" for each line in the middle that was not a record.
    skipped: list[str] = field(default_factory=list)
    # Bytes of a last line cut off mid-write (0 if the file ends cleanly).
    torn_bytes: int = 0

    def notes(self) -> list[str]:
        """What was left out, in words a user can act on; empty when nothing was."""
        notes = [f"skipped {item}" for item in self.skipped]
        if self.torn_bytes:
            notes.append(f"ignored the last line, cut off mid-write ({self.torn_bytes} bytes)")
        return notes


_WHAT = "give the run's LOG_DIR (log_<stamp>), one of its turn_N or attempt directories, or a trace.jsonl"


def trace_path(path: str | os.PathLike[str]) -> Path:
    """The trace a path names: what a log directory is, for every reader of a trace (``read_trace``,
    ``rebuild_from_trace``, ``resume_point``). ``path`` is a ``trace.jsonl``, an attempt
    directory holding one, or a run's ``log_<stamp>`` root (upstream's LOG_DIR) or ``turn_N`` folder: then the
    trace of its newest attempt. Anything else is a ``TraceReadError`` naming ``path``: a file of another name
    (a config given by mistake, whose folder's trace would have been read instead), a folder with no trace."""
    if not isinstance(path, str | os.PathLike):
        raise TraceReadError(f"a trace is named by a path, not {type(path).__name__}; {_WHAT}")
    path = Path(path)
    try:
        return _trace_in(path)
    except OSError as exc:  # a folder that may not be listed or looked into
        raise TraceReadError(f"{path}: cannot read the trace ({exc.strerror or exc})") from exc


def _trace_in(path: Path) -> Path:
    if path.is_file():
        if path.name != TRACE_FILE:
            raise TraceReadError(f"{path}: is a file, not a run's log directory; {_WHAT}")
        return path
    if not path.is_dir():
        path.stat()  # the OSError that says why (no such file, ...), turned into a TraceReadError above
        raise TraceReadError(f"{path}: is not a file or a directory; {_WHAT}")  # a FIFO, a device
    if (path / TRACE_FILE).is_file():
        return path / TRACE_FILE
    attempt = newest_attempt(path)
    if attempt is None:
        raise TraceReadError(f"{path}: no {TRACE_FILE} here; {_WHAT}")
    return attempt / TRACE_FILE


def _problem(raw: bytes, question: QuestionRef | None = None) -> tuple[dict[str, Any] | None, str]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 ({exc.reason} at byte {exc.start})"
    if question is not None:
        text = question.expand(text)
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"not JSON ({exc.msg} at column {exc.colno})"
    except RecursionError:  # no record of ours nests anywhere near the interpreter's limit
        return None, "nested too deeply to be a trace record"
    if not isinstance(record, dict):
        return None, "not a JSON object"
    missing = [key for key in _REQUIRED if key not in record]
    if missing:
        return None, f"missing {', '.join(missing)}"
    if not isinstance(record["payload"], dict):
        return None, "payload is not an object"
    seq = record["seq"]
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        return None, f"seq is not a whole number above 0 ({str(seq)[:40]!r})"
    if not isinstance(record["type"], str) or not isinstance(record["kind"], str):
        return None, "type or kind is not a string"
    return record, ""


def read_trace_file(path: str | os.PathLike[str]) -> TraceRead:
    """Every readable record of a trace (any path ``trace_path`` takes), and what was not."""
    file = trace_path(path)
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise TraceReadError(f"{file}: cannot read the trace ({exc.strerror or exc})") from exc
    lines = data.split(b"\n")
    records: list[dict[str, Any]] = []
    skipped: list[str] = []
    torn = 0
    question: QuestionRef | None = None  # a large question's reference, from the first record
    decoder = TraceDecoder()  # references to earlier records (trace format 2) are read back whole
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        record, why = _problem(raw, question)
        if record is not None:
            if not records:
                question = QuestionRef.of(record)
            try:
                record["payload"] = decoder.decode(record["seq"], record["type"], record["payload"])
            except TraceReferenceError as exc:
                skipped.append(f"line {number}: {exc}")
                continue
            # A trace written before text was escaped where it entered may hold lone surrogates
            # or NUL (JSON escapes keep them): readers get them escaped, as new traces hold them.
            records.append(escape_value(record, ""))
        elif number == len(lines):  # no newline after it: the write was cut off
            torn = len(raw)
        else:
            skipped.append(f"line {number}: {why}")
    return TraceRead(records=records, skipped=skipped, torn_bytes=torn)
