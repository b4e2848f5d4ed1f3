"""Deciding: which answer wins, and why. One pure function, ``decide``, over what the judge knows.

It takes the accepted answers (their final results, ``actors/coordination/results.py``), the current round's
votes and what the voters' check tools computed, and returns a ``Decision``: the winning agent, the rule
that decided and why, and each result's support. The rules are one ordered list, ``RULES``: the first that
decides wins. The judge (``actors/coordination/judge.py``) applies it after every round, the first answers
included; ``bench/`` replays recorded answers through the same function. Why each rule exists and where it
was measured: docs/architecture.md, "Coordination rules".

The first-answer rules apply only when the supervisor says every counted agent's first turn has ended
(``FirstTurnsEnded``); a decision of theirs ends the run with no vote round. The vote-round rules pick the
standing winner of a round (the judge says whether the round converged).

A vote is a ``Ballot``: (target agent, target's result, voter's own result or ""). It supports the voter's
own result when that differs from the target's, else the target's (a model that recomputed 456 and voted
for the 457 listed first has said 456). Support of a result = the votes for it plus the agreement of
independent answers (k independent answers with one result count as k - 1 votes).
"""

from __future__ import annotations

import dataclasses
import heapq
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

from massgen.actors.coordination.evidence import in_kind, states
from massgen.messages import AnswerResult, FirstAnswersDecided, FirstAnswersDisagree, UnanimousFirstAnswers

__all__ = [
    "MAX_PENDING",
    "RULES",
    "Ballot",
    "Decision",
    "Evidence",
    "FirstTurnsEnded",
    "RoundCounts",
    "Rule",
    "decide",
    "decided_before_all_in",
    "pick_winner",
    "rules_without",
    "supported_result",
    "tally",
]

Ballot = tuple[str, str, str]
"""A vote as the judge weighs it: (target agent, target's result, voter's own result or "")."""

WinnerRule = Literal["support", "prior"]
AfterFirstAnswers = Literal["vote", "decide"]


@dataclass(frozen=True)
class FirstTurnsEnded:
    """Every agent in ``agents`` (the counted ones, config order) has ended its first turn. ``on_answer``: an
    answer completed them (unanimity is judged only then)."""

    agents: tuple[str, ...]
    on_answer: bool = True


@dataclass(frozen=True)
class Evidence:
    """What a decision is made on. ``votes`` maps a voter (live, this round) to its ballot, ``computed`` a voter
    to the result its check tools computed (voters that computed none are left out); ``answers`` is every
    accepted answer in submission order; ``order`` the agents in config order."""

    answers: tuple[AnswerResult, ...]
    order: tuple[str, ...]
    votes: Mapping[str, Ballot] = field(default_factory=dict)
    computed: Mapping[str, str] = field(default_factory=dict)
    winner_rule: WinnerRule = "support"
    after_first_answers: AfterFirstAnswers = "vote"
    first_turns: FirstTurnsEnded | None = None
    reserve: tuple[str, ...] = ()  # reserve agents not yet asked, in config order (``first_answers_evidence``)
    reserve_spent: bool = False  # the team had reserve agents, and every one has been asked


@dataclass(frozen=True)
class Decision:
    """``winner``: the agent whose answer wins (None: no evidence yet, the caller takes the newest answer);
    ``rule``: the name of the rule that decided; ``support``: votes plus independent agreement per result;
    ``ends_run``: decided on the first answers, with no vote round, and ``record`` says so in the trace; ``ask``:
    the first answers did not settle, and this reserve agent is asked for its first answer."""

    winner: str | None
    rule: str
    reason: str
    support: dict[str, int] = field(default_factory=dict)
    ends_run: bool = False
    record: UnanimousFirstAnswers | FirstAnswersDecided | FirstAnswersDisagree | None = None
    ask: str | None = None  # the first answers did not settle: this reserve agent is asked for its first answer


