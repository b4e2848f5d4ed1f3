"""What the one-shot flags add to a run: ``--stream-events``, ``--output-file``, ``--debug``,
``--no-logs`` and the session a turn belongs to (``--session-id``, ``--continue``).

``run_question`` calls the hooks here at three points (the team is built, started,
finished), so each flag lives in one place and the run itself stays the same.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from massgen import LogLayout, LogProjection, Subscriber, TraceRecord
from massgen.cli.text import for_terminal, unless_reader_gone

if TYPE_CHECKING:
    from massgen import RunResult, Team

DEBUG_LOG = "massgen_debug.log"


@dataclass
class RunOptions:
    stream_events: bool = False
    output_file: Path | None = None
    debug: bool = False
    no_logs: bool = False
    display: str = "rich"  # rich | simple | none (cli/display.py); the full screen never comes here
    history: tuple[tuple[str, str], ...] = ()
    on_result: Callable[[RunResult], None] | None = None
    _temp_logs: Path | None = field(default=None, repr=False)
    _debug_handler: logging.Handler | None = field(default=None, repr=False)
    _levels: dict[str, int] = field(default_factory=dict, repr=False)
    _keep_temp_logs: bool = field(default=False, repr=False)

    @property
    def shows_progress(self) -> bool:
        return not self.stream_events and self.display != "none"  # --stream-events: stderr stays quiet

    def log_base(self) -> Path | None:
        """A throw-away folder for ``--no-logs`` to hold the run's log directory (the trace is needed
        while the run lasts; the run chooses its directory in it, as anywhere)."""
        if not self.no_logs:
            return None
        self._temp_logs = Path(tempfile.mkdtemp(prefix="massgen_nologs_"))
        return self._temp_logs

    def subscribers(self, out: IO[str]) -> list[Subscriber]:
        if not self.stream_events:
            return []
        from massgen import events_from_record

        def write_events(record: TraceRecord, projection: LogProjection) -> None:
            with unless_reader_gone(out):
                for event in events_from_record(record, projection):
                    out.write(event_line(event.as_dict()))
                out.flush()

        return [write_events]

    def output_file_problem(self) -> str | None:
        """Why ``--output-file`` cannot be written, said before the run: after it, the answer that was paid
        for would have nowhere to go. Missing folders are no problem: they are made, as upstream does."""
        path = self.output_file
        if path is None:
            return None
        try:
            if path.is_dir():
                return f"--output-file {path}: is a directory"
            folder = next(f for f in path.parents if f.exists())  # the root exists, so there is one
            if not folder.is_dir():
                return f"--output-file {path}: {folder} is not a directory"
            if not os.access(folder, os.W_OK | os.X_OK):
                return f"--output-file {path}: cannot write in {folder}"
        except OSError as exc:  # e.g. a folder on the way that cannot be searched
            return f"--output-file {path}: {_reason(exc)}"
        return None

    def write_output(self, result: RunResult, err: IO[str]) -> Path | None:
        """``--output-file``: the answer written there; the path, or None when it was not written.

        A failure (a full disk, a path made a directory meanwhile) is said on ``err`` with where the answer
        is instead; the run still ends with its own exit code, and its session turn is still stored.
        """
        if self.output_file is None or result.final_answer is None:
            return None
        try:
            self.output_file.parent.mkdir(parents=True, exist_ok=True)
            self.output_file.write_text(result.final_answer.rstrip("\n") + "\n", encoding="utf-8")
        except OSError as exc:
            self._keep_temp_logs = True  # with --no-logs the run's own answer file is the only copy left
            answer = LogLayout(result.log_dir.resolve()).turn_final_answer(result.winner)
            where = answer if answer.is_file() else result.log_dir.resolve()
            err.write(for_terminal(f"massgen: --output-file {self.output_file}: {_reason(exc)}; "
                                   f"the answer is in {where}") + "\n")
            return None
        return self.output_file

    def started(self, team: Team) -> None:
        """``--debug``: everything logged (ours and the libraries') goes to the run's log directory."""
        if self.debug:
            handler = logging.FileHandler(team.log_dir / DEBUG_LOG, encoding="utf-8")
            handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(threadName)s %(name)s: %(message)s"))
            for name in ("", "pykka"):
                self._levels[name] = logging.getLogger(name).level
                logging.getLogger(name).setLevel(logging.DEBUG)
            logging.getLogger().addHandler(handler)
            self._debug_handler = handler

    def finished(self, result: RunResult, out: IO[str], err: IO[str]) -> None:
        """After the run and its printed result (``write_output`` came before it, so that ``--automation``
        names only a file that was written): the last event line, the session turn, the clean-up."""
        if self._debug_handler is not None:
            logging.getLogger().removeHandler(self._debug_handler)
            self._debug_handler.close()
            for name, level in self._levels.items():
                logging.getLogger(name).setLevel(level)
            with unless_reader_gone(err):  # each write on its own: the session turn below must still be stored
                err.write(f"debug log: {result.log_dir / DEBUG_LOG}\n")
        if self.stream_events:
            from massgen import FinalAnswerEvent

            with unless_reader_gone(out):
                out.write(event_line(FinalAnswerEvent(result=result).as_dict()))
                out.flush()
        if self.on_result is not None:
            self.on_result(result)
        if self._temp_logs is not None and not self._keep_temp_logs:
            shutil.rmtree(self._temp_logs, ignore_errors=True)


def event_line(event: dict[str, object]) -> str:
    """One ``--stream-events`` line. ASCII only (``\\uXXXX`` escapes): valid JSON in any locale (an
    unencodable character would otherwise become a ``\\xNN`` that no JSON parser takes), and no raw C1
    control or bidirectional override reaches a terminal. A parser reads the same strings either way."""
    return json.dumps(event, ensure_ascii=True) + "\n"


def _reason(exc: OSError) -> str:
    """``is a directory``: the system's words for an ``OSError``, without its number and path."""
    reason = exc.strerror or str(exc)
    return reason[:1].lower() + reason[1:]
