"""The third plain question set (``bench/asked_plainly_3.py``, ``--tasks plain3``): 14 questions in each of the first
set's nine kinds, none of them one of the first two sets', none asking for an answer format, each graded by the first
set's graders so that its typical right reply is right and its typical wrong reply wrong; drawn and selected as
``--tasks plain`` is, and tabled by kind from the tasks' families."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from bench.asked_plainly import KINDS, QUESTIONS, Question, grader
from bench.asked_plainly_2 import QUESTIONS_2
from bench.asked_plainly_3 import KINDS_3, QUESTIONS_3, plain3_tasks
from bench.by_kind import by_kind
from bench.tasks import select_tasks


def _said(text: str) -> str:
    """A question as said: case, punctuation and spacing aside."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _right(question_text: str, reply: str | None) -> bool:
    question = next(q for q in QUESTIONS_3 if q.text == question_text)
    return grader(question)(reply).correct


def test_the_set_has_the_first_sets_nine_kinds_with_14_questions_each() -> None:
    kinds = Counter(q.kind for q in QUESTIONS_3)
    assert set(kinds) == set(KINDS) and set(KINDS_3) == set(KINDS)
    assert all(count == 14 for count in kinds.values()), kinds
    assert len(QUESTIONS_3) == 9 * 14


def test_no_question_is_one_of_the_first_two_sets_or_asked_twice() -> None:
    earlier = {_said(q.text) for q in QUESTIONS + QUESTIONS_2}
    said = [_said(q.text) for q in QUESTIONS_3]
    assert not earlier & set(said), earlier & set(said)
    assert len(set(said)) == len(said)


def test_no_question_asks_for_an_answer_format() -> None:
    forbidden = re.compile(r"answer\s*:|final answer|answer with|only the|just the|in the form|format|reply with|"
                           r"respond with|one word|a single", re.IGNORECASE)
    for q in QUESTIONS_3:
        assert not forbidden.search(q.text), q.text


@pytest.mark.parametrize("question", QUESTIONS_3, ids=lambda q: q.text[:50])
def test_each_grader_accepts_its_right_reply_and_rejects_its_wrong_one(question: Question) -> None:
    grade = grader(question)
    assert grade(question.right_reply).correct, question.right_reply
    assert not grade(question.wrong_reply).correct, question.wrong_reply
    assert not grade("").correct and not grade(None).correct


def test_plain3_tasks_draws_by_seed_with_ids_and_families_per_kind() -> None:
    every = plain3_tasks(1000, 0)
    assert len(every) == len(QUESTIONS_3) and {t.family for t in every} == set(KINDS_3)
    assert len({t.task_id for t in every}) == len(every)
    assert every[0].task_id == "plain3-fact-0" and all(t.task_id.startswith(f"plain3-{t.family}-") for t in every)
    assert Counter(t.task_id.rsplit("-", 1)[1] for t in every) == {str(k): 9 for k in range(14)}
    ten, forty = plain3_tasks(10, 3), plain3_tasks(40, 3)
    assert len(ten) == 10 and {t.task_id for t in ten} <= {t.task_id for t in forty}
    assert plain3_tasks(10, 3) == ten and plain3_tasks(10, 4) != ten


def test_tasks_plain3_is_selected_as_tasks_plain_is_and_beside_the_other_sets() -> None:
    seeds, tasks = select_tasks("plain3", 1000, "0")
    assert seeds == [0] and [t.task_id for t in tasks] == [t.task_id for t in plain3_tasks(1000, 0)]
    _, all_three = select_tasks("plain,plain2,plain3", 1000, "0")
    assert len(all_three) == len(QUESTIONS) + len(QUESTIONS_2) + len(QUESTIONS_3)
    assert len({t.task_id for t in all_three}) == len(all_three)
    with pytest.raises(SystemExit):
        select_tasks("plain3", 10, "0,1")


def test_the_table_by_kind_reads_plain3s_kinds_from_its_families() -> None:
    _, tasks = select_tasks("plain3", 1000, "0")
    rows = [{"task_id": t.task_id, "method": "team", "text": "", "calls": 3, "seconds": 1.0, "first_answers": []}
            for t in tasks]
    table = by_kind(rows, tasks)
    assert [r.kind for r in table[:-1]] == sorted(KINDS_3) and all(r.n == 14 for r in table[:-1])
    assert table[-1].kind == "overall" and table[-1].n == len(QUESTIONS_3)


def test_question_own_values_echoed_are_not_the_result() -> None:
    assert _right("greatest common factor of 84 and 126", "84 = 2 \u00d7 42 and 126 = 3 \u00d7 42, so it's 42.")
    assert not _right("greatest common factor of 84 and 126", "84")
    q = "i started work at 7:45am and left at 4:15pm with a 30 minute lunch break. how many hours did i actually work"
    assert _right(q, "You worked 8 hours (8.5 hours minus the 30-minute break).")
    assert not _right(q, "From 7:45 to 4:15 is 8.5 hours.")
    assert _right("which ISO week number is 15 March 2026 in", "It's week 11 of 2026.")


