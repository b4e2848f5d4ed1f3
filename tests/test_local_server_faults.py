"""The shared local model server under faults: a frozen server, a killed one, a damaged model, and what users see.

Real Gemma 3 270M, real ``llama_cpp.server`` processes, real signals (SIGSTOP, SIGKILL). Each test
runs one server at a time (the machine is small) and checks that no server outlives it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import io
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from support import FACTOR, model_servers, of_type, records, unavailable

from massgen.actors.run.team import Team
from massgen.backends import BackendContext, create
from massgen.backends.local import LocalBackend
from massgen.backends.local_model import MODELS, ModelError, locate_chunks, resolve_model, sha256_file
from massgen.cli.progress import ProgressDisplay
from massgen.configs import validate_data
from massgen.configs.schema import LocalBackendConfig
from massgen.logs import LogProjection

pytestmark = [pytest.mark.slow, pytest.mark.timeout(int(600 * FACTOR))]

if importlib.util.find_spec("llama_cpp") is None:
    unavailable("llama_cpp is not importable: install `massgen-actors[local]`", module=True)

GEMMA = MODELS["gemma3-270m"]


@pytest.fixture(scope="module")
def gemma_chunks() -> None:
    try:
        locate_chunks(GEMMA)
    except ModelError as exc:
        unavailable(f"Gemma 3 270M packages are not installed: {exc}")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gemma_chunks: None) -> Path:
    """A model cache of this test's own, holding a verified Gemma (copied from the user's cache when there)."""
    folder = tmp_path / "models"
    monkeypatch.setenv("MASSGEN_MODEL_CACHE", str(folder))
    return folder


@pytest.fixture(autouse=True)
def no_orphans() -> Iterator[None]:
    yield
    deadline = time.monotonic() + 10
    while model_servers() and time.monotonic() < deadline:
        threading.Event().wait(0.1)
    left = model_servers()
    for proc in left:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.send_signal(signal.SIGCONT)
            proc.kill()
    assert not left, f"model servers left running: {[p.pid for p in left]}"


def _team(agents: int, *, run_s: float, idle_s: float) -> dict[str, Any]:
    return {
        "agents": [
            {"id": f"g{i}", "backend": {"type": "local", "model": "tiny", "seed": i, "temperature": 0,
                                        "max_tokens": 48, "n_threads": 1}}
            for i in range(1, agents + 1)
        ],
        "orchestrator": {"max_new_answers_per_agent": 1, "final_answer_strategy": "winner_reuse",
                         "after_first_answers": "decide", "restart": {"backoff_base_seconds": 0.2}},
        "timeout_settings": {"orchestrator_timeout_seconds": run_s, "idle_stream_timeout_seconds": idle_s,
                             "turn_timeout_seconds": run_s},
    }


class ServerWatch:
    """Every llama server process this test process starts, seen by polling (a server lives for seconds)."""

    def __init__(self) -> None:
        self.pids: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.wait(0.05):
            for proc in model_servers():
                if proc.pid not in self.pids:
                    self.pids.append(proc.pid)

    def stop(self) -> list[int]:
        self._stop.set()
        self._thread.join(5)
        return self.pids


def _server_texts(trace: list[dict[str, Any]]) -> list[str]:
    """What the local backends said about their server, as traced (BackendEvent ``local.server``)."""
    return [str(r["payload"]["info"].get("text")) for r in of_type(trace, "BackendEvent")
            if r["payload"]["event"] == "local.server"]


def _on_first_chunk(action: Any) -> tuple[Any, threading.Thread, list[int]]:
    """A trace subscriber, and a thread that runs ``action(server pid)`` once a model reply is streaming."""
    streaming = threading.Event()
    hit: list[int] = []

    def watch(record: dict[str, Any], projection: LogProjection) -> None:
        if record["type"] == "AgentChunk":
            streaming.set()

    def act() -> None:
        if not streaming.wait(300 * FACTOR):
            return
        for server in model_servers():
            hit.append(server.pid)
            action(server.pid)

    return watch, threading.Thread(target=act, daemon=True), hit


def test_a_frozen_server_is_named_killed_and_replaced_long_before_the_run_deadline(cache: Path) -> None:
    """SIGSTOP the server mid-answer: the backend notices the silence, finds the server does not answer a
    health check, kills it, starts a new one, and the run answers. The user is told which server froze."""
    run_s = 150 * FACTOR
    watch, actor, stopped = _on_first_chunk(lambda pid: os.kill(pid, signal.SIGSTOP))
    shown = io.StringIO()
    actor.start()
    try:
        result = Team(validate_data(_team(2, run_s=run_s, idle_s=run_s), "gemma team"), "What is 7+5*3-2*4?",
                      log_dir=cache.parent / "run", subscribers=[watch, ProgressDisplay(shown, live=False)]).run()
    finally:
        actor.join(5)
        for pid in stopped:  # a failed test must not leave a stopped server behind
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
    assert stopped, "the model server was never seen streaming"
    assert result.status == "completed", result.reason
    trace = records(result)
    said = [t for t in _server_texts(trace) if "stopped answering" in t]
    assert said and f"pid {stopped[0]}" in said[0] and "port " in said[0] and "restarted" in said[0], said
    assert f"pid {stopped[0]}" in shown.getvalue() and "stopped answering" in shown.getvalue(), shown.getvalue()
    waited = [r["payload"] for r in of_type(trace, "DeadlineExpired")
              if r["payload"]["scope"] in ("run", "turn", "idle")]
    assert not waited, f"recovery must not wait for a deadline: {waited}"
    assert not psutil.pid_exists(stopped[0]) or psutil.Process(stopped[0]).status() == psutil.STATUS_ZOMBIE


def test_one_killed_server_is_replaced_once_however_many_agents_queue_on_it(cache: Path) -> None:
    """SIGKILL the shared server while four agents use it: exactly one new server is started (queued agents
    go to the new one, none restarts it again), the run answers, and the server is said to have been killed."""
    servers = ServerWatch()
    watch, actor, killed = _on_first_chunk(lambda pid: os.kill(pid, signal.SIGKILL))
    actor.start()
    try:
        result = Team(validate_data(_team(4, run_s=300 * FACTOR, idle_s=240 * FACTOR), "gemma team"),
                      "What is 7+5*3-2*4?", log_dir=cache.parent / "run", subscribers=[watch]).run()
    finally:
        actor.join(5)
        seen = servers.stop()
    assert killed, "the model server was never seen streaming"
    assert result.status == "completed", result.reason
    assert len(seen) == 2, f"servers started: {seen} (one killed, one new)"
    said = _server_texts(records(result))
    exited = [t for t in said if f"pid {killed[0]}" in t and "ready" not in t]
    assert exited and "SIGKILL" in exited[0] and "exited" in exited[0] and "stopped answering" not in exited[0], said


def test_a_damaged_cached_model_the_marker_still_vouches_for_is_rebuilt_when_the_server_cannot_load_it(
    cache: Path,
) -> None:
    """Bytes changed behind the marker's back (the file's size, mtime and inode kept): the server fails to load
    it, so the backend checks the file again, rebuilds it from the model packages, and starts."""
    model = resolve_model("tiny")
    stat = model.stat()
    with model.open("r+b") as f:
        f.write(b"XXXX")  # no longer a GGUF file
    os.utime(model, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    events: list[tuple[str, dict[str, Any]]] = []
    backend = create(LocalBackendConfig(model="tiny", n_threads=1),
                     BackendContext(agent_id="a1", on_event=lambda e, i: events.append((e, i))))
    assert isinstance(backend, LocalBackend)

    async def start() -> None:
        try:
            await backend.start()
        finally:
            await backend.aclose()

    asyncio.run(start())
    assert sha256_file(model) == GEMMA.sha256
    texts = " | ".join(str(i.get("text")) for _, i in events)
    assert str(model) in texts and "damaged" in texts, texts


def test_first_use_shows_assembly_and_server_start_as_progress(cache: Path) -> None:
    """An empty cache: the user sees the assembly's percent and the server's start (pid, port, seconds) on the
    progress display, and the trace keeps them."""
    shown = io.StringIO()
    result = Team(validate_data(_team(1, run_s=240 * FACTOR, idle_s=240 * FACTOR), "gemma team"),
                  "What is 2+2?", log_dir=cache.parent / "run", subscribers=[ProgressDisplay(shown, live=False)]).run()
    assert result.status == "completed", result.reason
    lines = shown.getvalue()
    assert "assembling gemma-3-270m-q4_k_m.gguf: 100%" in lines, lines
    assert "starting the local model server" in lines, lines
    ready = [t for t in _server_texts(records(result)) if "ready" in t]
    assert ready and "pid " in ready[0] and "port " in ready[0] and ready[0] in lines, (ready, lines)