def pick_winner(counts: Mapping[str, int], order: Sequence[str]) -> str | None:
    """Most votes wins; ties go to the agent earliest in ``order``."""
    if not counts:
        return None
    best = max(counts.values())
    return next(agent for agent in order if counts.get(agent, 0) == best)


def supported_result(ballot: Ballot) -> str:
    """The result a vote supports: the voter's own when it differs from the target's, else the target's."""
    _target, target_result, own = ballot
    return own or target_result


def _key(answer: AnswerResult) -> str:
    """An answer's result; an answer with no result is a cluster of its own."""
    return answer.result or f"<{answer.label}>"


K = TypeVar("K")


class _LazyMax(Generic[K]):
    """The items with the largest keys, among items whose keys change one at a time: each change pushes the item's
    new key, and an entry whose key is no longer the item's is dropped when it reaches the top. A change costs
    O(log n) amortised, where a scan would cost every item (a vote round of n voters, issue 51)."""

    def __init__(self, key: Callable[[K], tuple[int, ...]], items: Iterable[K] = ()) -> None:
        self._key = key
        self._heap: list[tuple[tuple[int, ...], int, K]] = []
        self._pushed = 0  # ties in the heap are broken by push order, so items need not be comparable
        for item in items:
            self.changed(item)

    def changed(self, item: K) -> None:
        """``item``'s key changed (or it is new)."""
        self._pushed += 1
        heapq.heappush(self._heap, (tuple(-x for x in self._key(item)), self._pushed, item))

    def top(self, k: int = 1) -> list[K]:
        """Up to ``k`` items with the largest keys, largest first."""
        found: list[tuple[tuple[int, ...], int, K]] = []
        seen: list[K] = []
        while self._heap and len(found) < k:
            entry = heapq.heappop(self._heap)
            negated, _n, item = entry
            if item in seen or tuple(-x for x in negated) != self._key(item):
                continue  # stale, or a second entry of an item found already
            found.append(entry)
            seen.append(item)
        for entry in found:
            heapq.heappush(self._heap, entry)
        return seen


