"""Stragglers: once every other live agent is done, a late agent gets a short grace.

Convergence waits for every live agent's vote, and the vote turns wait for every live
agent's first (independent) answer, so one agent that hangs, loops or drips would hold
the team until its own turn deadline (or the run's). The watch notes when every live
agent but some is done (has voted this round, or has answered and waits for the others'
first answers); after ``grace_s`` the supervisor leaves the ones still missing out of
that round (``exclude``), which lets the team go on without them. Their turns keep
running: a straggler that answers or votes later rejoins (``rejoin``) in the round it
answers in. Only its own deadlines (turn, idle, restarts) can fail it for the run.
"""

from __future__ import annotations

from collections.abc import Collection


class StragglerWatch:
    def __init__(self, grace_s: float) -> None:
        self.grace_s = grace_s
        self.round: int | None = None
        self.since: float | None = None
        self.pending: frozenset[str] = frozenset()
        self.excluded: dict[str, int] = {}  # agent -> the round it straggled in

    def observe(self, done: Collection[str], live: Collection[str], round_: int, now: float,
                converged: bool = False) -> None:
        """Start the grace when every other live agent is ``done``; clear it when that no longer holds."""
        pending = frozenset(agent for agent in live if agent not in done)
        finished = len(live) - len(pending)
        # "Every other agent is done": one agent late, or a minority of them.
        if converged or not finished or not pending or (len(pending) > 1 and len(pending) >= finished):
            self.since, self.pending = None, frozenset()
            return
        if self.since is None or self.round != round_:
            self.round, self.since = round_, now
        self.pending = pending

    def due(self, now: float, round_: int) -> frozenset[str]:
        """The agents whose grace in round ``round_`` has run out (empty if none)."""
        if self.since is None or self.round != round_ or now - self.since < self.grace_s:
            return frozenset()
        due, self.since, self.pending = self.pending, None, frozenset()
        return due

    def exclude(self, agent: str, round_: int) -> None:
        """Leave ``agent`` out from round ``round_`` until it answers or votes."""
        self.excluded[agent] = round_

    def rejoin(self, agent: str) -> int | None:
        """``agent`` answered or voted: it counts again. The round it was left out of, or None."""
        return self.excluded.pop(agent, None)

    def counted(self, agent: str) -> bool:
        """Whether the round waits for ``agent`` (it is not left out as a straggler)."""
        return agent not in self.excluded
