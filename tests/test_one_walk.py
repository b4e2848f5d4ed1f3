"""One question's walk does each step once: every backend is built once, by the preflight check that
refuses a hopeless team, and handed to its agent; a restarted agent still gets a fresh one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support import of_type, records, run_team, scripted, step, team_config
from wire.team_chat import TeamChatServer

import massgen
from massgen import backends
from massgen.backends import factories
from massgen.backends import scripted as scripted_backend
from massgen.backends.base import Backend, BackendContext
from massgen.configs.schema import BackendConfig

BUILT: list[tuple[str, int]] = []  # (agent id, incarnation) of every scripted backend built


def counting_create(config: BackendConfig, context: BackendContext) -> Backend:
    """The scripted backend's factory, noting each build (registered through ``backends.register``)."""
    BUILT.append((context.agent_id, context.incarnation))
    return scripted_backend.create(config, context)


@pytest.fixture
def builds() -> Iterator[list[tuple[str, int]]]:
    BUILT.clear()
    backends.register("scripted", f"{__name__}:counting_create")
    try:
        yield BUILT
    finally:
        factories._REGISTERED.pop("scripted", None)  # back to the registry's own factory


def test_each_agent_s_backend_is_built_once_and_a_restart_builds_a_fresh_one(
        tmp_path: Path, builds: list[tuple[str, int]]) -> None:
    config = team_config(
        scripted("steady", [step(new_answer="Canberra")], [step(vote="agent1")]),
        scripted("midway", [step(text="Let me see"), step(fault="raise", incarnations=[1]),
                            step(new_answer="Canberra!")], [step(vote="agent1")]),
        orchestrator={"final_answer_strategy": "winner_reuse"},
    )
    result = run_team(config, tmp_path)
    assert result.status == "completed"
    assert len(of_type(records(result), "AgentRestarting")) == 1
    assert sorted(builds) == [("midway", 1), ("midway", 2), ("steady", 1)]


def test_the_events_of_a_backend_built_before_its_agent_reach_the_trace(tmp_path: Path) -> None:
    """The first backend is built before its actor exists: its events go to the actor that took it."""
    with TeamChatServer() as server:
        agent = {"id": "solo", "backend": {"type": "chatcompletion", "base_url": f"{server.url}/v1",
                                           "api_key": "sk-test", "model": "healthy#1"}}
        result = massgen.run_sync("What is 2+2?", {"agents": [agent]}, log_dir=tmp_path / "run", timeout=60)
    assert result.status == "completed"
    attempts = [r for r in of_type(records(result), "BackendEvent") if r["payload"]["event"] == "backend.attempt"]
    assert attempts and {r["sender"] for r in attempts} == {"solo#1"}
