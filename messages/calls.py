"""Records that make a run replayable and resumable: each model call, and a resume's starting state.

A request is recorded as a delta against the previous request of the same agent
incarnation (the conversation of a turn only grows), so a long turn does not write
its whole history once per call; ``massgen.logs.calls`` folds the deltas back into
the exact ``ModelRequest`` each backend was given.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from massgen.messages.envelope import Message
from massgen.messages.stream import ChatMessage, ToolCall, ToolSpec


class ModelRequestSent(Message):
    """One model request, as the backend received it."""

    call: int  # 1, 2, ... per agent incarnation
    # The request is the first ``keep`` messages of the previous call's request plus ``messages``.
    keep: int
    messages: tuple[ChatMessage, ...]
    # None: the same tools as the previous call of this incarnation.
    tools: tuple[ToolSpec, ...] | None
    kind: Literal["turn", "present"]
    temperature: float | None = None
    max_tokens: int | None = None
    vote_targets: tuple[str, ...] = ()


class ModelReplyRecorded(Message):
    """What the backend streamed back for call ``call``; a call without one never finished."""

    call: int
    text: str = ""
    reasoning: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    finish_reason: str = "stop"
    error: str | None = None
    # Set when the reply was not fetched but replayed from the trace a resumed run continues:
    # the ``seq`` of the reply there.
    replayed_from: int | None = None
    # What the reply held that is not valid text (lone surrogates, NUL) and was escaped where it
    # entered (``messages/text.py``), as "where: what escaped"; the fields above hold the escaped text.
    escaped: tuple[str, ...] = ()


class AgentResumeState(BaseModel):
    """One agent as the resumed run found it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: str
    # The incarnation to start (the live one of the earlier attempt, or the next after a failure).
    incarnation: int
    status: Literal["live", "restarting", "failed"]
    # Wall-clock times of failures still inside the restart window: restart intensity carries over.
    failures: tuple[float, ...] = ()
    restarts: int = 0
    voted: bool = False
    # Calls of that incarnation already played, oldest first, as {kind, vote_targets, tool_calls}:
    # a backend with state of its own (the scripted one) is moved past them before its first call.
    played: tuple[dict[str, Any], ...] = ()
    # Finished calls of the turn it was in, as {request, reply, seq}: answered from the trace when
    # the redone turn asks exactly the same again, so a finished call is not paid for twice.
    replay: tuple[dict[str, Any], ...] = ()
    # The view (AnswerView data) and vote-only flag of the turn it was in: the redone turn starts
    # from the same view, so its requests match the recorded ones; None when it had voted.
    turn_view: dict[str, Any] | None = None
    turn_vote_only: bool = False
    # Left out of this round as a straggler (actors/supervisor/stragglers.py) and not back yet: the resumed
    # run does not wait for it either, until it answers or votes.
    excluded_round: int | None = None


class RunResumed(Message):
    """A resumed run's starting state, rebuilt from the trace it continues (written after RunStarted)."""

    resumed_from: str
    previous_run_id: str
    answers: int
    votes: tuple[str, ...]  # voters whose votes of the current round were carried over
    agents: tuple[AgentResumeState, ...]
    model_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    answer_now: bool = False
    next_turn_id: int = 1
    # Lines of the earlier trace that could not be read: "line N: why".
    skipped: tuple[str, ...] = ()
    # Agents whose first (independent) turn had ended: they are not shown an empty view again.
    first_done: tuple[str, ...] = ()