def test_where_the_key_is_the_questions_own_number_the_last_number_counts() -> None:
    q = "3, 3, 5, 4, 4, 3, 5, 5, 4, ?"
    assert _right(q, "3") and _right(q, "Letters in one, two, ..., nine: next is ten, with 3 letters.")
    assert not _right(q, "5")
    q = "1, 4, 1, 5, 9, 2, 6 ... next?"
    assert _right(q, "5, the next digit of pi") and not _right(q, "6")


def test_a_clock_time_in_the_forms_people_write_it() -> None:
    q = ("my flight leaves at 10:50pm and takes 7 hours 25 minutes. what time do I land if there's no time "
         "difference?")
    for right in ("6:15 am", "You land at 6:15 a.m. the next day.", "06:15", "6:15 the next morning",
                  "10:50 pm + 7:25 = 6:15 AM"):
        assert _right(q, right), right
    for wrong in ("6:15 pm", "5:15 am", "You land at 18:15.", "10:50 pm"):
        assert not _right(q, wrong), wrong
    q = "if it's 9:30 in the morning in London in January, what time is it in India?"
    for right in ("3:00 pm", "3 pm", "15:00", "It's 3:00 PM in India (IST, UTC+5:30).",
                  "India is UTC+5:30, so 9:30 am in London is 3:00 pm there."):
        assert _right(q, right), right
    for wrong in ("3:00 am", "2:30 pm", "It's 4:30 pm in India.", "3 am"):
        assert not _right(q, wrong), wrong


def test_a_fraction_in_the_forms_people_write_it() -> None:
    q = "what's 2/3 + 1/4"
    for right in ("11/12", "8/12 + 3/12 = 11/12", "11 / 12", "\\(\\frac{11}{12}\\)", "eleven twelfths"):
        assert _right(q, right), right
    for wrong in ("3/7", "2/3 + 1/4 = 3/12", "\\frac{3}{7}", "1/12"):
        assert not _right(q, wrong), wrong
    assert _right("1/2, 2/3, 3/4, 4/5, ... what's next?", "5/6") and not _right("1/2, 2/3, 3/4, 4/5, ... what's next?",
                                                                               "4/5")


def test_a_comparison_is_read_for_what_it_claims() -> None:
    q = "which is more, 0.3 or 1/3"
    for right in ("1/3", "1/3 is more.", "0.3 is less than 1/3.", "1/3 (0.333...) is bigger than 0.3."):
        assert _right(q, right), right
    for wrong in ("0.3", "0.3 is more than 1/3.", "1/3 is smaller."):
        assert not _right(q, wrong), wrong
    q = "what's worth more, 3 quarters or 8 dimes?"
    assert _right(q, "8 dimes (80 cents) are worth more than 3 quarters (75 cents).")
    assert not _right(q, "3 quarters (75 cents) are worth more than 8 dimes (80 cents).")
    q = "What weighs more, a litre of water or a litre of olive oil?"
    assert _right(q, "Water is heavier than olive oil.") and _right(q, "Olive oil weighs less than water.")
    assert not _right(q, "A litre of olive oil (0.92 kg) is heavier than a litre of water.")


def test_yes_no_is_read_from_a_sentence() -> None:
    q = "is a 13 minute mile faster than 5 miles per hour"
    for right in ("No.", "A 13-minute mile is slower than 5 mph.", "It is not faster than 5 mph."):
        assert _right(q, right), right
    for wrong in ("Yes.", "A 13-minute mile is faster than 5 mph."):
        assert not _right(q, wrong), wrong
    assert _right("Is Mount Kilimanjaro in Kenya?", "Kilimanjaro is in Tanzania.")
    assert not _right("Is Mount Kilimanjaro in Kenya?", "Yes, it is in Kenya.")


def test_lists_in_order_are_read_whole() -> None:
    q = "can you put these greek letters in order: gamma, alpha, delta, beta"
    assert _right(q, "1. Alpha\n2. Beta\n3. Gamma\n4. Delta")
    assert not _right(q, "alpha, beta, delta, gamma")  # the English alphabet's order
    assert not _right(q, "Alpha comes first.")  # one item names no list
    q = ("my subscription renews every 3 months and the first payment was in january. which months of the year do i "
         "pay in?")
    assert _right(q, "January, April, July and October") and not _right(q, "April, July, October")


def test_words_and_letters_as_people_write_them() -> None:
    assert _right("how do you spell 40", "It's forty (not fourty).")
    assert not _right("how do you spell 40", "fourty")
    assert _right("what word do you get if you swap the o and the r in form", "form becomes from")
    assert not _right("what word do you get if you swap the o and the r in form", "form")
    assert _right("which letter of the alphabet isn't in the name of any US state?", "The letter **Q**.")
    assert _right("what do you get if you take the first letter of each word in 'please excuse my dear aunt sally'",
                  "P-E-M-D-A-S")


def test_a_trick_answered_by_its_riddle_not_its_words() -> None:
    q = "which word is spelled wrong in every dictionary"
    assert _right(q, "The word 'wrong'.") and _right(q, "Wrong!")
    assert not _right(q, "No word is spelled wrong in a dictionary.")
    q = "A cowboy rides into town on Friday, stays three days, and rides out on Friday. How is that possible?"
    assert _right(q, "Friday is the name of his horse.")
    assert not _right(q, "He left on the next Friday, a week later.")