class RoundCounts:
    """A round's counts, what the vote-round rules share: kept as votes arrive, so that the judge's decision on
    each vote costs what the vote changed, not the round's votes (issue 51). ``decide(ev)`` builds them from
    scratch (``of``); the judge keeps one per round and passes it with the evidence it was folded from.

    The answers are fixed for a round (a new answer starts a new one); ``record`` and ``drop`` change one voter's
    vote. ``votes`` and ``computed`` are the voters' ballots and check-tool results, the ``Evidence`` maps."""

    def __init__(self, answers: Sequence[AnswerResult], order: Sequence[str]) -> None:
        self.latest: dict[str, AnswerResult] = {a.agent: a for a in answers if a.latest}  # each agent's newest
        self._labels = {a.label: _key(a) for a in answers}
        self.votes: dict[str, Ballot] = {}
        self.computed: dict[str, str] = {}
        self.counts: Counter[str] = Counter()  # votes per target agent (no zeros)
        # per result: votes (by what they support) plus independent agreement
        self.support: Counter[str] = Counter()
        agreement = Counter(_key(a) for a in answers if a.independent)
        for result, n in agreement.items():
            self.support[result] += n - 1
        self._agreement = sum(n - 1 for n in agreement.values())
        self.everywhere: Counter[str] = Counter(_key(a) for a in answers)  # per result: answers holding it, all
        # versions
        in_view = {_key(a) for a in self.latest.values()}
        passing = {_key(a) for a in self.latest.values() if a.passed}
        self.candidates = frozenset(passing or in_view)  # results that can win: of answers in view, passing ones first
        self._place = {agent: i for i, agent in enumerate(order)}
        holders: dict[str, list[str]] = {}
        for agent in order:
            if agent in self.latest:
                holders.setdefault(_key(self.latest[agent]), []).append(agent)
        self._holder_rank = {result: -self._place[agents[0]] for result, agents in holders.items()}
        self._unranked = -len(self._place)

        def holder_key(agent: str) -> tuple[int, ...]:
            return self.counts[agent], -self._place[agent]

        self._holders = {result: _LazyMax(holder_key, agents) for result, agents in holders.items()}
        self._most = _LazyMax(lambda r: (self.support[r], self.everywhere[r], self._holder_rank.get(r, self._unranked)),
                              self.candidates)
        self._checked_counts: Counter[str] = Counter()  # per candidate result: check tools that computed it
        self._checked: _LazyMax[str] = _LazyMax(lambda r: (self._checked_counts[r],))
        prior = next((agent for agent in order if any(a.agent == agent and a.independent for a in answers)), None)
        self.prior: tuple[str, AnswerResult] | None = None if prior is None else (
            prior, next(a for a in answers if a.agent == prior and a.independent))  # the first listed first answer

    @classmethod
    def of(cls, ev: Evidence) -> RoundCounts:
        """The counts of ``ev``, from scratch: each vote folded in, as the judge does one at a time."""
        counts = cls(ev.answers, ev.order)
        for voter, ballot in ev.votes.items():
            counts.record(voter, ballot, ev.computed.get(voter, ""))
        for voter, result in ev.computed.items():
            if voter not in ev.votes:
                counts._compute(voter, result)
        return counts

    def record(self, voter: str, ballot: Ballot, computed: str = "") -> None:
        """``voter``'s vote, replacing any it cast before; ``computed``: the result its check tools computed."""
        self.drop(voter)
        self.votes[voter] = ballot
        self._count(ballot, 1)
        if computed:
            self._compute(voter, computed)

    def drop(self, voter: str) -> None:
        """``voter``'s vote no longer counts (replaced, or the voter left the round)."""
        ballot = self.votes.pop(voter, None)
        if ballot is not None:
            self._count(ballot, -1)
        result = self.computed.pop(voter, None)
        if result is not None and result in self.candidates:
            self._checked_counts[result] -= 1
            self._checked.changed(result)

    def _compute(self, voter: str, result: str) -> None:
        self.computed[voter] = result
        if result in self.candidates:
            self._checked_counts[result] += 1
            self._checked.changed(result)

    def _count(self, ballot: Ballot, step: int) -> None:
        target, result, own = ballot
        self.counts[target] += step
        if not self.counts[target]:
            del self.counts[target]
        answer = self.latest.get(target)
        if answer is not None and target in self._place:
            self._holders[_key(answer)].changed(target)
        supported = supported_result((target, result or (self._labels.get(answer.label, "") if answer else ""), own))
        self.support[supported] += step
        if supported in self.candidates:
            self._most.changed(supported)

    def any_evidence(self) -> bool:
        """Whether there is a vote, or independent answers that agree."""
        return bool(self.counts) or self._agreement > 0

    def checked_leaders(self) -> list[tuple[str, int]]:
        """The two candidate results most check tools computed, with their counts (fewer when fewer were)."""
        return [(r, self._checked_counts[r]) for r in self._checked.top(2) if self._checked_counts[r] > 0]

    def most_supported(self) -> str:
        """The candidate with the most support; ties to the most answers overall, then the first listed holder."""
        return self._most.top()[0]

    def shown(self) -> dict[str, int]:
        return {r: n for r, n in self.support.items() if n > 0}

    def won_by(self, result: str, rule: str, reason: str) -> Decision:
        """``result`` wins: among its holders, the agent with the most votes, then the first listed."""
        return Decision(self._holders[result].top()[0], rule, reason, self.shown())


# --- the first answers (every counted agent's first turn has ended) ----------------------------------------


def _firsts(ev: Evidence) -> list[AnswerResult]:
    """The counted agents' newest answers that are first (independent) answers, in config order."""
    assert ev.first_turns is not None
    counted = set(ev.first_turns.agents)
    latest = {a.agent: a for a in ev.answers if a.latest}
    return [latest[agent] for agent in ev.order if agent in counted and agent in latest and latest[agent].independent]


