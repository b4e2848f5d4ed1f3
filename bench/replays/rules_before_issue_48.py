"""The first-answer rules issue 48 replaced, as they were at 2cddd55: ``no_result_asked``,
``two_valued_first_answers`` and ``first_answers_majority``, for replays of recorded runs under the rule of their
day. ``RULES`` is today's ``decision.RULES`` with issue 48's ``first_answers_evidence`` put back to these three;
``decide`` is today's, which takes any rule list (the vote-round rules did not change).

Kept as code, not read from git, so a replay runs in any clone (a shallow one has no 2cddd55).
"""

from __future__ import annotations

from massgen.actors.coordination.decision import RULES as TODAY
from massgen.actors.coordination.decision import Decision, Evidence, Rule, _firsts
from massgen.actors.coordination.decision import _first_answer_support as first_answer_support
from massgen.actors.coordination.results import TWO_VALUED_RESULTS
from massgen.messages import AnswerResult, FirstAnswersDecided

__all__ = ["RULES", "rules_without"]

def _no_result_asked(ev: Evidence, _round: object) -> Decision | None:
    """Under ``decide``: a program printed, but no written first answer states a result, so the question asks for
    none; the first listed written answer presents and no program's output is weighed."""
    if ev.after_first_answers != "decide" or ev.first_turns is None:
        return None
    firsts = _firsts(ev)
    written = [a for a in firsts if not a.program and a.passed is None]
    if not (written and any(a.computed for a in firsts) and not any(a.stated for a in written)):
        return None
    return Decision(written[0].agent, "no_result_asked", "a program printed, but no written answer states a result",
                    ends_run=True, record=FirstAnswersDecided(result="", winner=written[0].label, support={},
                                                              labels=tuple(a.label for a in firsts),
                                                              no_result_asked=True))


def _first_answers_decided(firsts: list[AnswerResult], winner: AnswerResult, rule: str, reason: str,
                           two_valued: bool) -> Decision:
    support, computed = first_answer_support(firsts)
    return Decision(winner.agent, rule, reason, ends_run=True, record=FirstAnswersDecided(
        result=winner.result if winner.stated else "", winner=winner.label, support=support,
        labels=tuple(a.label for a in firsts), computed=computed, two_valued=two_valued))


def _two_valued_first_answers(ev: Evidence, _round: object) -> Decision | None:
    """Under ``decide``: when every stated result is a yes or no, a true or false, the first listed answer stating
    one decides; two wrong yes/no answers agree whenever both are wrong."""
    if ev.after_first_answers != "decide" or ev.first_turns is None:
        return None
    firsts = _firsts(ev)
    support, _computed = first_answer_support(firsts)
    if not support or not support.keys() <= TWO_VALUED_RESULTS:
        return None
    winner = next(a for a in firsts if a.stated and a.result)
    return _first_answers_decided(firsts, winner, "two_valued_first_answers",
                                  "every stated result is two-valued: the first listed decides", True)


def _first_answers_majority(ev: Evidence, _round: object) -> Decision | None:
    """Under ``decide``: the result most first answers state wins, computed ones (a program printed it) first, then
    every answer, then the first listed holder; when none states one, the first listed answer presents."""
    if ev.after_first_answers != "decide" or ev.first_turns is None:
        return None
    firsts = _firsts(ev)
    if not firsts:
        return None
    support, computed = first_answer_support(firsts)

    def weight(result: str) -> tuple[int, int]:
        return computed.get(result, 0), support[result]

    best = max((weight(result) for result in support), default=(0, 0))
    winner = next((a for a in firsts if a.stated and a.result and weight(a.result) == best), firsts[0])
    reason = "most first answers, computed first" if support else "no first answer states a result"
    return _first_answers_decided(firsts, winner, "first_answers_majority", reason, False)


_REPLACED = {"first_answers_evidence": (Rule("no_result_asked", _no_result_asked),
                                        Rule("two_valued_first_answers", _two_valued_first_answers),
                                        Rule("first_answers_majority", _first_answers_majority))}
RULES: tuple[Rule, ...] = tuple(old for rule in TODAY for old in _REPLACED.get(rule.name, (rule,)))


def rules_without(*names: str) -> tuple[Rule, ...]:
    """``RULES`` less the named ones (a replay of the rule before a later one was added)."""
    unknown = set(names) - {rule.name for rule in RULES}
    if unknown:
        raise ValueError(f"no such rule: {sorted(unknown)}")
    return tuple(rule for rule in RULES if rule.name not in names)
