"""What a run needs besides its config: the question, where it logs, what it resumes, its files.

Built by the run handle (``actors/run/team.py``) and read by the supervisor; the two events let
the handle wait for the supervisor's last steps without asking it (it may be stopping).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from massgen.actors.record.resume import ResumeState
    from massgen.files import RunFiles


@dataclass(frozen=True)
class RunSpec:
    """Everything a run needs that is not the config: the question and where logs go."""

    run_id: str
    question: str
    log_dir: str
    versions: dict[str, str]
    history: tuple[tuple[str, str], ...] = ()
    tick_interval_s: float = 0.05
    turn: int = 1
    attempt: int = 1
    # Resuming: the state rebuilt from the trace of the attempt it continues, and where that logged.
    resume: ResumeState | None = None
    resumed_from: str | None = None
    # "where: what escaped" for the question and history (``RunStarted.escaped``).
    escaped: tuple[str, ...] = ()
    # Said once to the user and recorded in RunStarted: what the config asks for that cannot be done here.
    warnings: tuple[str, ...] = ()
    # Workspaces, snapshots and context paths (massgen/files); None when no agent works with files.
    files: RunFiles | None = None
    # Set once the supervisor has stopped its children (agents, MCP servers and their processes).
    # Pykka sets ``actor_stopped`` *before* on_stop runs, so waiting for that is not enough.
    children_stopped: threading.Event = field(default_factory=threading.Event, compare=False, repr=False)
    # Set once RunFinished is handed to the trace writer (which may still have a backlog to write).
    finish_recorded: threading.Event = field(default_factory=threading.Event, compare=False, repr=False)