def _unanimous_first_answers(ev: Evidence, _round: RoundCounts) -> Decision | None:
    """Under ``prior``, independent first answers that all state one result end the run; the prior agent (listed
    first) presents, as it would have won."""
    turns = ev.first_turns
    if ev.winner_rule != "prior" or turns is None or not turns.on_answer:
        return None
    answers = ev.answers
    head = answers[0] if answers else None
    first = "" if head is None or not head.stated else head.result
    if not first or len(answers) < 2 or not all(a.independent and a.result == first for a in answers):
        return None
    latest = {a.agent for a in answers if a.latest}
    if len(turns.agents) < 2 or any(agent not in latest for agent in turns.agents):
        return None
    winner = next(agent for agent in ev.order if agent in turns.agents)
    return Decision(winner, "unanimous_first_answers", f"every first answer states {first!r}", ends_run=True,
                    record=UnanimousFirstAnswers(result=first, labels=tuple(a.label for a in answers)))


def _first_answer_support(firsts: list[AnswerResult]) -> tuple[dict[str, int], dict[str, int]]:
    """Per stated result: the first answers stating it, and those of them a program printed (code answers)."""
    support: dict[str, int] = {}
    computed: dict[str, int] = {}
    for answer in firsts:
        if answer.stated and answer.result:
            support[answer.result] = support.get(answer.result, 0) + 1
            if answer.computed:
                computed[answer.result] = computed.get(answer.result, 0) + 1
    return support, computed


def _code_first_answers(firsts: list[AnswerResult]) -> Decision:
    """First answers to a code task (each ran the task's own examples): the behaviour most of them share wins,
    then the first listed holder; when none passed, the first listed answer presents."""
    support, computed = _first_answer_support(firsts)

    def weight(result: str) -> tuple[int, int]:
        return computed.get(result, 0), support[result]

    best = max((weight(result) for result in support), default=(0, 0))
    winner = next((a for a in firsts if a.stated and a.result and weight(a.result) == best), firsts[0])
    return Decision(winner.agent, "first_answers_evidence", "code answers: most alike on the task's examples",
                    ends_run=True, record=FirstAnswersDecided(
                        result=winner.result if winner.stated else "", winner=winner.label, support=support,
                        labels=tuple(a.label for a in firsts), computed=computed))


def _off_kind(firsts: list[AnswerResult]) -> set[str]:
    """Computed results of a kind no written answer gives (``evidence.in_kind``): they answer another question, so
    they are no evidence. Only written answers that conclude anything show a kind; with none, nothing is set aside."""
    written = [a.conclusion for a in firsts if not a.program and a.conclusion.strip()]
    results = {a.result for a in firsts if a.program and a.computed and a.result}
    return {r for r in results if written and not any(in_kind(c, r) for c in written)}


def _weighed(firsts: list[AnswerResult]) -> tuple[dict[str, int], dict[str, int]]:
    """Per computed result: the valid programs printing it, and every answer supporting it (those programs and
    the written answers stating it; a written answer stating several supports the most specific). A result of a
    kind no written answer gives is not counted (``_off_kind``)."""
    computed: dict[str, int] = {}
    off_kind = _off_kind(firsts)
    for answer in firsts:
        if answer.program and answer.computed and answer.result and answer.result not in off_kind:
            computed[answer.result] = computed.get(answer.result, 0) + 1
    support = dict(computed)
    for answer in firsts:
        if not answer.program:
            stated = [r for r in computed if states(answer.conclusion, r)]
            if stated:
                support[max(stated, key=lambda r: (len(r.split()), len(r)))] += 1
    return computed, support


