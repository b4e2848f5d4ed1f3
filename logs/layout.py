"""Every path in a log directory, in one place.

    <base>/log_<stamp>/                     the run's root: upstream MassGen's LOG_DIR
      turn_N/
        final/<winner>/answer.txt           a copy of the newest finished attempt's final/ (upstream's ANSWER)
        attempt_M/                          one attempt of one turn of a run (a "log directory")
          trace.jsonl                       the trace: the primary log (messages/trace.py)
          status.json, vote.json, coordination_events.json, execution_metadata.yaml
          agent_outputs/<agent>.txt         every answer of one agent
          final/<winner or best_so_far>/answer.txt

``<base>`` is ``$MASSGEN_LOG_BASE_DIR`` or ``.massgen/massgen_logs``. A REPL session keeps
its turns under one ``log_<stamp>``; ``--resume`` adds ``attempt_M+1`` beside the attempt
it continues. Agent ids in paths go through ``path_part`` (short plain ids unchanged).
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from dataclasses import dataclass
from pathlib import Path

from massgen.logs.paths import path_part

TRACE_FILE = "trace.jsonl"
STATUS_FILE = "status.json"
VOTE_FILE = "vote.json"
EVENTS_FILE = "coordination_events.json"
METADATA_FILE = "execution_metadata.yaml"
AGENT_OUTPUTS_DIR = "agent_outputs"
FINAL_DIR = "final"
ANSWER_FILE = "answer.txt"
BEST_SO_FAR = "best_so_far"  # the final answer's folder when no agent won
RUN_PREFIX = "log_"
ATTEMPT_GLOB = f"{RUN_PREFIX}*/turn_*/attempt_*"
_TURN = re.compile(r"turn_([0-9]+)")
_ATTEMPT = re.compile(r"attempt_([0-9]+)")


def default_log_base() -> Path:
    """Where new runs log unless told otherwise: ``$MASSGEN_LOG_BASE_DIR`` or ``.massgen/massgen_logs``."""
    return Path(os.environ.get("MASSGEN_LOG_BASE_DIR") or Path(".massgen") / "massgen_logs")


def attempt_dir(run_root: Path, turn: int, attempt: int = 1) -> Path:
    """``<run_root>/turn_N/attempt_M`` (not created)."""
    return run_root / f"turn_{turn}" / f"attempt_{attempt}"


def new_run_root(base: Path | None = None) -> Path:
    """A new, empty ``<base>/log_<timestamp>``, unique even for runs started together."""
    base = base or default_log_base()
    stamp = _dt.datetime.now().strftime("%Y%m%d_%H%M%S_%f")
    root = base / f"{RUN_PREFIX}{stamp}"
    suffix = 1
    while True:
        try:
            root.mkdir(parents=True, exist_ok=False)
            return root
        except FileExistsError:
            suffix += 1
            root = base / f"{RUN_PREFIX}{stamp}_{suffix}"


def new_log_dir(base: Path | None = None, turn: int = 1, attempt: int = 1) -> Path:
    """``<base>/log_<timestamp>/turn_N/attempt_M``, created, unique even for runs started together."""
    path = attempt_dir(new_run_root(base), turn, attempt)
    path.mkdir(parents=True)
    return path


def next_attempt_dir(log_dir: Path, attempt: int) -> Path:
    """The first free ``attempt_K`` (K > ``attempt``) beside ``log_dir``: where a resumed attempt logs."""
    suffix = attempt + 1
    path = log_dir.parent / f"attempt_{suffix}"
    while path.exists():
        suffix += 1
        path = log_dir.parent / f"attempt_{suffix}"
    return path


def turn_dir_of(log_dir: Path) -> Path | None:
    """The ``turn_N`` folder holding the attempt ``log_dir``; None for a log directory named by the user."""
    if _ATTEMPT.fullmatch(log_dir.name) and _TURN.fullmatch(log_dir.parent.name):
        return log_dir.parent
    return None


def run_root_of(log_dir: Path) -> Path:
    """The ``log_<stamp>`` root of the attempt ``log_dir`` (upstream's LOG_DIR); ``log_dir`` itself when it
    is not in the ``turn_N/attempt_M`` layout (a directory the user named)."""
    turn = turn_dir_of(log_dir)
    return turn.parent if turn is not None else log_dir


def newest_attempt(path: Path) -> Path | None:
    """The newest attempt with a trace inside a run root (of its highest turn) or a turn folder; None if none."""
    def number(part: Path, pattern: re.Pattern[str]) -> int:
        match = pattern.fullmatch(part.name)
        return int(match[1]) if match else -1

    found = [trace.parent for trace in (*path.glob(f"turn_*/attempt_*/{TRACE_FILE}"),
                                        *path.glob(f"attempt_*/{TRACE_FILE}"))]
    found = [d for d in found if number(d, _ATTEMPT) >= 0 and (d.parent == path or number(d.parent, _TURN) >= 0)]
    if not found:
        return None
    return max(found, key=lambda d: (number(d.parent, _TURN), number(d, _ATTEMPT)))


@dataclass(frozen=True)
class LogLayout:
    """The files of one log directory (one attempt), by what they are."""

    log_dir: Path

    @property
    def trace(self) -> Path:
        return self.log_dir / TRACE_FILE

    @property
    def status(self) -> Path:
        return self.log_dir / STATUS_FILE

    @property
    def final_dir(self) -> Path:
        return self.log_dir / FINAL_DIR

    @property
    def run_root(self) -> Path:
        return run_root_of(self.log_dir)

    def final_answer(self, winner: str | None) -> Path:
        """``final/<winner>/answer.txt``; ``final/best_so_far/answer.txt`` when no agent won."""
        return self.log_dir / final_answer_name(winner)

    def turn_final_answer(self, winner: str | None) -> Path:
        """The turn-level copy ``turn_N/final/<winner>/answer.txt`` (upstream's ANSWER); the attempt's own
        file when the log directory is not in the ``turn_N/attempt_M`` layout."""
        turn = turn_dir_of(self.log_dir)
        return (turn if turn is not None else self.log_dir) / final_answer_name(winner)


def agent_output_name(agent_id: str) -> str:
    """``agent_outputs/<agent>.txt``, relative to the log directory."""
    return f"{AGENT_OUTPUTS_DIR}/{path_part(agent_id)}.txt"


def final_answer_name(winner: str | None) -> str:
    """``final/<winner or best_so_far>/answer.txt``, relative to the log directory."""
    return f"{FINAL_DIR}/{path_part(winner or BEST_SO_FAR)}/{ANSWER_FILE}"
