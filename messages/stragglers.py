"""A straggler is left out of one round, not the run: the two events that say so.

Both are events (``ctx.record``), decisions nobody is sent: no inbox changes.
"""

from __future__ import annotations

from massgen.messages.envelope import Message


class AgentExcluded(Message):
    """The agent's straggler grace ran out in ``round``: the round goes on without it.

    Its turn keeps running; an answer or a vote from it later is ``AgentRejoined``."""

    name: str
    incarnation: int
    round: int
    reason: str


class AgentRejoined(Message):
    """An excluded agent answered or voted again: it counts from ``round`` on."""

    name: str
    incarnation: int
    excluded_round: int
    round: int
