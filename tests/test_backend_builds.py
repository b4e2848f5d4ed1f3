"""Each agent's backend is built once per run, on every surface: the run's preflight check builds the
backends the agents then use (``Team.prepare``), and nothing else builds one.

Counted where backends are really built: the scripted backend's factory is wrapped by a registered
counting factory (tests/counted_backend.py) in the process under test, a real ``massgen`` command, a
real ``massgen serve`` answering over HTTP, and the worker processes of a two-node Ray cluster.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from counted_backend import BUILDS_FILE, builds
from serve_process import start_server, write_configs
from support import FACTOR

HERE = Path(__file__).resolve().parent
COUNTED = str(HERE / "counted_backend.py")
ONCE_EACH = {"agent_a#1": 1, "agent_b#1": 1, "agent_c#1": 1}  # the scripted example's three agents


def test_the_command_builds_each_agent_s_backend_once(tmp_path: Path) -> None:
    count = tmp_path / "builds.txt"
    done = subprocess.run([sys.executable, COUNTED, "--automation", "--config", "@examples/basic/scripted_three_agents",
                           "Which is larger, 9.11 or 9.9?"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120 * FACTOR, check=False, env={**os.environ, BUILDS_FILE: str(count)})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "RUN_STATUS: completed" in done.stdout
    assert builds(count) == ONCE_EACH


def test_serve_builds_each_agent_s_backend_once_and_still_refuses_bad_requests_as_such(tmp_path: Path) -> None:
    """The handler's checks (a blank question: 400, a team that cannot run: 400) are the run's own checks,
    done once before the run starts, not a second build beside it."""
    write_configs(tmp_path)
    (tmp_path / "keyless.yaml").write_text(json.dumps({"agents": [{"id": "k", "backend": {"type": "claude"}}]}),
                                           encoding="utf-8")
    count = tmp_path / "builds.txt"
    server = start_server(tmp_path, "--config", "team.yaml", entry=(COUNTED,),
                          env={BUILDS_FILE: str(count), "ANTHROPIC_API_KEY": ""})
    try:
        with httpx.Client(base_url=server.base_url, timeout=60 * FACTOR) as client:
            def ask(model: str, text: str) -> httpx.Response:
                return client.post("/v1/chat/completions",
                                   json={"model": model, "messages": [{"role": "user", "content": text}]})

            answered = ask("team", "What is 2+2?")
            assert answered.status_code == 200, answered.text
            assert answered.json()["choices"][0]["message"]["content"]
            server.wait_idle()
            assert builds(count) == {"alpha#1": 1, "beta#1": 1}
            blank = ask("team", "   ")
            assert blank.status_code == 400 and "is empty" in blank.json()["error"]["message"]
            keyless = ask("massgen/path:keyless.yaml", "What is 2+2?")
            assert keyless.status_code == 400, keyless.text
            error = keyless.json()["error"]
            assert error["code"] == "invalid_config" and "ANTHROPIC_API_KEY" in error["message"]
            assert server.health()["runs_in_progress"] == 0
            assert builds(count) == {"alpha#1": 1, "beta#1": 1}  # a refused request starts nothing
            assert len(list((tmp_path / "logs").glob("log_*"))) == 1  # and leaves no log folder
    finally:
        server.stop()


@pytest.mark.ray
def test_on_ray_each_agent_s_backend_is_built_once_where_the_agent_runs(tmp_path: Path) -> None:
    """The driver checks the team without building (the agents live in other processes and build there)."""
    from test_ray_runtime import _scenario

    out = _scenario("builds", tmp_path)
    assert out["exit"] == 0 and "builds" in out, out["stderr"][-4000:]
    assert out["builds"]["status"] == "completed"
    assert builds(Path(out["builds"]["file"])) == ONCE_EACH
    assert out["left"] == []


def test_on_ray_a_team_none_of_whose_agents_has_its_key_is_refused_before_any_cluster_is_joined(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from massgen.actors.run.team import Team
    from massgen.configs import ConfigError, validate_data

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)  # no ./.env
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.massgen/.env
    config = validate_data({"agents": [{"id": "k", "backend": {"type": "claude"}}],
                            "runtime": {"type": "ray", "address": "127.0.0.1:1"}}, "test")
    with pytest.raises(ConfigError, match=r"no agent of the team can run: agent 'k'.*ANTHROPIC_API_KEY"):
        Team(config, "2+2?", log_dir=tmp_path / "run").prepare()
