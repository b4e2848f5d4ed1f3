"""The judge: holds the votes of the current round and decides convergence.

Convergence means every live agent has voted since the last new answer. The winner
has the most votes; a tie goes to the agent listed first in the config, because a
rule that users can predict beats a coin flip they cannot reproduce.
"""

from __future__ import annotations

from typing import Any

from massgen.actors.runtime import Peer, RunContext, TracedActor
from massgen.messages import (
    InvalidateVotes,
    Message,
    RecordVote,
    SetLiveAgents,
    TallyUpdated,
    VoteEntry,
)


def pick_winner(counts: dict[str, int], order: list[str]) -> str | None:
    """Most votes wins; ties go to the agent earliest in ``order``."""
    if not counts:
        return None
    best = max(counts.values())
    return next(agent for agent in order if counts.get(agent, 0) == best)


class Judge(TracedActor):
    def __init__(self, ctx: RunContext, supervisor: Peer, agent_order: list[str]) -> None:
        super().__init__(ctx, "judge")
        self.supervisor = supervisor
        self.order = list(agent_order)
        self.live: set[str] = set(agent_order)
        self.votes: dict[str, VoteEntry] = {}
        self.round = 0

    def handle(self, message: Message) -> Any:
        if isinstance(message, RecordVote):
            if message.round == self.round:
                self.votes[message.voter] = VoteEntry(
                    voter=message.voter, target=message.target,
                    target_label=message.target_label, reason=message.reason,
                )
        elif isinstance(message, InvalidateVotes):
            self.votes.clear()
            self.round = message.round
        elif isinstance(message, SetLiveAgents):
            self.live = set(message.agents)
        else:
            return None
        self._report()
        return None

    def _report(self) -> None:
        live_votes = {voter: vote for voter, vote in self.votes.items() if voter in self.live}
        counts: dict[str, int] = {}
        for vote in live_votes.values():
            counts[vote.target] = counts.get(vote.target, 0) + 1
        converged = bool(self.live) and self.live.issubset(live_votes)
        self.send(
            self.supervisor,
            TallyUpdated,
            round=self.round,
            counts=counts,
            votes=tuple(live_votes[v] for v in self.order if v in live_votes),
            converged=converged,
            winner=pick_winner(counts, self.order),
        )
