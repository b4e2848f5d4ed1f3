"""What a turn makes of a model's reply before it commits an answer."""

from __future__ import annotations

from massgen.actors.turn import with_work


def test_a_bare_answer_after_reasoning_carries_the_reasoning() -> None:
    assert with_work("Answer: 4", "2 + 2 = 4.") == "2 + 2 = 4.\n\nAnswer: 4"


def test_reasoning_that_already_ends_with_the_answer_is_the_answer() -> None:
    assert with_work("Answer: 4", "2 + 2 = 4.\nAnswer: 4") == "2 + 2 = 4.\nAnswer: 4"


def test_an_answer_that_carries_its_own_work_is_kept_as_written() -> None:
    assert with_work("2 + 2 = 4\nAnswer: 4", "let me think") == "2 + 2 = 4\nAnswer: 4"
    assert with_work("4", "") == "4"


def test_tool_call_markup_is_not_reasoning() -> None:
    text = 'Work: 2 + 2 = 4.\n<tool_call>{"name": "new_answer", "arguments": {"content": "4"}}</tool_call>'
    assert with_work("4", text) == "Work: 2 + 2 = 4.\n\n4"
