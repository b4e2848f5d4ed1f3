"""The local model team end to end: real models, a real llama.cpp server, a real SIGKILL.

Slow by nature (the instruction-tuned model makes about 4 tokens/s on two cores), and
run by CI all the same.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from support import FACTOR, assert_trace_invariants, model_servers, of_type, records, unavailable

from massgen.actors.run.team import Team
from massgen.configs import load_config, validate_data
from massgen.configs.defaults import LOCAL_TEAM
from massgen.files import confined
from massgen.logs import LogProjection, read_trace

pytestmark = [pytest.mark.slow, pytest.mark.timeout(int(1500 * FACTOR))]

if importlib.util.find_spec("llama_cpp") is None:
    unavailable("llama_cpp is not importable: install `massgen-actors[local]`", module=True)


def test_three_local_agents_reach_a_final_answer(tmp_path: Path) -> None:
    config = validate_data(LOCAL_TEAM, "local team")
    result = Team(config, "Which is larger, 9.11 or 9.9?", log_dir=tmp_path / "run").run()

    assert result.status == "completed", result.reason
    # The 1.5B model is often wrong on this very question; what is checked is the team, not the model.
    assert result.final_answer and result.final_answer.strip()
    trace = records(result)
    assert_trace_invariants(trace)
    # Two programs and the bare greedy call, one call each; the first answers decide, with no vote round.
    calls = [c["payload"] for c in of_type(trace, "ModelCallStarted")]
    assert len(calls) == 3 and all(c["tools"] == [] for c in calls)
    accepted = {r["payload"]["agent"]: r["payload"] for r in of_type(trace, "AnswerAccepted")}
    assert [accepted[a]["program"] for a in ("local_1", "local_2", "local_3")] == [True, True, False]
    ran = [r["payload"] for r in of_type(trace, "ToolCallResult") if r["payload"]["name"] == "run_python"]
    assert len(ran) == sum(1 for a in ("local_1", "local_2") if "```python" in accepted[a]["content"])
    assert len(of_type(trace, "FirstAnswersDecided")) == 1 and not of_type(trace, "RecordVote")
    # The local team uses the winning answer as written (winner_reuse): it already carries its work.
    assert not of_type(trace, "PresentFinal") and result.final_answer == result.answers[result.winner_label or ""]
    assert not model_servers(), "the model server must stop with the run"


def test_the_readme_question_on_a_machine_without_bubblewrap_is_answered_by_programs(tmp_path: Path) -> None:
    """README command 1's run with no bubblewrap on PATH (as on macOS, Windows and most containers): the
    programs run in the WebAssembly sandbox pip installed, their output is in the trace, and the answer is 9.9."""
    bare = tmp_path / "bin"
    bare.mkdir()
    env = {**os.environ, "PATH": f"{bare}:{Path(sys.executable).parent}",
           "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs")}
    env.pop(confined.SANDBOX_ENV, None)
    done = subprocess.run([sys.executable, "-m", "massgen.cli.main", "Which is larger, 9.11 or 9.9?"], env=env,
                          capture_output=True, text=True, timeout=1200 * FACTOR, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "bubblewrap" not in done.stderr and "not applied" not in done.stderr, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "Answer: 9.9", done.stdout
    trace = read_trace(next((tmp_path / "logs").glob("**/trace.jsonl")).parent)
    ran = [r["payload"] for r in of_type(trace, "ToolCallResult") if r["payload"]["name"] == "run_python"]
    assert ran and all(r["content"].startswith("[exit code 0]") for r in ran), ran


def test_the_default_local_team_is_the_measured_bench_config() -> None:
    """Issue 48's numbers in docs/benchmarks.md were measured with ``bench/configs/local_team_reserve.yaml``."""
    measured = load_config(str(Path(__file__).parent.parent / "bench" / "configs" / "local_team_reserve.yaml"))[0]
    assert validate_data(LOCAL_TEAM, "local team").model_dump() == measured.model_dump()


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
    # The backend says which server died and how, restarts it once, and the agent reading the killed stream
    # sends its call again to the new server: no agent loses its incarnation to a server's death.
    said = [r["payload"]["info"]["text"] for r in of_type(trace, "BackendEvent")
            if r["payload"]["event"] == "local.server"]
    assert any(f"pid {killed[0]}" in t and "exited (killed by SIGKILL)" in t and "restarted" in t for t in said), said
    assert not of_type(trace, "AgentRestarting", "ChildFailed")
    assert not model_servers()
