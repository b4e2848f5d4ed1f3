"""Circuit breakers belong to a run and to one (endpoint, model): a fault never fails a bystander."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support import assert_trace_invariants, of_type, records
from wire.team_chat import TeamChatServer

import massgen


def _team(url: str, *models: str, grace: float = 1.0) -> dict[str, Any]:
    """``grace``: how long a straggling agent may go on failing once the others have voted."""
    agents = [{"id": f"a{i}", "backend": {"type": "chatcompletion", "base_url": f"{url}/v1",
                                          "api_key": "sk-test", "model": model}}
              for i, model in enumerate(models, 1)]
    return {"agents": agents, "orchestrator": {"restart": {"backoff_base_seconds": 0.05}},
            "timeout_settings": {"orchestrator_timeout_seconds": 60, "straggler_grace_seconds": grace}}


def test_one_runs_open_breaker_does_not_fail_the_next_run_in_the_same_process(tmp_path: Path) -> None:
    with TeamChatServer() as server:
        server.failing.add("flaky")
        # A call that used all its 4 attempts opens the breaker; the agent, restarting only after
        # the cool-down, is left out at once (no waiting for the grace) and the others go on.
        first = massgen.run_sync("What is 2+2?", _team(server.url, "healthy#1", "healthy#2", "flaky", grace=8),
                                 log_dir=tmp_path / "first")
        trace = records(first)
        assert_trace_invariants(trace)
        attempts = [r["payload"]["info"] for r in of_type(trace, "BackendEvent") if r["sender"].startswith("a3#")]
        assert [a["outcome"] for a in attempts] == ["retry", "retry", "retry", "error"]
        assert attempts[-1]["circuit_opened"] is True  # the flaky model's breaker did open in run 1
        assert server.seen["flaky"] == 4  # and no restart paid the same four attempts again
        excluded = of_type(trace, "AgentExcluded")
        assert [e["payload"]["name"] for e in excluded] == ["a3"]
        assert "circuit is open" in excluded[0]["payload"]["reason"]
        # ... and the winner's presentation still went out: the final text is the presenter's.
        assert first.status == "completed" and first.final_answer is not None
        assert "presented by healthy" in first.final_answer
        assert not [r for r in of_type(trace, "BackendEvent")
                    if r["payload"]["info"].get("outcome") == "circuit_open" and not r["sender"].startswith("a3#")]

        server.failing.clear()  # the provider has recovered
        second = massgen.run_sync("What is 2+2?", _team(server.url, "healthy#1", "flaky"),
                                  log_dir=tmp_path / "second")
    assert second.status == "completed", second.reason
    trace = records(second)
    assert_trace_invariants(trace)
    assert not of_type(trace, "ChildFailed")
    assert {v["voter"] for v in second.votes} == {"a1", "a2"}  # flaky takes part again


def test_a_restart_waits_for_an_open_breaker(tmp_path: Path) -> None:
    with TeamChatServer() as server:
        result = massgen.run_sync("What is 2+2?", _team(server.url, "healthy#1", "503", grace=8),
                                 log_dir=tmp_path / "run")
    trace = records(result)
    assert result.status == "completed"
    # the call that used all its attempts opened the breaker (and said for how long)
    opened = [r for r in of_type(trace, "BackendEvent") if r["payload"]["info"].get("circuit_opened")]
    restarts = [r for r in of_type(trace, "AgentRestarting") if r["payload"]["name"] == "a2"]
    assert opened and restarts
    wait = float(opened[0]["payload"]["info"]["retry_in_s"])
    after_open = [r for r in restarts if r["seq"] > opened[0]["seq"]]
    assert after_open and after_open[0]["payload"]["delay_s"] >= wait - 0.5
