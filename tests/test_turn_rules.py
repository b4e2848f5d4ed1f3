"""What a turn accepts as its one workflow call."""

from __future__ import annotations

from pathlib import Path

from support import of_type, records, run_team, scripted, step, team_config


def test_an_answer_that_repeats_one_in_view_is_corrected_towards_a_vote(tmp_path: Path) -> None:
    config = team_config(
        scripted("a", [step(new_answer="Paris.")],
                 [step(when_answers=["agent2"]), step(vote="agent1", reason="x")]),
        scripted("b", [step(when_answers=["agent1"]), step(new_answer="  paris ")],
                 [step(vote="agent1", reason="same")]),
        orchestrator={"final_answer_strategy": "winner_reuse"},
    )
    result = run_team(config, tmp_path)
    problems = [r["payload"]["problem"] for r in of_type(records(result), "TurnCorrection")]
    assert "Your answer repeats agent1.1; vote for agent1 instead of answering again." in problems
    assert list(result.answers) == ["agent1.1"]
    assert result.status == "completed" and result.final_answer == "Paris."
