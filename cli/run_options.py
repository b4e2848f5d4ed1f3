"""What the one-shot flags add to a run: ``--stream-events``, ``--output-file``, ``--debug``,
``--no-logs`` and the session a turn belongs to (``--session-id``, ``--continue``).

``run_question`` calls the hooks here at three points (the team is built, started,
finished), so each flag lives in one place and the run itself stays the same.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from massgen import LogProjection, Subscriber, TraceRecord

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
            for event in events_from_record(record, projection):
                out.write(json.dumps(event.as_dict(), ensure_ascii=False) + "\n")
            out.flush()

        return [write_events]

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
        if self._debug_handler is not None:
            logging.getLogger().removeHandler(self._debug_handler)
            self._debug_handler.close()
            for name, level in self._levels.items():
                logging.getLogger(name).setLevel(level)
            err.write(f"debug log: {result.log_dir / DEBUG_LOG}\n")
        if self.stream_events:
            from massgen import FinalAnswerEvent

            out.write(json.dumps(FinalAnswerEvent(result=result).as_dict(), ensure_ascii=False) + "\n")
            out.flush()
        if self.output_file is not None and result.final_answer is not None:
            self.output_file.parent.mkdir(parents=True, exist_ok=True)
            self.output_file.write_text(result.final_answer.rstrip("\n") + "\n", encoding="utf-8")
        if self.on_result is not None:
            self.on_result(result)
        if self._temp_logs is not None:
            shutil.rmtree(self._temp_logs, ignore_errors=True)
