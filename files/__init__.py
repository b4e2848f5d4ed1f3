"""File workflows: agent workspaces, snapshots, guarded context paths and sandboxed commands.

One concept per module: ``permissions`` (the one check before every file operation),
``file_tools`` (the tools, named as the reference MCP filesystem server names them),
``snapshots``, ``changes`` (the presenter's diff), ``sandbox`` (``run_command``) and
``workspace`` (the run's and each agent's file state).
"""

from massgen.files.permissions import Checked, PathDenied, PathGuard, Root
from massgen.files.workspace import (
    AgentFiles,
    ContextPath,
    RunFiles,
    question_context_paths,
    with_context_paths,
    workspace_base,
)

__all__ = [
    "AgentFiles",
    "Checked",
    "ContextPath",
    "PathDenied",
    "PathGuard",
    "Root",
    "RunFiles",
    "question_context_paths",
    "with_context_paths",
    "workspace_base",
]
