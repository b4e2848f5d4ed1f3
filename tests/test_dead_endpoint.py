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


def test_a_server_that_does_not_do_chat_completions_fails_its_agent_at_once_naming_the_status(tmp_path: Path) -> None:
    """A base URL pointed at a plain web server (here Python's own, which answers every POST with 501 Not
    Implemented) is no outage: the server answered, and says it cannot do this. Before, 501 was retried as
    a 5xx, the breaker's cool-down waited, and after 33 s the run said "endpoint ... unreachable"."""
    import http.server
    import threading

    posts: list[str] = []

    class PlainWebServer(http.server.SimpleHTTPRequestHandler):
        def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
            posts.append(self.command)
            super().send_error(code, message, explain)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), PlainWebServer)
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}"
        done, elapsed = _massgen("--backend", "chatcompletion", "--model", "x", "--base-url", f"{endpoint}/v1", "q",
                                 tmp_path=tmp_path, timeout=120 * FACTOR)
    finally:
        server.shutdown()
        serving.join(10)
    assert done.returncode == 2, done.stderr
    reason = next(line for line in done.stderr.splitlines() if line.startswith("massgen: no answer:"))
    assert "501" in reason and "unreachable" not in reason, reason
    assert f"{endpoint} answered, but does not serve this request" in reason
    assert posts == ["POST"]  # asked once: no retry, no restart, no probe after a cool-down
    assert done.stderr.count("restarting in") == 0 and "Traceback" not in done.stderr
    assert elapsed < DEAD_ENDPOINT_LIMIT_S * FACTOR


def test_an_endpoint_that_accepts_and_never_answers_costs_its_agent_a_bounded_number_of_incarnations(
        tmp_path: Path) -> None:
    """Each incarnation is cut by the idle deadline, too far apart for the restart window to count them:
    before, such an agent was restarted every deadline until the run's own (an hour by default), and the
    endpoint was never named. Now the fourth incarnation in a row with no output from its model (one more
    than ``max_restarts``) is the last, and the reason names where it was talking."""
    import threading

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    accepted: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                accepted.append(listener.accept()[0])  # held open, never read, never answered
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    endpoint = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    config = {
        "agents": [{"id": "silent", "backend": {"type": "chatcompletion", "model": "x", "base_url": endpoint}}],
        # failures about 1.5 s apart and a window of 1 s: the window alone never gives up on this agent
        "orchestrator": {"restart": {"max_restarts": 3, "window_seconds": 1, "backoff_base_seconds": 0.5,
                                     "backoff_max_seconds": 0.5}},
        "timeout_settings": {"idle_stream_timeout_seconds": 1, "orchestrator_timeout_seconds": 300},
    }
    path = tmp_path / "team.yaml"
    path.write_text(yaml.safe_dump(config))
    try:
        done, elapsed = _massgen("--config", str(path), "q", tmp_path=tmp_path, timeout=300 * FACTOR)
    finally:
        listener.close()
        for connection in accepted:
            connection.close()
    assert done.returncode == 2, done.stderr
    reason = next(line for line in done.stderr.splitlines() if line.startswith("massgen: no answer:"))
    assert f"no output from its model at {endpoint} in 4 incarnations in a row" in reason, reason
    assert done.stderr.count("restarting in") == 3 and "Traceback" not in done.stderr
    assert elapsed < 60 * FACTOR  # four idle deadlines and three short backoffs, not the run's 300 s
