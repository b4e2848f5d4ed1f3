"""The judge: holds the votes of the current round, decides convergence and the winner.

Convergence means every live agent has voted (or agreed) since the last new answer.
The winner is decided by final results (``actors/coordination/results.py``), not by agents, so that
a team is at least as good as a majority vote over the same answers.

A vote carries its voter's own result: what the voter's work in that turn concluded, else
the number its reason states ("9.9 is larger than 9.11"; ``results.reason_result``), ""
when neither states one or the target states no result to compare with (``own_result``). A vote whose own
result equals its target's is a checked agreement; one whose own result differs is not
agreement: it supports the voter's own result, never its target's (a model that recomputes
456 and then votes for an answer of 457 because it was listed first has said 456).

Support of a result = current-round votes for it (by the rule above), plus the agreement
among independent answers (first answers written with nothing in view): k independent
answers with one result count as k - 1 votes for it.

Two rules pick the winner (``orchestrator.winner_rule``):

``support`` (the default)
    1. Only results of answers in the current view can win; the most support wins.
    2. Ties go to the result with the most answers overall, then to the result of the agent
       listed first in the config.

``prior`` (the local team: its first agent decodes greedily)
    The first agent's independent first answer is the prior: one greedy call is the baseline
    a team must beat, and its agreement with the others is the common case. It is overturned
    only when the first agent itself, shown the others' answers, concludes another result R
    (its vote's own result, or the result of the answer it voted for) and R has at least the
    support of the prior's result. A vote cast by habit (for the first answer listed) cannot
    overturn it, and two hotter agents agreeing on a wrong result cannot outvote it; nor can a
    vote with no result of its own for an answer that states none (its "result" is only its last
    line) overturn a prior that states one. (Measured: the greedy agent voted, reasoning without a
    number, for an answer ending "2.76 is indeed greater than 2.6 by exactly 0.16", and that
    overturned its right 2.76; README, issue 20.)
    When the prior is not in the view any more, the ``support`` rule decides.

Checked results come first, under either rule. A vote whose own result a check tool computed
(``actors/agent/check_tools.py``: the voter calculated it rather than reread it) is evidence no
reading of an answer is: when such votes computed a result of an answer in view, the result most
of them computed wins; a tie among them is left to the rule. (Measured: the local team's greedy
agent kept voting for its own wrong answer while the other two computed the right one; README,
issue 20.)
Either way the winning agent is, among those whose newest answer has the winning result, the
one with the most votes; then the one listed first in the config (under ``prior``, the first
agent when it holds that result).

Executions come before all of it. A code answer run against the task's own examples
(``actors/coordination/code_checks.py``) has its behaviour there as its result, so answers written
differently that behave alike agree; when an answer in view passed every example, only the results
of passing answers can win: one that does not parse or fails an example cannot beat one that passes,
whatever the votes, the prior or the checked results say.

With no results at all (answers not told to the judge), most votes wins and ties go to
the agent listed first: a rule users can predict beats a coin flip they cannot reproduce.
"""

from __future__ import annotations

from collections import Counter
from typing import Literal, assert_never

from massgen.actors.runtime.port import Peer, RunContext, TracedActor
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


Ballot = tuple[str, str, str]
"""A vote as the judge weighs it: (target agent, target's result, voter's own result or "")."""


def supported_result(ballot: Ballot) -> str:
    """The result a vote supports: the voter's own when it differs from the target's, else the target's."""
    _target, target_result, own = ballot
    return own or target_result


