"""Upstream MassGen's round timeouts, with upstream's meaning: past its round's soft timeout an agent
is told to finish now (``FinishRound``) and its turn goes on; only once the grace has passed is the
turn cut, like any turn past its deadline.

The slow agents are scripted: a model call that takes longer than the soft timeout, so the
instruction arrives while it runs and is in the agent's next request.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support import FACTOR, assert_trace_invariants, of_type, records, run_team, scripted, step, team_config

from massgen.cli.progress import describe
from massgen.logs import LogProjection
from massgen.logs.calls import RecordedCall, model_calls

SOFT = 0.2  # seconds (times FACTOR), far shorter than the slow agents' first call
FINISH_TEXT = "Time is up for this first-answer round"


def _calls_of_first_turn(trace: list[dict[str, Any]], agent: str) -> list[RecordedCall]:
    first_turn = next(r for r in of_type(trace, "StartTurn") if r["to"] == f"{agent}#1")
    return [c for c in model_calls(trace) if c.agent == agent and c.cause == first_turn["msg_id"]]


def _folded(trace: list[dict[str, Any]]) -> LogProjection:
    projection = LogProjection()
    for record in trace:
        projection.apply(record)
    return projection


def _told(call: RecordedCall) -> bool:
    return any(FINISH_TEXT in m.content for m in call.request.messages if m.role == "user")


def test_a_slow_agent_is_told_to_finish_and_its_answer_is_accepted_before_the_cut(tmp_path: Path) -> None:
    config = team_config(
        # The first call ends without new_answer or vote, after the soft timeout: the turn goes on.
        scripted("slow", [step(text="Let me work this out. "), step(delay=2.0 * FACTOR)], [step(new_answer="4")]),
        scripted("quick", [step(new_answer="four")]),
        round_timeouts={"initial_round_timeout_seconds": SOFT, "round_timeout_grace_seconds": 30},
        idle_timeout=20, straggler_grace=60,  # quick waits for slow's first answer: the team converges on both
    )
    result = run_team(config, tmp_path)

    assert result.status == "completed" and result.final_answer in ("4", "four")
    trace = records(result)
    assert_trace_invariants(trace)
    told = [r for r in of_type(trace, "FinishRound") if r["to"] == "slow#1"]
    assert len(told) == 1, "told once per turn"
    assert told[0]["sender"] == "supervisor#1"
    payload = told[0]["payload"]
    assert payload["first_round"] is True
    assert payload["timeout_s"] == SOFT * FACTOR and payload["grace_s"] == 30 * FACTOR
    assert payload["elapsed_s"] >= payload["timeout_s"]
    # In the next model request of that turn, not the one that was running.
    first, second = _calls_of_first_turn(trace, "slow")
    assert not _told(first) and _told(second)
    assert first.request_seq < told[0]["seq"] < second.request_seq
    # Its answer stands: accepted after the instruction, and no deadline cut the turn.
    accepted = [r for r in of_type(trace, "AnswerAccepted") if r["payload"]["agent"] == "slow"]
    assert accepted and accepted[0]["payload"]["content"] == "4" and accepted[0]["seq"] > told[0]["seq"]
    assert not of_type(trace, "DeadlineExpired", "ChildFailed", "AgentRestarting")
    # What the person watching sees: a progress line on the terminal, an entry in the run's timeline.
    projection = _folded(trace)
    assert describe(told[0], projection) == (f"agent1 told to finish: first-answer round past {SOFT * FACTOR:g} s; "
                                             f"cut in {30 * FACTOR:g} s without new_answer or vote")
    assert [e["to"] for e in projection.events if e["type"] == "FinishRound"] == ["slow#1"]


def test_an_agent_that_ignores_it_is_cut_after_the_grace_and_the_others_finish_the_run(tmp_path: Path) -> None:
    config = team_config(
        # Told to finish, it keeps working (a call that never ends) until the grace is over.
        scripted("slow", [step(text="Working. "), step(delay=1.5 * FACTOR)],
                 [step(text="Still working. "), step(fault="hang")]),
        scripted("quick1", [step(new_answer="4")]),
        scripted("quick2", [step(new_answer="4")]),
        orchestrator={"restart": {"max_restarts": 0}},  # cut once, given up on: the team goes on without it
        round_timeouts={"initial_round_timeout_seconds": SOFT, "round_timeout_grace_seconds": 4},
        idle_timeout=20, straggler_grace=60,  # the cut, not the idle deadline or the straggler rule, ends it
    )
    result = run_team(config, tmp_path)

    assert result.status == "completed" and result.final_answer == "4"
    trace = records(result)
    assert_trace_invariants(trace)
    told = [r for r in of_type(trace, "FinishRound") if r["to"] == "slow#1"]
    assert len(told) == 1 and told[0]["payload"]["grace_s"] == 4 * FACTOR
    first, second = _calls_of_first_turn(trace, "slow")
    assert not _told(first) and _told(second) and second.reply is None, "it read the instruction, and went on"
    cut = [r for r in of_type(trace, "DeadlineExpired") if r["payload"]["name"] == "slow"]
    assert len(cut) == 1 and cut[0]["payload"]["scope"] == "turn" and cut[0]["seq"] > told[0]["seq"]
    assert f"grace of {4 * FACTOR:g} s passed without an answer or vote" in cut[0]["payload"]["detail"]
    assert describe(cut[0], _folded(trace)).startswith("deadline: agent1 turn (round timeout of")
    cancelled = [r for r in of_type(trace, "CancelTurn") if r["to"] == "slow#1"]
    assert cancelled and cancelled[0]["payload"]["turn_id"] == told[0]["payload"]["turn_id"]
    failed = of_type(trace, "AgentMarkedFailed")
    assert [r["payload"]["name"] for r in failed] == ["slow"]
    assert not [r for r in of_type(trace, "AnswerAccepted") if r["payload"]["agent"] == "slow"]
    assert of_type(trace, "RunFinished")[0]["payload"]["winner"] in ("quick1", "quick2")


def test_a_later_round_has_its_own_timeout(tmp_path: Path) -> None:
    # No limit on the first answers; the voting round after them has one, and slow is slow there.
    config = team_config(
        scripted("slow", [step(new_answer="4")], [step(text="Checking both. "), step(delay=2.0 * FACTOR)],
                 [step(vote="agent2", reason="same result")]),
        scripted("quick", [step(new_answer="four")]),
        round_timeouts={"subsequent_round_timeout_seconds": SOFT},
        idle_timeout=20, straggler_grace=60,
    )
    result = run_team(config, tmp_path)

    assert result.status == "completed" and result.final_answer in ("4", "four")
    trace = records(result)
    assert_trace_invariants(trace)
    told = [r for r in of_type(trace, "FinishRound") if r["to"] == "slow#1"]
    assert len(told) == 1 and told[0]["payload"]["first_round"] is False
    assert told[0]["payload"]["grace_s"] == 120  # upstream's default grace
    turn = next(r for r in of_type(trace, "StartTurn") if r["payload"]["turn_id"] == told[0]["payload"]["turn_id"])
    assert turn["to"] == "slow#1" and turn["payload"]["view"]["answers"], "its voting turn, with answers in view"
    calls = [c for c in model_calls(trace) if c.agent == "slow" and c.cause == turn["msg_id"]]
    told_in = [any("Time is up for this voting round" in m.content for m in c.request.messages) for c in calls]
    assert told_in == [False, True]
    votes = [r for r in of_type(trace, "RecordVote") if r["payload"]["voter"] == "slow"]
    assert votes and votes[0]["seq"] > told[0]["seq"] and not of_type(trace, "DeadlineExpired")
