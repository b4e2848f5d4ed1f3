"""Snapshots: a frozen copy of an agent's workspace, taken when it posts an answer.

Files are cloned copy-on-write (``FICLONE``) where the filesystem allows and copied
otherwise. Hard links are not used although they would be cheaper: an agent CLI edits
files in place, and a hard-linked snapshot would change with the workspace. Symbolic
links and special files are left out, and so are tooling folders (``.git`` in any spelling,
caches) at any depth. The walk is ``tree.walk``: any bytes in a name, any depth. The copy
is built beside its final place and renamed in, so a reader never sees half a snapshot;
its files are made read-only.
The digest (sha256 over sorted path and content digests) goes into the trace.

A snapshot is bounded (``Limits``: bytes and files, from ``orchestrator.snapshot_limit_mb`` and
``snapshot_max_files``): an agent's 200 MB, 20,000-file workspace was copied whole into the logs at
every answer. Past a bound the walk goes on counting but copies nothing more, and the cut is said
in ``SnapshotInfo.cut`` (the trace, the terminal) and in a ``SNAPSHOT_CUT.txt`` inside the snapshot,
where the agents reading it look.
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

from massgen.files.tree import DIR_FLAGS, Entry, encoded, is_git_name, walk

_FICLONE = 0x40049409  # linux/fs.h: _IOW(0x94, 9, int)
SKIPPED_DIRS = frozenset({".git", "__pycache__", "node_modules", ".venv", ".massgen"})
CUT_NOTE_FILE = "SNAPSHOT_CUT.txt"


@dataclass(frozen=True)
class Limits:
    """What one snapshot may copy."""

    max_bytes: int = 100 << 20
    max_files: int = 10_000


@dataclass(frozen=True)
class SnapshotInfo:
    path: Path
    digest: str
    files: int
    bytes: int
    cloned: bool
    cut: str | None = None  # set when a limit stopped the copy: what was left out, and why


def _clone_or_copy(source: int, target: int) -> bool:
    """True when the filesystem shared the blocks (copy-on-write)."""
    try:
        fcntl.ioctl(target, _FICLONE, source)
        return True
    except OSError:
        with os.fdopen(os.dup(source), "rb") as src, os.fdopen(os.dup(target), "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        return False


def take(workspace: Path, destination: Path, limits: Limits | None = None) -> SnapshotInfo:
    """Copy ``workspace`` to ``destination`` (which must not exist yet), within ``limits``."""
    limits = limits or Limits()
    destination.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{destination.name}.", dir=destination.parent))
    entries: list[tuple[bytes, str]] = []
    total = 0
    cloned = True
    left_files = left_bytes = 0  # past a limit: counted, not copied
    root_fd = os.open(workspace, DIR_FLAGS)
    staging_fd = os.open(staging, DIR_FLAGS)
    try:
        for entry in walk(root_fd, descend=_copied_folder, mirror=staging_fd):
            if entry.kind != "file":
                continue  # folders are made by the walk; links and special files are left out
            if len(entries) >= limits.max_files or total + entry.info.st_size > limits.max_bytes:
                left_files += 1  # a file too large to fit is left out; smaller ones after it still fit
                left_bytes += entry.info.st_size
                continue
            assert entry.mirror_fd is not None
            copied = _copy(entry.name, entry.dir_fd, entry.mirror_fd)
            if copied is None:
                continue
            digest, size, was_cloned = copied
            cloned = cloned and was_cloned
            entries.append((encoded(*entry.parts), digest))
            total += size
        cut = None
        if left_files:
            cut = (f"snapshot cut: {len(entries):,} of {len(entries) + left_files:,} files "
                   f"({total:,} of {total + left_bytes:,} bytes) copied; a snapshot holds at most "
                   f"{limits.max_files:,} files and {limits.max_bytes / (1 << 20):g} MiB "
                   "(orchestrator.snapshot_max_files, orchestrator.snapshot_limit_mb)")
            _write_note(staging_fd, cut)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        os.close(staging_fd)
        os.close(root_fd)
    os.chmod(staging, 0o755)  # mkdtemp made it 0700: readable, like its folders, by a sandbox not run as us
    os.rename(staging, destination)
    summary = hashlib.sha256(b"".join(p + b"\0" + d.encode() + b"\n" for p, d in sorted(entries))).hexdigest()
    return SnapshotInfo(destination, summary, len(entries), total, cloned and bool(entries), cut)


def _write_note(folder_fd: int, note: str) -> None:
    """The cut, said inside the snapshot, where the agents reading it look (unless a file has the name)."""
    try:
        fd = os.open(CUT_NOTE_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o444, dir_fd=folder_fd)
    except FileExistsError:
        return
    try:
        os.write(fd, f"{note}.\nThe files left out are not shown to the other agents.\n".encode())
    finally:
        os.close(fd)


def _copied_folder(entry: Entry) -> bool:
    return entry.name not in SKIPPED_DIRS and not is_git_name(entry.name)


def _copy(name: str, source_dir: int, target_dir: int) -> tuple[str, int, bool] | None:
    """Copy one regular file between folders; its digest, size and whether it was cloned."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=source_dir)
    except OSError:
        return None  # swapped for a symlink (ELOOP), or it vanished
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        out = os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644, dir_fd=target_dir)
        try:
            cloned = _clone_or_copy(fd, out)
            os.lseek(out, 0, os.SEEK_SET)
            digest, size = fd_digest(out)
            os.fchmod(out, 0o444)
        finally:
            os.close(out)
    finally:
        os.close(fd)
    return digest, size, cloned


def fd_digest(fd: int) -> tuple[str, int]:
    """The sha256 and size of what is left to read from ``fd``."""
    hasher = hashlib.sha256()
    size = 0
    while chunk := os.read(fd, 1 << 20):
        hasher.update(chunk)
        size += len(chunk)
    return hasher.hexdigest(), size
