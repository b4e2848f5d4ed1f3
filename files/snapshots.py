"""Snapshots: a frozen copy of an agent's workspace, taken when it posts an answer.

Files are cloned copy-on-write (``FICLONE``) where the filesystem allows and copied
otherwise. Hard links are not used although they would be cheaper: an agent CLI edits
files in place, and a hard-linked snapshot would change with the workspace. Symbolic
links and special files are left out. The copy is built beside its final place and
renamed in, so a reader never sees half a snapshot; its files are made read-only.
The digest (sha256 over sorted path and content digests) goes into the trace.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

_FICLONE = 0x40049409  # linux/fs.h: _IOW(0x94, 9, int)
SKIPPED_DIRS = frozenset({".git", "__pycache__", "node_modules", ".venv", ".massgen"})


@dataclass(frozen=True)
class SnapshotInfo:
    path: Path
    digest: str
    files: int
    bytes: int
    cloned: bool


def _clone_or_copy(source: int, target: int) -> bool:
    """True when the filesystem shared the blocks (copy-on-write)."""
    try:
        fcntl.ioctl(target, _FICLONE, source)
        return True
    except OSError:
        with os.fdopen(os.dup(source), "rb") as src, os.fdopen(os.dup(target), "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        return False


def take(workspace: Path, destination: Path) -> SnapshotInfo:
    """Copy ``workspace`` to ``destination`` (which must not exist yet)."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{destination.name}.", dir=destination.parent))
    entries: list[tuple[str, str]] = []
    total = 0
    cloned = True
    root_fd = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for top, dirs, names, dir_fd in os.fwalk(".", dir_fd=root_fd):  # symlinks are not followed
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
            (staging / top).mkdir(parents=True, exist_ok=True)
            for name in sorted(names):
                try:
                    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
                except OSError:
                    continue  # a symlink (ELOOP) or a file that vanished
                try:
                    if not stat.S_ISREG(os.fstat(fd).st_mode):
                        continue
                    relative = os.path.normpath(os.path.join(top, name))
                    out = os.open(staging / relative, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                    try:
                        cloned = _clone_or_copy(fd, out) and cloned
                    finally:
                        os.close(out)
                    digest, size = _digest(staging / relative)
                    os.chmod(staging / relative, 0o444)
                    entries.append((relative, digest))
                    total += size
                finally:
                    os.close(fd)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        os.close(root_fd)
    os.rename(staging, destination)
    summary = hashlib.sha256("".join(f"{p}\0{d}\n" for p, d in sorted(entries)).encode()).hexdigest()
    return SnapshotInfo(destination, summary, len(entries), total, cloned and bool(entries))


def _digest(path: Path) -> tuple[str, int]:
    hasher = hashlib.sha256()
    size = 0
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            hasher.update(chunk)
            size += len(chunk)
    return hasher.hexdigest(), size
