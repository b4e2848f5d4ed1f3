"""The fourth plain question set (``bench/asked_plainly_4.py``, ``--tasks plain4``): 14 questions in each of the first
set's nine kinds, none of them one of the first three sets', none asking for an answer format, each graded by the
first set's graders so that its typical right reply is right and its typical wrong reply wrong; drawn and selected as
``--tasks plain`` is, and tabled by kind from the tasks' families."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from bench.asked_plainly import KINDS, QUESTIONS, Question, grader
from bench.asked_plainly_2 import QUESTIONS_2
from bench.asked_plainly_3 import QUESTIONS_3
from bench.asked_plainly_4 import KINDS_4, QUESTIONS_4, plain4_tasks
from bench.by_kind import by_kind
from bench.tasks import select_tasks


def _said(text: str) -> str:
    """A question as said: case, punctuation and spacing aside."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _right(question_text: str, reply: str | None) -> bool:
    question = next(q for q in QUESTIONS_4 if q.text == question_text)
    return grader(question)(reply).correct


def test_the_set_has_the_first_sets_nine_kinds_with_14_questions_each() -> None:
    kinds = Counter(q.kind for q in QUESTIONS_4)
    assert set(kinds) == set(KINDS) and set(KINDS_4) == set(KINDS)
    assert all(count == 14 for count in kinds.values()), kinds
    assert len(QUESTIONS_4) == 9 * 14


def test_no_question_is_one_of_the_first_three_sets_or_asked_twice() -> None:
    earlier = {_said(q.text) for q in QUESTIONS + QUESTIONS_2 + QUESTIONS_3}
    said = [_said(q.text) for q in QUESTIONS_4]
    assert not earlier & set(said), earlier & set(said)
    assert len(set(said)) == len(said)


def test_no_question_asks_for_an_answer_format() -> None:
    forbidden = re.compile(r"answer\s*:|final answer|answer with|only the|just the|in the form|format|reply with|"
                           r"respond with|one word|a single", re.IGNORECASE)
    for q in QUESTIONS_4:
        assert not forbidden.search(q.text), q.text


@pytest.mark.parametrize("question", QUESTIONS_4, ids=lambda q: q.text[:50])
def test_each_grader_accepts_its_right_reply_and_rejects_its_wrong_one(question: Question) -> None:
    grade = grader(question)
    assert grade(question.right_reply).correct, question.right_reply
    assert not grade(question.wrong_reply).correct, question.wrong_reply
    assert not grade("").correct and not grade(None).correct


def test_plain4_tasks_draws_by_seed_with_ids_and_families_per_kind() -> None:
    every = plain4_tasks(1000, 0)
    assert len(every) == len(QUESTIONS_4) and {t.family for t in every} == set(KINDS_4)
    assert len({t.task_id for t in every}) == len(every)
    assert every[0].task_id == "plain4-fact-0" and all(t.task_id.startswith(f"plain4-{t.family}-") for t in every)
    assert Counter(t.task_id.rsplit("-", 1)[1] for t in every) == {str(k): 9 for k in range(14)}
    ten, forty = plain4_tasks(10, 3), plain4_tasks(40, 3)
    assert len(ten) == 10 and {t.task_id for t in ten} <= {t.task_id for t in forty}
    assert plain4_tasks(10, 3) == ten and plain4_tasks(10, 4) != ten


def test_tasks_plain4_is_selected_as_tasks_plain_is_and_beside_the_other_sets() -> None:
    seeds, tasks = select_tasks("plain4", 1000, "0")
    assert seeds == [0] and [t.task_id for t in tasks] == [t.task_id for t in plain4_tasks(1000, 0)]
    _, all_four = select_tasks("plain,plain2,plain3,plain4", 1000, "0")
    assert len(all_four) == len(QUESTIONS) + len(QUESTIONS_2) + len(QUESTIONS_3) + len(QUESTIONS_4)
    assert len({t.task_id for t in all_four}) == len(all_four)
    with pytest.raises(SystemExit):
        select_tasks("plain4", 10, "0,1")


def test_an_unknown_set_is_refused_with_plain4_among_the_known_ones() -> None:
    with pytest.raises(SystemExit, match="plain4"):
        select_tasks("plain5", 10, "0")


def test_the_table_by_kind_reads_plain4s_kinds_from_its_families() -> None:
    _, tasks = select_tasks("plain4", 1000, "0")
    rows = [{"task_id": t.task_id, "method": "team", "text": "", "calls": 3, "seconds": 1.0, "first_answers": []}
            for t in tasks]
    table = by_kind(rows, tasks)
    assert [r.kind for r in table[:-1]] == sorted(KINDS_4) and all(r.n == 14 for r in table[:-1])
    assert table[-1].kind == "overall" and table[-1].n == len(QUESTIONS_4)


