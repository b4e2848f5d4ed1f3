"""The file tools an agent is offered, named as the reference MCP filesystem server names them.

They run in-process on the agent's loop and reach the model through the same tool path
as MCP tools (``TurnIO.extra_tools`` / ``call_tool``). Every path goes through the one
check in ``permissions.py``, and every open is the checked, descriptor-relative open
there, so no tool here ever touches a path the guard has not just approved.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Callable
from typing import Any

from massgen.files.permissions import Checked, PathDenied, PathGuard, protection
from massgen.files.tree import DIR_FLAGS, is_git_name, shown, walk
from massgen.messages import ToolSpec
from massgen.outcome.errors import ToolError

READ_LIMIT_BYTES = 256 * 1024
SEARCH_LIMIT = 200
LIST_LIMIT = 1_000  # entries list_directory shows ...
LIST_LIMIT_CHARS = 64_000  # ... and characters (names may be 255 bytes each)
MAX_FILE_BYTES = 16 << 20
MOVE_LIMIT = 10_000  # entries in one folder move


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    # An argument the tool does not take is refused, never ignored: nothing a model asks for is dropped silently.
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


_PATH = {"type": "string", "description": "Relative to your workspace, a snapshot label (agent2.3/...) "
                                          "or an absolute path inside a context path."}

SPECS: tuple[ToolSpec, ...] = (
    ToolSpec(name="read_file", description="Read a text file; offset and limit count lines.",
             parameters=_schema({"path": _PATH, "offset": {"type": "integer", "minimum": 0},
                                 "limit": {"type": "integer", "minimum": 1}}, ["path"])),
    ToolSpec(name="write_file", description="Create or replace a file with this content.",
             parameters=_schema({"path": _PATH, "content": {"type": "string"}}, ["path", "content"])),
    ToolSpec(name="edit_file", description="Replace the one occurrence of 'old' in a file with 'new'.",
             parameters=_schema({"path": _PATH, "old": {"type": "string"}, "new": {"type": "string"}},
                                ["path", "old", "new"])),
    ToolSpec(name="list_directory", description="List a directory: [DIR] and [FILE] entries.",
             parameters=_schema({"path": _PATH}, ["path"])),
    ToolSpec(name="search_files", description="Find files whose relative path matches a glob pattern.",
             parameters=_schema({"pattern": {"type": "string"}, "path": _PATH}, ["pattern"])),
    ToolSpec(name="delete_file", description="Delete a file.", parameters=_schema({"path": _PATH}, ["path"])),
    ToolSpec(name="move_file", description="Move or rename a file or a folder.",
             parameters=_schema({"source": _PATH, "destination": _PATH}, ["source", "destination"])),
)
NAMES = frozenset(s.name for s in SPECS)
_TAKES = {s.name: tuple(s.parameters["properties"]) for s in SPECS}


class ToolArgumentError(ToolError):
    """The model called a file tool with missing or mistyped arguments."""


def _text(args: dict[str, Any], key: str, required: bool = True) -> str:
    value = args.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise ToolArgumentError(f"'{key}' must be a string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolArgumentError(f"'{key}' must be valid Unicode text (it holds a lone surrogate)") from None
    return value


def _count(args: dict[str, Any], key: str, minimum: int) -> int | None:
    """An optional whole number of at least ``minimum`` (JSON may spell 3 as 3.0)."""
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolArgumentError(f"'{key}' must be an integer")
    if value < minimum:
        raise ToolArgumentError(f"'{key}' must be at least {minimum}")
    return value


def _arguments(args: object) -> dict[str, Any]:
    if not isinstance(args, dict):
        raise ToolArgumentError("the arguments must be a JSON object")
    return args


def _read_all(fd: int) -> bytes:
    if os.fstat(fd).st_size > MAX_FILE_BYTES:
        raise ToolArgumentError(f"the file is larger than {MAX_FILE_BYTES >> 20} MiB")
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    os.ftruncate(fd, 0)  # only now: open_file has re-checked links and type
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class FileOps:
    """The operations behind the tools; ``guard()`` gives the rules in force right now."""

    def __init__(self, guard: Callable[[], PathGuard]) -> None:
        self.guard = guard

    def run(self, name: str, args: dict[str, Any], guard: PathGuard | None = None) -> str:
        """The tool's result text; raises ``PathDenied``, ``ToolArgumentError`` or ``OSError``.

        ``guard``: the rules as they were when the call was made (a call still running in a
        thread after its turn was cancelled keeps the coordination rules).
        """
        handler = getattr(self, f"_{name}", None)
        if name not in NAMES or handler is None:
            raise ToolArgumentError(f"unknown tool {name!r}")
        arguments = _arguments(args)
        unknown = [key for key in arguments if key not in _TAKES[name]]
        if unknown:  # refused, not ignored: the model meant something by it
            raise ToolArgumentError(f"it takes no argument {', '.join(repr(str(k)) for k in unknown)} (only "
                                    f"{', '.join(_TAKES[name])}); the call was not run")
        result: str = handler(guard or self.guard(), arguments)
        return result

    def _read_file(self, guard: PathGuard, args: dict[str, Any]) -> str:
        _count(args, "offset", 0), _count(args, "limit", 1)  # a bad argument is named before the file is read
        checked = guard.check(_text(args, "path"), "read")
        fd = guard.open_file(checked)
        try:
            data = _read_all(fd)
        finally:
            os.close(fd)
        offset, limit = _count(args, "offset", 0), _count(args, "limit", 1)
        text = data.decode("utf-8", errors="replace")
        if offset is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = offset or 0
            text = "".join(lines[start: start + limit if limit is not None else None])
        if len(text) > READ_LIMIT_BYTES:
            return text[:READ_LIMIT_BYTES] + f"\n[truncated at {READ_LIMIT_BYTES} characters; use offset/limit]"
        return text

    def _write_file(self, guard: PathGuard, args: dict[str, Any]) -> str:
        data = _text(args, "content").encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            raise ToolArgumentError(f"'content' is larger than {MAX_FILE_BYTES >> 20} MiB")
        checked = guard.check(_text(args, "path"), "write", may_be_root="file")
        fd = guard.open_file(checked, write=True, create=True)
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
        return f"Wrote {len(data)} bytes to {shown(str(checked.path))}"

    def _edit_file(self, guard: PathGuard, args: dict[str, Any]) -> str:
        old, new = _text(args, "old"), _text(args, "new")
        if not old:
            raise ToolArgumentError("'old' must not be empty")
        checked = guard.check(_text(args, "path"), "write", may_be_root="file")
        fd = guard.open_file(checked, write=True)
        try:
            try:
                text = _read_all(fd).decode("utf-8")
            except UnicodeDecodeError:
                raise ToolArgumentError(f"{checked.raw} is not UTF-8 text, which edit_file edits; "
                                        "write_file replaces a whole file") from None
            count = text.count(old)
            if count != 1:
                raise ToolArgumentError(f"'old' must match exactly once in {checked.raw}; it matches {count} times")
            os.lseek(fd, 0, os.SEEK_SET)
            _write_all(fd, text.replace(old, new, 1).encode("utf-8"))
        finally:
            os.close(fd)
        return f"Edited {checked.raw}"

    def _list_directory(self, guard: PathGuard, args: dict[str, Any]) -> str:
        checked = guard.check(_text(args, "path", required=False) or ".", "read")
        fd = guard.open_dir(checked)
        try:
            entries = sorted(os.scandir(fd), key=lambda e: e.name)
            lines: list[str] = []
            size = 0
            for e in entries:  # at most LIST_LIMIT entries and LIST_LIMIT_CHARS: a folder of 20,000 is a note
                line = f"[{'DIR' if e.is_dir(follow_symlinks=False) else 'LINK' if e.is_symlink() else 'FILE'}] " \
                       f"{shown(e.name)}"
                if len(lines) >= LIST_LIMIT or size + len(line) > LIST_LIMIT_CHARS:
                    break
                lines.append(line)
                size += len(line) + 1
        finally:
            os.close(fd)
        if len(lines) < len(entries):
            lines.append(f"[{len(lines):,} of {len(entries):,} entries shown, by name; list a subfolder, or find "
                         "files with search_files and a pattern]")
        return "\n".join(lines) if lines else "(empty directory)"

    def _search_files(self, guard: PathGuard, args: dict[str, Any]) -> str:
        pattern = _text(args, "pattern")
        checked = guard.check(_text(args, "path", required=False) or ".", "read")
        fd = guard.open_dir(checked)
        found: list[str] = []
        try:
            for entry in walk(fd, descend=lambda e: not is_git_name(e.name) and e.name != "__pycache__"):
                if entry.kind == "dir":
                    continue
                relative = shown(*entry.parts)
                if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(shown(entry.name), pattern):
                    found.append(relative)
                if len(found) >= SEARCH_LIMIT:
                    break
        finally:
            os.close(fd)
        if not found:
            return f"No files match {pattern!r}"
        more = f"\n[first {SEARCH_LIMIT} matches]" if len(found) >= SEARCH_LIMIT else ""
        return "\n".join(sorted(found)[:SEARCH_LIMIT]) + more

    def _delete_file(self, guard: PathGuard, args: dict[str, Any]) -> str:
        checked = guard.check(_text(args, "path"), "write", may_be_root=False)
        parent, name = guard.open_parent(checked)
        try:
            info = os.stat(name, dir_fd=parent, follow_symlinks=False)
            if not stat.S_ISREG(info.st_mode):
                raise ToolArgumentError(f"{checked.raw} is not a file")
            os.unlink(name, dir_fd=parent)  # unlink never follows a symlink
        finally:
            os.close(parent)
        return f"Deleted {checked.raw}"

    def _move_file(self, guard: PathGuard, args: dict[str, Any]) -> str:
        source = guard.check(_text(args, "source"), "write", may_be_root=False)
        target = guard.check(_text(args, "destination"), "write", may_be_root=False)
        if os.path.lexists(target.path):
            raise ToolArgumentError(f"{target.raw} already exists")
        if target.root == source.root and target.parts[:len(source.parts)] == source.parts:
            raise ToolArgumentError(f"{source.raw} cannot be moved inside itself")
        src_dir, src_name = guard.open_parent(source)
        try:
            info = os.stat(src_name, dir_fd=src_dir, follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                raise PathDenied(source.raw, "symbolic links are not followed")
            if stat.S_ISDIR(info.st_mode):
                _check_folder_move(src_dir, src_name, source, target)
            dst_dir, dst_name = guard.open_parent(target, create=True)
            try:
                os.rename(src_name, dst_name, src_dir_fd=src_dir, dst_dir_fd=dst_dir)
            finally:
                os.close(dst_dir)
        finally:
            os.close(src_dir)
        return f"Moved {source.raw} to {target.raw}"


def _check_folder_move(parent: int, name: str, source: Checked, target: Checked) -> None:
    """A folder moves only when everything in it may move: no link, special file or hard-linked
    file (each could point outside, or plant one where it lands), nothing protected where it
    is now or where it would land, and not more than ``MOVE_LIMIT`` entries."""
    fd = os.open(name, DIR_FLAGS, dir_fd=parent)
    try:
        for count, entry in enumerate(walk(fd), start=1):
            inner = shown(source.raw, *entry.parts)
            if count > MOVE_LIMIT:
                raise ToolArgumentError(f"{source.raw} holds more than {MOVE_LIMIT} entries; move smaller folders")
            if entry.kind == "link":
                raise PathDenied(inner, "the folder holds a symbolic link, which is never moved")
            if entry.kind == "other":
                raise PathDenied(inner, "the folder holds a special file, which is never moved")
            if entry.kind == "file" and entry.info.st_nlink > 1:
                raise PathDenied(inner, "the folder holds a file with other hard links, which is never moved")
            for end in (source, target):
                reason = protection(end.root, (*end.parts, *entry.parts))
                if reason is not None:
                    raise PathDenied(shown(end.raw, *entry.parts), reason)
    finally:
        os.close(fd)
