"""Stragglers: once every other live agent has voted, a late agent gets a short grace.

Convergence waits for every live agent's vote, so one agent that hangs, loops or drips
would hold the team until its own turn deadline (or the run's). The watch notes when a
round's tally has every live agent's vote but some; after ``grace_s`` the supervisor
treats the ones still missing as failed, which lets the round converge without them.
"""

from __future__ import annotations

from collections.abc import Collection

from massgen.messages import TallyUpdated


class StragglerWatch:
    def __init__(self, grace_s: float) -> None:
        self.grace_s = grace_s
        self.round: int | None = None
        self.since: float | None = None
        self.pending: frozenset[str] = frozenset()

    def on_tally(self, tally: TallyUpdated, live: Collection[str], now: float) -> None:
        """Start the grace when the others have all voted; clear it when that no longer holds."""
        voters = {vote.voter for vote in tally.votes}
        pending = frozenset(agent for agent in live if agent not in voters)
        # "Every other agent has voted": one agent late, or a minority of them.
        if tally.converged or not voters or not pending or (len(pending) > 1 and len(pending) >= len(voters)):
            self.since, self.pending = None, frozenset()
            return
        if self.since is None or self.round != tally.round:
            self.round, self.since = tally.round, now
        self.pending = pending

    def due(self, now: float, round_: int) -> frozenset[str]:
        """The agents whose grace in round ``round_`` has run out (empty if none)."""
        if self.since is None or self.round != round_ or now - self.since < self.grace_s:
            return frozenset()
        due, self.since, self.pending = self.pending, None, frozenset()
        return due
