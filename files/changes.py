"""What changed in writable context paths during a run: a file list and a unified diff.

The report is computed from what is on disk, not from what the tools say they did: when
the run starts, every entry of a writable context path is recorded in a manifest (regular
files by sha256, symbolic links by target, anything else by type) and its regular files are
copied beside it (the same copy-on-write copy as snapshots, in the log directory); when the
run ends the tree is walked again and every difference is listed, whoever made it (a file
tool, an agent CLI, a nested repository's hook). Tooling folders (``.git`` in any spelling
and at any depth, ``node_modules``, caches) are not copied: their entries are recorded by
their ``lstat`` signature (size, mtime, ctime, inode, mode; ctime cannot be set back), so a
change in them is listed without reading them. Only this run's own state (``.massgen``,
workspaces, logs) is left out. A context path naming one file is recorded as that file alone
(its folder is opened only to reach it; nothing beside it is read or copied).

The copy is bounded (``Limits``): a context path over the limit is refused before anything
is copied (``ContextTooLarge``), so ``context_paths: [{path: /, permission: write}]`` costs
a scan that stops at the limit, not a copy of the machine.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from massgen.files.snapshots import fd_digest
from massgen.files.tree import DIR_FLAGS, Entry, is_git_name, kind_of, shown, walk

TOOLING_DIRS = frozenset({"__pycache__", "node_modules", ".venv"})
MANIFEST = "manifest.json"
_FILES = "files"


class ContextTooLarge(Exception):
    """A writable context path holds more than the baseline copy may take."""

    def __init__(self, path: Path, what: str) -> None:
        super().__init__(f"{path} {what}")
        self.path = path
        self.what = what


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 512 << 20  # regular files copied (tooling folders are not copied)
    max_entries: int = 200_000  # every name recorded


@dataclass(frozen=True)
class Item:
    """What one path held: ``kind`` and what identifies its content."""

    kind: str  # file | link | other | state (a tooling folder's entry, by lstat signature)
    identity: str  # sha256, link target, file type, or the lstat signature
    executable: bool = False
    copied: bool = False


@dataclass(frozen=True)
class Change:
    path: str  # the file in the context path, as text (bytes that are not UTF-8 as \xNN)
    kind: str  # added | modified | deleted


def _is_tooling(parts: tuple[str, ...]) -> bool:
    return any(is_git_name(p) or p in TOOLING_DIRS for p in parts[:-1])


def _signature(info: os.stat_result) -> str:
    return f"{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}:{info.st_ino}:{info.st_mode:o}"


class _Skip:
    """This run's own state below the context path: never recorded."""

    def __init__(self, skipped: tuple[tuple[str, ...], ...]) -> None:
        self.skipped = set(skipped)

    def __call__(self, entry: Entry) -> bool:
        return entry.parts not in self.skipped


def _measure(context: Path, skip: _Skip, limits: Limits) -> None:
    """Refuse a tree over the limits after a scan of ``lstat`` calls only."""
    entries = size = 0
    top = os.open(context, DIR_FLAGS)
    try:
        for entry in walk(top, descend=skip):
            if not skip(entry):
                continue
            entries += 1
            if entry.kind == "file" and not _is_tooling(entry.parts):
                size += entry.info.st_size
            if entries > limits.max_entries:
                raise ContextTooLarge(context, f"holds more than {limits.max_entries:,} entries")
            if size > limits.max_bytes:
                raise ContextTooLarge(context, f"holds more than {limits.max_bytes >> 20} MiB of files")
    finally:
        os.close(top)


