"""Run and watch one llama.cpp OpenAI-compatible server process per model file.

``llama_cpp.server`` loads a GGUF model once and serves Chat Completions over HTTP.
Agents that use the same model share one server (two copies would only fight over
the same cores), so servers live in a thread-safe, reference-counted registry keyed
by model path. The class is deliberately plain (start, readiness wait, death check,
restart, stop) so that an actor can supervise it later.

No orphans: the server runs in its own process group and is stopped with SIGTERM,
then SIGKILL, for the whole group; ``atexit`` stops what is left; and the child
watches its parent and exits when the parent is gone, even after a SIGKILL.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil

from massgen.backends.base import BackendError
from massgen.backends.local_model import EXTRA_HINT, Progress

HOST = "127.0.0.1"
_POLL_SECONDS = 0.25
_PROGRESS_EVERY = 10.0
_PORT_ATTEMPTS = 3
_SERVER_MODULES = (
    "llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings",
)

# Runs llama_cpp.server exactly as `python -m llama_cpp.server ARGS` would, plus a thread that
# ends the process (and deletes its log) when its parent dies: a killed orchestrator leaves nothing.
_BOOTSTRAP = """\
import os, runpy, sys, threading, time
parent, log = int(sys.argv[1]), sys.argv[2]
def _watch():
    while os.getppid() == parent:
        time.sleep(1.0)
    try:
        os.unlink(log)
    except OSError:
        pass
    os._exit(3)
threading.Thread(target=_watch, name="massgen-parent-watch", daemon=True).start()
# Weight repacking into "extra" buffer types (AMX on recent Xeons) crashes with SIGSEGV on the
# first token on machines whose CPU flags promise AMX (seen here); the plain CPU path is safe.
import llama_cpp.llama_cpp as _bindings
_default_params = _bindings.llama_model_default_params
def _model_params():
    params = _default_params()
    params.use_extra_bufts = False
    return params
_bindings.llama_model_default_params = _model_params
# One request, one answer: Llama.generate evaluates only the part of a prompt that differs from the previous
# request's tokens, so the same prompt is evaluated in other batches, rounds differently, and a greedy call
# parts from itself after another request (measured: docs/architecture.md, local team). Evaluating every prompt whole
# costs its prompt time (measured in docs/benchmarks.md) and makes a request's reply depend on the request only.
import llama_cpp.llama as _llama
_generate = _llama.Llama.generate
def _generate_from_a_fresh_context(self, tokens, *args, **kwargs):
    if kwargs.get("reset", True):
        self.reset()
    return _generate(self, tokens, *args, **kwargs)
_llama.Llama.generate = _generate_from_a_fresh_context
sys.argv = ["llama_cpp.server", *sys.argv[3:]]
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""


class ServerStartError(BackendError):
    """The model server could not be started or did not become ready; the message says why."""


class ServerExitedError(ServerStartError):
    """The server process ended while it was starting (most often: it could not load the model file)."""


@dataclass(frozen=True)
class Endpoint:
    """A ready server as one caller saw it: what to call, and what to name and restart if it fails."""

    url: str
    generation: int
    pid: int
    port: int
    started: bool  # this caller started it (and waited ``LlamaServer.last_start_seconds`` for it)

    @property
    def where(self) -> str:
        return f"pid {self.pid}, port {self.port}"


def exit_text(returncode: int) -> str:
    """How a process ended, as a user reads it: ``killed by SIGKILL``, ``exit code 1``."""
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


class _PortTaken(Exception):
    pass