def test_question_own_values_echoed_are_not_the_result() -> None:
    q = "10 people in a room all shake hands with each other once. how many handshakes is that"
    assert _right(q, "10 people, each pair once: 45 handshakes.") and not _right(q, "10")
    q = "I got 72, 85 and 90 on my first three tests. What do I need on the fourth to average 85?"
    assert _right(q, "You need a 93 to bring your average to 85.") and not _right(q, "85")
    q = "if 3 pencils cost 75 cents how much do 7 pencils cost"
    for right in ("$1.75", "175 cents", "7 pencils cost $1.75 (25 cents each)."):
        assert _right(q, right), right
    assert not _right(q, "75 cents")
    q = "how many years were there between 1066 and 1492"
    assert _right(q, "426 years") and not _right(q, "From 1066 to 1492.")


def test_where_the_key_is_the_questions_own_number_the_last_number_counts() -> None:
    q = "what comes next: 12, 3, 6, 9"
    assert _right(q, "12") and _right(q, "Like a clock face, 3 hours at a time: after 9 comes 12.")
    assert not _right(q, "15")


def test_a_fraction_in_the_forms_people_write_it() -> None:
    q = "what's 0.375 as a fraction?"
    for right in ("3/8", "375/1000 = 3/8", "\\(\\frac{3}{8}\\)", "three eighths", "three-eighths"):
        assert _right(q, right), right
    for wrong in ("3/4", "375/1000", "\\frac{3}{4}"):
        assert not _right(q, wrong), wrong
    q = "If you roll two dice, what's the chance the total is 7?"
    assert _right(q, "1/6") and _right(q, "6/36, which simplifies to 1/6") and _right(q, "about 1 in 6")
    assert not _right(q, "6/36 = 1/6? No: it's 1/12.")


def test_a_day_of_the_year_with_or_without_a_year() -> None:
    q = "what date are the ides of march?"
    for right in ("15 March", "March 15", "The 15th of March, 44 BC.", "March 15, 44 BC"):
        assert _right(q, right), right
    for wrong in ("13 March", "March 1", "It's in March."):
        assert not _right(q, wrong), wrong
    q = "what's the latest date easter sunday can ever fall on"
    assert _right(q, "April 25, as in 1943 and 2038.") and _right(q, "25 April 2038")
    assert not _right(q, "April 30")


def test_a_date_read_from_the_slashes_in_the_question_is_not_the_question_s() -> None:
    q = "I got a letter from the US dated 03/04/2027. What date is that?"
    assert _right(q, "March 4, 2027") and _right(q, "4 March 2027 (month first in the US).")
    assert not _right(q, "3 April 2027") and not _right(q, "03/04/2027")


def test_yes_no_is_read_from_a_sentence() -> None:
    q = "does a year have exactly 52 weeks"
    for right in ("No.", "A year is 52 weeks and 1 day.", "It doesn't have exactly 52 weeks."):
        assert _right(q, right), right
    for wrong in ("Yes.", "A year has exactly 52 weeks."):
        assert not _right(q, wrong), wrong
    q = "does ice sink in water?"
    assert _right(q, "Ice floats.") and not _right(q, "Yes, it sinks.")
    q = "can you divide by zero"
    assert _right(q, "You can't divide by zero.") and not _right(q, "Yes.")


def test_lists_in_order_are_read_whole() -> None:
    q = "order the layers of the earth from the outside in: mantle, inner core, crust, outer core"
    assert _right(q, "1. Crust\n2. Mantle\n3. Outer core\n4. Inner core")
    assert not _right(q, "crust, mantle, inner core, outer core")
    assert not _right(q, "The crust is on the outside.")  # one item names no list
    q = "which months have 31 days"
    assert _right(q, "- January\n- March\n- May\n- July\n- August\n- October\n- December")
    assert not _right(q, "January, March, May, July, August, October")  # one missing


def test_words_and_letters_as_people_write_them() -> None:
    assert _right("whats the plural of child", "It's children (not childs).")
    assert not _right("whats the plural of child", "childs")
    assert _right("if you take the r out of friend what word is left", "f-i-e-n-d")
    assert not _right("if you take the r out of friend what word is left", "friend")
    assert _right("what letter is dash dot dot dot in morse code?", "The letter **B**.")
    assert _right("what letter do you get if you turn a lowercase d upside down, rotating it 180 degrees?",
                  "It becomes a 'p'.")


def test_a_trick_answered_by_its_riddle_not_its_words() -> None:
    q = "what word becomes shorter when you add two letters to it"
    assert _right(q, "The word 'short': add 'er' to get 'shorter'.") and not _right(q, "shorter")
    q = "A man pushes his car to a hotel and tells the owner he's bankrupt. Why?"
    assert _right(q, "He's playing Monopoly.")
    assert not _right(q, "His car ran out of gas.")
