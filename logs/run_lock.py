"""The lock a run's process holds on the run's root folder (``log_<stamp>``) for as long as it runs.

A run (fresh or resumed) is one process's work: a second ``--resume`` of it, or a ``--resume`` of a run
still going, would pay for all its remaining work again, and ``rebuild_from_trace`` into a live run's folder
would write an older state over its files. So the process running a run holds an exclusive OS lock on
``<run root>/.massgen_run.lock`` (``fcntl.flock``; on Windows ``msvcrt.locking``), with its pid written in
the file, and those refuse a run whose lock is held. The run removes the file when it ends; the OS
releases the lock when the process ends, however it ends (a SIGKILL leaves the file: harmless, only a held
lock counts). On a file system
that has no locks (some network mounts) the run goes on unlocked.

Within one process the lock is counted: the REPL's turns share their root, and a resume is refused while
this process itself runs the same run.
"""

from __future__ import annotations

import errno
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from massgen.outcome.errors import ResumeError

LOCK_FILE = ".massgen_run.lock"
# A prober (``run_holder``) holds the lock for microseconds; a run holds it for its whole life. A run that
# finds it held tries again for this long before it says the run is in use.
_RETRY_S = 0.5
_WINDOWS_LOCK_AT = 4096  # Windows locks are mandatory: the byte locked is past the pid, which stays readable


class RunInUse(ResumeError):
    """The run's lock is held: another process (or this one) is running it now."""

    def __init__(self, root: Path, pid: int) -> None:
        self.root, self.pid = root, pid
        who = f"process {pid}" if pid else "another process"
        super().__init__(f"{root}: this run is still going in {who} (it holds {root / LOCK_FILE}); wait for it to "
                         "end or stop it, then try again")


@dataclass
class _Held:
    handle: IO[bytes] | None  # None: the file system has no locks
    count: int


_held: dict[Path, _Held] = {}
_guard = threading.Lock()


class RunLock:
    """This process's hold on a run's lock; ``release`` once (later calls do nothing)."""

    def __init__(self, key: Path) -> None:
        self._key: Path | None = key

    @property
    def root(self) -> Path | None:
        return self._key

    def release(self) -> None:
        with _guard:
            key, self._key = self._key, None
            held = _held.get(key) if key is not None else None
            if key is None or held is None:
                return
            held.count -= 1
            if held.count > 0:
                return
            del _held[key]
            if held.handle is not None:
                _let_go(held.handle, key / LOCK_FILE)


def hold_run(root: Path, *, exclusive: bool) -> RunLock:
    """Take the lock of the run rooted at ``root`` (created if missing) for this process. ``RunInUse`` when
    another process holds it, or when this process does and ``exclusive`` (a resume: one at a time); a turn
    of a run this process already holds (``exclusive=False``) shares the hold. ``OSError``: the lock file
    cannot be made."""
    key = root.resolve()
    with _guard:
        held = _held.get(key)
        if held is not None:
            if exclusive:
                raise RunInUse(root, os.getpid())
            held.count += 1
            return RunLock(key)
        _held[key] = _Held(_acquire(root), 1)
        return RunLock(key)


def run_holder(root: Path) -> int | None:
    """None when nobody runs the run rooted at ``root`` now; else the pid of the process that does (0 when its
    pid cannot be read). Takes nothing: a shared lock for an instant, which a starting run waits out."""
    key = root.resolve()
    with _guard:
        if key in _held:
            return os.getpid()
    try:
        fd = os.open(root / LOCK_FILE, os.O_RDONLY)
    except OSError:
        return None  # never locked (a run always makes the file), or not ours to read
    with os.fdopen(fd, "rb") as handle:
        try:
            if _try_lock(handle, shared=True):
                _unlock(handle)
                return None
        except _NoLocks:
            return None  # nothing can hold it there
        return _pid_in(handle)


def _acquire(root: Path) -> IO[bytes] | None:
    """The lock file, opened and locked, with this pid in it. Its holder removes it when it lets go
    (``_let_go``), so a lock taken on a file that has since been removed or replaced is no lock: then the
    file is opened again."""
    path = root / LOCK_FILE
    deadline = time.monotonic() + _RETRY_S
    while True:
        handle = os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT, 0o644), "r+b")
        try:
            if _try_lock(handle, shared=False):
                if not _is_the_file(handle, path):  # its holder removed it meanwhile: take the new one
                    handle.close()
                    continue
                handle.seek(0)
                handle.truncate()
                handle.write(f"{os.getpid()}\n".encode())
                handle.flush()
                return handle
            if time.monotonic() >= deadline:
                raise RunInUse(root, _pid_in(handle))
        except _NoLocks:
            handle.close()
            return None
        except BaseException:
            handle.close()
            raise
        handle.close()
        time.sleep(0.01)


def _is_the_file(handle: IO[bytes], path: Path) -> bool:
    try:
        opened, named = os.fstat(handle.fileno()), os.stat(path)
    except OSError:
        return False
    return (opened.st_dev, opened.st_ino) == (named.st_dev, named.st_ino)


def _let_go(handle: IO[bytes], path: Path) -> None:
    """Remove the lock file while still holding it (a run's folder is left as it was), then release it."""
    try:
        if sys.platform != "win32" and _is_the_file(handle, path):
            path.unlink()
    except OSError:
        pass  # a read-only folder now: the file stays, and only a held lock counts
    finally:
        handle.close()  # closing the descriptor releases the OS lock


class _NoLocks(Exception):
    """The file system does not lock (ENOLCK, EOPNOTSUPP): the run goes on without a lock."""


def _pid_in(handle: IO[bytes]) -> int:
    try:
        handle.seek(0)
        text = handle.read(32).decode("ascii", "replace").strip()
    except OSError:
        return 0
    return int(text) if text.isdigit() else 0


if sys.platform == "win32":
    import msvcrt

    def _try_lock(handle: IO[bytes], *, shared: bool) -> bool:  # Windows has no shared lock here: exclusive
        handle.seek(_WINDOWS_LOCK_AT)
        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        except PermissionError:
            return False
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EDEADLK):
                return False
            raise _NoLocks from exc
        return True

    def _unlock(handle: IO[bytes]) -> None:
        handle.seek(_WINDOWS_LOCK_AT)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(handle: IO[bytes], *, shared: bool) -> bool:
        try:
            fcntl.flock(handle.fileno(), (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                return False
            raise _NoLocks from exc
        return True

    def _unlock(handle: IO[bytes]) -> None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