def free_port(host: str = HOST) -> int:
    """A port that was free a moment ago; a lost race is retried by ``LlamaServer``."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host  # an IPv6 node address


def check_server_installed() -> None:
    """Fail early, with the pip command, when llama-cpp-python[server] is not installed."""
    missing = [m for m in _SERVER_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        raise ServerStartError(
            f"the local backend needs llama-cpp-python[server] (missing: {', '.join(missing)}); "
            f"install it with `{EXTRA_HINT}`"
        )


def _last_lines(text: str, limit: int) -> str:
    """The end of ``text``, at most ``limit`` characters, starting at a line (not mid-word)."""
    if len(text) <= limit:
        return text
    cut = text[-limit:]
    return cut[cut.find("\n") + 1:] if "\n" in cut else cut


def _tail(path: Path, limit: int = 2000) -> str:
    try:
        data = path.read_bytes()[-limit:]
    except OSError:
        return ""
    return data.decode("utf-8", "replace").strip()


class LlamaServer:
    """One ``llama_cpp.server`` process for one model file, started on a free loopback port."""

    def __init__(
        self,
        model_path: Path,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        start_timeout: float = 300.0,
        python: str = sys.executable,
        extra_args: Sequence[str] = (),
        host: str = HOST,
    ) -> None:
        self.model_path = Path(model_path)
        self.host = host  # loopback, unless other machines must reach it (a model server on Ray)
        self.n_ctx = n_ctx
        self.n_threads = n_threads or max(1, os.cpu_count() or 1)
        self.start_timeout = start_timeout
        self.python = python
        self.extra_args = tuple(extra_args)
        self._lock = threading.RLock()
        # The server computes one reply at a time (it is started with --interrupt_requests False), so
        # agents take turns here, where a wait is visible, instead of inside the server, where it is not.
        self.slot = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._port: int | None = None
        self._log: Path | None = None
        self._generation = 0
        self._restarts = 0
        self.last_start_seconds: float | None = None
        # When a caller last heard from the server (a streamed line, a turn taken): queued callers read it.
        self.last_activity = time.monotonic()

    # -- state, readable without the lock ---------------------------------------------------
    @property
    def pid(self) -> int | None:
        proc = self._proc
        return proc.pid if proc is not None else None

    @property
    def base_url(self) -> str | None:
        """``http://HOST:PORT/v1`` while a server is (or was last) up."""
        return f"http://{_url_host(self.host)}:{self._port}/v1" if self._port is not None else None

    @property
    def generation(self) -> int:
        """Increases with every successful start; lets callers restart only the server they saw fail."""
        return self._generation

    @property
    def restarts(self) -> int:
        return self._restarts

    @property
    def log_path(self) -> Path | None:
        return self._log

    @property
    def port(self) -> int | None:
        return self._port

    def is_alive(self) -> bool:
        """The process has not exited (it may still be hung: see ``health``)."""
        proc = self._proc
        return proc is not None and proc.poll() is None

    def touch(self) -> None:
        """Note that the server was heard from just now."""
        self.last_activity = time.monotonic()

    def health(self, timeout: float = 5.0) -> str | None:
        """None when the server process runs and answers HTTP within ``timeout``; else what is wrong.

        Any HTTP answer will do (this server has no ``/health`` and answers 404 at once): it shows that
        the process is scheduled and its event loop serves requests while a reply is being computed.
        """
        proc, port = self._proc, self._port
        if proc is None or port is None:
            return "it is not running"
        code = proc.poll()
        if code is not None:
            return f"it exited ({exit_text(code)})"
        try:
            if psutil.Process(proc.pid).status() in (psutil.STATUS_STOPPED, psutil.STATUS_TRACING_STOP):
                return "its process is stopped (state T: SIGSTOP, or a debugger)"
        except psutil.NoSuchProcess:
            pass
        try:
            with httpx.Client(timeout=timeout, trust_env=False) as client:
                client.get(f"http://{_url_host(self.host)}:{port}/health")
        except httpx.HTTPError as exc:
            try:  # a killed server drops its connections a moment before it can be reaped
                return f"it exited ({exit_text(proc.wait(1.0))})"
            except subprocess.TimeoutExpired:
                pass
            kind = "no answer" if isinstance(exc, httpx.TimeoutException) else type(exc).__name__
            return f"it did not answer a health check within {timeout:g} s ({kind})"
        return None

    # -- lifecycle ----------------------------------------------------------------------------
    def endpoint(self, progress: Progress | None = None) -> Endpoint:
        """A ready server (started, or restarted if dead, first), its URL and generation read together."""
        with self._lock:
            before = self._generation
            url = self.ensure_running(progress)
            proc, port = self._proc, self._port
            assert proc is not None and port is not None
            return Endpoint(url, self._generation, proc.pid, port, started=self._generation != before)

    def ensure_running(self, progress: Progress | None = None) -> str:
        """Return the base URL of a ready server, starting (or restarting a dead) one first."""
        with self._lock:
            if self.is_alive() and self.base_url is not None:
                return self.base_url
            if self._proc is not None:
                self._restarts += 1
                self._cleanup_locked()
            return self._start_locked(progress)

    def restart(self, expected_generation: int | None = None, progress: Progress | None = None,
                *, hung: bool = False) -> str:
        """Stop and start the server, unless another caller already replaced ``expected_generation``.

        ``hung``: the server stopped answering, so it gets no grace period to exit (SIGKILL at once).
        """
        with self._lock:
            self.replace(expected_generation, progress, hung=hung)
            assert self.base_url is not None
            return self.base_url

    def replace(self, expected_generation: int | None = None, progress: Progress | None = None,
                *, hung: bool = False) -> bool:
        """``restart``, saying whether this call restarted it (False: another caller had, and it runs)."""
        with self._lock:
            if (
                expected_generation is not None
                and expected_generation != self._generation
                and self.is_alive()
                and self.base_url is not None
            ):
                return False
            if self._proc is not None:
                self._restarts += 1
            self._stop_locked(0.5 if hung else 5.0)
            self._start_locked(progress)
            return True

    def stop(self, timeout: float = 5.0) -> None:
        """SIGTERM to the server's process group, SIGKILL after ``timeout``; always reaps it."""
        with self._lock:
            self._stop_locked(timeout)

    # -- internals ----------------------------------------------------------------------------
    def _command(self, port: int, log: Path) -> list[str]:
        return [
            self.python, "-c", _BOOTSTRAP, str(os.getpid()), str(log),
            "--model", str(self.model_path),
            "--n_ctx", str(self.n_ctx),
            "--n_threads", str(self.n_threads),
            "--host", self.host,
            "--port", str(port),
            # By default the server cuts a running stream short ("[DONE]") as soon as another
            # request waits; agents sharing one server must queue instead.
            "--interrupt_requests", "False",
            *self.extra_args,
        ]  # fmt: skip

    def _start_locked(self, progress: Progress | None) -> str:
        check_server_installed()
        if not self.model_path.is_file():
            raise ServerStartError(f"model file {self.model_path} does not exist")
        started = time.monotonic()
        for _attempt in range(_PORT_ATTEMPTS):
            port = free_port(self.host)
            fd, log_name = tempfile.mkstemp(prefix=f"massgen-llama-{port}-", suffix=".log")
            log = Path(log_name)
            try:
                with os.fdopen(fd, "wb") as log_file:
                    proc = subprocess.Popen(
                        self._command(port, log),
                        stdin=subprocess.DEVNULL,
                        stdout=log_file,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                        env={**os.environ, "PYTHONUNBUFFERED": "1"},
                    )
            except OSError as exc:
                log.unlink(missing_ok=True)
                raise ServerStartError(f"cannot start {self.python}: {exc.strerror or exc}") from None
            self._proc, self._port, self._log = proc, port, log
            _live_add(self)
            try:
                self._wait_ready(proc, port, log, started, progress)
            except _PortTaken:
                self._stop_locked()
                continue
            except BaseException:
                self._stop_locked()  # the error message already carries the log's tail
                raise
            self._generation += 1
            self.last_start_seconds = time.monotonic() - started
            assert self.base_url is not None
            return self.base_url
        raise ServerStartError(f"no free loopback port for the model server after {_PORT_ATTEMPTS} tries")

    def _wait_ready(
        self, proc: subprocess.Popen[bytes], port: int, log: Path, started: float, progress: Progress | None
    ) -> None:
        deadline = started + self.start_timeout
        if progress is not None:
            progress(f"starting the local model server ({self.model_path.name})")
        next_report = _PROGRESS_EVERY
        url = f"http://{_url_host(self.host)}:{port}/v1/models"
        with httpx.Client(timeout=2.0, trust_env=False) as client:
            while True:
                code = proc.poll()
                if code is not None:
                    tail = _tail(log)
                    if "address already in use" in tail.lower():
                        raise _PortTaken()
                    raise ServerExitedError(
                        f"the model server exited ({exit_text(code)}) while starting "
                        f"(model {self.model_path}); its last output:\n{_last_lines(tail, 1200)}"
                    )
                with contextlib.suppress(httpx.HTTPError):
                    if client.get(url).status_code == 200:
                        return
                now = time.monotonic()
                if now > deadline:
                    raise ServerStartError(
                        f"the model server did not become ready within {self.start_timeout:.0f}s "
                        f"(model {self.model_path.name}); its last output:\n{_last_lines(_tail(log), 1200)}"
                    )
                if progress is not None and now - started >= next_report:
                    progress(f"starting the local model server ({self.model_path.name}): {now - started:.0f}s")
                    next_report = now - started + _PROGRESS_EVERY
                time.sleep(_POLL_SECONDS)

    def _stop_locked(self, timeout: float = 5.0) -> None:
        proc = self._proc
        if proc is not None:
            _terminate_group(proc, timeout)
        self._cleanup_locked()

    def _cleanup_locked(self) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            _terminate_group(proc, 5.0)
        self._proc = None
        self._port = None
        if self._log is not None:
            self._log.unlink(missing_ok=True)
        self._log = None
        _live_discard(self)


