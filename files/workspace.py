"""Where agents work on files during one run, and what each may touch when.

``RunFiles`` is the run's file state, shared by the supervisor (snapshots when an answer
is accepted, the presenter's changes when the run ends) and the agents (their tools).
Each agent with a workspace works in ``.massgen/workspaces/<run>/<agent>/``, unique per
run so parallel runs never collide. ``AgentFiles`` is one agent's side: the tools it is
offered, the rules in force in its current phase (coordination or presenting), the
per-reader rewriting of workspace paths in answers, and the trace of every denial.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import stat
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from massgen.backends import native_file_tools
from massgen.backends.base import FileScope
from massgen.files import changes, sandbox, snapshots
from massgen.files.file_tools import SPECS, FileOps, ToolArgumentError
from massgen.files.permissions import PathDenied, PathGuard, Root
from massgen.logs.paths import path_part
from massgen.messages import AnswerView, Message, ToolDenied, ToolSpec

if TYPE_CHECKING:
    from massgen.configs.schema import TeamConfig

WORKSPACE_BASE_ENV = "MASSGEN_WORKSPACE_BASE_DIR"
Emit = Callable[[Message], None]  # a report built with its cause; the agent signs and sends it
ToolExecutor = Callable[[str, dict[str, Any]], Any]

# ``@path`` or ``@path:w`` in a question: a context path, read-only or writable by the presenter.
_QUESTION_PATH = re.compile(r"(?<![\w@])@((?:[~./]|[A-Za-z0-9_-])[^\s]*?)(:w)?(?=[\s,;)]|$)")


def workspace_base() -> Path:
    return Path(os.environ.get(WORKSPACE_BASE_ENV) or Path(".massgen") / "workspaces")


@dataclass(frozen=True)
class ContextPath:
    """A folder of the user's, or one file (``is_file``: that file is granted, never its folder)."""

    path: Path
    writable: bool
    protected: tuple[str, ...] = ()
    is_file: bool = False

    @staticmethod
    def of(path: Path, writable: bool, protected: tuple[str, ...] = ()) -> ContextPath:
        """What ``path`` names now (resolved): a file is granted alone, a folder with all it holds."""
        resolved = path.resolve()
        return ContextPath(resolved, writable, protected, resolved.is_file())


def question_context_paths(question: str, left_as_text: list[str] | None = None) -> list[ContextPath]:
    """The ``@path`` / ``@path:w`` mentions of existing folders and files (a file alone, not its folder).

    Any other mention stays text; ``left_as_text`` (when given) gets each such mention once, with why:
    ``"@missing.txt: no such file"``, so a terminal surface can say that nothing was attached."""
    found: list[ContextPath] = []
    for match in _QUESTION_PATH.finditer(question):
        why: str | None = None
        try:
            path = Path(os.path.expanduser(match.group(1))).resolve()
            exists = path.is_dir() or path.is_file()
            if not exists:
                why = "not a regular file or folder" if path.exists() else "no such file"
        except (OSError, RuntimeError) as exc:  # a symlink loop, a folder on the way this user cannot enter
            exists = False  # as for a path that is not there: the mention stays text
            why = f"cannot be reached ({getattr(exc, 'strerror', None) or exc})"
        if exists:
            found.append(ContextPath.of(path, bool(match.group(2))))
        elif left_as_text is not None:
            note = f"{match.group(0)}: {why}"
            if note not in left_as_text:
                left_as_text.append(note)
    return found


