"""Reading ``trace.jsonl`` back, whatever a crash or a disk did to it.

A process killed mid-write leaves a last line cut anywhere, even inside a multibyte
character; that line is the only one that can be torn, and it is dropped. Any other
line that is not a record (bad bytes, bad JSON, missing fields) is skipped and named,
because silently dropping it, or everything after it, would lose work without a word.
"""

from __future__ import annotations

import bisect
import itertools
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from massgen.logs.layout import TRACE_FILE, newest_attempt
from massgen.logs.question_ref import QuestionRef
from massgen.messages import RunStarted, message_class
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
    """Every readable record of a trace (any path ``trace_path`` takes), and what was not.

    The writer numbers one trace's records 1, 2, 3, ... (each attempt has its own trace), so a record whose
    ``seq`` is not above the one before it was repeated or moved by something else (a copy, an edit): it is
    skipped and named, never read as a second answer. A trace whose ``RunStarted`` names a format newer than
    this massgen reads is a ``TraceReadError`` with that reason: its records would be misread."""
    file = trace_path(path)
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise TraceReadError(f"{file}: cannot read the trace ({exc.strerror or exc})") from exc
    lines = data.split(b"\n")
    parsed: list[tuple[int, dict[str, Any]]] = []  # (line number, record)
    skipped: dict[int, str] = {}  # line number -> why
    torn = 0
    question: QuestionRef | None = None  # a large question's reference, from the first record
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        record, why = _problem(raw, question)
        if record is not None:
            if not parsed:
                question = QuestionRef.of(record)
            parsed.append((number, record))
        elif number == len(lines):  # no newline after it: the write was cut off
            torn = len(raw)
        else:
            skipped[number] = why
    out_of_order = _out_of_order([record["seq"] for _, record in parsed])
    records: list[dict[str, Any]] = []
    decoder = TraceDecoder()  # references to earlier records (trace format 2) are read back whole
    previous = 0
    for index, (number, record) in enumerate(parsed):
        if index in out_of_order:
            skipped[number] = (f"seq {record['seq']} out of order (the record kept before it has seq "
                               f"{previous}): a repeated or misplaced record")
            continue
        previous = record["seq"]
        try:
            record["payload"] = decoder.decode(record["seq"], record["type"], record["payload"])
        except TraceReferenceError as exc:
            if message_class(record) is RunStarted:  # the format: nothing after it can be read as meant
                raise TraceReadError(f"{file}: {exc}; read it with the massgen that wrote it, or a newer one") from exc
            skipped[number] = str(exc)
            continue
        # A trace written before text was escaped where it entered may hold lone surrogates
        # or NUL (JSON escapes keep them): readers get them escaped, as new traces hold them.
        records.append(escape_value(record, ""))
    return TraceRead(records=records, skipped=[f"line {n}: {why}" for n, why in sorted(skipped.items())],
                     torn_bytes=torn)


def _out_of_order(seqs: list[int]) -> set[int]:
    """Indices of the records left out so that the rest have strictly increasing ``seq``: as few as can be
    (the longest increasing run is kept), the earlier of two equal ones kept. A written trace has none: its
    seqs only grow, so this is one comparison per record. A single stray record (a repeated line, a seq set
    to 1, or to a million) costs only itself, never the records after it."""
    if all(a < b for a, b in itertools.pairwise(seqs)):
        return set()
    # length[i]: the longest strictly increasing run of seqs that starts at i (found from the end).
    length = [0] * len(seqs)
    tails: list[int] = []  # tails[k]: the least -seq that ends a run of k + 1 seen from the end
    for i in range(len(seqs) - 1, -1, -1):
        at = bisect.bisect_left(tails, -seqs[i])
        if at == len(tails):
            tails.append(-seqs[i])
        else:
            tails[at] = -seqs[i]
        length[i] = at + 1
    kept: set[int] = set()
    need, last = max(length, default=0), 0
    for i, seq in enumerate(seqs):  # the earliest record that still leaves a longest run, each time
        if need and seq > last and length[i] == need:
            kept.add(i)
            need, last = need - 1, seq
    return set(range(len(seqs))) - kept
