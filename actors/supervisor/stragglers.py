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


class Missing:
    """The live agents that have not done their part, kept as each one changes (issue 51: the watch rebuilt it
    from the whole team on every vote). ``mark`` notes the set as it is; ``marked`` gives that set back later:
    the set now, with the changes since undone, so holding it costs one note per change, not a copy."""

    def __init__(self) -> None:
        self.now: set[str] = set()
        self._since: list[tuple[str, bool]] | None = None  # (agent, now missing), since ``mark``

    def __len__(self) -> int:
        return len(self.now)

    def set(self, agent: str, missing: bool) -> None:
        if (agent in self.now) == missing:
            return
        if missing:
            self.now.add(agent)
        else:
            self.now.discard(agent)
        if self._since is not None:
            self._since.append((agent, missing))

    def mark(self) -> None:
        self._since = []

    def unmark(self) -> None:
        self._since = None

    def marked(self) -> frozenset[str]:
        """The set when ``mark`` was last called (the set now, when it was not)."""
        then = set(self.now)
        for agent, missing in reversed(self._since or ()):
            if missing:
                then.discard(agent)
            else:
                then.add(agent)
        return frozenset(then)


class StragglerWatch:
    def __init__(self, grace_s: float) -> None:
        self.grace_s = grace_s
        self.round: int | None = None
        self.since: float | None = None
        self._pending: Missing | None = None  # marked when the grace (re)started or was last confirmed
        self.excluded: dict[str, int] = {}  # agent -> the round it straggled in

    @property
    def pending(self) -> frozenset[str]:
        """The agents the running grace waits for (empty when none runs)."""
        return self._pending.marked() if self._pending is not None else frozenset()

    def observe(self, live: int, missing: Missing, round_: int, now: float, converged: bool = False) -> None:
        """Start the grace when every other live agent is done; clear it when that no longer holds.
        ``live``: how many agents the round counts; ``missing``: those of them not done. O(1)."""
        pending = len(missing)
        finished = live - pending
        # "Every other agent is done": one agent late, or a minority of them.
        if converged or not finished or not pending or (pending > 1 and pending >= finished):
            self._clear()
            return
        if self.since is None or self.round != round_:
            self.round, self.since = round_, now
        if self._pending is not None and self._pending is not missing:
            self._pending.unmark()
        self._pending = missing
        missing.mark()  # the agents missing now are those the grace's end leaves out

    def _clear(self) -> None:
        if self._pending is not None:
            self._pending.unmark()
        self.since, self._pending = None, None

    def due(self, now: float, round_: int) -> frozenset[str]:
        """The agents whose grace in round ``round_`` has run out (empty if none)."""
        if self.since is None or self.round != round_ or now - self.since < self.grace_s:
            return frozenset()
        due = self.pending
        self._clear()
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