def _terminate_group(proc: subprocess.Popen[bytes], timeout: float) -> None:
    """SIGTERM the group, wait, SIGKILL the group; the leader is reaped before we return."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGTERM)
            os.killpg(proc.pid, signal.SIGCONT)  # a stopped process handles SIGTERM only once continued
        try:
            proc.wait(timeout)
            return
        except subprocess.TimeoutExpired:
            pass
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


# -- every started server, so that interpreter exit stops them ------------------------------
_live_lock = threading.Lock()
_live: set[LlamaServer] = set()


def _live_add(server: LlamaServer) -> None:
    with _live_lock:
        _live.add(server)


def _live_discard(server: LlamaServer) -> None:
    with _live_lock:
        _live.discard(server)


@atexit.register
def stop_all() -> None:
    """Stop every server this process started (also runs at interpreter exit)."""
    with _live_lock:
        servers = list(_live)
    for server in servers:
        server.stop()


# -- shared servers, one per model file ---------------------------------------------------------
_registry_lock = threading.Lock()
_registry: dict[Path, tuple[LlamaServer, int]] = {}


def acquire_server(
    model_path: Path, *, n_ctx: int = 4096, n_threads: int | None = None, start_timeout: float = 300.0
) -> LlamaServer:
    """The shared server for ``model_path`` (not started yet if new); pair with ``release_server``.

    The first caller's ``n_ctx``/``n_threads`` win: one process serves every agent of that model.
    """
    key = Path(model_path).resolve()
    with _registry_lock:
        server, refs = _registry.get(key, (None, 0))
        if server is None:
            server = LlamaServer(key, n_ctx=n_ctx, n_threads=n_threads, start_timeout=start_timeout)
        _registry[key] = (server, refs + 1)
        return server


def release_server(server: LlamaServer) -> None:
    """Drop one reference; the last one stops the server."""
    key = server.model_path.resolve()
    with _registry_lock:
        current, refs = _registry.get(key, (None, 0))
        if current is not server:
            server.stop()
            return
        if refs > 1:
            _registry[key] = (server, refs - 1)
            return
        del _registry[key]
    server.stop()


__all__ = [
    "Endpoint",
    "LlamaServer",
    "ServerExitedError",
    "ServerStartError",
    "acquire_server",
    "check_server_installed",
    "exit_text",
    "free_port",
    "release_server",
    "stop_all",
]
