"""The judge: holds the votes of the current round, and applies the decision after every round.

Convergence means every live agent has voted (or agreed) since the last new answer. Who wins is not the
judge's own rule: it is ``decide`` (``actors/coordination/decision.py``), the one decision function, applied
to the answers, this round's votes and what the voters' check tools computed. After every message the judge
tells the supervisor the tally (``TallyUpdated``: counts, converged, winner, support, and the vote it records,
if any: never the round's whole vote list, which would make a round of N votes cost N^2, issue 51). For the
same reason the round's counts are kept as votes arrive (``RoundCounts``), and each vote's decision costs what
that vote changed, not the round's votes.

The first answers are a round too. When every counted agent has ended its first turn the supervisor holds
the vote turns and tells the judge (``FirstAnswersIn``); the judge applies the same function with the first
answers' rules in play and replies ``FirstAnswersJudged``: the agent whose answer ends the run with no vote
round (recorded as ``UnanimousFirstAnswers`` or ``FirstAnswersDecided``); or a reserve agent to ask, when the
first answers did not settle (``FirstAnswersDisagree``; it rules again once that answer is in); or neither, and
the vote round goes on. Before they are all in, with at most ``MAX_PENDING`` still to come, the supervisor asks
too (``FirstAnswersIn.pending``): the judge ends the run only when no answer still to come could change the
result, and otherwise says nothing (agreement stops; disagreement waits for, and buys, more evidence).

A vote carries its voter's own result: what the voter's work in that turn concluded, else the number its
reason states (``results.reason_result``), "" when neither states one or the target states no result to
compare with (``own_result``); the judge keeps it only where it differs from the target's.
"""

from __future__ import annotations

from typing import Literal, assert_never

from massgen.actors.coordination.decision import (
    Ballot,
    Evidence,
    FirstTurnsEnded,
    RoundCounts,
    decide,
    decided_before_all_in,
)
from massgen.actors.runtime.port import Peer, RunContext, TracedActor
from massgen.messages import (
    AnswerResult,
    FirstAnswersIn,
    FirstAnswersJudged,
    InvalidateVotes,
    RecordVote,
    SetLiveAgents,
    TallyUpdated,
    VoteEntry,
)
from massgen.messages.protocols import JudgeInbox, members

__all__ = ["Judge"]


class Judge(TracedActor[JudgeInbox]):
    accepts = members(JudgeInbox)

    def __init__(self, ctx: RunContext, supervisor: Peer, agent_order: list[str],
                 rule: Literal["support", "prior"] = "support",
                 after_first_answers: Literal["vote", "decide"] = "vote", reserve: tuple[str, ...] = ()) -> None:
        """``reserve``: agents asked for a first answer only while the first answers have not settled."""
        super().__init__(ctx, "judge")
        self.supervisor = supervisor
        self.order = tuple(agent_order)
        self.rule = rule
        self.after_first_answers = after_first_answers
        self.live: set[str] = set(agent_order)
        self.votes: dict[str, VoteEntry] = {}
        self.vote_results: dict[str, Ballot] = {}
        self.answers: tuple[AnswerResult, ...] = ()
        # The live voters' votes of this round, counted as they arrive: deciding on a vote costs what it changed.
        self.counted = RoundCounts(self.answers, self.order)
        self.round = 0
        self.reserve = reserve  # not yet asked, in config order
        self.had_reserve = bool(reserve)
        self.ruled_early: str | None = None  # the winner, when the first answers decided before all were in

    def handle(self, message: JudgeInbox) -> None:
        recorded: VoteEntry | None = None
        match message:
            case RecordVote():
                if message.round == self.round:
                    recorded = self.votes[message.voter] = VoteEntry(
                        voter=message.voter, target=message.target, target_label=message.target_label,
                        reason=message.reason, agreement=message.agreement, own_result=message.own_result,
                        checked=message.checked,
                    )
                    own = message.own_result if message.own_result != message.target_result else ""
                    ballot = self.vote_results[message.voter] = (message.target, message.target_result, own)
                    if message.voter in self.live:
                        self.counted.record(message.voter, ballot, self._computed(recorded))
            case InvalidateVotes():
                self.votes.clear()
                self.vote_results.clear()
                self.round = message.round
                self.answers = message.answers
                self.counted = RoundCounts(self.answers, self.order)
            case SetLiveAgents():
                self.live = set(message.agents)
                self._recount()
            case FirstAnswersIn():
                self._first_answers(message)
                return
            case _ as unreachable:
                assert_never(unreachable)
        self._report(recorded)

    @staticmethod
    def _computed(vote: VoteEntry) -> str:
        """What the voter's check tools computed, "" if none."""
        return vote.own_result if vote.checked and vote.own_result else ""

    def _recount(self) -> None:
        """The live set changed: this round's votes counted again, the live voters' only (rare: a failure, a
        straggler left out or back)."""
        self.counted = RoundCounts(self.answers, self.order)
        for voter, ballot in self.vote_results.items():
            if voter in self.live:
                self.counted.record(voter, ballot, self._computed(self.votes[voter]))

    def _first_answers(self, message: FirstAnswersIn) -> None:
        """Rule on the first answers of ``message.round``: the winner ends the run, a reserve agent is asked, or
        neither: vote on."""
        self.reserve = tuple(agent for agent in self.reserve if agent not in message.agents)  # asked already
        evidence = Evidence(
            answers=self.answers, order=self.order, winner_rule=self.rule,
            after_first_answers=self.after_first_answers, reserve=self.reserve,
            reserve_spent=self.had_reserve and not self.reserve,
            first_turns=FirstTurnsEnded(agents=message.agents, on_answer=message.on_answer))
        if self.ruled_early is not None:  # the result was fixed before every first answer was in: it stands
            self.tell(self.supervisor, FirstAnswersJudged(round=message.round, winner=self.ruled_early))
            return
        if message.pending:  # not all in: a ruling only if what is still to come cannot change it
            early = decided_before_all_in(evidence, message.pending)
            if early is not None and early.record is not None and message.round == self.round:
                self.record(early.record)
                self.ruled_early = early.winner
                self.tell(self.supervisor, FirstAnswersJudged(round=message.round, winner=early.winner, early=True))
            return
        decision = decide(evidence)
        winner = ask = None
        if message.round == self.round and (decision.ends_run or decision.ask is not None):
            if decision.record is not None:
                self.record(decision.record)
            winner, ask = decision.winner, decision.ask
            if ask is not None:
                self.reserve = tuple(agent for agent in self.reserve if agent != ask)
        self.tell(self.supervisor, FirstAnswersJudged(round=message.round, winner=winner, ask=ask))

    def _report(self, recorded: VoteEntry | None) -> None:
        """Tell the supervisor the tally; ``recorded``: the vote just recorded, the only one the update carries."""
        counted = self.counted
        decision = decide(Evidence(answers=self.answers, order=self.order, winner_rule=self.rule,
                                   computed=counted.computed, votes=counted.votes), counts=counted)
        converged = bool(self.live) and len(counted.votes) == len(self.live)  # the counted voters are live ones
        self.tell(self.supervisor, TallyUpdated(
            round=self.round,
            counts=dict(counted.counts),
            converged=converged,
            winner=decision.winner,
            support=decision.support,
            vote=recorded,
        ))
