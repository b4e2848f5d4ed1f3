"""Properties that hold for any script and any mix of faults (hypothesis)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import FACTOR, assert_trace_invariants, of_type, records, run_team, team_config

RUN_DEADLINE_S = 1.5

FAULTS = ["raise", "hang", "stream_forever", "malformed_tool_call", "error_event"]


@st.composite
def call(draw: st.DrawFn, n_agents: int) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    if draw(st.booleans()):
        steps.append({"delay": draw(st.sampled_from([0.0, 0.01, 0.05]))})
    if draw(st.booleans()):
        steps.append({"text": "thinking"})
    action = draw(st.sampled_from(["answer", "answer", "vote", "vote", "fault", "nothing"]))
    if action == "answer":
        steps.append({"new_answer": f"answer {draw(st.integers(0, 9))}"})
    elif action == "vote":
        steps.append({"vote": f"agent{draw(st.integers(1, n_agents))}", "reason": "looks right"})
    elif action == "fault":
        fault: dict[str, Any] = {"fault": draw(st.sampled_from(FAULTS))}
        if draw(st.booleans()):
            fault["incarnations"] = [1]
        steps.append(fault)
    return steps


@st.composite
def team(draw: st.DrawFn) -> list[dict[str, Any]]:
    n_agents = draw(st.integers(1, 4))
    agents = []
    for i in range(n_agents):
        calls = draw(st.lists(call(n_agents), min_size=1, max_size=4))
        backend: dict[str, Any] = {"type": "scripted", "script": calls,
                                   "on_exhausted": draw(st.sampled_from(["vote_first", "stop"]))}
        if draw(st.integers(0, 5)) == 0:
            backend["crash_on_start"] = draw(st.sampled_from([True, [1]]))
        agents.append({"id": f"a{i}", "backend": backend})
    return agents


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(agents=team(), strategy=st.sampled_from(["winner_present", "winner_reuse", "synthesize"]))
def test_any_script_ends_in_time_with_an_answer_if_one_exists_and_a_sound_trace(
    agents: list[dict[str, Any]], strategy: str
) -> None:
    config = team_config(
        *agents,
        orchestrator={"final_answer_strategy": strategy,
                      "restart": {"max_restarts": 2, "backoff_base_seconds": 0.01, "backoff_max_seconds": 0.05}},
        run_timeout=RUN_DEADLINE_S, turn_timeout=0.5, idle_timeout=0.25, present_timeout=0.5,
    )
    with tempfile.TemporaryDirectory() as tmp:
        result = run_team(config, Path(tmp))
        trace = records(result)

    # The supervisor's own clock says when it finished; a tick or two of slack, scaled for slow machines.
    assert result.elapsed_s <= RUN_DEADLINE_S * FACTOR + 0.5 * FACTOR
    if of_type(trace, "AnswerAccepted"):
        assert result.final_answer is not None and result.status != "failed"
    else:
        assert result.status == "failed" and result.final_answer is None
    assert_trace_invariants(trace)
