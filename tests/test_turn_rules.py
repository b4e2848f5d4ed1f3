"""What a turn makes of a model's reply before it commits an answer."""

from __future__ import annotations

from pathlib import Path

from support import of_type, records, run_team, scripted, step, team_config

from massgen.actors.agent.turn import with_work
from massgen.actors.agent.workflow_checks import without_view_tags


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


def test_the_views_answer_tags_copied_into_an_answer_are_not_part_of_it() -> None:
    copied = "<agent3.1>\n9.9 > 9.11, so 9.9 is larger.\nAnswer: 9.9\n</agent3.1>\n"
    assert without_view_tags(copied) == "9.9 > 9.11, so 9.9 is larger.\nAnswer: 9.9"
    assert without_view_tags("x\n</agent2.1 (yours)>") == "x"
    assert without_view_tags("the tag <agent1.1> inside a line stays") == "the tag <agent1.1> inside a line stays"


def test_a_team_keeps_copied_tags_out_of_answers_and_the_final_answer(tmp_path: Path) -> None:
    config = team_config(
        scripted("a", [step(new_answer="2 + 2 = 4\nAnswer: 4\n</agent1.1>")], [step(vote="agent1", reason="4")]),
        scripted("b", [step(new_answer="<agent2.1>\nAnswer: 4\n</agent2.1>")], [step(vote="agent1", reason="4")]),
        orchestrator={"final_answer_strategy": "winner_reuse"},
    )
    result = run_team(config, tmp_path)
    accepted = [r["payload"]["content"] for r in of_type(records(result), "AnswerAccepted")]
    assert accepted == ["2 + 2 = 4\nAnswer: 4", "Answer: 4"] or accepted == ["Answer: 4", "2 + 2 = 4\nAnswer: 4"]
    assert result.final_answer is not None and "agent" not in result.final_answer
