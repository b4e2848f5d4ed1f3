"""A model's Python program run in the project's bubblewrap sandbox (``MASSGEN_PYTHON_SANDBOX=bubblewrap``).

Kept beside the WebAssembly runner (``files/wasm_python.py``, the default) for Linux machines that have
Debian's ``bubblewrap``, and so the two can be measured on the same problems (``bench/``). It runs
``python3`` in the sandbox of ``run_command`` (``files/sandbox.py``: every namespace unshared, so no
network; the system read-only; no further user namespaces; run as root, dropped to ``nobody``), in
a fresh scratch folder that is the only writable place and is removed afterwards, with limits on
CPU time, address space, processes, the size of a file, the wall clock (at which the whole sandbox
is killed: its pid namespace dies with it) and the output kept (cut with a visible note, and the
program stopped then). Limits are per process here, not per run: the WebAssembly runner caps a run
as a whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from massgen.files.limits import Limits, ProgramRun
from massgen.files.sandbox import (
    bwrap_argv,
    hand_over,
    kill_sandbox,
    runs_as_root,
    sandbox_env,
    user_namespaces_refused,
)

__all__ = ["run_python", "unavailable"]

PROGRAM = "main.py"
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
_FILE_BYTES = 16 << 20  # any one file the program writes in its scratch folder


def _python3() -> str | None:
    """The interpreter the sandbox runs (its PATH is the system's, never a virtual environment's)."""
    return shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")


def _argv(scratch: Path, limits: Limits, seccomp_fd: int | None) -> list[str]:
    command = (f"exec python3 -S -s -c {shlex.quote(_BOOT)} {limits.memory_bytes} {limits.processes} "
               f"{PROGRAM}")
    return bwrap_argv(command, scratch, read_only=(), seccomp_fd=seccomp_fd)


def _child_limits(cpu_seconds: int) -> Callable[[], None]:
    def apply() -> None:  # in the child before exec: these hold for bubblewrap and all it starts
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_FSIZE, (_FILE_BYTES, _FILE_BYTES))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return apply


@contextlib.contextmanager
def _scratch(code: str) -> Iterator[Path]:
    """A fresh folder holding the program, handed to the sandbox's user; removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="massgen-python-"))
    try:
        (folder / PROGRAM).write_text(code, encoding="utf-8", errors="surrogatepass")
        # Readable by everyone: run as root, bubblewrap enters it without root's override of permissions.
        folder.chmod(0o755)
        if runs_as_root():
            hand_over(folder)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


async def run_python(code: str, limits: Limits) -> ProgramRun:
    """Run ``code`` as ``python3 main.py`` in the sandbox; raises ``RuntimeError`` only when the sandbox
    cannot be built here (see ``unavailable``), never for what the program does."""
    with _scratch(code) as folder, user_namespaces_refused() as seccomp_fd:
        process = await asyncio.create_subprocess_exec(
            *_argv(folder, limits, seccomp_fd), stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True, preexec_fn=_child_limits(limits.cpu_seconds),
            env=sandbox_env(), pass_fds=() if seccomp_fd is None else (seccomp_fd,),
        )
        kept = {"out": bytearray(), "err": bytearray()}
        flooded = asyncio.Event()

        async def drain(name: str, stream: asyncio.StreamReader | None) -> None:
            assert stream is not None
            while chunk := await stream.read(65536):
                room = limits.output_bytes - len(kept["out"]) - len(kept["err"])
                kept[name].extend(chunk[:max(room, 0)])
                if len(chunk) > room:
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
        cut = flooded.is_set()
        out, err = (kept[k].decode("utf-8", "replace") for k in ("out", "err"))
        killed = timed_out or cut
        return ProgramRun(None if killed else process.returncode, out, err, timed_out=timed_out and not cut,
                          cut_at=limits.output_bytes if cut else None)


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
    with _scratch("print(6 * 7)\n") as folder, user_namespaces_refused() as seccomp_fd:
        try:
            done = subprocess.run(_argv(folder, limits, seccomp_fd), stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=limits.wall_seconds, preexec_fn=_child_limits(limits.cpu_seconds),
                                  start_new_session=True, check=False, env=sandbox_env(),
                                  pass_fds=() if seccomp_fd is None else (seccomp_fd,))
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as exc:
            return f"a probe run in the sandbox failed: {exc}"
    if done.returncode != 0 or done.stdout.strip() != b"42":
        said = (done.stderr or done.stdout).decode("utf-8", "replace").strip().splitlines()
        return f"a probe run in the sandbox failed (exit code {done.returncode}): {said[-1] if said else 'no output'}"
    return None