def _written_choice(firsts: list[AnswerResult], rule_reason: str, computed: dict[str, int],
                    support: dict[str, int], set_aside: tuple[str, ...] = ()) -> Decision | None:
    """The written answers decide among themselves: the result most of them state, then the first listed (an
    answer stating none supports nothing); None when no answer is written."""
    written = [a for a in firsts if not a.program]
    if not written:
        return None
    stated: dict[str, int] = {}
    for answer in written:
        if answer.stated and answer.result:
            stated[answer.result] = stated.get(answer.result, 0) + 1
    best = max(stated.values(), default=0)
    presenter = next((a for a in written if a.stated and a.result and stated[a.result] == best), written[0])
    return Decision(presenter.agent, "first_answers_evidence", rule_reason, support=support or stated, ends_run=True,
                    record=FirstAnswersDecided(result=presenter.result if presenter.stated else "",
                                               winner=presenter.label, support=support or stated,
                                               labels=tuple(a.label for a in firsts), computed=computed,
                                               set_aside=set_aside))


def _first_answers_evidence(ev: Evidence, _round: RoundCounts) -> Decision | None:
    """Under ``decide`` (issue 48; bench/results/plain-127/RULE.md): execution outranks agreement, agreement
    outranks listing order. A result's key is (valid programs printing it, answers supporting it, first listed
    holder); a computed result of a kind no written answer gives answered another question and is not counted
    (bench/results/issue48-plain3/RULE.md). No computed result: the written answers decide among themselves
    (failed, silent, prose and literal programs never present while one exists). Settled when no result is
    computed, or the leading one is held by two answers and computed by more programs than the next; until then
    the next reserve agent is asked, and once the reserve is spent unsettled the written answers decide
    (uncorroborated evidence, after more was asked for, is none)."""
    if ev.after_first_answers != "decide" or ev.first_turns is None:
        return None
    firsts = _firsts(ev)
    if not firsts:  # every counted agent's first turn failed: a reserve agent, if one is left, is asked
        return Decision(None, "first_answers_evidence", f"no first answer: {ev.reserve[0]} is asked",
                        ask=ev.reserve[0], record=FirstAnswersDisagree(ask=ev.reserve[0])) if ev.reserve else None
    if any(a.passed is not None for a in firsts):
        return _code_first_answers(firsts)
    labels = tuple(a.label for a in firsts)
    computed, support = _weighed(firsts)
    off_kind = tuple(sorted(_off_kind(firsts)))
    aside = f" ({', '.join(off_kind)}: not the kind of result the written answers give, set aside)" if off_kind else ""
    if not computed:
        return _written_choice(firsts, f"no program computed a result: the written answers decide{aside}", {}, {},
                               off_kind) or _code_first_answers(firsts)  # none written either: the first listed
    place = {agent: i for i, agent in enumerate(ev.order)}
    holder = {r: min((a for a in firsts if a.program and a.computed and a.result == r),
                     key=lambda a: place.get(a.agent, len(place))) for r in computed}
    ranked = sorted(computed, key=lambda r: (computed[r], support[r], -place.get(holder[r].agent, len(place))),
                    reverse=True)
    lead = ranked[0]
    settled = support[lead] >= 2 and (len(ranked) == 1 or computed[lead] > computed[ranked[1]])
    if not settled and ev.reserve:
        return Decision(None, "first_answers_evidence", f"the first answers disagree: {ev.reserve[0]} is asked{aside}",
                        support=support, ask=ev.reserve[0], record=FirstAnswersDisagree(
                            ask=ev.reserve[0], support=support, computed=computed, labels=labels, set_aside=off_kind))
    if not settled and ev.reserve_spent:
        fallback = _written_choice(firsts, f"the evidence never settled: the written answers decide{aside}", computed,
                                   support, off_kind)
        if fallback is not None:
            return fallback
    reason = ("computed, and agreed" if settled else "computed, uncorroborated") + aside
    return Decision(holder[lead].agent, "first_answers_evidence", reason, support=support, ends_run=True,
                    record=FirstAnswersDecided(result=lead, winner=holder[lead].label, support=support,
                                               labels=labels, computed=computed, set_aside=off_kind))


# --- a vote round ------------------------------------------------------------------------------------------


def _results_unknown(ev: Evidence, round_: RoundCounts) -> Decision | None:
    """No answers told to the judge: most votes wins, ties to the agent listed first."""
    if round_.latest:
        return None
    return Decision(pick_winner(dict(round_.counts), ev.order), "results_unknown", "most votes, no results known")


