"""A dead endpoint costs its agent a bounded time, and a run with no live agent left fails (exit 2).

Before: an endpoint that refused every connection opened its circuit breaker, and the agent was
restarted into the open circuit every 30 s until the run deadline (30 minutes by default), the
run printing "restarting in 30s ... circuit open" each time; a run in which every agent failed
after an answer existed exited 0. Now the agent is failed once the probe after the cool-down
fails too (one call's attempts, one cool-down, one probe), the run ends at once naming the
endpoint and why, and every all-failed run exits 2.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import yaml
from support import FACTOR

# The bound: upstream MassGen gives up on a dead endpoint after 19 s; here one cool-down
# (30 s) and one probe, so well under a minute.
DEAD_ENDPOINT_LIMIT_S = 60.0


def _massgen(*args: str, tmp_path: Path, timeout: float) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {**os.environ, "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs")}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "massgen.cli.main", *args], capture_output=True, text=True,
                          env=env, timeout=timeout, cwd=tmp_path)
    return done, time.monotonic() - started


def _closed_port() -> int:
    """A loopback port nothing listens on: bound, then closed, so connecting is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _fields(output: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in output.splitlines() if ": " in line)


def test_a_dead_endpoint_ends_the_run_within_a_minute_with_exit_2_naming_the_endpoint(tmp_path: Path) -> None:
    endpoint = f"http://127.0.0.1:{_closed_port()}"
    done, elapsed = _massgen("--backend", "chatcompletion", "--model", "x", "--base-url", f"{endpoint}/v1", "q",
                             tmp_path=tmp_path, timeout=180 * FACTOR)
    assert elapsed <= DEAD_ENDPOINT_LIMIT_S * FACTOR, (elapsed, done.stderr)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    last = done.stderr.strip().splitlines()
    reason = next(line for line in last if line.startswith("massgen: no answer:"))
    # Nothing ever answered there in this run: the first call's attempts decide it (no restart into a
    # breaker's cool-down); an endpoint that answered before and then died gets one cool-down and one probe.
    assert f"cannot reach {endpoint}" in reason and "connection failed" in reason
    assert "Traceback" not in done.stderr
    assert done.stderr.count("restarting in") == 0


def test_a_run_whose_agents_all_failed_after_an_answer_exits_2_with_the_answer_marked(tmp_path: Path) -> None:
    config = {
        "agents": [{"id": "x", "backend": {"type": "scripted", "script": [
            [{"new_answer": "Canberra"}], [{"fault": "raise"}]]}}],
        "orchestrator": {"restart": {"max_restarts": 0}},
    }
    path = tmp_path / "team.yaml"
    path.write_text(yaml.safe_dump(config))
    done, _ = _massgen("--automation", "--config", str(path), "q", tmp_path=tmp_path, timeout=60 * FACTOR)
    fields = _fields(done.stdout)
    assert done.returncode == 2, done.stdout + done.stderr
    assert fields["RUN_STATUS"] == "partial" and fields["ANSWER_PREVIEW"] == "Canberra"
    assert "every agent failed" in fields["REASON"]
