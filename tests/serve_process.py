"""A real ``massgen serve`` process for tests and benchmarks, plus the scripted teams they use.

The server is started with ``--port 0`` and reports the port it got on stderr, so there
is no race for a "free" port; a daemon thread keeps draining stderr (and keeps it for
failure messages). ``stop`` always ends the process, so no test leaves an orphan.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import yaml
from support import FACTOR, unavailable

LISTENING = "massgen serve: listening on "
CHROMIUM = shutil.which("chromium-headless-shell") or "/usr/bin/chromium-headless-shell"

_TIMEOUTS = {"orchestrator_timeout_seconds": 60, "turn_timeout_seconds": 60, "idle_stream_timeout_seconds": 60}

# Two agents; alpha answers, both vote for it, alpha presents "The answer is 4.".
TEAM = {
    "agents": [
        {"id": "alpha", "backend": {"type": "scripted", "present": "The answer is 4.",
                                    "script": [[{"reasoning": "Adding two and two. "}, {"new_answer": "4"}],
                                               [{"vote": "agent1", "reason": "4 is right"}]]}},
        {"id": "beta", "backend": {"type": "scripted",
                                   "script": [[{"text": "Quick check."}, {"new_answer": "four"}],
                                              [{"vote": "agent1", "reason": "the digit is clearer"}]]}},
    ],
    "timeout_settings": _TIMEOUTS,
}
# One agent that says something, then works for a minute: for disconnects, limits and keep-alives.
SLOW = {
    "agents": [{"id": "slowpoke", "backend": {"type": "scripted", "script": [
        [{"reasoning": "Starting a long job. "}, {"delay": 60}, {"new_answer": "done at last"}]]}}],
    "timeout_settings": _TIMEOUTS,
}
# One agent whose answer is a call of the client's get_weather tool.
TOOL = {
    "agents": [{"id": "caller", "backend": {"type": "scripted", "script": [
        [{"text": "I need the weather first."}, {"tool": "get_weather", "args": {"city": "Paris"}}]]}}],
    "timeout_settings": _TIMEOUTS,
}
# One agent that answers from the tool result it was given.
AFTER_TOOL = {
    "agents": [{"id": "caller", "backend": {"type": "scripted", "script": [
        [{"new_answer": "It is sunny in Paris."}]]}}],
    "timeout_settings": _TIMEOUTS,
}
# No agent ever starts: the run ends with no answer.
FAILING = {
    "agents": [{"id": "broken", "backend": {"type": "scripted", "crash_on_start": True}}],
    "orchestrator": {"restart": {"max_restarts": 0}},
    "timeout_settings": _TIMEOUTS,
}
# alpha answers a draft, then both agents work for a minute: the run only ends when cancelled.
DRAFT_THEN_HANG = {
    "agents": [
        {"id": "alpha", "backend": {"type": "scripted", "script": [[{"new_answer": "draft answer"}],
                                                                    [{"delay": 60}]]}},
        {"id": "beta", "backend": {"type": "scripted", "script": [[{"delay": 60}]]}},
    ],
    "timeout_settings": _TIMEOUTS,
}
# alpha presents in four pieces, as a model streams: the client must see them as they come.
PRESENTING = {
    "agents": [
        {"id": "alpha", "backend": {"type": "scripted", "script": [[{"new_answer": "4"}]],
                                    "present": ["The answer ", "is 4, ", "because 2+2 ", "is 4."]}},
        {"id": "beta", "backend": {"type": "scripted", "script": [[{"vote": "agent1", "reason": "right"}]]}},
    ],
    "timeout_settings": _TIMEOUTS,
}
CONFIGS = {"team": TEAM, "presenting": PRESENTING, "slow": SLOW, "tool": TOOL, "after_tool": AFTER_TOOL,
           "failing": FAILING, "draft_then_hang": DRAFT_THEN_HANG}


def write_configs(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in CONFIGS.items():
        (directory / f"{name}.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")


class ServerProcess:
    def __init__(self, proc: subprocess.Popen[str], base_url: str, lines: list[str], log_dir: Path) -> None:
        self.proc = proc
        self.base_url = base_url
        self.lines = lines
        self.log_dir = log_dir

    @property
    def api_url(self) -> str:
        return f"{self.base_url}/v1"

    def output(self) -> str:
        return "".join(self.lines[-80:])

    def health(self) -> dict[str, Any]:
        data: dict[str, Any] = httpx.get(f"{self.base_url}/health", timeout=5.0).json()
        return data

    def ui_url(self) -> str:
        """The Web UI's URL as ``serve --ui`` prints it (its token in the query)."""
        wait_until(lambda: any("web UI at " in line for line in self.lines), 10, "the web UI URL")
        return next(line for line in self.lines if "web UI at " in line).split("web UI at ", 1)[1].strip()

    def ui_token(self) -> str:
        """The token in that URL: what the page sends as ``Authorization: Bearer`` (or trades for its own)."""
        return self.ui_url().split("token=", 1)[1]

    def ui_client(self) -> httpx.Client:
        """A client as the page is: the UI token on every request, sent from the page's own origin."""
        return httpx.Client(base_url=self.base_url, timeout=30 * FACTOR, headers={
            "origin": self.base_url, "authorization": f"Bearer {self.ui_token()}"})

    def wait_idle(self, timeout: float = 15.0) -> None:
        """Until no run is in progress (teams finish on their own threads after a response)."""
        wait_until(lambda: self.health()["runs_in_progress"] == 0, timeout, "runs still in progress")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout * FACTOR)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return int(self.proc.returncode)


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll another process's state (there is no event to wait on across processes)."""
    deadline = time.monotonic() + timeout * FACTOR
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out: {what}")
        time.sleep(0.02)