def _no_evidence(ev: Evidence, round_: RoundCounts) -> Decision | None:
    """No votes and no agreement: nothing to decide on (the caller takes the newest answer)."""
    if round_.any_evidence():
        return None
    return Decision(None, "no_evidence", "no votes and no agreement yet")


def _checked_results(ev: Evidence, round_: RoundCounts) -> Decision | None:
    """The result of an answer in view that most check-tool votes computed, unless two tie for most."""
    ranked = round_.checked_leaders()
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return round_.won_by(ranked[0][0], "checked_results", "most votes whose result a check tool computed")


def _prior(ev: Evidence, round_: RoundCounts) -> Decision | None:
    """Under ``prior``: the first agent's independent first answer wins unless that agent, shown the others,
    concludes another result R with at least the prior's support; None when the prior is no longer in view."""
    if ev.winner_rule != "prior" or round_.prior is None:
        return None
    prior_agent, prior_answer = round_.prior
    prior = _key(prior_answer)
    if prior not in round_.candidates:
        return None
    ballot = ev.votes.get(prior_agent)
    best = prior
    if ballot is not None:
        target, _result, own = ballot
        voted_for = round_.latest.get(target)
        if own or voted_for is None or voted_for.stated or not prior_answer.stated:
            concluded = supported_result(ballot)
            if concluded != prior and concluded in round_.candidates \
                    and round_.support[concluded] >= round_.support[prior]:
                best = concluded
    return round_.won_by(best, "prior", "the prior agent's result" if best == prior
                         else "the prior agent concluded another result")


def _most_support(ev: Evidence, round_: RoundCounts) -> Decision | None:
    """The result with the most support wins; ties to the most answers overall, then the first listed holder."""
    return round_.won_by(round_.most_supported(), "most_support", "most votes and agreement")


@dataclass(frozen=True)
class Rule:
    """One rule: its name (as docs/architecture.md lists it) and what it decides, or None to pass."""

    name: str
    decides: Callable[[Evidence, RoundCounts], Decision | None]


RULES: tuple[Rule, ...] = (
    Rule("unanimous_first_answers", _unanimous_first_answers),
    Rule("first_answers_evidence", _first_answers_evidence),
    Rule("results_unknown", _results_unknown),
    Rule("no_evidence", _no_evidence),
    Rule("checked_results", _checked_results),
    Rule("prior", _prior),
    Rule("most_support", _most_support),
)
"""In order: the first rule that decides, decides. Before the vote-round rules pick among results, executions
come first: when an answer in view passed the task's own examples, only passing answers' results can win."""


def rules_without(*names: str) -> tuple[Rule, ...]:
    """``RULES`` less the named ones (a replay of a rule as it was before one was added)."""
    unknown = set(names) - {rule.name for rule in RULES}
    if unknown:
        raise ValueError(f"no such rule: {sorted(unknown)}")
    return tuple(rule for rule in RULES if rule.name not in names)


def decide(ev: Evidence, rules: Sequence[Rule] = RULES, counts: RoundCounts | None = None) -> Decision:
    """The decision on ``ev``: the first of ``rules`` that decides (the last rule, ``most_support``, always does
    once there are answers); no first-answer rule decides unless ``ev.first_turns`` says the first turns ended.
    ``counts``: ``ev``'s round counts kept as its votes arrived (the judge's; ``ev.votes`` and ``ev.computed`` are
    theirs); built from scratch when not given, with the same result (``tests/test_decision.py``)."""
    round_ = RoundCounts.of(ev) if counts is None else counts
    for rule in rules:
        decision = rule.decides(ev, round_)
        if decision is not None:
            return decision
    return Decision(None, "", "no rule decided", round_.shown())


# --- the first answers before they are all in (agreement stops: issue 48) ----------------------------------

