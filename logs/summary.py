"""One run's numbers, from its ``trace.jsonl`` alone: what ``massgen logs summary`` prints.

Agents, answers, votes, the winner, model calls, tokens, cost, time and faults are all
folded from trace records by ``LogProjection``, the same fold that writes the live
log files, so the summary of a finished run and its ``status.json`` cannot disagree.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from massgen.logs.derived_files import read_trace
from massgen.logs.layout import TRACE_FILE
from massgen.logs.projection import LogProjection
from massgen.messages import (
    AgentMarkedFailed,
    AgentRestarting,
    ChildFailed,
    DeadLetter,
    DeadlineExpired,
    Message,
    TurnFailed,
    message_class,
)

# The timeline's faults, by message class, and the key each is counted under.
_FAULT_TYPES: dict[type[Message], str] = {
    ChildFailed: "agent_failures",
    AgentRestarting: "restarts",
    AgentMarkedFailed: "agents_out",
    TurnFailed: "turn_failures",
    DeadlineExpired: "deadlines",
    DeadLetter: "dead_letters",
}


def project(log_dir: Path) -> LogProjection:
    """The projection of a log directory's trace (a torn last line is skipped)."""
    projection = LogProjection()
    for record in read_trace(log_dir):
        projection.apply(record)
    return projection


def summarize(log_dir: Path, projection: LogProjection | None = None) -> dict[str, Any]:
    """The run at ``log_dir`` as plain data (see ``massgen logs summary --json``)."""
    projection = projection or project(log_dir)
    started = projection.started or {}
    finished = projection.finished or {}
    usage = projection.usage()
    faults = dict.fromkeys(_FAULT_TYPES.values(), 0)
    for event in projection.events:
        kind = message_class(event)
        name = None if kind is None else _FAULT_TYPES.get(kind)
        if name is not None:
            faults[name] += 1
    valid_votes = [v for v in projection.votes if v["valid"]]
    input_tokens = int(finished.get("input_tokens", usage["input_tokens"]))
    output_tokens = int(finished.get("output_tokens", usage["output_tokens"]))
    elapsed = finished.get("elapsed_s")
    if elapsed is None:
        elapsed = round((projection.last_ts or 0.0) - (projection.first_ts or 0.0), 3)
    return {
        "log_dir": str(log_dir),
        "run_id": started.get("run_id"),
        "question": started.get("question"),
        "turn": started.get("turn"),
        "attempt": started.get("attempt"),
        "status": finished.get("status", "running or interrupted"),
        "reason": finished.get("reason"),
        "winner": finished.get("winner"),
        "winner_label": finished.get("winner_label"),
        "agents": {agent_id: {"label": view.label, "status": view.status, "answers": len(view.answers),
                              "model_calls": view.model_calls, "input_tokens": view.input_tokens,
                              "output_tokens": view.output_tokens, "restarts": view.restarts,
                              "last_error": view.last_error}
                   for agent_id, view in projection.agents.items()},
        "answers": len(projection.answers),
        "votes": len(projection.votes),
        "valid_votes": len(valid_votes),
        "vote_tally": projection.tally(),
        "model_calls": int(finished.get("model_calls", usage["model_calls"])),
        "tokens": {"input": input_tokens, "output": output_tokens, "total": input_tokens + output_tokens},
        "cost_usd": float(finished.get("cost_usd", 0.0)),
        "elapsed_s": float(elapsed),
        "faults": faults,
        "final_answer": finished.get("final_answer"),
    }


def find_runs(base: Path) -> list[Path]:
    """Every log directory (one with a trace) under ``base``, oldest first by start time."""
    if not base.is_dir():
        return []
    return sorted(_trace_dirs(base), key=lambda d: (_first_ts(d), str(d)))


def _trace_dirs(base: Path) -> list[Path]:
    """The folders under ``base`` holding a trace; a loop, not a recursion (``Path.rglob`` recursed once
    per level and ended in ``RecursionError`` in a snapshot an agent nested 1,500 folders deep). A log
    directory is not searched further: below it are its own files (snapshots, agent outputs), where a
    ``trace.jsonl`` an agent wrote is not a run."""
    found: list[Path] = []
    folders = [base]
    while folders:
        folder = folders.pop()
        if (folder / TRACE_FILE).is_file():
            found.append(folder)
            continue
        try:
            with os.scandir(folder) as entries:
                folders += [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue  # vanished or unreadable
    return found


def _first_ts(log_dir: Path) -> float:
    try:
        with open(log_dir / TRACE_FILE, encoding="utf-8") as handle:
            return float(json.loads(handle.readline())["ts"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0.0
