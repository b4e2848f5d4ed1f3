"""Faults injected on real sockets: one faulty agent of three never costs the team its answer.

Three ``chatcompletion`` agents share one loopback server (``tests/wire/team_chat.py``);
the third has the fault. For each fault: the run completes with the healthy agents'
answer, the trace records the fault against the faulty agent and what was done about it,
and (through conftest's guard) no thread or process outlives the run.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from support import assert_trace_invariants, records
from wire.team_chat import TeamChatServer

import massgen


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _agent(agent_id: str, base_url: str, model: str) -> dict[str, Any]:
    return {"id": agent_id, "backend": {"type": "chatcompletion", "base_url": base_url, "api_key": "sk-test",
                                        "model": model, "timeout_seconds": 2.0}}


# fault -> what the trace must show about the faulty agent "c": (record type, text in it)
FAULTS = {
    "hang": ("DeadlineExpired", "straggler"),
    "hang_mid": ("DeadlineExpired", "straggler"),
    "loop": ("ChildFailed", "stream guard: repetition"),
    "drip": ("DeadlineExpired", "straggler"),
    "drop": ("BackendEvent", "connection"),
    "reset": ("BackendEvent", "connection"),
    "truncated": ("BackendEvent", "connection"),
    "malformed": ("TurnCorrection", "not valid JSON"),
    "429": ("BackendEvent", "429"),
    "500": ("BackendEvent", "500"),
    "502": ("BackendEvent", "502"),
    "503": ("BackendEvent", "503"),
    "refused": ("BackendEvent", "connection"),
}


def _about_c(record: dict[str, Any]) -> bool:
    payload = record["payload"]
    return record["sender"].startswith("c#") or payload.get("name") == "c"


@pytest.mark.parametrize("fault", list(FAULTS))
def test_one_faulty_agent_costs_only_itself(tmp_path: Path, fault: str) -> None:
    with TeamChatServer(drip_s=0.5) as server:
        faulty_url = f"http://127.0.0.1:{_free_port()}/v1" if fault == "refused" else f"{server.url}/v1"
        config = {
            "agents": [_agent("a", f"{server.url}/v1", "healthy#1"), _agent("b", f"{server.url}/v1", "healthy#2"),
                       _agent("c", faulty_url, fault)],
            "orchestrator": {"restart": {"backoff_base_seconds": 0.05}},
            "timeout_settings": {"orchestrator_timeout_seconds": 60, "straggler_grace_seconds": 1.0},
        }
        result = massgen.run_sync("What is 2+2?", config, log_dir=tmp_path / "run")
    assert result.status == "completed", result.reason
    assert result.final_answer and "The answer is 4" in result.final_answer
    trace = records(result)
    assert_trace_invariants(trace)
    kind, text = FAULTS[fault]
    seen = [r for r in trace if r["type"] == kind and _about_c(r)]
    assert any(text in str(r["payload"]) for r in seen), f"no {kind} about c with {text!r}: {seen[:3]}"
