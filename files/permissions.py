"""The one permission check in front of every file operation an agent makes.

Every path a tool receives is decided here in two steps. ``check`` resolves it
(relative to the agent's workspace, a snapshot label such as ``agent2.3/...``, or an
absolute path inside a context path), normalises ``..``, refuses anything outside the
roots, any symbolic link below a root, regular files with more than one hard link (the
other link may live outside the tree), text that is not valid Unicode, writes where the
root is read-only right now, and writes to protected paths (``protection``: any ``.git``
at any depth and in any spelling, and the configured paths compared case-insensitively,
so a case trick on a case-insensitive filesystem cannot slip past). ``open_*`` then
walks from the root's directory descriptor one component at a time with ``O_NOFOLLOW``
(``openat`` style) and checks the opened file again with ``fstat``: a symlink or hard link
swapped in after the check fails the open instead of escaping. Nothing is truncated before that second check.

A context path may name one file (``Root.file``): that root holds the file alone, never its
folder, so a sibling, the folder's listing or a new file beside it are outside every root. It
is opened through its folder's descriptor with ``O_NOFOLLOW`` and re-checked like any other.

A refusal is a ``PathDenied`` whose message is written for the model.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from massgen.files.tree import is_git_name
from massgen.outcome.errors import ToolError

Access = Literal["read", "write"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class PathDenied(ToolError):
    """A file operation the rules do not allow; ``str()`` is what the model is told."""

    def __init__(self, path: str, reason: str) -> None:
        path = _as_text(path)  # shown to the model and traced: valid text whatever the name held
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def _as_text(value: str) -> str:
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


@dataclass(frozen=True)
class Root:
    """A directory tree an agent may use (its workspace, a snapshot, a context path), or one file
    (``file``: a context path naming a file, which grants that file and nothing beside it)."""

    name: str
    path: Path
    writable: bool = False
    protected: tuple[Path, ...] = ()
    # A relative first path component that names this root (snapshots: ``agent2.3``).
    alias: str | None = None
    # Run state inside a context path (workspaces, logs): neither read nor written through it.
    hidden: bool = False
    file: bool = False

    @staticmethod
    def make(name: str, path: str | Path, writable: bool = False, protected: tuple[str | Path, ...] = (),
             alias: str | None = None, hidden: bool = False, file: bool = False) -> Root:
        real = Path(os.path.realpath(path))
        # realpath: a protected path named through a symlinked prefix still matches what is checked;
        # a file's protected paths are named from its folder, as upstream names them
        base = real.parent if file else real
        guarded = tuple(Path(os.path.realpath(base / p)) for p in protected)
        return Root(name, real, writable, guarded, alias, hidden, file)


@dataclass(frozen=True)
class Checked:
    """A path that passed ``check``: the root and the components below it."""

    raw: str
    root: Root
    parts: tuple[str, ...]
    access: Access

    @property
    def path(self) -> Path:
        return self.root.path.joinpath(*self.parts)


def _folded(path: Path) -> tuple[str, ...]:
    return tuple(part.casefold() for part in path.parts)


def _is_within(path: Path, top: Path) -> bool:
    return path.parts[: len(top.parts)] == top.parts


@dataclass
class PathGuard:
    """The roots one agent may use right now; ``base`` is where relative paths start."""

    base: Root
    roots: list[Root] = field(default_factory=list)

    def all_roots(self) -> list[Root]:
        return [self.base, *self.roots]

    # -- the decision ------------------------------------------------------------------------

    def check(self, raw: str, access: Access, *, may_be_root: bool | Literal["file"] = True) -> Checked:
        """``may_be_root``: whether the path may name a root itself; ``"file"``: only a root that is one
        file (what write_file and edit_file change), never a root folder."""
        if not isinstance(raw, str) or not raw.strip():
            raise PathDenied(str(raw), "a path is required")
        if "\x00" in raw:
            raise PathDenied(raw, "a path may not contain NUL characters")
        try:
            raw.encode("utf-8")
        except UnicodeEncodeError:
            raise PathDenied(raw, "a path must be valid Unicode text (it holds a lone surrogate)") from None
        text = os.path.expanduser(raw) if raw.startswith("~") else raw
        norm = os.path.normpath(text)
        if os.path.isabs(norm):
            candidate = Path(norm)
        else:
            head = Path(norm).parts
            alias = next((r for r in self.roots if r.alias and head and r.alias == head[0]), None)
            if alias is not None:  # ``agent2.3/...`` names that snapshot
                candidate = Path(os.path.normpath(alias.path.joinpath(*head[1:])))
            else:
                candidate = Path(os.path.normpath(self.base.path / norm))
        root = self._root_of(candidate)
        if root is not None and root.hidden:
            raise PathDenied(raw, "run state (workspaces, logs) is not reachable through a context path")
        if root is None:
            beside = next((r for r in self.roots if r.file and r.path.parent in (candidate, candidate.parent)), None)
            if beside is not None:  # a sibling of a granted file, or its folder
                raise PathDenied(raw, f"only the file {beside.path.name} in this folder is granted (a context "
                                      "path naming one file); nothing else here is reachable")
            where = "outside the workspace" if not os.path.isabs(text) else "not inside the workspace or a context path"
            raise PathDenied(raw, f"{where}; use a path relative to the workspace")
        parts = candidate.parts[len(root.path.parts):]
        if not parts and (may_be_root is False or (may_be_root == "file" and not root.file)):
            raise PathDenied(raw, _root_itself(root))
        self._walk_lstat(raw, root, parts)
        if access == "write":
            if not root.writable:
                raise PathDenied(raw, _read_only_reason(root))
            reason = protection(root, parts)
            if reason is not None:
                raise PathDenied(raw, reason)
        return Checked(raw, root, parts, access)

    def _root_of(self, candidate: Path) -> Root | None:
        """The innermost root holding ``candidate`` (a snapshot inside the log dir, say); a file root
        holds only its own path."""
        holders = [r for r in self.all_roots() if (candidate == r.path if r.file else _is_within(candidate, r.path))]
        return max(holders, key=lambda r: len(r.path.parts), default=None)

    @staticmethod
    def _walk_lstat(raw: str, root: Root, parts: tuple[str, ...]) -> None:
        if root.file:
            _lstat_granted_file(raw, root.path)
            return
        path = root.path
        for index, part in enumerate(parts):
            path = path / part
            try:
                info = os.lstat(path)
            except FileNotFoundError:
                return  # the rest does not exist yet; open() decides again
            except OSError as exc:
                raise PathDenied(raw, exc.strerror or "cannot be read") from None
            if stat.S_ISLNK(info.st_mode):
                raise PathDenied(raw, "symbolic links are not followed")
            last = index == len(parts) - 1
            if not last and not stat.S_ISDIR(info.st_mode):
                raise PathDenied(raw, f"{part} is not a directory")
            if last and stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
                raise PathDenied(raw, "the file has other hard links, which may be outside the tree")

    # -- the re-check at open time -----------------------------------------------------------

    def open_dir(self, checked: Checked, parts: tuple[str, ...] | None = None, create: bool = False) -> int:
        """A descriptor of a directory below the root, walked component by component."""
        if checked.root.file:
            raise PathDenied(checked.raw, "this context path is one file, not a folder: read it with read_file; "
                                          "nothing else in its folder is granted")
        fd = os.open(checked.root.path, _DIR_FLAGS)
        try:
            for part in checked.parts if parts is None else parts:
                child = _step(fd, part, checked, create)
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return fd

    def open_parent(self, checked: Checked, create: bool = False) -> tuple[int, str]:
        """The parent directory's descriptor and the final name, for unlink/rename/mkdir."""
        if checked.root.file:  # the granted file itself, through its folder (which is not granted)
            try:
                return os.open(checked.root.path.parent, _DIR_FLAGS), checked.root.path.name
            except OSError as exc:
                raise _denied_or_raise(checked, exc) from None
        if not checked.parts:
            raise PathDenied(checked.raw, _root_itself(checked.root))
        return self.open_dir(checked, checked.parts[:-1], create), checked.parts[-1]

    def open_file(self, checked: Checked, write: bool = False, create: bool = False) -> int:
        """A descriptor of a regular file. Writes are truncated only after the fstat re-check."""
        parent, name = self.open_parent(checked, create=create)
        flags = (os.O_RDWR if write else os.O_RDONLY) | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        if create:
            flags |= os.O_CREAT
        try:
            fd = os.open(name, flags, 0o644, dir_fd=parent)
        except OSError as exc:
            raise _denied_or_raise(checked, exc) from None
        finally:
            os.close(parent)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise PathDenied(checked.raw, "not a regular file")
            if info.st_nlink > 1:
                raise PathDenied(checked.raw, "the file has other hard links, which may be outside the tree")
            os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
        return fd


