"""``run_command``: a shell command run for an agent, never on the bare host.

``sandbox`` runs it in bubblewrap: every namespace unshared (so no network but a
private loopback), as user ``nobody`` with no capabilities, the system directories
read-only, of ``/etc`` only what programs need (``ETC_FILES``: no ``shadow``, no keys, no
tokens), the agent's workspace the only writable tree, context paths and snapshots
read-only, everything else (the project, other workspaces, home) absent.

Who ``nobody`` is outside depends on who runs massgen. Run as a normal user, bubblewrap
makes a user namespace (no further ones allowed inside) that maps ``nobody`` to that user:
the command has the user's own rights on what is mounted. Run as root, that mapping would
make it root outside, owner of every root-owned file it can see; so bubblewrap makes no user
namespace (root needs none to mount), and ``setpriv`` drops the command to the host's own
uid and gid 65534 with no supplementary groups, no capabilities (bounding set too) and
no_new_privs before the shell starts. The workspace is handed to that uid before each
command (``hand_over``), so the agent can still change what massgen's file tools wrote there.
(A model's Python program, ``files/bwrap_python.py``, has no workspace and gets a uid of its own
per run instead: ``bwrap_argv``'s ``uid``.)

What the sandbox may write besides a workspace is memory, so it is capped (``scratch_sizes``):
``/tmp`` and ``/dev/shm`` are tmpfs of a fixed size, and the rest (``/``, ``/dev``, hidden run
state), tmpfs bubblewrap builds, are remounted read-only once built: run as a normal user the
sandbox's user owns them and could otherwise fill them past every memory limit. ``--size``
needs bubblewrap 0.7 or later; an older one gets the same mounts without a size (as before).

``docker`` runs it in a container with no network and the same mounts, as the caller's own uid
and gid (nobody's, with the workspace handed over, run as root), no capabilities. Either way the
command gets a CPU-time limit, an output cap and a wall-clock deadline, at which its whole
process group is killed (for bubblewrap, the init of the sandbox's pid namespace first, so
everything in it dies; for Docker, the container is killed by name).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import os
import resource
import shutil
import signal
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from massgen.files import seccomp
from massgen.files.tree import DIR_FLAGS, walk
from massgen.messages import ToolSpec

OUTPUT_CAP_BYTES = 64 * 1024
# run_command's /tmp and /dev/shm together (memory, not disk): what a build or a test run puts in /tmp.
COMMAND_SCRATCH_BYTES = 256 << 20
_REAP_S = 5.0  # after the kill, at most this long to read the pipe to its end and reap
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
# The sandbox's user: nobody (group nogroup), which every passwd has. For a normal user, bubblewrap
# maps it to the caller's own uid outside, so files it writes in the workspace belong to the caller;
# run as root, it is the host's nobody itself, and files it writes belong to nobody.
SANDBOX_UID = SANDBOX_GID = 65534


def _drop_root(uid: int) -> tuple[str, ...]:
    """Run as root: what setpriv makes of the command before its shell starts (uid and gid ``uid``, no groups,
    no capabilities, no setuid)."""
    return ("--reuid", str(uid), "--regid", str(uid), "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
            "--no-new-privs")

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


def runs_as_root() -> bool:
    return os.geteuid() == 0


def sandbox_env() -> dict[str, str]:
    """The environment bubblewrap itself starts with: none. It is pid 1 in the sandbox, run by the same
    user as the command, so a command could read its ``/proc/1/environ``; ``--clearenv`` clears only the
    command's own, and the keys of the ``massgen`` process (API keys, the server's key) must not be there."""
    return {}


def scratch_sizes(total: int) -> tuple[int, int]:
    """How a sandbox's scratch memory is split: (``/tmp``, ``/dev/shm``), a quarter for shared memory."""
    shm = max(total // 4, 4096)
    return max(total - shm, 4096), shm


@functools.cache
def _sizes_tmpfs(bwrap: str) -> bool:
    """Whether this bubblewrap takes ``--size`` (0.7 and later)."""
    try:
        said = subprocess.run([bwrap, "--help"], capture_output=True, timeout=30, check=False, env=sandbox_env())
    except (OSError, subprocess.TimeoutExpired):
        return False
    return b"--size" in said.stdout + said.stderr


def bwrap_argv(command: str, workspace: Path | None, read_only: Sequence[Path], hidden: Sequence[Path] = (), *,
               as_root: bool | None = None, seccomp_fd: int | None = None,
               scratch_bytes: int = COMMAND_SCRATCH_BYTES, uid: int = SANDBOX_UID,
               data: Sequence[tuple[int, str]] = ()) -> list[str]:
    """The bubblewrap command line; ``as_root`` (default: whether this process is root) picks the drop.

    ``seccomp_fd``, run as root: a descriptor holding ``files/seccomp.py``'s filter, which refuses the
    user namespaces that path cannot disable otherwise (give it to the child with ``pass_fds``).
    ``workspace``: the one writable host folder, the command's working folder and home; None: none, and
    the command works in its ``/tmp``. ``scratch_bytes``: ``/tmp`` and ``/dev/shm`` together (``scratch_sizes``).
    ``uid``: run as root, who the command is on the host (the gid is the same number); a normal user's
    sandbox is always ``nobody`` inside its own user namespace. ``data``: (descriptor, path) pairs, each
    descriptor's content a read-only file (0444) at that path, copied by bubblewrap at the start (give the
    descriptors with ``pass_fds``): nothing of it is a file on the host."""
    as_root = runs_as_root() if as_root is None else as_root
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise RuntimeError("bubblewrap (bwrap) is not installed")
    if as_root:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            raise RuntimeError("run as root, the sandbox needs setpriv (util-linux), which is not installed")
        # No user namespace: inside one, nobody would be root outside. bubblewrap keeps only what
        # setpriv needs to change uid, gid, groups and bounding set; setpriv then drops those too.
        argv = [bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
                "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--cap-add", "CAP_SETUID",
                "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP"]
        if seccomp_fd is not None:
            argv += ["--seccomp", str(seccomp_fd)]
        shell = [setpriv, *_drop_root(uid), "--", "/bin/sh", "-c", command]
    else:
        argv = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--uid", str(SANDBOX_UID),
                "--gid", str(SANDBOX_GID), "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
        shell = ["/bin/sh", "-c", command]

    def bind(option: str, path: Path) -> list[str]:
        made: list[str] = []
        if as_root:
            # bubblewrap makes a mount point's missing parents mode 0700, owned by whoever sets up: as
            # root, folders nobody could not pass. Made 0755 first (a folder that exists is kept as it is).
            for parent in reversed(path.parents[:-1]):
                made += ["--perms", "0755", "--dir", str(parent)]
        return [*made, option, str(path), str(path)]

    for directory in _SYSTEM_DIRS:
        argv += ["--ro-bind-try", directory, directory]
    for etc_path in etc_files():
        argv += bind("--ro-bind-try", Path(etc_path))
    argv += ["--symlink", "../proc/self/mounts", "/etc/mtab"]
    # Scratch: memory of a fixed size, writable by whoever runs inside (sticky, as a /tmp is); /dev/shm is
    # one of its own over the folder --dev makes in /dev.
    tmp_bytes, shm_bytes = scratch_sizes(scratch_bytes)
    sized = _sizes_tmpfs(bwrap)
    argv += ["--proc", "/proc", "--dev", "/dev"]
    for place, size in (("/tmp", tmp_bytes), ("/dev/shm", shm_bytes)):
        argv += [*(["--size", str(size)] if sized else []), "--perms", "1777", "--tmpfs", place]
    for path in read_only:
        argv += bind("--ro-bind", path)
    for path in hidden:  # run state inside a read-only path: an empty tmpfs over it
        argv += ["--tmpfs", str(path)]
    for path in read_only:  # snapshots may lie in hidden run state: bound again on top
        if any(path.is_relative_to(h) and path != h for h in hidden):
            argv += bind("--ro-bind", path)
    for fd, destination in data:
        argv += ["--perms", "0444", "--ro-bind-data", str(fd), destination]
    if workspace is not None:
        argv += bind("--bind", workspace)
    # Every other tmpfs bubblewrap built (the root, /dev, the hidden run state: a normal user's sandbox owns
    # them) read-only now that every mount point is made; each remount leaves the mounts below it as they are.
    for path in [*hidden, Path("/dev"), Path("/")]:
        argv += ["--remount-ro", str(path)]
    home = str(workspace) if workspace is not None else "/tmp"
    argv += ["--chdir", home, "--clearenv", "--setenv", "HOME", home,
             "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "LANG", "C.UTF-8", "--", *shell]
    return argv


@contextlib.contextmanager
def user_namespaces_refused() -> Iterator[int | None]:
    """Run as root, the descriptor of the seccomp filter ``bwrap_argv`` takes; else None (a normal user's
    sandbox disables user namespaces itself, with ``--disable-userns``)."""
    if not runs_as_root() or not seccomp.supported():
        yield None
        return
    with seccomp.no_user_namespaces() as fd:
        yield fd


def hand_over(workspace: Path, uid: int = SANDBOX_UID, gid: int = SANDBOX_GID) -> None:
    """Make everything in ``workspace`` owned by the sandbox's user, so a command run as it may change it.

    Run as root only (no one else may give files away). Links are changed themselves, never what
    they point to; a file with more than one name is left alone, since its other name may be
    outside the workspace (a hard link to a root-owned file would otherwise be handed over too).
    """
    top = os.open(workspace, DIR_FLAGS)
    try:
        if (info := os.fstat(top)).st_uid != uid or info.st_gid != gid:
            os.fchown(top, uid, gid)
        for entry in walk(top):
            if (entry.info.st_uid, entry.info.st_gid) == (uid, gid):
                continue
            if entry.kind != "dir" and entry.info.st_nlink > 1:
                continue
            with contextlib.suppress(FileNotFoundError):
                os.chown(entry.name, uid, gid, dir_fd=entry.dir_fd, follow_symlinks=False)
    finally:
        os.close(top)


def etc_files() -> list[str]:
    """The /etc entries bound into the sandbox (Python's version folders, /etc/python3.11, too)."""
    found = [f"/etc/{name}" for name in ETC_FILES]
    found += sorted(str(p) for p in Path("/etc").glob("python3.*") if p.is_dir())
    return found


def docker_argv(command: str, workspace: Path, read_only: Sequence[Path], name: str, cpu_seconds: int,
                user: tuple[int, int] | None = None) -> list[str]:
    """``user`` (uid, gid; default: the caller's own, or nobody's run as root) is who the command is.

    A container's root is the host's root on what is mounted (the Docker daemon's users are root
    to it), so the command never runs as the image's default root.
    """
    if user is None:
        user = (SANDBOX_UID, SANDBOX_GID) if runs_as_root() else (os.getuid(), os.getgid())
    argv = ["docker", "run", "--rm", "--name", name, "--network", "none", "--cpus", "1", "--memory", "1g",
            "--pids-limit", "256", "--ulimit", f"cpu={cpu_seconds}", "--security-opt", "no-new-privileges",
            "--cap-drop", "ALL", "--user", f"{user[0]}:{user[1]}", "-e", f"HOME={workspace}",
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
    if runs_as_root():  # either way the command runs as nobody, who must be able to change the workspace
        await asyncio.to_thread(hand_over, workspace)
    with user_namespaces_refused() as seccomp_fd:
        argv = (docker_argv(command, workspace, read_only, name, cpu) if mode == "docker"
                else bwrap_argv(command, workspace, read_only, hidden, seccomp_fd=seccomp_fd))
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            start_new_session=True, preexec_fn=lambda: _limits(cpu),
            env=None if mode == "docker" else sandbox_env(), pass_fds=() if seccomp_fd is None else (seccomp_fd,),
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
            await kill_sandbox(process, name if mode == "docker" else None)
    return CommandResult(None if timed_out else process.returncode, kept.decode("utf-8", "replace"),
                         timed_out, truncated)


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``, read from ``/proc`` (``task/*/children`` is not in every kernel)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:  # gone meanwhile
            continue
        if len(fields) > 1 and fields[1] == str(pid):
            found.append(int(entry.name))
    return found


async def kill_sandbox(process: asyncio.subprocess.Process, container: str | None = None) -> None:
    """Kill a sandboxed command: bubblewrap's pid namespace (its init), then its process group; or its container."""
    if container is not None:
        killer = await asyncio.create_subprocess_exec("docker", "kill", container, stdout=asyncio.subprocess.DEVNULL,
                                                      stderr=asyncio.subprocess.DEVNULL)
        await killer.wait()
    else:
        # bubblewrap's child is the pid namespace's init: killed, the kernel kills everything in the namespace.
        # Killed first, not left to --die-with-parent alone: that signal is set up by the child itself, so a
        # deadline that falls while bubblewrap is still starting could come before it.
        for child in _children(process.pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(child, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    # asyncio's ``wait()`` returns only once the output pipe is closed too, and a command that
    # filled the pipe left it unread (the drain was cancelled at the deadline): read it to its
    # end, which the kill brings at once, so the reap takes milliseconds, not a hang.
    async def to_end(stream: asyncio.StreamReader | None) -> None:
        while stream is not None and await stream.read(65536):
            pass

    with contextlib.suppress(ProcessLookupError, TimeoutError):
        async with asyncio.timeout(_REAP_S):
            await asyncio.gather(to_end(process.stdout), to_end(process.stderr))
            await process.wait()
