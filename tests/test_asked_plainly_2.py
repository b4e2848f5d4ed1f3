"""The fresh plain question set (``bench/asked_plainly_2.py``, ``--tasks plain2``): 14 questions in each of the first
set's nine kinds, none of them one of the first set's, none asking for an answer format, each graded by the first
set's graders so that its typical right reply is right and its typical wrong reply wrong; drawn and selected as
``--tasks plain`` is, and tabled by kind from the tasks' families."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from bench.asked_plainly import KINDS, QUESTIONS, Question, grader
from bench.asked_plainly_2 import KINDS_2, QUESTIONS_2, plain2_tasks
from bench.by_kind import by_kind
from bench.tasks import select_tasks


def _said(text: str) -> str:
    """A question as said: case, punctuation and spacing aside."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _right(question_text: str, reply: str | None) -> bool:
    question = next(q for q in QUESTIONS_2 if q.text == question_text)
    return grader(question)(reply).correct


def test_the_set_has_the_first_sets_nine_kinds_with_14_questions_each() -> None:
    kinds = Counter(q.kind for q in QUESTIONS_2)
    assert set(kinds) == set(KINDS) and set(KINDS_2) == set(KINDS)
    assert all(count == 14 for count in kinds.values()), kinds
    assert len(QUESTIONS_2) == 9 * 14


def test_no_question_is_one_of_the_first_sets_or_asked_twice() -> None:
    first = {_said(q.text) for q in QUESTIONS}
    said = [_said(q.text) for q in QUESTIONS_2]
    assert not first & set(said), first & set(said)
    assert len(set(said)) == len(said)


def test_no_question_asks_for_an_answer_format() -> None:
    forbidden = re.compile(r"answer\s*:|final answer|answer with|only the|just the|in the form|format|reply with|"
                           r"respond with|one word|a single", re.IGNORECASE)
    for q in QUESTIONS_2:
        assert not forbidden.search(q.text), q.text


@pytest.mark.parametrize("question", QUESTIONS_2, ids=lambda q: q.text[:50])
def test_each_grader_accepts_its_right_reply_and_rejects_its_wrong_one(question: Question) -> None:
    grade = grader(question)
    assert grade(question.right_reply).correct, question.right_reply
    assert not grade(question.wrong_reply).correct, question.wrong_reply
    assert not grade("").correct and not grade(None).correct


def test_plain2_tasks_draws_by_seed_with_ids_and_families_per_kind() -> None:
    every = plain2_tasks(1000, 0)
    assert len(every) == len(QUESTIONS_2) and {t.family for t in every} == set(KINDS_2)
    assert len({t.task_id for t in every}) == len(every)
    assert every[0].task_id == "plain2-fact-0" and all(t.task_id.startswith(f"plain2-{t.family}-") for t in every)
    assert Counter(t.task_id.rsplit("-", 1)[1] for t in every) == {str(k): 9 for k in range(14)}
    ten, forty = plain2_tasks(10, 3), plain2_tasks(40, 3)
    assert len(ten) == 10 and {t.task_id for t in ten} <= {t.task_id for t in forty}
    assert plain2_tasks(10, 3) == ten and plain2_tasks(10, 4) != ten


def test_tasks_plain2_is_selected_as_tasks_plain_is_and_beside_it() -> None:
    seeds, tasks = select_tasks("plain2", 1000, "0")
    assert seeds == [0] and [t.task_id for t in tasks] == [t.task_id for t in plain2_tasks(1000, 0)]
    _, both = select_tasks("plain,plain2", 1000, "0")
    assert len(both) == len(QUESTIONS) + len(QUESTIONS_2) and len({t.task_id for t in both}) == len(both)
    with pytest.raises(SystemExit):
        select_tasks("plain2", 10, "0,1")


def test_the_table_by_kind_reads_plain2s_kinds_from_its_families() -> None:
    _, tasks = select_tasks("plain2", 1000, "0")
    rows = [{"task_id": t.task_id, "method": "team", "text": "", "calls": 3, "seconds": 1.0, "first_answers": []}
            for t in tasks]
    table = by_kind(rows, tasks)
    assert [r.kind for r in table[:-1]] == sorted(KINDS_2) and all(r.n == 14 for r in table[:-1])
    assert table[-1].kind == "overall" and table[-1].n == len(QUESTIONS_2)


