"""Supervision, timers and run control: what the supervisor hears and decides.

Pykka has no supervision of its own, so children report their life cycle with these
messages and the supervisor finds hangs with deadlines driven by ``Tick``.
"""

from __future__ import annotations

from typing import Literal

from massgen.messages.envelope import Message


class ChildStarted(Message):
    name: str
    incarnation: int


# Where a child's failure was found: its start, a handler, a deadline, a stopped actor, its turn
# worker, the user (kill or restart), or the runtime (its node or worker lost).
FailureWhere = Literal["on_start", "handler", "deadline", "stopped", "worker", "user", "down"]


class ChildFailed(Message):
    name: str
    incarnation: int
    error: str
    where: FailureWhere
    # No restart can help (a missing key or model, 401/403/404): the agent is marked failed at once.
    permanent: bool = False


class Tick(Message):
    now: float


class AgentRestarting(Message):
    name: str
    incarnation: int
    delay_s: float
    reason: str


class AgentMarkedFailed(Message):
    name: str
    incarnation: int
    reason: str


class DeadlineExpired(Message):
    scope: Literal["run", "start", "turn", "idle", "present", "straggler"]
    name: str = ""
    detail: str = ""


# --- run control: from the user (CLI, REPL, API, HTTP) to the supervisor --------------


class CancelRun(Message):
    reason: str = "cancelled by user"


class AnswerNow(Message):
    """Stop producing answers: vote on what exists and present."""


class SetRunTimeout(Message):
    seconds: float


class KillAgent(Message):
    name: str


class RestartAgent(Message):
    name: str
