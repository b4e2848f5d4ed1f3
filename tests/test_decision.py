"""Deciding (``actors/coordination/decision.py``): one pure function over one ordered list of named rules.

Each rule is specified here on the smallest evidence that shows it decide, and next to it the evidence on
which it passes the decision on. Whole runs through the judge are in ``test_program_answers.py``,
``test_answer_quality.py`` and ``test_check_tools.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from massgen.actors.coordination.decision import (
    RULES,
    Ballot,
    Evidence,
    FirstTurnsEnded,
    decide,
    rules_without,
)
from massgen.messages import AnswerResult, FirstAnswersDecided, UnanimousFirstAnswers

ORDER = ("p", "q", "g")


def answer(agent: str, result: str, *, stated: bool = True, program: bool = False, computed: bool | None = None,
           independent: bool = True, passed: bool | None = None, version: int = 1) -> AnswerResult:
    """An agent's answer; a program answer is computed when its program printed a result."""
    return AnswerResult(agent=agent, label=f"{agent}.{version}", result=result, stated=stated, independent=independent,
                        program=program, computed=(program and stated) if computed is None else computed,
                        passed=passed)


def first_answers(*answers: AnswerResult, rule: str = "support", after: str = "decide",
                  on_answer: bool = True) -> Evidence:
    return Evidence(answers=answers, order=ORDER, winner_rule=rule, after_first_answers=after,  # type: ignore[arg-type]
                    first_turns=FirstTurnsEnded(agents=ORDER, on_answer=on_answer))


def vote_round(*answers: AnswerResult, votes: dict[str, Ballot] | None = None, rule: str = "support",
               computed: dict[str, str] | None = None) -> Evidence:
    return Evidence(answers=answers, order=ORDER, votes=votes or {}, computed=computed or {},
                    winner_rule=rule)  # type: ignore[arg-type]


