"""What a first answer is evidence of (``actors/coordination/evidence.py``): a value a program computed, and
whether a written answer states it. Issue 48's cases, each as a user met it."""

from __future__ import annotations

import pytest

from massgen.actors.coordination.evidence import computed_value, conclusion_of, in_kind, result_kind, states


@pytest.mark.parametrize(("code", "printed"), [
    ("print('lrohtam')", "lrohtam"),                                   # what it was told to print
    ("answer = 'Canberra'\nprint(answer)", "Canberra"),                # a fact it can only repeat
    ("print(f'The answer is {4}')", "The answer is 4"),
    ("print('Whispers of the sea')\nprint('soft waves fold')", "Whispers of the sea\nsoft waves fold"),
    ("import math\nprint(' '.join(['word'] * 13))", " ".join(["word"] * 13)),  # prose, not a value
    ("x = 1 / 0", ""),                                                 # printed nothing
])
def test_a_printout_that_is_a_literal_prose_or_nothing_was_not_computed(code: str, printed: str) -> None:
    assert not computed_value(code, printed)


@pytest.mark.parametrize(("code", "printed"), [
    ("print('mississippi'.count('s'))", "4"),
    ("import datetime\nprint(datetime.date(2000, 1, 1).strftime('%A'))", "Saturday"),
    ("print(max(9.11, 9.9))", "9.9"),                                  # it picked one of its constants
    ("xs = [25, 3, 19]\nxs.sort()\nprint(xs)", "[3, 19, 25]"),        # a literal changed in place
    ("word = 'matthor'\nprint(word[::-1])", "rohttam"),
    ("for w in ['a', 'b']:\n    print(w)", "a\nb"),
    ("if 3 > 2:\n    answer = 'Yes'\nelse:\n    answer = 'No'\nprint(answer)", "Yes"),  # it chose which
    ("print('Yes' if 9.9 > 9.11 else 'No')", "Yes"),
])
def test_a_value_the_program_computed_is_evidence(code: str, printed: str) -> None:
    assert computed_value(code, printed)


@pytest.mark.parametrize(("conclusion", "value"), [
    ("The letter 's' appears **4** times in mississippi.", "4"),
    ("There are four.", "4"),
    ("In order: 3, 7, 12, 19, 25.", "3 7 12 19 25"),
    ("No, 221 is not prime: 13 x 17.", "no"),
    ("1,089 is the total.", "1089"),
    ("The answer is Saturday.", "saturday"),
    ("The result of subtracting 9.9 from 9.11 is \\(\\boxed{-0.79}\\).", "-0.7900000000000009"),  # binary rounding
    ("The ball costs $0.05.", "0.05"),
])
def test_a_written_answer_states_a_value_it_concludes(conclusion: str, value: str) -> None:
    assert states(conclusion, value)


@pytest.mark.parametrize(("conclusion", "value"), [
    ("1 January 2000 was a Monday.", "saturday"),
    ("Yes.", "no"),
    ("In order: 3, 12, 7, 19, 25.", "3 7 12 19 25"),
    ("", "4"),
    # a value met on the way to the answer's own result is not what it states
    ("The date 100 days after March 1, 2024, is \\(\\boxed{2024-05-09}\\).", "2024"),
    ("Since -3 is smaller than -7, the smallest is -3.\nThe answer is \\(\\boxed{-3}\\).", "-7"),
    ("9.11 is larger than 9.9.", "9.9"),
    ("The difference is 0.79.", "0.7900001"),  # a difference a person sees
])
def test_a_written_answer_that_concludes_otherwise_does_not_state_it(conclusion: str, value: str) -> None:
    assert not states(conclusion, value)


def test_the_conclusion_is_read_outside_code_and_before_closing_remarks() -> None:
    text = "Let me count.\n```python\nprint(4)\n```\nIt appears 3 times.\n\nHope this helps!"
    assert conclusion_of(text) == "Let me count.\nIt appears 3 times."
    assert not states(conclusion_of(text), "4")


def test_a_trailing_list_is_the_conclusion_however_long() -> None:
    text = "Sorted from smallest to largest:\n1. 3\n2. 7\n3. 12\n4. 19\n5. 45\n\nHope this helps!"
    assert conclusion_of(text) == "Sorted from smallest to largest:\n3, 7, 12, 19, 45"
    assert states(conclusion_of(text), "3 7 12 19 45")
    assert not states(conclusion_of(text), "3")  # the list's first item, or its markers, are not its result


@pytest.mark.parametrize(("value", "kind"), [
    ("True", "truth"), ("no", "truth"), ("168", "number"), ("0.375", "number"), ("-2", "number"),
    ("2026-12-04", "number"), ("[3, 7, 12]", "number"), ("week", "words"), ("100 meters", "words"),
    ("['m', 't', 'e']", "words"), ("", "words"),
])
def test_a_result_is_a_truth_value_a_number_or_words(value: str, kind: str) -> None:
    assert result_kind(value) == kind


@pytest.mark.parametrize(("conclusion", "value", "given"), [
    ("3/8 is bigger than 1/3.", "True", False),                         # "which is bigger": True answers another
    ("Yes, 1000 is a perfect cube.", "False", True),                    # a yes or no first: a truth value
    ("The answer is No.\nAnswer: No", "True", True),                    # stated as its result
    ("There is no such day.", "True", False),                           # "no" inside a sentence is no answer
    ("Coffee is a drink that brings joy,\nIt warms the soul.", "8", False),   # a poem holds no number
    ("Best regards,\n[Your Name]", "2026-12-04", False),                # nor an email's closing
    ("A week is longer than 100 hours.", "168", True),                  # any number: the kind, not the value
    ("The word has seven letters.", "7", True),                         # spelled numbers are numbers
    ("The capital of Canada is Ottawa.", "Ottawa", True),               # words go with anything
    ("", "week", True),
])
def test_a_written_answer_shows_the_kind_of_result_the_question_asks_for(conclusion: str, value: str,
                                                                         given: bool) -> None:
    assert in_kind(conclusion, value) is given
