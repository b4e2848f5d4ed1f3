"""A model's Python program run in the project's bubblewrap sandbox (``MASSGEN_PYTHON_SANDBOX=bubblewrap``).

Kept beside the WebAssembly runner (``files/wasm_python.py``, the default) for Linux machines that have
Debian's ``bubblewrap``, and so the two can be measured on the same problems (``bench/``). It runs
``python3`` in the sandbox of ``run_command`` (``files/sandbox.py``: every namespace unshared, so no
network; the system read-only; no further user namespaces; run as root, dropped to a uid of the run's
own, see ``_run_uid``) with no host folder at all: the program is the read-only ``/program/main.py``,
copied in by bubblewrap from a memory file (nothing of it on the host disk, nothing another user could
read), and its only writable places are its ``/tmp`` (its working folder and home) and ``/dev/shm``,
tmpfs of ``Limits.scratch_bytes`` together, gone with the sandbox however it ends. Limits on CPU time
(a program stopped by it is told so), address space, processes, the size of a file, the wall clock (at
which the whole sandbox is killed: its pid namespace dies with it) and the output kept (each stream up
to ``Limits.output_bytes``, cut with a visible note). Memory, CPU time and the size of a file are per
process here, the process count per run; the WebAssembly runner caps memory for a run as a whole.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import os
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from massgen.files.limits import Limits, ProgramRun
from massgen.files.sandbox import (
    SANDBOX_UID,
    bwrap_argv,
    kill_sandbox,
    runs_as_root,
    sandbox_env,
    user_namespaces_refused,
)

__all__ = ["PROGRAM_PATH", "run_python", "unavailable"]

PROGRAM_PATH = "/program/main.py"  # where the program sees itself (a traceback names it), as in the WebAssembly runner
# Started inside the sandbox, before the program: the limits that must be set there (a process
# limit set before bubblewrap would count the caller's own processes; run as root it would not
# apply at all), then the program itself as a fresh interpreter, so its tracebacks are its own.
# A fixed hash seed: a program that prints a set prints it the same way every run, so two runs
# of one behaviour give one output.
_BOOT = (
    "import os,resource as r,sys\n"
    "m,p=int(sys.argv[1]),int(sys.argv[2])\n"
    "r.setrlimit(r.RLIMIT_AS,(m,m))\n"
    "r.setrlimit(r.RLIMIT_NPROC,(p,p))\n"
    "e=dict(os.environ,PYTHONHASHSEED='0',PYTHONDONTWRITEBYTECODE='1',PYTHONUNBUFFERED='1')\n"
    "os.execve(sys.executable,[sys.executable,'-s',sys.argv[3]],e)\n"
)
_FILE_BYTES = 16 << 20  # any one file the program writes (never more than its scratch holds)
# Past its cap, standard error is read on and dropped so the program goes on to print its result, up to this
# much; standard output past its cap (nothing more of it would be shown) stops the program at once.
_DROPPED_BYTES = 256 << 20
# Run as root, each run is a uid (and gid) of its own, so one run's processes never count against another's
# RLIMIT_NPROC (that limit counts every process of a uid on the host): the base, then 32 runs at once per
# massgen process, numbered from its pid (below 2**22, the kernel's most). 0x70000000 to 0x77FFFFFF lies past
# the ranges systemd hands out (system and normal users, homed, dynamic users, nspawn's containers end at
# 0x6FFFFFFF) and below 2**31 and systemd's foreign range (0x7FFE0000); no passwd names these uids.
_UID_BASE = 0x70000000
_SLOTS = 32
_slots_taken: collections.Counter[int] = collections.Counter()
_taking = threading.Lock()


def _python3() -> str | None:
    """The interpreter the sandbox runs (its PATH is the system's, never a virtual environment's)."""
    return shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")


def _argv(program_fd: int, limits: Limits, seccomp_fd: int | None, uid: int) -> list[str]:
    command = (f"exec python3 -S -s -c {shlex.quote(_BOOT)} {limits.memory_bytes} {limits.processes} "
               f"{PROGRAM_PATH}")
    return bwrap_argv(command, None, read_only=(), seccomp_fd=seccomp_fd, scratch_bytes=limits.scratch_bytes,
                      uid=uid, data=((program_fd, PROGRAM_PATH),))


def _child_limits(cpu_seconds: int, scratch_bytes: int) -> Callable[[], None]:
    file_bytes = min(_FILE_BYTES, scratch_bytes)

    def apply() -> None:  # in the child before exec: these hold for bubblewrap and all it starts
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return apply


@contextlib.contextmanager
def _program(code: str) -> Iterator[int]:
    """A descriptor of a memory file holding the program (bubblewrap copies it in): no file on any disk."""
    fd = os.memfd_create("massgen-program", os.MFD_CLOEXEC)
    try:
        text = memoryview(code.encode("utf-8", "surrogatepass"))
        while text:
            text = text[os.write(fd, text):]
        os.lseek(fd, 0, os.SEEK_SET)
        yield fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def _run_uid() -> Iterator[int]:
    """Who the run is on the host, run as root: a uid of its own (``_UID_BASE``), taken while it runs; for a
    normal user, ``nobody`` in the run's own user namespace, where the process count is the run's already."""
    if not runs_as_root():
        yield SANDBOX_UID
        return
    with _taking:  # the least used slot: a free one unless 32 runs of this process run at once
        slot = min(range(_SLOTS), key=lambda s: (_slots_taken[s], s))
        _slots_taken[slot] += 1
    try:
        yield _UID_BASE + (os.getpid() % (1 << 22)) * _SLOTS + slot
    finally:
        with _taking:
            _slots_taken[slot] -= 1


def _stopped_by(returncode: int | None, limits: Limits) -> str | None:
    """The note for a program a signal ended (bubblewrap exits 128 + the signal), naming the limit that sent it."""
    if returncode is None or not 128 < returncode < 128 + 65 or (returncode - 128) not in signal.valid_signals():
        return None
    number = signal.Signals(returncode - 128)
    if number == signal.SIGXCPU:
        why = f" (its CPU-time limit, {limits.cpu_seconds} s)"
    elif number == signal.SIGKILL:
        why = " (its CPU-time limit's hard end, or a kill)"
    elif number == signal.SIGXFSZ:
        why = f" (its limit on a file's size, {min(_FILE_BYTES, limits.scratch_bytes)} bytes)"
    else:
        why = ""
    return f"[the program was stopped by {number.name}{why}]\n"


async def run_python(code: str, limits: Limits) -> ProgramRun:
    """Run ``code`` as ``python3 main.py`` in the sandbox; raises ``RuntimeError`` only when the sandbox
    cannot be built here (see ``unavailable``), never for what the program does."""
    with _program(code) as program_fd, _run_uid() as uid, user_namespaces_refused() as seccomp_fd:
        process = await asyncio.create_subprocess_exec(
            *_argv(program_fd, limits, seccomp_fd, uid), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True,
            preexec_fn=_child_limits(limits.cpu_seconds, limits.scratch_bytes), env=sandbox_env(),
            pass_fds=(program_fd,) if seccomp_fd is None else (program_fd, seccomp_fd),
        )
        kept = {"out": bytearray(), "err": bytearray()}
        dropped = {"out": 0, "err": 0}
        flooded = asyncio.Event()

        async def drain(name: str, stream: asyncio.StreamReader | None) -> None:
            # Each stream kept up to its own cap, so a flood on one hides nothing of the other.
            assert stream is not None
            while chunk := await stream.read(65536):
                room = limits.output_bytes - len(kept[name])
                kept[name].extend(chunk[:max(room, 0)])
                dropped[name] += max(len(chunk) - max(room, 0), 0)
                if dropped["out"] > 0 or dropped["err"] > _DROPPED_BYTES:
                    flooded.set()  # nothing more would be shown: stop the program now
                    return

        readers = asyncio.gather(drain("out", process.stdout), drain("err", process.stderr), process.wait())
        # Cancelled with the turn: the outcome is read, so nothing is logged as lost.
        readers.add_done_callback(lambda done: None if done.cancelled() else done.exception())
        flood = asyncio.ensure_future(flooded.wait())
        ending: set[asyncio.Future[Any]] = {readers, flood}
        timed_out = False
        try:
            done, _ = await asyncio.wait(ending, timeout=limits.wall_seconds,
                                         return_when=asyncio.FIRST_COMPLETED)
            timed_out = not done
        finally:
            flood.cancel()
            readers.cancel()  # before the kill reads the pipes to their end: one reader each at a time
            await asyncio.wait({readers})
            if process.returncode is None:
                await kill_sandbox(process)
        stopped = flooded.is_set()
        cut = stopped or any(dropped.values())
        out, err = (kept[k].decode("utf-8", "replace") for k in ("out", "err"))
        killed = timed_out or stopped
        note = None if killed else _stopped_by(process.returncode, limits)
        return ProgramRun(None if killed or note else process.returncode, out, err + (note or ""),
                          timed_out=timed_out and not stopped, cut_at=limits.output_bytes if cut else None)


def unavailable() -> str | None:
    """Why no confined Python can be had on this machine, or None when it can (probed once per PATH)."""
    return _probe(os.environ.get("PATH", ""), runs_as_root())


@functools.cache
def _probe(path: str, as_root: bool) -> str | None:
    if not sys.platform.startswith("linux"):
        return "the Python sandbox needs Linux (bubblewrap)"
    if shutil.which("bwrap", path=path or None) is None:
        return "bubblewrap (bwrap) is not installed (Debian package bubblewrap)"
    if as_root and shutil.which("setpriv", path=path or None) is None:
        return "run as root, the sandbox needs setpriv (util-linux), which is not installed"
    if _python3() is None:
        return "no system python3 for the sandbox to run (looked in /usr/local/bin, /usr/bin, /bin)"
    limits = Limits(wall_seconds=30.0)
    with _program("print(6 * 7)\n") as program_fd, _run_uid() as uid, user_namespaces_refused() as seccomp_fd:
        try:
            done = subprocess.run(_argv(program_fd, limits, seccomp_fd, uid), stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=limits.wall_seconds,
                                  preexec_fn=_child_limits(limits.cpu_seconds, limits.scratch_bytes),
                                  start_new_session=True, check=False, env=sandbox_env(),
                                  pass_fds=(program_fd,) if seccomp_fd is None else (program_fd, seccomp_fd))
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as exc:
            return f"a probe run in the sandbox failed: {exc}"
    if done.returncode != 0 or done.stdout.strip() != b"42":
        said = (done.stderr or done.stdout).decode("utf-8", "replace").strip().splitlines()
        return f"a probe run in the sandbox failed (exit code {done.returncode}): {said[-1] if said else 'no output'}"
    return None