def decide(
    vote_results: dict[str, Ballot], answers: tuple[AnswerResult, ...], order: list[str],
    rule: Literal["support", "prior"] = "support", computed: dict[str, str] | None = None,
) -> tuple[str | None, dict[str, int]]:
    """The winner and each result's support; ``vote_results`` maps a voter to its ballot, ``computed`` a
    voter to the result its check tools computed (voters that computed none are left out)."""
    counts = Counter(ballot[0] for ballot in vote_results.values())
    latest = {a.agent: a for a in answers if a.latest}
    if not latest:
        return pick_winner(dict(counts), order), {}
    support: Counter[str] = Counter()
    labels = {a.label: _key(a) for a in answers}
    for target, result, own in vote_results.values():
        answer = latest.get(target)
        support[supported_result((target, result or (labels.get(answer.label, "") if answer else ""), own))] += 1
    for result, n in Counter(_key(a) for a in answers if a.independent).items():
        support[result] += n - 1
    everywhere = Counter(_key(a) for a in answers)
    if not any(support.values()) and not counts:
        return None, {}  # no evidence yet: the caller falls back to the newest answer
    candidates = {_key(a) for a in latest.values()}
    # Executions before rereadings and votes: when an answer in view passed the task's own examples, only
    # the results of passing answers can win (actors/coordination/code_checks.py).
    candidates = {_key(a) for a in latest.values() if a.passed} or candidates
    shown = {r: n for r, n in support.items() if n > 0}
    best = _checked_result(computed or {}, candidates)
    if best is None and rule == "prior":
        best = _prior_result(vote_results, answers, latest, order, support, candidates)
    if best is None:
        holder_rank = {_key(latest[agent]): -i for i, agent in reversed(list(enumerate(order))) if agent in latest}
        best = max(candidates, key=lambda r: (support[r], everywhere[r], holder_rank.get(r, -len(order))))
    holders = [agent for agent in order if agent in latest and _key(latest[agent]) == best]
    winner = max(holders, key=lambda agent: (counts[agent], -order.index(agent)))
    return winner, shown


def _checked_result(computed: dict[str, str], candidates: set[str]) -> str | None:
    """The result of an answer in view that most check-tool votes computed, unless two tie for most."""
    ranked = Counter(result for result in computed.values() if result in candidates).most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def _prior_result(
    vote_results: dict[str, Ballot], answers: tuple[AnswerResult, ...], latest: dict[str, AnswerResult],
    order: list[str], support: Counter[str], candidates: set[str],
) -> str | None:
    """The winning result under the "prior" rule; None when the prior is no longer in view.
    ``latest`` maps each agent to its newest answer."""
    prior_agent = next((agent for agent in order if any(a.agent == agent and a.independent for a in answers)), None)
    if prior_agent is None:
        return None
    prior_answer = next(a for a in answers if a.agent == prior_agent and a.independent)
    prior = _key(prior_answer)
    if prior not in candidates:
        return None
    ballot = vote_results.get(prior_agent)
    if ballot is None:
        return prior
    target, _result, own = ballot
    voted_for = latest.get(target)
    if not own and voted_for is not None and not voted_for.stated and prior_answer.stated:
        return prior
    concluded = supported_result(ballot)
    if concluded != prior and concluded in candidates and support[concluded] >= support[prior]:
        return concluded
    return prior


class Judge(TracedActor[JudgeInbox]):
    accepts = members(JudgeInbox)

    def __init__(self, ctx: RunContext, supervisor: Peer, agent_order: list[str],
                 rule: Literal["support", "prior"] = "support") -> None:
        super().__init__(ctx, "judge")
        self.supervisor = supervisor
        self.order = list(agent_order)
        self.rule = rule
        self.live: set[str] = set(agent_order)
        self.votes: dict[str, VoteEntry] = {}
        self.vote_results: dict[str, Ballot] = {}
        self.answers: tuple[AnswerResult, ...] = ()
        self.round = 0

    def handle(self, message: JudgeInbox) -> None:
        match message:
            case RecordVote():
                if message.round == self.round:
                    self.votes[message.voter] = VoteEntry(
                        voter=message.voter, target=message.target, target_label=message.target_label,
                        reason=message.reason, agreement=message.agreement, own_result=message.own_result,
                        checked=message.checked,
                    )
                    own = message.own_result if message.own_result != message.target_result else ""
                    self.vote_results[message.voter] = (message.target, message.target_result, own)
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
        computed = {v: vote.own_result for v, vote in live_votes.items() if vote.checked and vote.own_result}
        winner, support = decide(
            {v: r for v, r in self.vote_results.items() if v in live_votes}, self.answers, self.order, self.rule,
            computed)
        converged = bool(self.live) and self.live.issubset(live_votes)
        self.tell(self.supervisor, TallyUpdated(
            round=self.round,
            counts=counts,
            votes=tuple(live_votes[v] for v in self.order if v in live_votes),
            converged=converged,
            winner=winner,
            support=support,
        ))