def with_context_paths(config: TeamConfig, question: str = "", cwd_context: str | None = None,
                       left_as_text: list[str] | None = None) -> TeamConfig:
    """``config`` plus the context paths a user named at the terminal: ``@path`` / ``@path:w`` in the
    question and ``--cwd-context ro|rw``. Only terminal surfaces call this: a question that arrives
    over HTTP must not choose what the team may write. ``left_as_text``: the mentions that name nothing
    that can be attached are added to it (``question_context_paths``), for the caller to say so."""
    from massgen.configs.schema import ContextPathConfig

    added = [ContextPathConfig(path=str(c.path), permission="write" if c.writable else "read")
             for c in question_context_paths(question, left_as_text)]
    if cwd_context is not None:
        added.append(ContextPathConfig(path=os.getcwd(), permission="write" if cwd_context == "rw" else "read"))
    if not added:
        return config
    rules = config.orchestrator.model_copy(update={"context_paths": [*config.orchestrator.context_paths, *added]})
    return config.model_copy(update={"orchestrator": rules})


SNAPSHOT_STAGING = "snapshot_staging"  # in the log dir: copies waiting for their answer to be accepted


@dataclass
class RunFiles:
    run_id: str
    log_dir: Path
    contexts: list[ContextPath]
    command_mode: Literal["sandbox", "docker", "off"]
    command_timeout_s: float
    with_workspace: set[str]
    base: Path
    labels: dict[str, str] = field(default_factory=dict)  # agent id -> agentN
    cli_agents: set[str] = field(default_factory=set)
    baselines: dict[Path, Path] = field(default_factory=dict)  # writable context -> its baseline copy
    snapshot_limits: snapshots.Limits = field(default_factory=snapshots.Limits)

    @classmethod
    def prepare(cls, config: TeamConfig, run_id: str, log_dir: Path) -> RunFiles | None:
        """The run's file state, or None when no agent works with files."""
        rules = config.orchestrator
        contexts = [ContextPath.of(Path(os.path.expanduser(c.path)), c.permission == "write", tuple(c.protected_paths))
                    for c in rules.context_paths]
        everyone = rules.workspaces or bool(contexts) or rules.command_execution != "off"
        agents = {a.id for a in config.agents if everyone or a.backend.cwd}
        if not agents:
            return None
        files = cls(run_id, Path(log_dir).resolve(), contexts, rules.command_execution,
                    rules.command_timeout_seconds, agents, (workspace_base() / run_id).resolve())
        files.cli_agents = {a.id for a in config.agents if native_file_tools(a.backend.type)}
        _refuse_files_for_folder_only_clis(config, contexts)
        files.snapshot_limits = snapshots.Limits(max_bytes=int(rules.snapshot_limit_mb * (1 << 20)),
                                                 max_files=rules.snapshot_max_files)
        for agent in agents:
            files.workspace(agent).mkdir(parents=True, exist_ok=True)
        for path in (files.base, files.log_dir):
            _ignore_run_state(path)
        files.snapshots_dir.mkdir(parents=True, exist_ok=True)  # an agent CLI is given it with --add-dir
        limits = changes.Limits(max_bytes=int(rules.context_copy_limit_mb * (1 << 20)))
        for index, context in enumerate(contexts):
            if not context.writable or context.path in files.baselines:
                continue
            destination = files.log_dir / "context_baseline" / str(len(files.baselines))
            try:
                changes.baseline(context.path, destination, files.own_state(context.path), limits,
                                 one_file=context.is_file)
            except changes.ContextTooLarge as exc:
                from massgen.configs import ConfigError

                raise ConfigError(
                    f"orchestrator.context_paths[{index}].path: {exc}; a writable context path is copied at the "
                    f"start (for the report of what changed) and the copy is limited to "
                    f"{rules.context_copy_limit_mb:g} MiB and {limits.max_entries:,} entries: name a smaller "
                    "directory, make it permission: read, or raise orchestrator.context_copy_limit_mb") from None
            except OSError as exc:  # a folder this user cannot read cannot be copied, nor written safely
                from massgen.configs import ConfigError

                raise ConfigError(f"orchestrator.context_paths[{index}].path: {context.path}: cannot be read "
                                  f"({exc.strerror or exc}); a writable context path must be readable") from None
            files.baselines[context.path] = destination
        return files

    # -- layout ----------------------------------------------------------------------------------

    def workspace(self, agent_id: str) -> Path:
        """The agent's own folder; its id as one safe path part (a 300-character id was ENAMETOOLONG
        at the start of the run, and ``..`` would name the folder above)."""
        return self.base / path_part(agent_id)

    @property
    def snapshots_dir(self) -> Path:
        return self.log_dir / "snapshots"

    def hidden(self) -> tuple[Path, ...]:
        """Run state that no agent may read through a context path that happens to contain it."""
        return (self.base, self.log_dir, *(c.path / ".massgen" for c in self.contexts if not c.is_file))

    def own_state(self, context: Path) -> tuple[tuple[str, ...], ...]:
        """This run's state below ``context``, as names below it: left out of its change report."""
        return tuple(p.relative_to(context).parts for p in self.hidden() if p.is_relative_to(context) and p != context)

    def scope(self, agent_id: str) -> FileScope:
        """The same rules for an agent CLI's own file tools (claude_code turns them into permission rules)."""
        return FileScope(
            workspace=self.workspace(agent_id),
            read=(*(c.path for c in self.contexts), self.snapshots_dir),
            write_presenting=tuple(c.path for c in self.contexts if c.writable),
            protected=tuple(Path(os.path.normpath(c.path / p)) for c in self.contexts for p in (*c.protected, ".git")),
            hidden=tuple(p for p in self.hidden() if p != self.base),
        )

    def note(self, agent_id: str) -> str:
        """What the model is told about its files (appended to its system message)."""
        cli = agent_id in self.cli_agents
        lines = [f"Files: your workspace is {self.workspace(agent_id)}"
                 + ("" if cli else " (file tool paths are relative to it)") + "; only you write there."]
        for context in self.contexts:
            rule = "read-only; the final presenter writes it" if context.writable else "read-only"
            alone = " (this file alone: nothing else in its folder is granted)" if context.is_file else ""
            lines.append(f"Context path {context.path}{alone}: {rule}.")
        where = f"{self.snapshots_dir}/<label>/" if cli else "<label>/ (e.g. agent2.1/)"
        lines.append(f"Other agents' files, as of each answer, are read-only under {where}.")
        if self.command_mode != "off" and not cli:
            lines.append("run_command runs a shell command in your workspace, in a sandbox without network.")
        return "\n".join(lines)

    # -- the supervisor's side -----------------------------------------------------------------------

    def stage_snapshot(self, agent_id: str, key: str) -> dict[str, Any]:
        """Copy the author's workspace to a staging folder named ``key`` (slow: a worker thread's job).

        Never raises: a failed copy is an ``error`` (the answer stands; its files are just not shown)."""
        staged = self.log_dir / SNAPSHOT_STAGING / path_part(key)
        try:
            info = snapshots.take(self.workspace(agent_id), staged, self.snapshot_limits)
        except OSError as exc:
            return {"agent": agent_id, "path": "", "digest": "", "files": 0, "bytes": 0,
                    "error": f"snapshot failed: {exc}"}
        return {"agent": agent_id, "path": str(info.path), "digest": info.digest, "files": info.files,
                "bytes": info.bytes, "copy_on_write": info.cloned, "cut": info.cut}

    def place_snapshot(self, staged: dict[str, Any], label: str) -> dict[str, Any]:
        """Move a staged copy to ``snapshots/<label>`` (one rename); the fields of a ``SnapshotTaken``."""
        taken = {**staged, "label": label}
        if staged["path"]:
            destination = self.snapshots_dir / label
            try:
                os.rename(staged["path"], destination)
                taken["path"] = str(destination)
            except OSError as exc:
                self.discard_snapshot(staged)
                taken.update(path="", error=f"snapshot failed: {exc}")
        return taken

    @staticmethod
    def discard_snapshot(staged: dict[str, Any]) -> None:
        """Remove a staged copy whose answer was not accepted (in the background: it may be large)."""
        if staged.get("path"):
            threading.Thread(target=shutil.rmtree, args=(staged["path"],), kwargs={"ignore_errors": True},
                             name="snapshot-discard", daemon=True).start()

    def changed(self) -> dict[str, Any] | None:
        """The writable context paths' changes since the run started; the fields of a ``ContextChanged``."""
        if not self.baselines:
            return None
        found: list[dict[str, str]] = []
        diff = ""
        for context, before in self.baselines.items():
            listed, text = changes.compare(context, before)
            found += [{"path": c.path, "change": c.kind} for c in listed]
            diff += text
        diff_path = self.log_dir / "context_changes.diff"
        try:
            diff_path.write_text(diff, encoding="utf-8")
        except OSError:
            pass
        return {"files": tuple(found), "diff_path": str(diff_path)}

    @staticmethod
    def with_changes(answer: str | None, changed: dict[str, Any]) -> str | None:
        """The final answer followed by the list of files the presenter changed."""
        if not changed["files"]:
            return answer
        listed = "\n".join(f"- {f['path']} ({f['change']})" for f in changed["files"])
        return f"{(answer or '').rstrip()}\n\nFiles changed:\n{listed}\n(diff: {changed['diff_path']})"

    # -- what agents see ---------------------------------------------------------------------------

    def rewrite(self, view: AnswerView, reader: str) -> AnswerView:
        """Answers as ``reader`` sees them: other agents' workspace paths become their snapshot paths."""
        own = self.labels.get(reader)
        by_label = {label: agent for agent, label in self.labels.items()}
        answers = []
        for answer in view.answers:
            author = by_label.get(answer.agent)
            content = answer.content
            if author is not None and answer.agent != own and author in self.with_workspace:
                target = str(self.snapshots_dir / answer.label) if reader in self.cli_agents else answer.label
                content = content.replace(str(self.workspace(author)), target)
            answers.append(answer.model_copy(update={"content": content}))
        return view.model_copy(update={"answers": tuple(answers)})

    def agent(self, agent_id: str, emit: Emit, allowed: Sequence[str] | None = None,
              excluded: Sequence[str] = ()) -> AgentFiles:
        """``allowed``/``excluded``: the backend's ``allowed_tools``/``exclude_tools``, which cover these too."""
        return AgentFiles(self, agent_id, emit, allowed, excluded)


