"""``run_command``: a shell command run for an agent, never on the bare host.

``sandbox`` runs it in bubblewrap: every namespace unshared (so no network but a
private loopback), as user ``nobody`` with no capabilities and no further user namespaces,
the system directories read-only, of ``/etc`` only what programs need (``ETC_FILES``: no
``shadow``, no keys, no tokens), the agent's workspace the only writable tree, context
paths and snapshots read-only, everything else (the project, other workspaces, home)
absent. Run as root, the command's uid outside the namespace is still root's (bubblewrap
maps the inside uid to the caller's): what protects the host is what is not mounted.
``docker`` runs it in a container with no network and the same mounts. Either way the
command gets a CPU-time limit, an output cap and a wall-clock deadline, at which its whole
process group is killed (for bubblewrap, the sandbox's pid namespace dies with it; for
Docker, the container is killed by name).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import resource
import shutil
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from massgen.messages import ToolSpec

OUTPUT_CAP_BYTES = 64 * 1024
DOCKER_IMAGE = "python:3.11-slim"
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32")
# What programs read of /etc, and nothing else: no shadow, gshadow, ssl/private, sudoers, ssh host
# keys, pip.conf or npmrc tokens. Names resolve users, the dynamic linker finds libraries, tools
# found through /etc/alternatives (awk, editor) run, Python finds its site customisation.
ETC_FILES = (
    "passwd", "group", "nsswitch.conf", "host.conf", "hosts", "hostname", "gai.conf", "services", "protocols",
    "networks", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "alternatives",
    "os-release", "debian_version", "lsb-release", "mime.types", "magic", "magic.mime", "locale.alias",
    "shells", "terminfo", "inputrc", "bash.bashrc", "gitconfig", "fonts", "perl", "ssl/openssl.cnf", "ssl/certs",
    "ca-certificates", "python3",
)
# The sandbox's user: nobody, which every passwd has. bubblewrap maps it to the caller's own uid
# outside, so files it writes in the workspace belong to the caller.
SANDBOX_UID = SANDBOX_GID = 65534

SPEC = ToolSpec(
    name="run_command",
    description="Run a shell command in your workspace, in a sandbox: no network, only the workspace is "
                "writable, context paths are read-only.",
    parameters={"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
)

_names = itertools.count(1)


@dataclass(frozen=True)
class CommandResult:
    exit_code: int | None
    output: str
    timed_out: bool
    truncated: bool

    def text(self) -> str:
        status = "killed at the deadline" if self.timed_out else f"exit code {self.exit_code}"
        more = f"\n[output cut at {OUTPUT_CAP_BYTES} bytes]" if self.truncated else ""
        return f"[{status}]\n{self.output}{more}"


def bwrap_argv(command: str, workspace: Path, read_only: Sequence[Path], hidden: Sequence[Path] = ()) -> list[str]:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise RuntimeError("bubblewrap (bwrap) is not installed")
    argv = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--uid", str(SANDBOX_UID),
            "--gid", str(SANDBOX_GID), "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    for directory in _SYSTEM_DIRS:
        argv += ["--ro-bind-try", directory, directory]
    for etc_path in etc_files():
        argv += ["--ro-bind-try", etc_path, etc_path]
    argv += ["--symlink", "../proc/self/mounts", "/etc/mtab"]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for path in read_only:
        argv += ["--ro-bind", str(path), str(path)]
    for path in hidden:  # run state inside a read-only path: an empty tmpfs over it
        argv += ["--tmpfs", str(path)]
    for path in read_only:  # snapshots may lie in hidden run state: bound again on top
        if any(path.is_relative_to(h) and path != h for h in hidden):
            argv += ["--ro-bind", str(path), str(path)]
    argv += ["--bind", str(workspace), str(workspace), "--chdir", str(workspace),
             "--clearenv", "--setenv", "HOME", str(workspace), "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin",
             "--setenv", "LANG", "C.UTF-8", "--", "/bin/sh", "-c", command]
    return argv


def etc_files() -> list[str]:
    """The /etc entries bound into the sandbox (Python's version folders, /etc/python3.11, too)."""
    found = [f"/etc/{name}" for name in ETC_FILES]
    found += sorted(str(p) for p in Path("/etc").glob("python3.*") if p.is_dir())
    return found


def docker_argv(command: str, workspace: Path, read_only: Sequence[Path], name: str, cpu_seconds: int) -> list[str]:
    argv = ["docker", "run", "--rm", "--name", name, "--network", "none", "--cpus", "1", "--memory", "1g",
            "--pids-limit", "256", "--ulimit", f"cpu={cpu_seconds}", "--security-opt", "no-new-privileges",
            "-v", f"{workspace}:{workspace}", "-w", str(workspace)]
    for path in read_only:
        argv += ["-v", f"{path}:{path}:ro"]
    return [*argv, DOCKER_IMAGE, "/bin/sh", "-c", command]


def _limits(cpu_seconds: int) -> None:
    """In the child before exec: a CPU-time limit and a cap on any one file it writes."""
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (256 << 20, 256 << 20))


async def run_command(command: str, *, mode: str, workspace: Path, read_only: Sequence[Path],
                      timeout_s: float, hidden: Sequence[Path] = ()) -> CommandResult:
    cpu = max(1, int(timeout_s))
    name = f"massgen-cmd-{os.getpid()}-{next(_names)}"
    if mode == "docker":
        argv = docker_argv(command, workspace, read_only, name, cpu)
    else:
        argv = bwrap_argv(command, workspace, read_only, hidden)
    process = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        start_new_session=True, preexec_fn=lambda: _limits(cpu),
    )
    kept = bytearray()
    truncated = False

    async def drain() -> None:
        nonlocal truncated
        assert process.stdout is not None
        while chunk := await process.stdout.read(65536):
            room = OUTPUT_CAP_BYTES - len(kept)
            kept.extend(chunk[:max(room, 0)])
            truncated = truncated or len(chunk) > room

    timed_out = False
    waiting = asyncio.gather(drain(), process.wait())
    # A turn cancelled mid-command cancels this too: its outcome is read, so nothing is logged as lost.
    waiting.add_done_callback(lambda done: None if done.cancelled() else done.exception())
    try:
        await asyncio.wait_for(waiting, timeout_s)
    except TimeoutError:
        timed_out = True
    finally:
        if process.returncode is None:
            await _kill(process, name if mode == "docker" else None)
    return CommandResult(None if timed_out else process.returncode, kept.decode("utf-8", "replace"),
                         timed_out, truncated)


async def _kill(process: asyncio.subprocess.Process, container: str | None) -> None:
    if container is not None:
        killer = await asyncio.create_subprocess_exec("docker", "kill", container, stdout=asyncio.subprocess.DEVNULL,
                                                      stderr=asyncio.subprocess.DEVNULL)
        await killer.wait()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        await asyncio.wait_for(process.wait(), 5.0)
