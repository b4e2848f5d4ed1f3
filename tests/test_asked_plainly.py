"""The plain question set (``bench/asked_plainly.py``, issue 48 item 4): every grader accepts its question's typical
right reply and rejects its typical wrong one, and reads the forms a person reads (a sentence, a program's printout
with an ``Answer:`` line, the question's numbers echoed, spelled-out numbers, claims of comparison)."""

from __future__ import annotations

from collections import Counter

import pytest

from bench.asked_plainly import KINDS, QUESTIONS, Question, grader, plain_tasks
from bench.tasks import select_tasks


def _right(question_text: str, reply: str | None) -> bool:
    question = next(q for q in QUESTIONS if q.text == question_text)
    return grader(question)(reply).correct


def test_the_set_has_120_questions_of_8_kinds_with_12_each() -> None:
    kinds = Counter(q.kind for q in QUESTIONS)
    assert len(QUESTIONS) >= 120 and len(kinds) >= 8 and min(kinds.values()) >= 12
    assert len({q.text for q in QUESTIONS}) == len(QUESTIONS)
    assert set(KINDS) == set(kinds)


def test_no_question_asks_for_an_answer_format() -> None:
    for q in QUESTIONS:
        assert "answer:" not in q.text.lower() and "final answer" not in q.text.lower(), q.text


@pytest.mark.parametrize("question", QUESTIONS, ids=lambda q: q.text[:50])
def test_each_grader_accepts_its_right_reply_and_rejects_its_wrong_one(question: Question) -> None:
    grade = grader(question)
    assert grade(question.right_reply).correct, question.right_reply
    assert not grade(question.wrong_reply).correct, question.wrong_reply
    assert not grade("").correct and not grade(None).correct


def test_plain_tasks_draws_by_seed_with_ids_and_families_per_kind() -> None:
    every = plain_tasks(1000, 0)
    assert len(every) == len(QUESTIONS) and {t.family for t in every} == set(KINDS)
    assert len({t.task_id for t in every}) == len(every)
    assert every[0].task_id == "plain-fact-0" and all(t.task_id.startswith(f"plain-{t.family}-") for t in every)
    ten, forty = plain_tasks(10, 3), plain_tasks(40, 3)
    assert len(ten) == 10 and {t.task_id for t in ten} <= {t.task_id for t in forty}
    assert plain_tasks(10, 3) == ten and plain_tasks(10, 4) != ten
    seeds, tasks = select_tasks("plain", 1000, "0")
    assert seeds == [0] and [t.task_id for t in tasks] == [t.task_id for t in every]
    with pytest.raises(SystemExit):
        select_tasks("plain", 10, "0,1")


def test_a_sentence_states_its_result() -> None:
    assert _right("how many r's in strawberry", "The letter r appears 3 times in strawberry.")
    assert _right("how many r's in strawberry", "There are **3** r's in the word strawberry!\n\nHope this helps!")
    assert not _right("how many r's in strawberry", "The letter r appears 2 times in strawberry.")
    assert _right("Which weekday was 1 January 2000?", "1 January 2000 was a Saturday.")
    assert not _right("Which weekday was 1 January 2000?", "1 January 2000 was a Monday.")


def test_a_programs_printout_then_an_answer_line_reads_the_answer_line() -> None:
    q = "How many s's are in Mississippi?"
    assert _right(q, "```python\nprint('Mississippi'.count('s'))\n```\n```\n4\n```\nAnswer: 4")
    assert _right(q, "```python\nword = 'Mississippi'\nprint(word.count('s'))\n```\nOutput:\n4")
    assert not _right(q, "```python\nprint('Mississippi'.count('s'))\n```")  # code alone states no result
    assert not _right(q, "Traceback (most recent call last):\nNameError: name 'mississippi' is not defined")
    assert not _right(q, "Counting gives 4.\nAnswer: 3")  # the final Answer line is the result


def test_the_questions_own_numbers_echoed_are_not_the_result() -> None:
    assert _right("What is 17 times 23?", "391 is 17 times 23.")
    assert _right("What percent of 80 is 20?", "20 is 25% of 80.")
    assert not _right("What percent of 80 is 20?", "20 out of 80 is 0.25")  # a fraction is not a percent
    assert _right("If today is Wednesday, what day will it be in 100 days?", "Wednesday + 100 days is a Friday.")
    assert not _right("If today is Wednesday, what day will it be in 100 days?", "It's Wednesday.")
    assert _right("A farmer has 17 sheep and all but 9 die. How many are left?", "9 are left.")  # the echo is the key
    assert _right("What date is 100 days after 1 March 2024?", "9 June 2024 is 100 days after 1 March 2024.")


def test_spelled_out_numbers_and_asides() -> None:
    assert _right("how many r's in strawberry", "Three.")
    assert _right("how many r's in strawberry", "There are three r's in strawberry.")
    assert not _right("how many r's in strawberry", "two")
    assert _right("How many months have 28 days?", "All twelve of them.")
    assert not _right("How many months have 28 days?", "Just one, February.")
    assert _right("How many centimeters are in 2.5 meters?", "250 cm (2.5 m \u00d7 100)")
    assert _right("A bat and a ball cost $1.10 in total. The bat costs $1.00 more than the ball. How much does the "
                  "ball cost?", "$0.05")
    assert not _right("A bat and a ball cost $1.10 in total. The bat costs $1.00 more than the ball. How much does "
                      "the ball cost?", "The ball costs $0.10.")


