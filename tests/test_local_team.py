"""The local model team end to end: real models, a real llama.cpp server, a real SIGKILL.

Slow by nature (the instruction-tuned model makes about 4 tokens/s on two cores), and
run by CI all the same.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest
from support import FACTOR, assert_trace_invariants, model_servers, of_type, records, unavailable

from massgen.actors.run.team import Team
from massgen.configs import validate_data
from massgen.configs.defaults import LOCAL_TEAM
from massgen.logs import LogProjection

pytestmark = [pytest.mark.slow, pytest.mark.timeout(int(1500 * FACTOR))]

if importlib.util.find_spec("llama_cpp") is None:
    unavailable("llama_cpp is not importable: install `massgen-actors[local]`", module=True)


def test_three_local_agents_reach_a_final_answer(tmp_path: Path) -> None:
    config = validate_data(LOCAL_TEAM, "local team")
    result = Team(config, "Which is larger, 9.11 or 9.9? Answer in one sentence.", log_dir=tmp_path / "run").run()

    assert result.status == "completed", result.reason
    # The 1.5B model is often wrong on this very question; what is checked is the team, not the model.
    assert result.final_answer and result.final_answer.strip()
    trace = records(result)
    assert_trace_invariants(trace)
    # Votes, or (the prior rule) first answers that all state one result, which end the run at once.
    assert of_type(trace, "AnswerAccepted")
    assert of_type(trace, "RecordVote") or of_type(trace, "UnanimousFirstAnswers")
    # First answers are free text with no tools: independent work, one call each.
    calls = [c["payload"] for c in of_type(trace, "ModelCallStarted")]
    first_calls = [c for c in calls if c["call_index"] == 0 and c["turn_id"] in _first_turns(trace)]
    assert len(first_calls) == 3 and all(c["tools"] == [] for c in first_calls)
    # Turns that check answers offer the calculator beside the vote (issue 20: the default team checks).
    assert all(a.backend.check_tools == ["calculator"] for a in config.agents)
    assert all("calculate" in c["tools"] for c in calls if c["tools"])
    # The local team uses the winning answer as written (winner_reuse): it already carries its work.
    assert not of_type(trace, "PresentFinal") and result.final_answer == result.answers[result.winner_label or ""]
    assert not model_servers(), "the model server must stop with the run"


def _first_turns(trace: list[dict[str, Any]]) -> set[int]:
    """The turns each agent started with no answers in view."""
    return {r["payload"]["turn_id"] for r in of_type(trace, "StartTurn") if not r["payload"]["view"]["answers"]}


TINY_TEAM: dict[str, Any] = {
    "agents": [
        {"id": f"tiny_{i}", "backend": {"type": "local", "model": "tiny", "seed": i, "temperature": 0.3,
                                        "max_tokens": 64}}
        for i in (1, 2, 3)
    ],
    "orchestrator": {"max_new_answers_per_agent": 1, "final_answer_strategy": "winner_reuse",
                     "restart": {"backoff_base_seconds": 0.2}},
    "timeout_settings": {"orchestrator_timeout_seconds": 900, "idle_stream_timeout_seconds": 300,
                         "turn_timeout_seconds": 600},
}


def test_the_run_completes_after_the_model_server_is_sigkilled_mid_run(tmp_path: Path) -> None:
    killed: list[int] = []
    streaming = threading.Event()

    def watch(record: dict[str, Any], projection: LogProjection) -> None:
        if record["type"] == "AgentChunk":
            streaming.set()

    def killer() -> None:
        if not streaming.wait(600):
            return
        for server in model_servers():
            killed.append(server.pid)
            os.kill(server.pid, signal.SIGKILL)

    config = validate_data(TINY_TEAM, "tiny team")
    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    result = Team(config, "What is 7+5*3-2*4?", log_dir=tmp_path / "run", subscribers=[watch]).run()
    thread.join(5)

    assert killed, "the model server was never seen streaming"
    assert result.status == "completed", result.reason
    assert result.final_answer is not None
    trace = records(result)
    assert_trace_invariants(trace)
    failures = [r["payload"]["error"] for r in of_type(trace, "ChildFailed")]
    assert failures, "the killed stream must show up as a failure of the agent that was reading it"
    assert of_type(trace, "AgentRestarting")
    assert not model_servers()
