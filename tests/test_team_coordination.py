"""How a scripted team coordinates: answers, votes, invalidation, caps, ties, presentation."""

from __future__ import annotations

from pathlib import Path

from support import assert_trace_invariants, of_type, records, run_team, scripted, step, team_config

from massgen.configs import load_config
from massgen.logs import rebuild_from_trace


def test_three_agents_converge_and_the_winner_presents(tmp_path: Path) -> None:
    config, _ = load_config("@examples/basic/scripted_three_agents")
    result = run_team(config, tmp_path, "Which is larger, 9.11 or 9.9?")

    assert result.status == "completed" and not result.partial
    assert result.winner == "agent_b" and result.winner_label == "agent2.1"
    assert result.final_answer is not None and result.final_answer.startswith("9.9 is larger")
    assert result.answers == {
        # the text agent_a wrote before its new_answer call is part of its answer: others can check the work
        "agent1.1": "Comparing 9.11 and 9.9 digit by digit...\n\n9.11 is larger, because 11 > 9.",
        "agent2.1": "9.9 is larger: 9.9 = 9.90, and 0.90 > 0.11.",
        "agent3.1": "9.9",
    }
    final_votes = [v for v in result.votes if v["valid"]]
    assert sorted(v["voter"] for v in final_votes) == ["agent_a", "agent_b", "agent_c"]
    assert {v["target_label"] for v in final_votes} == {"agent2.1"}
    assert (result.log_dir / "final" / "agent_b" / "answer.txt").read_text().startswith("9.9 is larger")
    trace = records(result)
    assert_trace_invariants(trace)
    assert len(of_type(trace, "PresentFinal")) == 1


def test_every_derived_log_file_is_rebuilt_identically_from_the_trace(tmp_path: Path) -> None:
    config, _ = load_config("@examples/basic/scripted_three_agents")
    result = run_team(config, tmp_path)
    rebuilt = rebuild_from_trace(result.log_dir, write=False)
    expected_files = {"coordination_events.json", "vote.json", "status.json", "execution_metadata.yaml",
                      "agent_outputs/agent_a.txt", "final/agent_b/answer.txt"}
    assert expected_files <= set(rebuilt)
    for relative, text in rebuilt.items():
        assert (result.log_dir / relative).read_text(encoding="utf-8") == text, relative


def test_a_new_answer_invalidates_votes_and_everyone_votes_again(tmp_path: Path) -> None:
    config = team_config(
        scripted("first", [step(new_answer="four")], [step(vote="agent1", reason="mine")],
                 [step(vote="agent3", reason="better")]),
        scripted("second", [step(new_answer="four")], [step(vote="agent1", reason="right")],
                 [step(vote="agent3", reason="better")]),
        scripted("late", [step(new_answer="4")], [step(delay=0.3), step(new_answer="4 (two and two make four)")],
                 [step(vote="agent3", reason="complete")]),
    )
    result = run_team(config, tmp_path)

    assert result.status == "completed" and result.winner_label == "agent3.2", result.reason
    trace = records(result)
    assert_trace_invariants(trace)
    first_votes = [v for v in result.votes if v["round"] == 3]
    assert len(first_votes) == 2 and not any(v["valid"] for v in first_votes)
    invalidations = of_type(trace, "InvalidateVotes")
    assert [r["payload"]["round"] for r in invalidations] == [1, 2, 3, 4]
    assert len(result.votes) == 5 and all(v["valid"] for v in result.votes if v["round"] == 4)


def test_an_agent_mid_turn_gets_new_answers_injected_and_its_outdated_vote_is_not_cast(tmp_path: Path) -> None:
    config = team_config(
        scripted("thinker", [step(new_answer="draft")],
                 [step(delay=0.5), step(vote="agent1", reason="my draft")],
                 [step(vote="agent2", reason="better")]),
        scripted("fast", [step(delay=0.05), step(new_answer="final")],
                 [step(delay=0.1), step(new_answer="final, revised")], [step(vote="agent2", reason="mine")]),
    )
    result = run_team(config, tmp_path)

    trace = records(result)
    assert_trace_invariants(trace)
    injected = of_type(trace, "InjectAnswers")
    assert injected and injected[0]["to"].startswith("thinker#")
    # thinker's vote for its own draft was made on an outdated view: it never reached the judge.
    assert not [v for v in result.votes if v["voter"] == "thinker" and v["target"] == "thinker"]
    assert result.winner_label == "agent2.2"


def test_an_agent_without_an_answer_is_not_interrupted(tmp_path: Path) -> None:
    config = team_config(
        scripted("slow", [step(delay=0.4), step(new_answer="slow answer")],
                 [step(when_answers=["agent2"]), step(vote="agent2", reason="ok")]),
        scripted("quick", [step(new_answer="quick answer")], [step(when_answers=["agent1"]),
                                                              step(vote="agent2", reason="mine")]),
    )
    result = run_team(config, tmp_path)
    trace = records(result)
    assert not [r for r in of_type(trace, "InjectAnswers") if r["to"].startswith("slow#")]
    assert "agent1.1" in result.answers and result.status == "completed"


