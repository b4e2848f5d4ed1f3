"""Resuming a run from its trace: the work already done is not paid for again.

A run that crashed, was killed or ran out of time leaves a ``trace.jsonl`` whose
records hold the question, the config and every accepted answer. A resumed run is a new
attempt (``attempt_N+1`` beside the old one) that starts with those answers in view,
so agents vote or improve on them instead of starting over. Votes are not carried over:
they were cast on a view that a resumed team may change.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from massgen.logs import read_trace


class ResumeError(Exception):
    """A log directory that cannot be resumed; the message says why."""


@dataclass(frozen=True)
class ResumePoint:
    question: str
    history: tuple[tuple[str, str], ...]
    config: dict[str, Any]
    answers: tuple[tuple[str, str], ...]  # (agent id, content), in the order they were accepted
    turn: int
    attempt: int
    finished_status: str | None
    log_dir: Path

    def next_log_dir(self) -> Path:
        path = self.log_dir.parent / f"attempt_{self.attempt + 1}"
        suffix = self.attempt + 1
        while path.exists():
            suffix += 1
            path = self.log_dir.parent / f"attempt_{suffix}"
        return path


def _strip_secrets(config: dict[str, Any]) -> dict[str, Any]:
    """Redacted values (``***``) cannot be used again: keys then come from the environment."""
    for agent in config.get("agents", []):
        backend = agent.get("backend", {})
        if backend.get("api_key") == "***":
            backend["api_key"] = None
    return config


def resume_point(log_dir: Path) -> ResumePoint:
    if not (log_dir / "trace.jsonl").is_file():
        raise ResumeError(f"{log_dir}: no trace.jsonl here; give the run's attempt directory")
    records = read_trace(log_dir)
    started = next((r for r in records if r["type"] == "RunStarted"), None)
    if started is None:
        raise ResumeError(f"{log_dir}: the trace has no RunStarted record")
    payload = started["payload"]
    agents = set(payload["agents"])
    answers = tuple(
        (r["payload"]["agent"], r["payload"]["content"])
        for r in records
        if r["type"] == "AnswerAccepted" and r["payload"]["agent"] in agents
    )
    finished = next((r for r in records if r["type"] == "RunFinished"), None)
    return ResumePoint(
        question=payload["question"],
        history=tuple((q, a) for q, a in payload.get("history", [])),
        config=_strip_secrets(payload["config"]),
        answers=answers,
        turn=int(payload.get("turn", 1)),
        attempt=int(payload.get("attempt", 1)),
        finished_status=finished["payload"]["status"] if finished else None,
        log_dir=log_dir,
    )
