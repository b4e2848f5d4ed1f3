"""The single writer of ``trace.jsonl``, and the live projection of it.

One writer gives the trace a strictly increasing ``seq`` without locks. Records are
written in batches: each is encoded and written as it comes, and the file is flushed once
its mailbox holds no more records (or a batch is ``_BATCH_RECORDS`` long or ``_BATCH_S``
old), so a crash loses at most the unflushed batch, none of it yet shown. Observers (progress
display, status file, stream API) see records only after that flush, in ``seq`` order: one
flush per record cost the writer a system call and a GIL hand-off each, and with 64 agents
it fell seconds behind them. ``RunFinished`` is handed to observers before the derived files
(``logs/*``) are written; a ``Flush`` answers only after them.
``status.json`` is rewritten at most every 0.25 s, and a record that arrives sooner is
written by a trailing write when that time is up, so the file is never staler than that. A
write costs what the status holds (its size grows with the team), so the next one waits at
least ``_STATUS_SHARE`` inverse times the CPU the last took: writing status stays a bounded
share of the run, and its total cost grows with the run, not with team x time (issue 51).
A small team's write takes a millisecond, so its file stays 0.25 s fresh.
Records after ``RunFinished`` (late dead letters) rewrite every file, as a rebuild would.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, assert_never, cast

import pykka

from massgen.actors.runtime.dispatcher import Dispatcher
from massgen.actors.runtime.mailbox import DispatchedActor
from massgen.logs import LogProjection, write_all, write_atomic
from massgen.logs.derived_files import TRACE_FILE, StatusText, link_run_status, render_status
from massgen.logs.layout import STATUS_FILE
from massgen.logs.question_ref import QuestionRef
from massgen.messages import DeadLetter, Message, Sender
from massgen.messages.protocols import TraceWriterInbox, members
from massgen.messages.trace import TraceRecord, to_record
from massgen.messages.trace_refs import TraceEncoder
from massgen.messages.trace_writer_inbox import Flush, WriteRecord, WriteStatus

_ACCEPTS = members(TraceWriterInbox)
_ME = Sender(name="trace_writer", incarnation=1)

class WriteFailure:
    """The first write of the run's logs that failed, said in the run's result: which file, and the system's
    words (``No space left on device``), not only that the trace could not be written. Set on the writer's
    thread, read by the handle once the writer is dead."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.path: Path | None = None
        self.why = ""

    def record(self, path: Path, error: OSError) -> None:
        with self._lock:
            if self.path is None:  # the first failure is the cause; the ones after it follow from it
                self.path = Path(error.filename) if isinstance(error.filename, str) else path
                self.why = error.strerror or str(error) or type(error).__name__

    def reason(self) -> str:
        """How a run ends whose logs could not be written, naming the cause and the file when known."""
        with self._lock:
            if self.path is None:
                return "the trace could not be written"
            what = "the trace" if self.path.name == TRACE_FILE else "the run's log file"
            return f"{what} could not be written: {self.why} ({self.path})"


# A subscriber gets each record typed, holding the message it was written from (TraceRecord also
# reads as the written dict, for subscribers written against it).
Subscriber = Callable[[TraceRecord, LogProjection], None]

# Live status.json is rewritten at most this often, at most this late, and always at the end.
_STATUS_EVERY_S = 0.25
# ... and, when a write costs more, spaced so that writing it takes at most this share of the writer's time.
_STATUS_SHARE = 0.1
# A batch is flushed and shown when the mailbox has no more records, or at this length or age.
_BATCH_RECORDS = 512
_BATCH_S = 0.05


