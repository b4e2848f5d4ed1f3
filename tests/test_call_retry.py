"""A stream that breaks before its first workflow event is retried inside the call.

Real sockets: three ``chatcompletion`` agents on one loopback Chat Completions server
(``tests/wire/team_chat.py``), the third with a cut stream on its first request. The
incarnation survives (no restart), the team's answer is the same as without the fault,
and the trace records the retry against the faulty agent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support import assert_trace_invariants, records
from wire.team_chat import TeamChatServer

import massgen
from massgen.backends.retry import CallRetry


def _config(url: str, faulty: str) -> dict[str, Any]:
    def agent(agent_id: str, model: str) -> dict[str, Any]:
        return {"id": agent_id, "backend": {"type": "chatcompletion", "base_url": f"{url}/v1",
                                            "api_key": "sk-test", "model": model, "timeout_seconds": 5.0}}

    return {"agents": [agent("a", "healthy#1"), agent("b", "healthy#2"), agent("c", faulty)],
            "timeout_settings": {"orchestrator_timeout_seconds": 60}}


def _of_c(trace: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r for r in trace if r["type"] == kind and (r["sender"].startswith("c#") or r["payload"].get("name") == "c")]


def test_a_stream_cut_after_text_is_sent_again_not_restarted(tmp_path: Path) -> None:
    with TeamChatServer() as server:
        result = massgen.run_sync("What is 2+2?", _config(server.url, "drop_text"), log_dir=tmp_path / "run")
        requests_of_c = server.seen["drop_text"]
    # What the user sees: the team's answer, and c's own answer without the text of the broken stream.
    assert result.status == "completed", result.reason
    assert result.final_answer and "The answer is 4" in result.final_answer
    trace = records(result)
    assert_trace_invariants(trace)
    answers_of_c = [r["payload"]["content"] for r in trace
                    if r["type"] == "AnswerAccepted" and r["payload"]["agent"] == "c"]
    assert answers_of_c == ["2 + 2 = 4, says drop_text"]
    # What the trace records: the broken call, one retry naming the error and what was dropped, no restart.
    retries = [r for r in _of_c(trace, "BackendEvent") if r["payload"]["event"] == "call.retry"]
    assert len(retries) == 1, retries
    info = retries[0]["payload"]["info"]
    assert info["retry"] == 1 and info["dropped_chars"] == len("Working it out: 2 + 2 is the sum of two twos")
    assert "stream" in info["error"] or "connection" in info["error"]
    finished = [r["payload"]["finish_reason"] for r in _of_c(trace, "ModelCallFinished")]
    assert finished[0] == "error" and finished[1] == "tool_calls"
    assert not _of_c(trace, "ChildFailed") and not _of_c(trace, "AgentRestarting")
    assert {r["sender"] for r in trace if r["sender"].startswith("c#")} == {"c#1"}
    assert requests_of_c >= 3  # the cut one, its retry, the vote
    status = json.loads((Path(result.log_dir) / "status.json").read_text())
    assert status["agents"]["c"]["restarts"] == 0


def test_a_stream_cut_before_any_event_is_retried_from_the_short_backoff(tmp_path: Path) -> None:
    with TeamChatServer() as server:
        result = massgen.run_sync("What is 2+2?", _config(server.url, "drop"), log_dir=tmp_path / "run")
    assert result.status == "completed", result.reason
    trace = records(result)
    attempts = [r["payload"]["info"] for r in _of_c(trace, "BackendEvent")
                if r["payload"]["event"] == "backend.attempt"]
    retried = [a for a in attempts if a["outcome"] == "retry"]
    assert len(retried) == 1 and retried[0]["mid_stream"] is True
    assert retried[0]["retry_in_s"] < 0.1  # not the 0.5 s base a refused or overloaded endpoint gets
    assert not _of_c(trace, "AgentRestarting")


def test_only_a_retryable_break_after_output_and_before_any_tool_call_is_retried() -> None:
    retry = CallRetry(max_retries=2, base_delay_s=0.1, jitter=0.0)
    assert retry.delay(1, retryable=True, had_output=True, had_tool_call=False) == 0.1
    assert retry.delay(2, retryable=True, had_output=True, had_tool_call=False) == 0.2
    assert retry.delay(3, retryable=True, had_output=True, had_tool_call=False) is None  # bounded
    assert retry.delay(1, retryable=False, had_output=True, had_tool_call=False) is None  # a stream guard, a 400
    assert retry.delay(1, retryable=True, had_output=True, had_tool_call=True) is None  # a workflow call was seen
    assert retry.delay(1, retryable=True, had_output=False, had_tool_call=False) is None  # the backend retried it