def start_server(workdir: Path, *args: str, env: dict[str, str] | None = None,
                 timeout: float = 30.0, entry: tuple[str, ...] = ("-m", "massgen.cli.main"),
                 python: str = sys.executable, prefix: tuple[str, ...] = ()) -> ServerProcess:
    """``massgen serve --port 0 ...`` in ``workdir``; returns once ``/health`` answers. ``entry``: what
    Python runs instead of the command's module (a script that registers a test backend first); ``prefix``
    and ``python``: the server run as another user (``setpriv ...``) with an interpreter that user can run."""
    log_dir = workdir / "logs"
    cmd = [*prefix, python, *entry, "serve", "--host", "127.0.0.1", "--port", "0",
           "--log-dir", str(log_dir), "--log-level", "warning", *args]
    proc = subprocess.Popen(cmd, cwd=workdir, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
    lines: list[str] = []
    found: queue.Queue[str | None] = queue.Queue()

    def drain() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if line.startswith(LISTENING):
                found.put(line[len(LISTENING):].strip())
        found.put(None)

    threading.Thread(target=drain, name="serve-stderr", daemon=True).start()
    try:
        url = found.get(timeout=timeout * FACTOR)
    except queue.Empty:
        url = None
    if url is None:
        proc.kill()
        proc.wait(10)
        raise AssertionError("the server did not start:\n" + "".join(lines))
    server = ServerProcess(proc, url, lines, log_dir)
    assert server.health()["status"] == "ok"
    return server


def trace_of(log_dir: str | Path) -> list[dict[str, Any]]:
    with open(Path(log_dir) / "trace.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def find_trace(logs: Path, question_part: str) -> list[dict[str, Any]]:
    """The trace of the run whose task contains ``question_part``."""
    for path in logs.rglob("trace.jsonl"):
        trace = trace_of(path.parent)
        if trace and question_part in trace[0]["payload"].get("question", ""):
            return trace
    raise AssertionError(f"no run with {question_part!r} under {logs}")


def chromium(server: ServerProcess) -> Iterator[Any]:
    """Debian's headless Chromium through Playwright, for a module's browser fixture (``yield from``).

    Chromium starts its network and GPU helper processes on first use; they are started here, so a
    per-test leak check sees them as the module's, not as leaked by the first test."""
    if not Path(CHROMIUM).exists():
        unavailable("chromium-headless-shell is not installed (apt-get install chromium-headless-shell)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM)
        warm = launched.new_page()
        warm.goto(f"{server.base_url}/health")
        warm.close()
        yield launched
        launched.close()
