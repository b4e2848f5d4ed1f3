"""The ``local`` backend end to end: real Gemma 3 270M, real ``llama_cpp.server``, real SIGKILLs.

Gemma 270M is a base model and answers nonsense, but the grammar keeps its reply a valid
workflow call, which is all the plumbing needs. One server runs at a time (the machine
is small); every test checks that no server process outlives it.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import psutil
import pytest
from support import model_servers, unavailable

from massgen.backends import BackendContext, create
from massgen.backends.llama_server import LlamaServer, ServerStartError, acquire_server, release_server
from massgen.backends.local import LocalBackend
from massgen.backends.local_model import MODELS, ModelError, locate_chunks, resolve_model
from massgen.configs.schema import LocalBackendConfig
from massgen.messages.stream import (
    ChatMessage,
    Finish,
    ModelRequest,
    ReasoningDelta,
    StreamError,
    StreamEvent,
    ToolCallEvent,
    ToolSpec,
    Usage,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

if importlib.util.find_spec("llama_cpp") is None:
    unavailable("llama_cpp is not importable: install `massgen-actors[local]`", module=True)

NEW_ANSWER = ToolSpec(
    name="new_answer", description="Submit your answer to the task.",
    parameters={"type": "object", "properties": {"content": {"type": "string"}}, "required": ["content"]},
)
VOTE = ToolSpec(
    name="vote", description="Vote for the best answer in view.",
    parameters={
        "type": "object",
        "properties": {"agent_id": {"type": "string"}, "reason": {"type": "string"}},
        "required": ["agent_id", "reason"],
    },
)
TARGETS = ("agent1", "agent2")


def _turn(tools: tuple[ToolSpec, ...] = (NEW_ANSWER, VOTE)) -> ModelRequest:
    return ModelRequest(
        messages=(
            ChatMessage(role="system", content="You are one agent of a team. Answer, or vote for the best."),
            ChatMessage(role="user", content="Task: what is 7+5*3-2*4?\n\nAnswers in view:\n"
                                             "agent1: 14\nagent2: 28"),
        ),
        tools=tools,
        vote_targets=TARGETS,
        max_tokens=96,
    )


@pytest.fixture(scope="module")
def model_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    try:
        locate_chunks(MODELS["gemma3-270m"])
    except ModelError as exc:
        unavailable(f"Gemma 3 270M packages are not installed: {exc}")
    cache = tmp_path_factory.mktemp("models")
    old = os.environ.get("MASSGEN_MODEL_CACHE")
    os.environ["MASSGEN_MODEL_CACHE"] = str(cache)
    try:
        yield resolve_model("tiny")
    finally:
        if old is None:
            os.environ.pop("MASSGEN_MODEL_CACHE", None)
        else:
            os.environ["MASSGEN_MODEL_CACHE"] = old


@pytest.fixture(autouse=True)
def no_orphans() -> Iterator[None]:
    yield
    deadline = time.monotonic() + 5
    while model_servers() and time.monotonic() < deadline:
        time.sleep(0.1)
    left = model_servers()
    for proc in left:
        proc.kill()
    assert not left, f"model servers left running: {[p.pid for p in left]}"


def _backend(model_file: Path, agent: str = "a1") -> LocalBackend:
    backend = create(LocalBackendConfig(model=str(model_file), n_threads=2, seed=7, temperature=0.2),
                     BackendContext(agent_id=agent))
    assert isinstance(backend, LocalBackend)
    return backend


async def _collect(events: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [event async for event in events]


def _one_call(events: list[StreamEvent]) -> ToolCallEvent:
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    assert len(calls) == 1, events
    assert isinstance(events[-1], Finish) and events[-1].reason == "tool_calls"
    assert any(isinstance(e, Usage) and e.output_tokens > 0 for e in events)
    return calls[0]


def test_answers_with_a_valid_workflow_call(model_file: Path) -> None:
    async def run() -> None:
        backend = _backend(model_file)
        await backend.start()
        try:
            call = _one_call(await _collect(backend.stream(_turn()))).call
            assert call.parse_error is None
            assert call.name in ("new_answer", "vote")
            if call.name == "new_answer":
                assert isinstance(call.arguments["content"], str)
            else:
                assert call.arguments["agent_id"] in TARGETS and isinstance(call.arguments["reason"], str)

            vote = _one_call(await _collect(backend.stream(_turn(tools=(VOTE,))))).call
            assert vote.name == "vote" and vote.parse_error is None
            assert vote.arguments["agent_id"] in TARGETS and "reason" in vote.arguments

            present = await _collect(backend.stream(ModelRequest(
                messages=(ChatMessage(role="user", content="Write one sentence about the sea."),),
                kind="present", max_tokens=16)))
            assert not any(isinstance(e, (ToolCallEvent, StreamError)) for e in present)
            assert isinstance(present[-1], Finish)
        finally:
            await backend.aclose()

    asyncio.run(run())


def test_agents_share_one_server_and_queue_their_calls(model_file: Path) -> None:
    async def run() -> None:
        backends = [_backend(model_file, f"a{i}") for i in range(3)]
        for backend in backends:
            await backend.start()
        server = backends[0].server
        assert server is not None and all(b.server is server for b in backends)
        pid = server.pid
        assert pid is not None and len(model_servers()) == 1
        # Concurrent calls queue on the one server; none may be cut short by another.
        results = await asyncio.gather(*(_collect(b.stream(_turn())) for b in backends))
        for events in results:
            assert _one_call(events).call.parse_error is None
        for backend in backends[:-1]:
            await backend.aclose()
            assert server.is_alive() and server.pid == pid
        await backends[-1].aclose()
        assert not server.is_alive() and _gone(pid)

    asyncio.run(run())


def test_sigkilled_server_is_restarted_and_the_call_retried(model_file: Path) -> None:
    async def run() -> None:
        backend = _backend(model_file)
        await backend.start()
        server = backend.server
        assert server is not None
        try:
            # Killed between calls: the next call restarts it before anyone sees an error.
            first_pid = server.pid
            assert first_pid is not None
            os.kill(first_pid, signal.SIGKILL)
            while server.is_alive():
                await asyncio.sleep(0.05)
            call = _one_call(await _collect(backend.stream(_turn()))).call
            assert call.name in ("new_answer", "vote")
            assert server.pid != first_pid and server.restarts == 1

            # Killed mid-stream: a retryable error, a new server, and the retry succeeds.
            second_pid = server.pid
            assert second_pid is not None
            events: list[StreamEvent] = []
            async for event in backend.stream(_turn()):
                events.append(event)
                if isinstance(event, ReasoningDelta) and server.pid == second_pid:
                    os.kill(second_pid, signal.SIGKILL)
            errors = [e for e in events if isinstance(e, StreamError)]
            assert len(errors) == 1 and errors[0].retryable, events
            assert "restarted" in errors[0].message
            assert server.is_alive() and server.pid not in (first_pid, second_pid) and server.restarts == 2
            _one_call(await _collect(backend.stream(_turn())))
            assert _gone(first_pid) and _gone(second_pid)
        finally:
            await backend.aclose()

    asyncio.run(run())


def test_server_dies_with_its_parent(model_file: Path, tmp_path: Path) -> None:
    """Even a SIGKILLed orchestrator leaves no server: the child watches its parent."""
    script = tmp_path / "parent.py"
    script.write_text(
        "import sys, time\n"
        "from pathlib import Path\n"
        "from massgen.backends.llama_server import LlamaServer\n"
        f"server = LlamaServer(Path({str(model_file)!r}), n_threads=2)\n"
        "server.ensure_running()\n"
        "print(server.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        server_pid = int(parent.stdout.readline())
        assert psutil.pid_exists(server_pid)
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 10
        while not _gone(server_pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _gone(server_pid), "the server outlived its SIGKILLed parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def _gone(pid: int) -> bool:
    """Exited; a zombie waiting for init to reap it counts as gone."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_a_broken_model_file_is_a_clear_start_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\x00" * 4096)
    server = acquire_server(broken, n_threads=1, start_timeout=60)
    try:
        with pytest.raises(ServerStartError, match=r"exited \(exit code \d+\) while starting"):
            server.ensure_running()
        assert not server.is_alive() and server.pid is None
    finally:
        release_server(server)


