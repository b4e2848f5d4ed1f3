"""The judge: holds the votes of the current round, decides convergence and the winner.

Convergence means every live agent has voted (or agreed) since the last new answer.
The winner is decided by final results (``actors/results.py``), not by agents, so that
a team is at least as good as a majority vote over the same answers:

1. Each result's support = current-round votes for answers with that result, plus the
   agreement among independent answers (first answers written with nothing in view):
   k independent answers with one result count as k - 1 votes for it.
2. Only results of answers in the current view can win. Ties go to the result with the
   most answers overall, then to the result of the agent listed first in the config.
3. The winning agent is, among those whose newest answer has that result, the one with
   the most votes; then the one listed first in the config.

With no results at all (answers not told to the judge), most votes wins and ties go to
the agent listed first: a rule users can predict beats a coin flip they cannot reproduce.
"""

from __future__ import annotations

from collections import Counter
from typing import assert_never

from massgen.actors.runtime import Peer, RunContext, TracedActor
from massgen.messages import (
    AnswerResult,
    InvalidateVotes,
    RecordVote,
    SetLiveAgents,
    TallyUpdated,
    VoteEntry,
)
from massgen.messages.protocols import JudgeInbox, members


def pick_winner(counts: dict[str, int], order: list[str]) -> str | None:
    """Most votes wins; ties go to the agent earliest in ``order``."""
    if not counts:
        return None
    best = max(counts.values())
    return next(agent for agent in order if counts.get(agent, 0) == best)


def _key(answer: AnswerResult) -> str:
    """An answer's result; an answer with no result is a cluster of its own."""
    return answer.result or f"<{answer.label}>"


def decide(
    vote_results: dict[str, tuple[str, str]], answers: tuple[AnswerResult, ...], order: list[str]
) -> tuple[str | None, dict[str, int]]:
    """The winner and each result's support; ``vote_results`` maps voter to (target agent, target result)."""
    counts = Counter(target for target, _ in vote_results.values())
    latest = {a.agent: a for a in answers if a.latest}
    if not latest:
        return pick_winner(dict(counts), order), {}
    support: Counter[str] = Counter()
    labels = {a.label: _key(a) for a in answers}
    for target, result in vote_results.values():
        answer = latest.get(target)
        support[result or (labels.get(answer.label, "") if answer else "")] += 1
    for result, n in Counter(_key(a) for a in answers if a.independent).items():
        support[result] += n - 1
    everywhere = Counter(_key(a) for a in answers)
    if not any(support.values()) and not counts:
        return None, {}  # no evidence yet: the caller falls back to the newest answer
    candidates = {_key(a) for a in latest.values()}
    holder_rank = {_key(latest[agent]): -i for i, agent in reversed(list(enumerate(order))) if agent in latest}
    best = max(candidates, key=lambda r: (support[r], everywhere[r], holder_rank.get(r, -len(order))))
    holders = [agent for agent in order if agent in latest and _key(latest[agent]) == best]
    winner = max(holders, key=lambda agent: (counts[agent], -order.index(agent)))
    return winner, {r: n for r, n in support.items() if n > 0}


class Judge(TracedActor[JudgeInbox]):
    accepts = members(JudgeInbox)

    def __init__(self, ctx: RunContext, supervisor: Peer, agent_order: list[str]) -> None:
        super().__init__(ctx, "judge")
        self.supervisor = supervisor
        self.order = list(agent_order)
        self.live: set[str] = set(agent_order)
        self.votes: dict[str, VoteEntry] = {}
        self.vote_results: dict[str, tuple[str, str]] = {}
        self.answers: tuple[AnswerResult, ...] = ()
        self.round = 0

    def handle(self, message: JudgeInbox) -> None:
        match message:
            case RecordVote():
                if message.round == self.round:
                    self.votes[message.voter] = VoteEntry(
                        voter=message.voter, target=message.target, target_label=message.target_label,
                        reason=message.reason, agreement=message.agreement,
                    )
                    self.vote_results[message.voter] = (message.target, message.target_result)
            case InvalidateVotes():
                self.votes.clear()
                self.vote_results.clear()
                self.round = message.round
                self.answers = message.answers
            case SetLiveAgents():
                self.live = set(message.agents)
            case _ as unreachable:
                assert_never(unreachable)
        self._report()

    def _report(self) -> None:
        live_votes = {voter: vote for voter, vote in self.votes.items() if voter in self.live}
        counts: dict[str, int] = {}
        for vote in live_votes.values():
            counts[vote.target] = counts.get(vote.target, 0) + 1
        winner, support = decide(
            {v: r for v, r in self.vote_results.items() if v in live_votes}, self.answers, self.order)
        converged = bool(self.live) and self.live.issubset(live_votes)
        self.tell(self.supervisor, TallyUpdated(
            round=self.round,
            counts=counts,
            votes=tuple(live_votes[v] for v in self.order if v in live_votes),
            converged=converged,
            winner=winner,
            support=support,
        ))
