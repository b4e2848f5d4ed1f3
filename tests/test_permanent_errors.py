"""Permanent errors are permanent: no restarts, the cause named in full, a hopeless team refused."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import assert_trace_invariants, of_type, records, scripted, step
from wire.team_chat import TeamChatServer

import massgen
from massgen.configs import ConfigError

NO_KEYS = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}


def _chat(agent_id: str, url: str, model: str) -> dict[str, Any]:
    return {"id": agent_id, "backend": {"type": "chatcompletion", "base_url": f"{url}/v1", "api_key": "sk-test",
                                        "model": model}}


def test_an_unknown_model_fails_its_agent_at_once_with_the_providers_words(tmp_path: Path) -> None:
    with TeamChatServer() as server:
        config = {"agents": [_chat("good", server.url, "healthy#1"), _chat("typo", server.url, "404-gpt-55")]}
        result = massgen.run_sync("What is 2+2?", config, log_dir=tmp_path / "run", timeout=60)
        typo_requests = server.seen["404-gpt-55"]
    assert result.status == "completed"
    trace = records(result)
    assert_trace_invariants(trace)
    failed = [r["payload"] for r in of_type(trace, "ChildFailed") if r["payload"]["name"] == "typo"]
    assert len(failed) == 1 and failed[0]["permanent"]
    assert not [r for r in of_type(trace, "AgentRestarting") if r["payload"]["name"] == "typo"]
    assert typo_requests == 1  # neither the retry policy nor a restart asked again
    marked = [r["payload"]["reason"] for r in of_type(trace, "AgentMarkedFailed")]
    assert marked == ["permanent error: model call failed: chatcompletion 404: The model `404-gpt-55` does not exist"]


def test_when_every_agent_fails_for_good_the_reason_names_each_cause(tmp_path: Path) -> None:
    with TeamChatServer() as server:
        config = {"agents": [_chat("a", server.url, "404-one"), _chat("b", server.url, "404-two")]}
        result = massgen.run_sync("What is 2+2?", config, log_dir=tmp_path / "run", timeout=60)
    assert result.status == "failed"
    assert "a: model call failed: chatcompletion 404: The model `404-one` does not exist" in result.reason
    assert "b: model call failed: chatcompletion 404: The model `404-two` does not exist" in result.reason


def test_an_agent_without_its_key_fails_at_once_and_the_others_go_on(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no ./.env here
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    config = {"agents": [scripted("good", [step(new_answer="4")], [step(vote="agent1")]),
                         {"id": "keyless", "backend": {"type": "claude"}}]}
    result = massgen.run_sync("What is 2+2?", config, log_dir=tmp_path / "run", timeout=60)
    assert result.status == "completed"
    trace = records(result)
    marked = [r["payload"] for r in of_type(trace, "AgentMarkedFailed")]
    assert [m["name"] for m in marked] == ["keyless"]
    assert "needs an API key: set ANTHROPIC_API_KEY" in marked[0]["reason"]
    assert not of_type(trace, "AgentRestarting")


def test_a_team_with_no_usable_agent_is_a_config_error_before_any_call(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    config = {"agents": [{"id": "c", "backend": {"type": "claude"}}, {"id": "g", "backend": {"type": "gemini"}}]}
    with pytest.raises(ConfigError) as caught:
        massgen.run_sync("What is 2+2?", config)
    assert "agent 'c': backend 'claude' needs an API key: set ANTHROPIC_API_KEY" in str(caught.value)
    assert "agent 'g': backend 'gemini' needs an API key: set GEMINI_API_KEY or GOOGLE_API_KEY" in str(caught.value)


def test_the_command_exits_1_for_a_team_with_no_usable_agent(tmp_path: Path) -> None:
    team = tmp_path / "team.yaml"
    team.write_text(yaml.safe_dump({"agents": [{"id": "c", "backend": {"type": "claude"}},
                                               {"id": "o", "backend": {"type": "openai"}}]}))
    env = {**NO_KEYS, "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs")}
    done = subprocess.run([sys.executable, "-m", "massgen.cli.main", "--automation", "--config", str(team),
                           "What is 2+2?"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert done.returncode == 1, done.stderr
    # the command names every missing key before it starts anything (cli/flags.check_keys)
    assert "agent 'c' (backend claude) needs ANTHROPIC_API_KEY" in done.stderr
    assert "agent 'o' (backend openai) needs OPENAI_API_KEY" in done.stderr
    assert "Traceback" not in done.stderr