# A pending first answer is assumed to be any of these, besides one of the results already given: a new number, a
# new word, a truth value, or a yes or no; each of a kind the kind check (``evidence.in_kind``) reads differently.
_NEW_RESULTS = ("7", "blue", "True", "yes", "no")
MAX_PENDING = 2  # the hypotheses multiply with each pending answer: past this many, wait for the answers


def _possible_answers(agent: str, program: bool, firsts: Sequence[AnswerResult], code: bool
                      ) -> list[AnswerResult | None]:
    """Every first answer ``agent`` could still give, as far as ``decide`` can tell answers apart (None: its
    first turn fails): a code answer of any behaviour already seen or a new one, passing its examples or not; a
    program printing any result seen or new, or printing nothing it computed; a written answer concluding any
    of them."""
    label = f"<pending {agent}>"
    seen = sorted({a.result for a in firsts if a.result})
    possible: list[AnswerResult | None] = [None]
    if code:
        for result in [*seen, "<another behaviour>"]:
            for passed in (True, False):
                possible.append(AnswerResult(agent=agent, label=label, result=result, independent=True,
                                             stated=passed, passed=passed))  # a code answer states what it passed
        return possible
    for result in [*seen, *_NEW_RESULTS]:
        if program:
            possible.append(AnswerResult(agent=agent, label=label, result=result, independent=True, computed=True,
                                         program=True))
        else:  # stating it (an "Answer:" line, a concluding value), or only ending on it
            possible.extend(AnswerResult(agent=agent, label=label, result=result, independent=True, stated=stated,
                                         conclusion=result) for stated in (True, False))
    if program:
        possible.append(AnswerResult(agent=agent, label=label, result="", independent=True, stated=False,
                                     program=True))
    return possible


def decided_before_all_in(ev: Evidence, pending: Mapping[str, bool]) -> Decision | None:
    """Agreement stops (Adaptive-Consistency, Aggarwal et al. 2023): the first answers of ``ev.first_turns.agents``
    are in and ``pending`` (agent -> asked for a program) are still to come. When ``decide`` would end the run with
    the same result whatever those answers turn out to be (each one any of ``_possible_answers``), that result wins
    now and the pending turns are not waited for; else None. The winner is decided among the answers in, as
    ``decide`` does (so the presenter is the first listed of them holding the result). Waiting could only have
    added support to a result that wins either way."""
    if ev.after_first_answers != "decide" or ev.first_turns is None or not pending or len(pending) > MAX_PENDING:
        return None
    now = decide(ev)
    if not now.ends_run or now.record is None or not isinstance(now.record, FirstAnswersDecided) \
            or not now.record.result:
        return None
    firsts = _firsts(ev)
    code = any(a.passed is not None for a in firsts)
    choices = [_possible_answers(agent, program, firsts, code) for agent, program in pending.items()]
    combinations: list[list[AnswerResult | None]] = [[]]
    for options in choices:
        combinations = [[*combo, option] for combo in combinations for option in options]
    for combo in combinations:
        extra = tuple(a for a in combo if a is not None)
        later = decide(dataclasses.replace(
            ev, answers=(*ev.answers, *extra),
            first_turns=FirstTurnsEnded(agents=(*ev.first_turns.agents, *(a.agent for a in extra)))))
        if not later.ends_run or not isinstance(later.record, FirstAnswersDecided) \
                or later.record.result != now.record.result:
            return None
    waived = tuple(pending)
    return dataclasses.replace(now, reason=f"{now.reason}; no first answer still to come could change the result "
                                           f"({', '.join(waived)} not waited for)",
                               record=now.record.model_copy(update={"not_waited_for": waived}))


def tally(votes: Mapping[str, Ballot], answers: tuple[AnswerResult, ...], order: Sequence[str],
          rule: WinnerRule = "support", computed: Mapping[str, str] | None = None) -> tuple[str | None, dict[str, int]]:
    """A vote round's winner and each result's support: ``decide`` on the round's votes."""
    decision = decide(Evidence(answers=answers, order=tuple(order), votes=votes, computed=computed or {},
                               winner_rule=rule))
    return decision.winner, decision.support