def test_question_own_values_echoed_are_not_the_result() -> None:
    assert _right("What is 1234 + 5678?", "1234 + 5678 = 6912")
    assert _right("square root of 169?", "13, because 13 x 13 = 169")
    assert not _right("square root of 169?", "169")
    assert _right("1, -2, 4, -8, 16, next?", "Multiply by -2 each time: -32.")
    assert _right("What's the next letter: B, D, F, H", "J")
    assert not _right("What's the next letter: B, D, F, H", "H")


def test_where_the_key_is_the_questions_own_number_the_last_number_counts() -> None:
    q = "31, 28, 31, 30, 31, 30, ... what's next?"
    assert _right(q, "31") and _right(q, "Those are the days of the months, so July: 31 days.")
    assert not _right(q, "30")


def test_a_trick_caught_anywhere_in_the_reply() -> None:
    q = "Which is correct: 'the yolk of the egg is white' or 'the yolk of the egg are white'?"
    assert _right(q, "Grammatically 'is' would be right, but egg yolks are yellow, so neither.")
    assert not _right(q, "'The yolk of the egg is white' is grammatically correct.")


def test_a_comparison_of_units_or_fractions_is_read_for_what_it_claims() -> None:
    q = "which is longer, 100 meters or 100 yards"
    for right in ("100 meters", "100 meters is longer.", "100 yards is shorter than 100 meters.",
                  "A meter is longer than a yard, so 100 meters is longer."):
        assert _right(q, right), right
    for wrong in ("100 yards", "100 yards is longer than 100 meters.", "100 meters is shorter."):
        assert not _right(q, wrong), wrong
    assert _right("Which is bigger, 3/8 or 1/3?", "3/8") and not _right("Which is bigger, 3/8 or 1/3?", "1/3")


def test_a_comparison_is_read_without_its_bracketed_asides() -> None:
    q = "Which is older, the Eiffel Tower or the Statue of Liberty?"
    assert _right(q, "The Statue of Liberty (1886) is older than the Eiffel Tower (1889).")
    assert not _right(q, "The Eiffel Tower (1889) is older than the Statue of Liberty (1886).")
    assert _right("which is longer, 100 meters or 100 yards", "100 meters (about 109 yards) is longer than 100 yards.")
    assert _right("which is longer, a week or 100 hours?", "A week (168 hours) is longer than 100 hours.")
    assert _right("Which is bigger, 3/8 or 1/3?", "3/8 (0.375) is bigger than 1/3 (0.333).")


def test_a_clock_time_in_the_forms_people_write_it() -> None:
    q = "what time will it be 500 minutes after 9 am"
    for right in ("5:20 pm", "It will be 5:20 p.m.", "17:20", "9:00 am + 8 hours 20 minutes = 5:20 PM"):
        assert _right(q, right), right
    for wrong in ("5:20 am", "6:20 pm", "It will be 3:20 pm.", "9:00 am"):
        assert not _right(q, wrong), wrong


def test_yes_no_is_read_from_a_sentence() -> None:
    q = "Does light travel faster than sound?"
    for right in ("Yes.", "Light is much faster than sound.", "Yes, light travels far faster."):
        assert _right(q, right), right
    for wrong in ("No.", "Sound is faster than light.", "Light is not faster than sound."):
        assert not _right(q, wrong), wrong
    assert _right("Is Pluto a planet?", "Pluto is a dwarf planet.")
    assert not _right("Is Pluto a planet?", "Yes, Pluto is a planet.")


def test_lists_in_order_with_words_or_numbers() -> None:
    q = "order these planets by distance from the sun: mars, earth, mercury, venus"
    assert _right(q, "1. Mercury\n2. Venus\n3. Earth\n4. Mars") and not _right(q, "Mars, Earth, Venus, Mercury")
    assert not _right(q, "Mercury is the closest.")  # one item names no list
    q = "what are the next two terms: 1, 2, 4, 7, 11"
    assert _right(q, "16, 22") and not _right(q, "16") and not _right(q, "22, 16")