def _refuse_files_for_folder_only_clis(config: TeamConfig, contexts: list[ContextPath]) -> None:
    """Checked again here: ``with_context_paths`` adds ``@file`` mentions after the config was validated."""
    from massgen.configs import ConfigError
    from massgen.configs.schema import file_context_refusal

    refused = file_context_refusal(config.agents, [str(c.path) for c in contexts])
    if refused is not None:
        raise ConfigError(refused)


def _ignore_run_state(path: Path) -> None:
    """A ``.massgen`` folder inside a checkout ignores itself, so the user's ``git status`` stays clean."""
    state = next((p for p in (path, *path.parents) if p.name == ".massgen"), None)
    marker = state / ".gitignore" if state is not None else None
    if marker is not None and not marker.exists():
        try:
            marker.write_text("# massgen run state (workspaces, logs, snapshots)\n*\n", encoding="utf-8")
        except OSError:
            pass


class AgentFiles:
    """One agent's file tools and rules; lives on the agent's loop (phase is set by the actor)."""

    def __init__(self, run: RunFiles, agent_id: str, emit: Emit, allowed: Sequence[str] | None = None,
                 excluded: Sequence[str] = ()) -> None:
        self.run = run
        self.allowed = None if allowed is None else set(allowed)
        self.excluded = set(excluded)
        self.agent_id = agent_id
        self.emit = emit
        self.phase: Literal["turn", "present"] = "turn"
        self.cause = ""
        self.turn_id = 0
        self.ops = FileOps(self.guard)

    def specs(self) -> tuple[ToolSpec, ...]:
        offered = SPECS + ((sandbox.SPEC,) if self.run.command_mode != "off" else ())
        return tuple(s for s in offered if s.name not in self.excluded
                     and (self.allowed is None or s.name in self.allowed))

    def begin(self, phase: Literal["turn", "present"], cause: str, turn_id: int, view: AnswerView) -> AnswerView:
        self.phase, self.cause, self.turn_id = phase, cause, turn_id
        return self.rewrite(view)

    def rewrite(self, view: AnswerView) -> AnswerView:
        return self.run.rewrite(view, self.agent_id)

    def guard(self) -> PathGuard:
        """The rules right now: own workspace writable, snapshots read-only, context paths read-only
        except for the presenter where the context path allows writing; run state hidden."""
        presenting = self.phase == "present"
        roots = [Root.make(f"context:{c.path}", c.path, writable=presenting and c.writable,
                           protected=(*c.protected, ".git"), file=c.is_file) for c in self.run.contexts]
        roots += [Root.make("hidden", p, hidden=True) for p in self.run.hidden()]
        if self.run.snapshots_dir.is_dir():
            roots += [Root.make("snapshot", entry.path, alias=entry.name)
                      for entry in os.scandir(self.run.snapshots_dir)
                      if entry.is_dir(follow_symlinks=False) and not entry.name.startswith(".")]
        return PathGuard(Root.make("workspace", self.run.workspace(self.agent_id), writable=True), roots)

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        try:
            if name not in {s.name for s in self.specs()}:
                return f"unknown tool {name!r}", True
            if name == sandbox.SPEC.name:
                return await self._command(arguments)
            guard = self.guard()  # decided now, on the loop, in this call's phase
            return await asyncio.to_thread(self.ops.run, name, arguments, guard), False
        except PathDenied as denied:
            self.emit(ToolDenied(causation_id=self.cause, agent=self.agent_id, turn_id=self.turn_id, tool=name,
                                 path=denied.path, reason=denied.reason))
            return f"Permission denied: {denied}", True
        except ToolArgumentError as exc:
            return f"{name}: {exc}", True
        except OSError as exc:
            return f"{name}: {exc.strerror or exc}", True
        except (ValueError, UnicodeError) as exc:  # what the os module says of arguments it cannot take
            return f"{name}: {exc}", True

    def chain(self, other: ToolExecutor | None) -> Callable[[str, dict[str, Any]], Any]:
        """One executor: file tools here, everything else to ``other`` (the MCP tools)."""
        names = {s.name for s in self.specs()}

        async def execute(name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
            if name in names:
                return await self.call(name, arguments)
            if other is None:
                return f"unknown tool {name!r}", True
            result: tuple[str, bool] = await other(name, arguments)
            return result

        return execute

    async def _command(self, arguments: dict[str, Any]) -> tuple[str, bool]:
        command = arguments.get("command")
        if not isinstance(command, str) or not command.strip():
            return "run_command: 'command' must be a non-empty string", True
        if "\x00" in command:
            return "run_command: 'command' may not contain NUL characters", True
        read_only = [c.path for c in self.run.contexts]  # a file context: that file alone is bound
        if self.run.snapshots_dir.is_dir():
            read_only.append(self.run.snapshots_dir)
        # Only folders that exist are covered: a mount point cannot be made inside a read-only bind.
        hidden = [p for p in self.run.hidden() if any(p.is_relative_to(c) for c in read_only) and _is_folder(p)]
        result = await sandbox.run_command(
            command, mode=self.run.command_mode, workspace=self.run.workspace(self.agent_id), read_only=read_only,
            hidden=hidden, timeout_s=self.run.command_timeout_s,
        )
        return result.text(), result.exit_code != 0



def _is_folder(path: Path) -> bool:
    """A real directory (not a symbolic link to one)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False
