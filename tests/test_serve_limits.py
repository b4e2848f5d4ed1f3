"""``massgen serve`` with a key, a one-run limit, and a SIGTERM while a run streams."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from serve_process import ServerProcess, find_trace, start_server, wait_until, write_configs

KEY = "sk-test-serve-0123456789"


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server that needs a key (from the environment) and runs one team at a time."""
    workdir = tmp_path_factory.mktemp("serve_guarded")
    write_configs(workdir)
    proc = start_server(workdir, "--config", "slow.yaml", "--max-concurrent-runs", "1",
                        env={"MASSGEN_SERVER_API_KEY": KEY})
    try:
        yield proc
    finally:
        proc.stop()


@pytest.fixture
def launch(tmp_path: Path) -> Iterator[Callable[..., ServerProcess]]:
    """Start servers in this test's directory; every one is stopped when the test ends."""
    write_configs(tmp_path)
    started: list[ServerProcess] = []

    def start(*args: str) -> ServerProcess:
        started.append(start_server(tmp_path, *args))
        return started[-1]

    try:
        yield start
    finally:
        for server in started:
            server.stop()


def _client(server: ServerProcess, key: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.api_url, api_key=key, max_retries=0, timeout=30.0)


def test_auth_is_required_and_checked(guarded: ServerProcess) -> None:
    with _client(guarded, "wrong-key") as client, pytest.raises(openai.AuthenticationError) as wrong:
        client.models.list()
    assert wrong.value.code == "invalid_api_key"
    missing = httpx.post(f"{guarded.api_url}/chat/completions", json={}, timeout=5.0)
    assert missing.status_code == 401 and missing.json()["error"]["code"] == "invalid_api_key"
    assert missing.headers["www-authenticate"].startswith("Bearer")
    with _client(guarded, KEY) as client:
        assert next(m.id for m in client.models.list()) == "slow"
    assert guarded.health()["status"] == "ok"  # health stays open for probes


def test_concurrent_run_limit_is_429_with_retry_after(guarded: ServerProcess) -> None:
    body = {"model": "slow", "stream": True, "messages": [{"role": "user", "content": "hold-the-slot"}]}
    headers = {"authorization": f"Bearer {KEY}"}
    with httpx.stream("POST", f"{guarded.api_url}/chat/completions", json=body, headers=headers,
                      timeout=30.0) as holder:
        lines = holder.iter_lines()  # keep it: a dropped line iterator closes the connection
        next(lines)  # the role chunk: the run holds the only slot
        with _client(guarded, KEY) as client, pytest.raises(openai.RateLimitError) as limited:
            client.chat.completions.create(model="slow", messages=[{"role": "user", "content": "second"}])
        assert limited.value.response.headers["retry-after"] == "1"
        assert limited.value.code == "concurrent_runs_exceeded"
    guarded.wait_idle()  # the holder left: its run was cancelled and the slot is free again


def test_sigterm_lets_a_streaming_run_end_with_its_best_answer(launch: Callable[..., ServerProcess]) -> None:
    server = launch("--config", "draft_then_hang.yaml", "--shutdown-grace", "0.5")
    body = {"model": "draft_then_hang", "stream": True, "messages": [{"role": "user", "content": "shutdown-1"}]}
    events: list[dict[str, Any]] = []
    done = False
    with httpx.stream("POST", f"{server.api_url}/chat/completions", json=body, timeout=30.0) as response:
        lines = response.iter_lines()
        for line in lines:
            if "answered (agent1.1)" in line:
                break  # the draft is in: now stop the server
        server.proc.send_signal(signal.SIGTERM)
        for line in lines:
            if line == "data: [DONE]":
                done = True
            elif line.startswith("data: "):
                events.append(json.loads(line[len("data: "):]))
    assert done
    content = "".join(e["choices"][0]["delta"].get("content") or "" for e in events if e["choices"])
    assert content == "draft answer"
    meta = next(e["massgen_metadata"] for e in events if "massgen_metadata" in e)
    assert meta["status"] == "interrupted" and meta["partial"] is True
    assert server.proc.wait(30) == -signal.SIGTERM  # uvicorn ends by the signal it was sent
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{server.base_url}/health", timeout=2.0)
    trace = find_trace(server.log_dir, "shutdown-1")
    assert [r["payload"]["reason"] for r in trace if r["type"] == "CancelRun"] == [
        "the server is shutting down"]
    assert [r["payload"]["status"] for r in trace if r["type"] == "RunFinished"] == ["interrupted"]
    log_dir = Path(meta["log_dir"])
    assert (log_dir / "final" / "alpha" / "answer.txt").read_text() == "draft answer\n"
    assert json.loads((log_dir / "status.json").read_text())["phase"] == "finished"


def test_sigterm_with_nothing_running_exits_promptly(launch: Callable[..., ServerProcess]) -> None:
    server = launch("--config", "team.yaml")
    server.proc.send_signal(signal.SIGTERM)
    wait_until(lambda: server.proc.poll() is not None, 10.0, "the server to exit")
    assert server.proc.returncode == -signal.SIGTERM


def test_bad_startup_config_exits_with_config_error(tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text("agents: []\n")
    done = subprocess.run([sys.executable, "-m", "massgen.cli.main", "serve", "--config", "broken.yaml"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "broken.yaml" in done.stderr