def test_stop_is_idempotent_and_reaps(model_file: Path) -> None:
    server = LlamaServer(model_file, n_threads=2)
    url = server.ensure_running()
    assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
    assert server.last_start_seconds is not None and server.last_start_seconds < 60
    pid = server.pid
    server.stop()
    server.stop()
    assert server.pid is None and not server.is_alive() and _gone(pid or -1)


def test_a_greedy_request_gets_the_same_reply_whatever_was_asked_before(model_file: Path) -> None:
    """One request, one answer: every prompt is evaluated whole, never from the previous request's cache.

    Decoding only the part of a prompt that differs from the last request's tokens evaluates the same prompt
    in other batches and changes the reply of a greedy call (``bench/results/greedy-determinism``); the server
    logs such a reuse as a "prefix-match hit".
    """
    server = LlamaServer(model_file, n_threads=2)
    url = server.ensure_running()
    system = {"role": "system", "content": "You answer questions about numbers in one short sentence. " * 8}

    def ask(question: str) -> str:
        reply = httpx.post(f"{url}/chat/completions", timeout=120, json={
            "messages": [system, {"role": "user", "content": question}],
            "temperature": 0.0, "max_tokens": 24})
        reply.raise_for_status()
        return str(reply.json()["choices"][0]["message"]["content"])

    try:
        first = ask("Is 91 a prime number?")
        assert ask("Is 91 a prime number?") == first
        ask("Is 97 a prime number?")
        assert ask("Is 91 a prime number?") == first
        assert server.log_path is not None
        log = server.log_path.read_text(errors="replace")
        assert "prefix-match hit" not in log, log[-2000:]
    finally:
        server.stop()