def _one_file(context: Path, mirror: int | None) -> Iterator[Entry]:
    """The entry of a context path that names one file (none if it is gone), walked from its folder."""
    folder = os.open(context.parent, DIR_FLAGS)
    try:
        try:
            info = os.stat(context.name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            return
        yield Entry((context.name,), kind_of(info), info, folder, mirror)
    finally:
        os.close(folder)


def manifest(context: Path, skipped: tuple[tuple[str, ...], ...] = (), copy_to: Path | None = None,
             limits: Limits | None = None, *, one_file: bool = False) -> dict[str, Item]:
    """Every entry below ``context`` keyed by its ``/``-joined names; regular files copied to ``copy_to``.

    ``one_file``: ``context`` names a file, recorded alone under its name."""
    skip = _Skip(skipped)
    if one_file:
        found: dict[str, Item] = {}
        if copy_to is not None:
            copy_to.mkdir(parents=True)
        mirror = None if copy_to is None else os.open(copy_to, DIR_FLAGS)
        try:
            for entry in _one_file(context, mirror):
                if limits is not None and entry.info.st_size > limits.max_bytes:
                    raise ContextTooLarge(context, f"is larger than {limits.max_bytes >> 20} MiB")
                found[entry.name] = _file(entry) if entry.kind == "file" else (
                    Item("link", os.readlink(entry.name, dir_fd=entry.dir_fd)) if entry.kind == "link"
                    else Item("other", _signature(entry.info)))
        finally:
            if mirror is not None:
                os.close(mirror)
        return found
    if limits is not None:
        _measure(context, skip, limits)
    found = {}
    copied_bytes = 0
    top = os.open(context, DIR_FLAGS)
    mirror = None
    if copy_to is not None:
        copy_to.mkdir(parents=True)
        mirror = os.open(copy_to, DIR_FLAGS)
    try:
        for entry in walk(top, descend=skip, mirror=mirror):
            if not skip(entry) or entry.kind == "dir":
                continue
            key = "/".join(entry.parts)
            if _is_tooling(entry.parts) or entry.kind == "other":
                kind = "state" if _is_tooling(entry.parts) else "other"
                found[key] = Item(kind, _signature(entry.info))
            elif entry.kind == "link":
                found[key] = Item("link", os.readlink(entry.name, dir_fd=entry.dir_fd))
            else:
                found[key] = item = _file(entry)
                copied_bytes += entry.info.st_size if item.copied else 0
                if limits is not None and copied_bytes > limits.max_bytes:
                    raise ContextTooLarge(context, f"grew past {limits.max_bytes >> 20} MiB of files while copied")
    finally:
        os.close(top)
        if mirror is not None:
            os.close(mirror)
    return found


def _file(entry: Entry) -> Item:
    """A regular file's digest, copied under the mirror when there is one."""
    executable = bool(entry.info.st_mode & 0o111)
    try:
        fd = os.open(entry.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=entry.dir_fd)
    except OSError as exc:
        return Item("other", f"unreadable: {exc.strerror}")
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return Item("other", "not a regular file")
        if entry.mirror_fd is None:
            return Item("file", fd_digest(fd)[0], executable)
        out = os.open(entry.name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o400, dir_fd=entry.mirror_fd)
        try:
            with os.fdopen(os.dup(fd), "rb") as source, os.fdopen(os.dup(out), "wb") as target:
                digest = _copy_hashing(source, target)
        finally:
            os.close(out)
        return Item("file", digest, executable, copied=True)
    finally:
        os.close(fd)


def _copy_hashing(source: IO[bytes], target: IO[bytes]) -> str:
    hasher = hashlib.sha256()
    while chunk := source.read(1 << 20):
        hasher.update(chunk)
        target.write(chunk)
    return hasher.hexdigest()


def baseline(context: Path, destination: Path, skipped: tuple[tuple[str, ...], ...] = (),
             limits: Limits | None = None, *, one_file: bool = False) -> None:
    """Record ``context`` as it is now under ``destination`` (made private: it may hold secrets).

    ``one_file``: ``context`` names a file, which alone is recorded and copied."""
    destination.mkdir(parents=True, mode=0o700)
    os.chmod(destination, 0o700)
    found = manifest(context, skipped, destination / _FILES, limits or Limits(), one_file=one_file)
    body = {"skipped": [list(p) for p in skipped], "one_file": one_file,
            "entries": {k: asdict(v) for k, v in found.items()}}
    # ensure_ascii: a name that is not UTF-8 round-trips as its surrogate escapes
    (destination / MANIFEST).write_text(json.dumps(body, ensure_ascii=True), encoding="ascii")


def compare(context: Path, before: Path) -> tuple[list[Change], str]:
    """The changes of ``context`` since its baseline under ``before``, and their unified diff."""
    recorded = json.loads((before / MANIFEST).read_text(encoding="ascii"))
    old = {k: Item(**v) for k, v in recorded["entries"].items()}
    skipped = tuple(tuple(p) for p in recorded["skipped"])
    one_file = bool(recorded.get("one_file"))
    new = manifest(context, skipped, one_file=one_file)
    top = context.parent if one_file else context  # where the recorded names start
    changes: list[Change] = []
    diff: list[str] = []
    for key in sorted(set(old) | set(new)):
        was, now = old.get(key), new.get(key)
        if was is not None and now is not None and (was.kind, was.identity, was.executable) == (
                now.kind, now.identity, now.executable):
            continue
        kind = "added" if was is None else "deleted" if now is None else "modified"
        parts = tuple(key.split("/"))
        changes.append(Change(shown(str(top), *parts), kind))
        name = shown(*parts)
        a = _lines(was, before / _FILES, parts)
        b = _lines(now, top, parts)
        if not a and not b:  # an empty file added or deleted still shows in the diff
            a, b = (["(empty file)\n"], []) if kind == "deleted" else ([], ["(empty file)\n"])
        if was is not None and now is not None and was.executable != now.executable:
            b = [*b, f"(mode changed: executable {now.executable})\n"]
        diff.extend(difflib.unified_diff(
            a, b, fromfile="/dev/null" if kind == "added" else f"a/{name}",
            tofile="/dev/null" if kind == "deleted" else f"b/{name}",
        ))
    return changes, "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                            for line in diff)


def _lines(item: Item | None, top: Path, parts: tuple[str, ...]) -> list[str]:
    """What the diff shows of one side: text lines, or one line saying what the entry is."""
    if item is None:
        return []
    if item.kind == "link":
        return [f"(symbolic link to {shown(item.identity)})\n"]
    if item.kind == "state":
        size, mtime_ns = item.identity.split(":")[:2]
        when = datetime.fromtimestamp(int(mtime_ns) / 1e9, UTC).isoformat(timespec="seconds")
        return [f"(tooling state, not copied: {size} bytes, modified {when})\n"]
    if item.kind == "other":
        return [f"({item.identity})\n"]
    data = _read_below(top, parts)
    if data is None:
        return [f"(file, sha256 {item.identity})\n"]
    try:
        return data.decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return [f"(binary file, sha256 {item.identity})\n"]


def _read_below(top: Path, parts: tuple[str, ...]) -> bytes | None:
    """A file's bytes, opened one component at a time (the path may be longer than PATH_MAX)."""
    try:
        fd = os.open(top, DIR_FLAGS)
    except OSError:
        return None
    try:
        for part in parts[:-1]:
            child = os.open(part, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
        file_fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        if not stat.S_ISREG(os.fstat(file_fd).st_mode) or os.fstat(file_fd).st_size > 16 << 20:
            return None
        chunks = []
        while chunk := os.read(file_fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(file_fd)
