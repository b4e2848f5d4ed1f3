"""Records that open and close a run in the trace: everything the logs need."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from massgen.messages.envelope import Message

RunStatus = Literal["completed", "partial", "timeout", "budget", "interrupted", "failed"]


class RunStarted(Message):
    question: str
    history: tuple[tuple[str, str], ...] = ()
    agents: tuple[str, ...]
    labels: tuple[str, ...]
    config: dict[str, Any]
    versions: dict[str, str]
    log_dir: str
    turn: int = 1
    attempt: int = 1
    # The attempt directory this run resumes, whose accepted answers it starts with.
    resumed_from: str | None = None
    # Each agent's workspace folder (agents that work with files only), for status.json's workspace_paths.
    workspaces: dict[str, str] = Field(default_factory=dict)
    # What the question or history held that is not valid text (lone surrogates, NUL) and was
    # escaped where the run took it (``messages/text.py``), as "where: what escaped".
    escaped: tuple[str, ...] = ()
    # What the config asks for that this run cannot do here, said once (a check tool with no sandbox).
    warnings: tuple[str, ...] = ()


class RunOutcome(BaseModel):
    """How a run ended: the fields of ``RunFinished`` past the envelope, declared once for the message
    and for the event a screen draws from it (``massgen.events.RunFinishedEvent``)."""

    model_config = ConfigDict(frozen=True)

    status: RunStatus
    reason: str
    winner: str | None
    winner_label: str | None
    final_answer: str | None
    # True when the final answer is the best found before time or budget ran out.
    partial: bool
    elapsed_s: float
    model_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    # Why the final answer is the winning answer as written instead of its presentation (the
    # presentation changed the agreed result, failed, timed out, or the budget ran out); "" when
    # the presentation is the answer or none was asked for. Every screen shows it.
    presentation_not_used: str = ""


class RunFinished(Message, RunOutcome):
    """The run's last record: its outcome."""


class DeadLetter(Message):
    """A message that could not be delivered, came from a dead incarnation, or lies outside the
    recipient's protocol (``to`` is the actor; ``summary`` a short repr of what arrived)."""

    original_type: str
    original_sender: str
    to: str
    why: str
    summary: str = ""
