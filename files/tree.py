"""A directory tree as the file system holds it: any bytes in a name, any depth, no recursion.

``walk`` visits a tree from a directory descriptor, one ``openat`` step at a time, never
following a symbolic link. It is a loop with an explicit stack, not a recursion, so a tree of
thousands of nested folders (which an agent can make with one ``mkdir -p``) walks like any
other; and a folder whose subfolders are all visited closes its descriptor before the last
one is entered, so a chain of nested folders holds a constant number of descriptors. With
``mirror`` (a directory descriptor) each folder visited is created under it too, for copies.

Names are ``str`` as ``os`` returns them: bytes that are not UTF-8 come as surrogate escapes,
which ``os`` encodes back to the same bytes, so nothing is lost. ``shown`` turns a name into
text that is valid anywhere (a trace record, a model's context): the odd bytes as ``\\xe9``.
"""

from __future__ import annotations

import os
import stat
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

Kind = Literal["dir", "file", "link", "other"]

# What git, macOS and Windows ignore when they compare a name with ".git": HFS+ drops these code
# points, NTFS drops trailing dots and spaces and knows the short name GIT~1 (git's own rules:
# core.protectHFS / core.protectNTFS).
_IGNORED_CODE_POINTS = frozenset(
    [0x200C, 0x200D, 0x200E, 0x200F, 0xFEFF, *range(0x202A, 0x202F), *range(0x206A, 0x2070)]
)


def is_git_name(name: str) -> bool:
    """True for a name that some file system or git itself treats as ``.git``."""
    kept = "".join(c for c in name if ord(c) not in _IGNORED_CODE_POINTS)
    folded = unicodedata.normalize("NFC", kept).casefold().rstrip(". ")
    return folded in (".git", "git~1")


def shown(*parts: str) -> str:
    """``parts`` joined by ``/`` as valid UTF-8 text: bytes that are not UTF-8 become ``\\xNN``."""
    return "/".join(os.fsencode(p).decode("utf-8", "backslashreplace") for p in parts)


def encoded(*parts: str) -> bytes:
    """``parts`` joined by ``/`` as the bytes the file system holds."""
    return b"/".join(os.fsencode(p) for p in parts)


@dataclass(frozen=True)
class Entry:
    """One name in the tree; ``dir_fd`` (and ``mirror_fd``) are valid only until the walk moves on."""

    parts: tuple[str, ...]  # the names from the top down to this entry
    kind: Kind
    info: os.stat_result
    dir_fd: int  # the folder holding it
    mirror_fd: int | None  # that folder's copy under ``mirror``

    @property
    def name(self) -> str:
        return self.parts[-1]


@dataclass
class _Folder:
    fd: int
    mirror_fd: int | None
    parts: tuple[str, ...]
    pending: list[str] = field(default_factory=list)  # subfolders still to visit

    def close(self) -> None:
        for fd in (self.fd, self.mirror_fd):
            if fd is not None:
                os.close(fd)


def kind_of(info: os.stat_result) -> Kind:
    if stat.S_ISDIR(info.st_mode):
        return "dir"
    if stat.S_ISREG(info.st_mode):
        return "file"
    if stat.S_ISLNK(info.st_mode):
        return "link"
    return "other"


def walk(top_fd: int, *, descend: Callable[[Entry], bool] = lambda _entry: True,
         mirror: int | None = None) -> Iterator[Entry]:
    """Every entry below ``top_fd`` (which the caller keeps), folders before what they hold.

    ``descend`` decides whether a folder's contents are visited. A folder that cannot be
    opened or listed (it vanished, was swapped for a link, or may not be read) is yielded but
    not entered.
    """
    stack = [_Folder(os.dup(top_fd), None if mirror is None else os.dup(mirror), ())]
    try:
        yield from _entries(stack[-1], descend)
        while stack:
            folder = stack[-1]
            if not folder.pending:
                stack.pop().close()
                continue
            name = folder.pending.pop(0)
            try:
                fd = os.open(name, DIR_FLAGS, dir_fd=folder.fd)
            except OSError:
                continue
            mirror_fd = None
            if folder.mirror_fd is not None:
                try:
                    os.mkdir(name, 0o755, dir_fd=folder.mirror_fd)
                    mirror_fd = os.open(name, DIR_FLAGS, dir_fd=folder.mirror_fd)
                except BaseException:
                    os.close(fd)
                    raise
            child = _Folder(fd, mirror_fd, (*folder.parts, name))
            if not folder.pending:  # nothing left here: let go of it before going deeper
                stack.pop().close()
            stack.append(child)
            yield from _entries(child, descend)
    finally:
        for folder in stack:
            folder.close()


def _entries(folder: _Folder, descend: Callable[[Entry], bool]) -> Iterator[Entry]:
    try:
        names = sorted(os.listdir(folder.fd))
    except OSError:  # a folder that may not be read (EACCES) is walked as an empty one
        return
    for name in names:
        try:
            info = os.stat(name, dir_fd=folder.fd, follow_symlinks=False)
        except FileNotFoundError:
            continue
        entry = Entry((*folder.parts, name), kind_of(info), info, folder.fd, folder.mirror_fd)
        yield entry
        if entry.kind == "dir" and descend(entry):
            folder.pending.append(name)