def test_ties_go_to_the_agent_listed_first(tmp_path: Path) -> None:
    config = team_config(
        scripted("alpha", [step(new_answer="A")], [step(when_answers=["agent2"]), step(vote="agent2", reason="b")]),
        scripted("beta", [step(new_answer="B")], [step(when_answers=["agent1"]), step(vote="agent1", reason="a")]),
        orchestrator={"final_answer_strategy": "winner_reuse"},
    )
    result = run_team(config, tmp_path)
    assert result.status == "completed"
    assert {v["target"]: 1 for v in result.votes if v["valid"]} == {"alpha": 1, "beta": 1}
    assert result.winner == "alpha" and result.final_answer == "A"


def test_answer_cap_makes_an_agent_vote_only(tmp_path: Path) -> None:
    config = team_config(
        scripted("eager", [step(new_answer="v1")], [step(new_answer="v2")], [step(vote="agent1", reason="v1")]),
        scripted("calm", [step(delay=0.2), step(new_answer="v1 too")],
                 [step(when_answers=["agent1"]), step(vote="agent1", reason="fine")]),
        orchestrator={"max_new_answers_per_agent": 1, "final_answer_strategy": "winner_reuse"},
    )
    result = run_team(config, tmp_path)

    assert result.status == "completed"
    assert list(result.answers) == ["agent1.1", "agent2.1"]
    trace = records(result)
    turns = [r["payload"] for r in of_type(trace, "TurnStarted") if r["payload"]["agent"] == "eager"]
    assert turns[0]["vote_only"] is False and turns[-1]["vote_only"] is True
    corrections = [r["payload"]["problem"] for r in of_type(trace, "TurnCorrection")]
    assert "New answers are closed for you." in corrections


def test_a_global_answer_cap_stops_new_answers_for_everyone(tmp_path: Path) -> None:
    config = team_config(
        scripted("one", [step(new_answer="first")], [step(vote="agent1", reason="ok")]),
        scripted("two", [step(delay=0.2), step(new_answer="second")], [step(vote="agent1", reason="ok")]),
        orchestrator={"max_new_answers_global": 1, "final_answer_strategy": "winner_reuse"},
    )
    result = run_team(config, tmp_path)
    assert list(result.answers) == ["agent1.1"] and result.final_answer == "first"


def test_malformed_tool_call_json_gets_a_correction_not_a_crash(tmp_path: Path) -> None:
    config = team_config(
        scripted("clumsy", [step(fault="malformed_tool_call")], [step(new_answer="fixed")],
                 [step(vote="agent1", reason="ok")]),
        orchestrator={"final_answer_strategy": "winner_reuse"},
    )
    result = run_team(config, tmp_path)
    assert result.status == "completed" and result.final_answer == "fixed"
    problems = [r["payload"]["problem"] for r in of_type(records(result), "TurnCorrection")]
    assert len(problems) == 1 and "not valid JSON" in problems[0]
    assert not of_type(records(result), "ChildFailed")


def test_text_without_a_workflow_call_is_corrected_and_fails_the_turn_after_three_attempts(tmp_path: Path) -> None:
    def chat(then: dict[str, object] | None = None) -> list[dict[str, object]]:
        first = [step(text="I think the answer is 4.", incarnations=[1])]
        return first + ([{**then, "incarnations": [2]}] if then else [])

    config = team_config(
        scripted("chatty", chat(step(new_answer="4")), chat(step(vote="agent1", reason="ok")), chat()),
        orchestrator={"final_answer_strategy": "winner_reuse"},
    )
    result = run_team(config, tmp_path)
    trace = records(result)
    assert [r["payload"]["attempt"] for r in of_type(trace, "TurnCorrection")] == [1, 2, 3]
    assert len(of_type(trace, "TurnFailed")) == 1
    assert len(of_type(trace, "AgentRestarting")) == 1
    assert result.status == "completed"  # the restarted incarnation replays its script
    assert_trace_invariants(trace)


def test_synthesize_strategy_asks_the_winner_to_combine_answers(tmp_path: Path) -> None:
    config = team_config(
        scripted("a", [step(new_answer="part A")], [step(when_answers=["agent2"]), step(vote="agent1", reason="x")],
                 present="A and B together"),
        scripted("b", [step(new_answer="part B")], [step(when_answers=["agent1"]), step(vote="agent1", reason="y")]),
        orchestrator={"final_answer_strategy": "synthesize"},
    )
    result = run_team(config, tmp_path)
    assert result.final_answer == "A and B together"
    present = of_type(records(result), "PresentFinal")
    assert present[0]["payload"]["strategy"] == "synthesize"


def test_an_empty_presentation_falls_back_to_the_winning_answer(tmp_path: Path) -> None:
    config = team_config(scripted("solo", [step(new_answer="only answer")], [step(vote="agent1", reason="ok")]))
    result = run_team(config, tmp_path)
    assert result.status == "completed" and result.final_answer == "only answer"