def test_a_comparison_is_read_for_what_it_claims() -> None:
    q = "Which is larger, 9.11 or 9.9?"
    for right in ("9.9", "9.9 is larger", "9.9 is larger than 9.11.", "9.11 < 9.9", "The larger number is 9.9.",
                  "9.11 is smaller than 9.9", "9.9 is bigger, because 0.90 > 0.11", "Answer: 9.9",
                  "9.11 is not larger than 9.9."):
        assert _right(q, right), right
    for wrong in ("9.11", "9.11 is larger than 9.9", "9.9 is smaller than 9.11", "9.11 is larger, because 11 > 9",
                  "9.11 > 9.9", "The larger is 9.11."):
        assert not _right(q, wrong), wrong


def test_yes_no_is_read_from_a_sentence() -> None:
    q = "is 221 prime"
    for right in ("No", "no.", "No, 221 = 13 x 17.", "221 is not prime.", "221 isn't a prime number", "It's composite.",
                  "Let me check: 221 / 13 = 17.\nSo 221 is not a prime."):
        assert _right(q, right), right
    for wrong in ("Yes", "Yes, 221 is prime.", "221 is a prime number.", "I think so."):
        assert not _right(q, wrong), wrong


def test_lists_in_order_with_commas_spaces_brackets_or_lines() -> None:
    q = "Put these in order from smallest to largest: 12, 3, 45, 7, 19"
    for right in ("3, 7, 12, 19, 45", "[3, 7, 12, 19, 45]", "3 7 12 19 45", "The sorted list is: 3, 7, 12, 19, 45.",
                  "From 12, 3, 45, 7, 19 we get 3, 7, 12, 19, 45", "1. 3\n2. 7\n3. 12\n4. 19\n5. 45"):
        assert _right(q, right), right
    for wrong in ("3", "45, 19, 12, 7, 3", "3, 7, 19, 12, 45", "12, 3, 45, 7, 19"):
        assert not _right(q, wrong), wrong
    words = "Sort alphabetically: banana, cherry, apple, date"
    assert _right(words, "Apple, Banana, Cherry, Date") and not _right(words, "apple, banana, date, cherry")


def test_named_answers_read_negation_and_the_last_claim() -> None:
    q = "what's the capital of australia"
    assert _right(q, "Canberra") and _right(q, "It's Canberra, not Sydney.")
    assert _right(q, "Many people think it's Sydney, but it's actually Canberra.")
    assert not _right(q, "Sydney") and not _right(q, "Sydney, not Canberra.")
    assert _right("spell lemon backwards", "n-o-m-e-l") and not _right("spell lemon backwards", "lemon")


def test_prose_is_right_when_it_is_prose() -> None:
    q = "write a haiku about autumn"
    assert _right(q, "Maple leaves falling\nthe wind hums a quiet song\nautumn says goodbye")
    assert not _right(q, "```python\nprint('leaves')\n```") and not _right(q, "30") and not _right(q, None)


def test_yes_no_is_not_read_from_the_question_restated() -> None:
    q = "Is 97 a prime number?"
    assert not _right(q, "To check whether 97 is prime, divide by 2, 3, 5, 7.\n97 / 7 = 13.86")  # no conclusion
    assert _right(q, "To determine if 97 is prime, check 2, 3, 5 and 7.\nNone divide 97.\nTherefore, 97 is prime.")
    assert _right(q, "Yes.\n\n97 is only divisible by 1 and itself.")
    assert _right("Is 'racecar' a palindrome?", "```python\nprint('racecar' == 'racecar'[::-1])\n```\nOutput: True")


def test_dates_in_the_forms_people_write_them() -> None:
    q = "what's the date 45 days before 10 February 2025"
    for right in ("27 December 2024", "December 27, 2024", "Dec 27, 2024", "2024-12-27", "27/12/2024",
                  "It's Friday, December 27th, 2024.", "the 27th of December"):
        assert _right(q, right), right
    for wrong in ("28 December 2024", "December 27, 2023", "10 February 2025", "26/12/2024"):
        assert not _right(q, wrong), wrong


def test_where_the_key_is_the_questions_own_number_the_last_number_counts() -> None:
    q = ("If it takes 5 machines 5 minutes to make 5 widgets, how long would it take 100 machines to make 100 "
         "widgets?")
    assert _right(q, "5 minutes") and _right(q, "Still 5 minutes: each machine makes 1 widget in 5 minutes.")
    assert not _right(q, "It would take 100 minutes.") and not _right(q, "1 minute")


def test_letters_listed_one_a_line_are_read_as_one_list() -> None:
    q = "What are the consonants in the word strength?"
    assert _right(q, "Consonants in 'strength':\n- s\n- t\n- r\n- n\n- g\n- t\n- h")
    assert _right(q, "The word has a total of 7 consonants: s, t, r, n, g, t, h")
    assert not _right(q, "Consonants in 'strength':\n- s\n- t\n- r\n- n\n- g")


def test_math_delimiters_are_no_aside_in_brackets() -> None:
    """Seen in the first run (13:03 UTC): "\\(\\boxed{391}\\)" was read as an aside and 23 taken instead."""
    task = next(t for t in plain_tasks(127, 0) if t.question == "What is 17 times 23?")
    assert task.grade("Therefore, the product of 17 and 23 is \\(\\boxed{391}\\).").correct
    assert not task.grade("Therefore, the product of 17 and 23 is \\(\\boxed{381}\\).").correct
