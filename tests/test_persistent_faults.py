"""A persistently faulty agent is given up on quickly, and the others go on at full speed.

One agent of three (``c``) gets the same fault on every request, from the wire-faithful
loopback server; ``a`` and ``b`` are healthy. A healthy team makes 7 calls (3 answers, 3
votes, 1 presentation). Before, a persistent mid-stream drop cost 10 calls and the 6 s
straggler grace (its restart waited 30 s for an open breaker), and persistent malformed
tool JSON 17 calls (4 incarnations x 3 attempts). Now: at most 9 calls, no waiting for the
grace (set to 60 s here, so waiting for it would show), and the trace says why.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from support import assert_trace_invariants, of_type, records
from wire.team_chat import TeamChatServer

import massgen

ALWAYS = 10**9


def _team(url: str, faulty: str) -> dict[str, Any]:
    def agent(agent_id: str, model: str) -> dict[str, Any]:
        return {"id": agent_id, "backend": {"type": "chatcompletion", "base_url": f"{url}/v1",
                                            "api_key": "sk-test", "model": model}}

    return {"agents": [agent("a", "healthy#1"), agent("b", "healthy#2"), agent("c", faulty)],
            "timeout_settings": {"orchestrator_timeout_seconds": 120, "straggler_grace_seconds": 60}}


def _threads_back_to(baseline: int, limit_s: float = 10.0) -> int:
    """The thread count once it is back at (or under) ``baseline`` (stopped threads take a moment)."""
    give_up = time.monotonic() + limit_s
    while threading.active_count() > baseline and time.monotonic() < give_up:
        time.sleep(0.05)
    return threading.active_count()


def _run(tmp_path: Path, faulty: str) -> tuple[massgen.RunResult, list[dict[str, Any]], int, float]:
    baseline = threading.active_count()
    with TeamChatServer(times=ALWAYS) as server:
        started = time.monotonic()
        result = massgen.run_sync("What is 2+2?", _team(server.url, faulty), log_dir=tmp_path / faulty)
        elapsed = time.monotonic() - started
        calls = len(server.requests)
    trace = records(result)
    assert_trace_invariants(trace)
    # the left-out agent's pending restart did not outlive the run: every actor thread is gone
    assert _threads_back_to(baseline) <= baseline
    return result, trace, calls, elapsed


def test_a_persistent_mid_stream_drop_costs_one_calls_attempts_and_no_grace(tmp_path: Path) -> None:
    result, trace, calls, elapsed = _run(tmp_path, "drop")
    assert result.status == "completed" and "presented by healthy" in (result.final_answer or "")
    assert calls <= 9  # c's one call with its 4 attempts; then its breaker is open
    attempts = [r["payload"]["info"] for r in of_type(trace, "BackendEvent") if r["sender"].startswith("c#")]
    assert attempts[-1]["outcome"] == "error" and attempts[-1]["circuit_opened"] is True
    excluded = of_type(trace, "AgentExcluded")
    assert [e["payload"]["name"] for e in excluded] == ["c"]
    assert "circuit is open" in excluded[0]["payload"]["reason"]
    assert not of_type(trace, "DeadlineExpired")  # nobody waited for the 60 s grace
    assert {v["voter"] for v in result.votes} == {"a", "b"}
    assert elapsed < 30


def test_persistent_malformed_tool_json_is_retried_within_the_turn_then_given_up(tmp_path: Path) -> None:
    result, trace, calls, elapsed = _run(tmp_path, "malformed")
    assert result.status == "completed"
    assert calls <= 9  # c's turn: 3 attempts, each corrected; then no restart
    corrections = [r for r in of_type(trace, "TurnCorrection") if r["sender"].startswith("c#")]
    assert len(corrections) == 3 and all("not valid JSON" in r["payload"]["problem"] for r in corrections)
    assert not [r for r in of_type(trace, "AgentRestarting") if r["payload"]["name"] == "c"]
    failed = of_type(trace, "AgentMarkedFailed")
    assert [f["payload"]["name"] for f in failed] == ["c"]
    assert "the same fault on every attempt of its turn, so not restarted" in failed[0]["payload"]["reason"]
    assert {v["voter"] for v in result.votes} == {"a", "b"}
    assert elapsed < 30


def test_a_lone_agent_with_a_failed_turn_is_still_restarted(tmp_path: Path) -> None:
    """Giving up is for when others go on: alone, the restart policy still gets its chances."""
    with TeamChatServer(times=1) as server:
        config = {"agents": [{"id": "solo", "backend": {"type": "chatcompletion", "base_url": f"{server.url}/v1",
                                                        "api_key": "sk-test", "model": "malformed"}}],
                  "orchestrator": {"max_attempts_per_turn": 1, "restart": {"backoff_base_seconds": 0.05}}}
        result = massgen.run_sync("What is 2+2?", config, log_dir=tmp_path / "solo")
    trace = records(result)
    assert result.status == "completed"
    assert [r["payload"]["name"] for r in of_type(trace, "AgentRestarting")] == ["solo"]
    assert not of_type(trace, "AgentMarkedFailed")