def protection(root: Root, parts: tuple[str, ...]) -> str | None:
    """Why ``parts`` below ``root`` may never be changed, or None.

    Any ``.git`` (a folder or a gitfile, at any depth, in any spelling a file system or git
    treats as ``.git``) is repository metadata: a hook or ``core.fsmonitor`` written there runs
    the next time the user runs git. Protected paths compare case-folded.
    """
    # A file root's own path is what is written: a granted file inside a .git folder is metadata too.
    if any(is_git_name(part) for part in (root.path.parts if root.file else parts)):
        return "protected path: .git (repository metadata) may never be changed"
    folded = _folded(root.path.joinpath(*parts))
    for protected in root.protected:
        if folded[: len(protected.parts)] == _folded(protected):
            return "protected path: it may never be changed"
    return None


def _step(fd: int, part: str, checked: Checked, create: bool) -> int:
    try:
        if create:
            try:
                os.mkdir(part, 0o755, dir_fd=fd)
            except FileExistsError:
                pass
        return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except OSError as exc:
        raise _denied_or_raise(checked, exc) from None


def _denied_or_raise(checked: Checked, exc: OSError) -> Exception:
    if exc.errno in (errno.ELOOP, errno.EMLINK):
        return PathDenied(checked.raw, "symbolic links are not followed")
    if exc.errno == errno.ENOTDIR:
        return PathDenied(checked.raw, "a component of the path is not a directory (or is a symbolic link)")
    return exc


def _lstat_granted_file(raw: str, path: Path) -> None:
    """A granted file as it is now: a regular file with one link, or not there yet (the presenter may
    write it again); a link or folder swapped in is refused (``open_file`` decides again)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise PathDenied(raw, exc.strerror or "cannot be read") from None
    if stat.S_ISLNK(info.st_mode):
        raise PathDenied(raw, "symbolic links are not followed")
    if not stat.S_ISREG(info.st_mode):
        raise PathDenied(raw, "this context path was granted as one file and is no longer a regular file")
    if info.st_nlink > 1:
        raise PathDenied(raw, "the file has other hard links, which may be outside the tree")


def _root_itself(root: Root) -> str:
    if root.file:
        return "this context path is one file: it may be read and (by the presenter, with permission: write) " \
               "rewritten, never deleted or moved"
    return "this operation cannot apply to a root directory itself"


def _read_only_reason(root: Root) -> str:
    if root.alias:
        return f"{root.alias} is another agent's snapshot and is read-only"
    if root.name.startswith("context"):
        return ("context paths are read-only here; only the final presenter may write, "
                "and only where the context path has permission: write")
    return "read-only"