def test_the_rules_are_one_ordered_list_and_the_architecture_lists_them_in_that_order() -> None:
    names = [rule.name for rule in RULES]
    assert len(names) == len(set(names))
    text = (Path(__file__).resolve().parent.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    listed = [name for name in re.findall(r"^\| `(\w+)` \|", text, re.MULTILINE) if name in names]
    assert listed == names


def test_a_replay_names_the_rules_it_leaves_out() -> None:
    kept = [rule.name for rule in rules_without("no_result_asked")]
    assert kept == [rule.name for rule in RULES if rule.name != "no_result_asked"]
    with pytest.raises(ValueError, match="no such rule"):
        rules_without("majority")


def test_unanimous_first_answers_end_a_prior_run_with_the_prior_agent_presenting() -> None:
    answers = (answer("q", "42"), answer("p", "42"), answer("g", "42"))
    decision = decide(first_answers(*answers, rule="prior", after="vote"))
    assert (decision.rule, decision.winner, decision.ends_run) == ("unanimous_first_answers", "p", True)
    assert isinstance(decision.record, UnanimousFirstAnswers)
    assert decision.record.payload() == {"result": "42", "labels": ["q.1", "p.1", "g.1"]}
    # Not when a failure rather than an answer completed them, not under support, not when one differs.
    assert not decide(first_answers(*answers, rule="prior", after="vote", on_answer=False)).ends_run
    assert not decide(first_answers(*answers, after="vote")).ends_run
    assert not decide(first_answers(answer("p", "42"), answer("q", "41"), answer("g", "42"), rule="prior",
                                    after="vote")).ends_run


def test_a_question_that_asks_for_no_result_is_answered_by_the_first_written_answer() -> None:
    decision = decide(first_answers(answer("p", "30", program=True), answer("q", "-2.4e-14", program=True),
                                    answer("g", "whispers of the sea", stated=False)))
    assert (decision.rule, decision.winner) == ("no_result_asked", "g")
    assert isinstance(decision.record, FirstAnswersDecided) and decision.record.no_result_asked
    assert decision.record.result == "" and decision.record.support == {}
    # A written answer that states a result leaves the programs weighed.
    stated = decide(first_answers(answer("p", "3", program=True), answer("g", "2")))
    assert stated.rule == "first_answers_majority" and stated.winner == "p"


def test_a_two_valued_result_is_decided_by_the_first_listed_answer_stating_one() -> None:
    decision = decide(first_answers(answer("p", "yes", program=True), answer("q", "no", program=True),
                                    answer("g", "no")))
    assert (decision.rule, decision.winner) == ("two_valued_first_answers", "p")
    assert isinstance(decision.record, FirstAnswersDecided) and decision.record.two_valued
    assert decision.record.support == {"yes": 1, "no": 2} and decision.record.computed == {"yes": 1, "no": 1}


def test_the_first_answers_majority_weighs_computed_results_first() -> None:
    decision = decide(first_answers(answer("p", "3", program=True), answer("q", "2"), answer("g", "2")))
    assert (decision.rule, decision.winner) == ("first_answers_majority", "p")
    assert isinstance(decision.record, FirstAnswersDecided)
    assert (decision.record.result, decision.record.support, decision.record.computed) == ("3", {"3": 1, "2": 2},
                                                                                            {"3": 1})
    # Among equals, most answers; then the first listed. An answer stating nothing supports nothing.
    assert decide(first_answers(answer("p", "7", stated=False, program=True), answer("q", "2"),
                                answer("g", "2"))).winner == "q"
    assert decide(first_answers(answer("p", "1"), answer("q", "2"))).winner == "p"
    # None states a result: the first listed presents, stating none.
    none = decide(first_answers(answer("p", "", stated=False, program=True), answer("q", "x", stated=False)))
    assert none.winner == "p" and isinstance(none.record, FirstAnswersDecided) and none.record.result == ""


def test_the_first_answer_rules_wait_for_every_first_turn_and_their_setting() -> None:
    answers = (answer("p", "3", program=True), answer("q", "2"), answer("g", "2"))
    assert not decide(vote_round(*answers)).ends_run  # no FirstTurnsEnded: a vote round's decision
    assert not decide(first_answers(*answers, after="vote")).ends_run


def test_with_no_results_told_most_votes_win_and_ties_go_to_the_first_listed() -> None:
    votes = {"p": ("g", "", ""), "q": ("q", "", ""), "g": ("g", "", "")}
    assert (decide(vote_round(votes=votes)).rule, decide(vote_round(votes=votes)).winner) == ("results_unknown", "g")
    assert decide(vote_round(votes={"p": ("q", "", ""), "q": ("p", "", "")})).winner == "p"


def test_with_no_votes_and_no_agreement_there_is_no_winner() -> None:
    decision = decide(vote_round(answer("p", "1"), answer("q", "2")))
    assert (decision.rule, decision.winner, decision.support) == ("no_evidence", None, {})


def test_executions_come_first_only_passing_answers_can_win() -> None:
    votes = {"p": ("q", "fails", ""), "q": ("q", "fails", ""), "g": ("q", "fails", "")}
    decision = decide(vote_round(answer("p", "passes", passed=True), answer("q", "fails", passed=False),
                                 answer("g", "fails", passed=False), votes=votes))
    assert decision.winner == "p"


def test_checked_results_come_before_the_votes_that_reread() -> None:
    votes = {"p": ("p", "41", ""), "q": ("p", "41", "42"), "g": ("p", "41", "42")}
    answers = (answer("p", "41"), answer("q", "42"), answer("g", "41"))
    decision = decide(vote_round(*answers, votes=votes, computed={"q": "42", "g": "42"}))
    assert (decision.rule, decision.winner) == ("checked_results", "q")
    # A tie among the checked results is left to the rules after it.
    assert decide(vote_round(*answers, votes=votes, computed={"q": "42", "g": "41"})).rule == "most_support"


def test_the_prior_holds_against_a_vote_by_habit_and_yields_to_its_own_agent() -> None:
    answers = (answer("p", "42"), answer("q", "41"), answer("g", "41"))
    habit = {"q": ("q", "41", ""), "g": ("q", "41", "")}
    decision = decide(vote_round(*answers, votes=habit, rule="prior"))
    assert (decision.rule, decision.winner) == ("prior", "p")
    own = decide(vote_round(*answers, votes={**habit, "p": ("q", "41", "")}, rule="prior"))
    assert (own.rule, own.winner) == ("prior", "q")


def test_most_support_wins_counting_votes_and_independent_agreement() -> None:
    answers = (answer("p", "1"), answer("q", "2"), answer("g", "2"))
    decision = decide(vote_round(*answers, votes={"p": ("p", "1", "")}))
    assert (decision.rule, decision.winner, decision.support) == ("most_support", "q", {"1": 1, "2": 1})
    # Equal support: most answers overall, then the first listed holder.
    assert decide(vote_round(answer("p", "1"), answer("q", "2"), votes={"g": ("q", "2", ""),
                                                                        "p": ("p", "1", "")})).winner == "p"
