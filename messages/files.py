"""File workflows: denials, snapshots and the presenter's changes (see ``massgen/files``)."""

from __future__ import annotations

from typing import Any

from massgen.messages.envelope import Message


class ToolDenied(Message):
    """agent -> supervisor: a file tool call the permission check refused; the model got a tool error."""

    agent: str
    turn_id: int
    tool: str
    path: str
    reason: str


class SnapshotTaken(Message):
    """Recorded by the supervisor: an answer's workspace, frozen where other agents read it."""

    agent: str
    label: str
    path: str
    digest: str
    files: int
    bytes: int
    copy_on_write: bool = False
    error: str | None = None
    cut: str | None = None  # a limit stopped the copy: what was left out (the snapshot holds the note too)


class SnapshotReady(Message):
    """snapshot worker -> supervisor, not traced (like ``Tick``; what it carries is recorded as
    ``SnapshotTaken``): an answer's workspace is copied, off the supervisor's thread, so the answer
    can be accepted."""

    agent: str
    turn_id: int
    staged: dict[str, Any]  # ``RunFiles.stage_snapshot``'s fields: where the copy lies, and what it holds


class ContextChanged(Message):
    """Recorded by the supervisor as the run ends: the files the presenter changed in context paths."""

    files: tuple[dict[str, str], ...]
    diff_path: str