class TraceWriter(DispatchedActor):
    def __init__(self, log_dir: Path, subscribers: list[Subscriber] | None = None,
                 failure: WriteFailure | None = None, dispatcher: Dispatcher | None = None) -> None:
        super().__init__()
        # The run's (Team passes it); a writer started alone has threads of its own, which end when idle.
        self._threads = dispatcher or Dispatcher("trace")
        self.log_dir = log_dir
        self.failure = failure or WriteFailure()
        self.projection = LogProjection()
        self._status = StatusText()  # each write re-encodes only the agents that changed since the last
        self.subscribers = list(subscribers or [])
        self._seq = 0
        self._run_id = ""  # of the records written so far, for the writer's own dead letters
        self._question: QuestionRef | None = None  # a large question: written once (logs/question_ref.py)
        self._file: IO[str] | None = None
        # The file holds references (format 2); the projection and the subscribers get records whole (a
        # reader of the file gets the same from TraceDecoder), and the projection the message itself.
        self._encoder = TraceEncoder()
        self._last_status_at = float("-inf")
        self._status_every = _STATUS_EVERY_S  # until the next write: the last one's CPU / _STATUS_SHARE, or more
        self._trailing: threading.Timer | None = None
        self._unflushed: list[TraceRecord] = []  # written, not yet flushed nor shown
        self._batch_started = 0.0
        self.closed = threading.Event()

    @contextlib.contextmanager
    def _writing(self, path: Path) -> Iterator[None]:
        """An ``OSError`` writing ``path`` (or the file the error names) is recorded in ``failure``, then raised:
        the writer stops, and the run's result says why."""
        try:
            yield
        except OSError as exc:
            self.failure.record(path, exc)
            raise

    def _dispatcher(self) -> Dispatcher:
        return self._threads

    def on_start(self) -> None:
        with self._writing(self.log_dir / TRACE_FILE):
            self.log_dir.mkdir(parents=True, exist_ok=True)
            self._file = open(self.log_dir / TRACE_FILE, "a", encoding="utf-8")  # noqa: SIM115
        link_run_status(self.log_dir)

    def on_stop(self) -> None:
        self._close()

    def on_failure(self, *args: Any) -> None:
        self._close()

    def _close(self) -> None:
        if self._trailing is not None:
            self._trailing.cancel()
        try:
            if self._file is not None:
                self._publish()  # what was written is shown, and the derived files follow it
        except OSError:
            pass  # recorded in self.failure (a full disk fails again here): the file is closed all the same
        finally:
            file, self._file = self._file, None
            try:
                if file is not None:
                    file.close()  # closes the descriptor even when its last flush fails
            except OSError:
                pass
            finally:
                self.closed.set()

    def on_receive(self, message: Any) -> Any:
        if not isinstance(message, _ACCEPTS):
            self._dead_letter(message)
            self._publish()
            return None
        if not isinstance(message, WriteRecord):
            self._publish()  # a flush, a status write: after every earlier record is on disk and shown
            return self.handle(cast(TraceWriterInbox, message))
        self.handle(message)
        if (len(self._unflushed) >= _BATCH_RECORDS or self.actor_inbox.empty()
                or time.monotonic() - self._batch_started >= _BATCH_S):
            self._publish()
        return None

    def handle(self, message: TraceWriterInbox) -> int | None:
        match message:
            case WriteRecord(kind=kind, message=msg, to=to, extra=extra):
                self._write(kind, to, msg, extra)
                return None
            case Flush():
                return self._seq
            case WriteStatus():  # the trailing write
                self._trailing = None
                if self._file is not None and self.projection.finished is None:
                    self._write_status()
                return None
            case _ as unreachable:
                assert_never(unreachable)

    def _dead_letter(self, message: object) -> None:
        """Outside the writer's protocol: written as a dead letter into the trace itself."""
        text = repr(message)
        letter = DeadLetter(run_id=self._run_id, sender=_ME, original_type=type(message).__name__,
                            original_sender=str(message.sender) if isinstance(message, Message) else "",
                            to=str(_ME), why="outside the protocol of the trace writer",
                            summary=text if len(text) <= 160 else text[:160] + "...")
        self._write("event", "", letter, {})

    def _write_status(self) -> None:
        self._last_status_at = time.monotonic()
        spent = time.thread_time()
        status = self.log_dir / STATUS_FILE
        with self._writing(status):
            write_atomic(status, render_status(self.projection, self._status))
        self._status_every = max(_STATUS_EVERY_S, (time.thread_time() - spent) / _STATUS_SHARE)

    def _ask_status(self) -> None:
        try:
            self.actor_ref.tell(WriteStatus())
        except pykka.ActorDeadError:
            pass

    def _write(self, kind: str, to: str, msg: Message, extra: dict[str, Any]) -> None:
        if self._file is None:
            return
        self._seq += 1
        self._run_id = msg.run_id
        record = to_record(self._seq, kind, to, msg, extra)
        written = {**record, "payload": self._encoder.encode(self._seq, record["type"], record["payload"])}
        line = json.dumps(written, ensure_ascii=False, default=str)
        if self._seq == 1:
            self._question = QuestionRef.of(record)
        elif self._question is not None:
            line = self._question.shorten(line)
        with self._writing(self.log_dir / TRACE_FILE):
            try:
                self._file.write(line + "\n")
            except UnicodeEncodeError:  # lone surrogates: JSON's \uXXXX escapes keep them, losslessly
                line = json.dumps(written, ensure_ascii=True, default=str)
                self._file.write((self._question.shorten(line) if self._question and self._seq > 1 else line)
                                 + "\n")
        if not self._unflushed:
            self._batch_started = time.monotonic()
        self._unflushed.append(TraceRecord.written(record, msg))

    def _publish(self) -> None:
        """Flush the batch, then fold it and hand it to the subscribers, in order: shown only once on disk."""
        if not self._unflushed or self._file is None:
            return
        with self._writing(self.log_dir / TRACE_FILE):
            self._file.flush()
        batch, self._unflushed = self._unflushed, []
        finished = False
        for typed in batch:
            self.projection.apply(typed)
            finished = finished or self.projection.finished is not None  # RunFinished, or a record after it
            for subscriber in self.subscribers:
                try:
                    subscriber(typed, self.projection)
                except Exception:
                    pass
        if finished:  # the derived files after the subscribers: the screen need not wait for them
            with self._writing(self.log_dir):
                write_all(self.log_dir, self.projection, self._status)
        elif time.monotonic() - self._last_status_at >= self._status_every:
            self._write_status()
        elif self._trailing is None:
            wait = self._last_status_at + self._status_every - time.monotonic()
            self._trailing = threading.Timer(max(0.0, wait), self._ask_status)
            self._trailing.daemon = True
            self._trailing.start()
