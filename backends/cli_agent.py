"""What the agent-CLI backends (``claude_code``, ``antigravity_cli``) share.

An agent CLI is a whole agent in a subprocess: it keeps its own tool loop, so one model
call of ours is one run of the CLI on a prompt that renders the request's conversation.
The workflow tools reach the CLI through our loopback MCP server (``workflow_mcp``), and
its calls are merged into the same event stream as what the CLI prints.

Processes are owned strictly: each run gets its own session (process group), and is
ended with SIGTERM to the group, then SIGKILL, whenever the stream ends early (the task
was cancelled, the consumer stopped reading) or the backend closes, so a cancelled turn
never leaves a CLI, or anything it started, running.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import tempfile
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from massgen.backends.base import BackendContext, PermanentBackendError
from massgen.backends.keys import redact
from massgen.backends.workflow_mcp import WorkflowToolServer, queue_deliverer
from massgen.configs.schema import BackendConfig, McpServerConfig
from massgen.messages.stream import ModelRequest, StreamError, StreamEvent
from massgen.messages.workflow import WORKFLOW_TOOLS

# Prompts longer than this go through stdin: one argv string is capped (128 KiB on Linux),
# and a long argument is also visible to every user in ``ps``.
ARGV_PROMPT_LIMIT = 100_000
TERM_GRACE_S = 2.0
EXIT_WAIT_S = 10.0
_LINE_LIMIT = 1 << 24  # stream-json lines carry whole tool results
_STDERR_KEEP = 64


def find_cli(
    cli_path: str | None, name: str, install_hint: str, search_dirs: tuple[Path, ...] = ()
) -> str:
    """The executable to run: ``cli_path`` if given, else ``name`` on PATH, else in ``search_dirs``."""
    if cli_path:
        path = Path(cli_path).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return str(path.resolve())
        found = shutil.which(cli_path)
        if found:
            return found
        raise PermanentBackendError(f"cli_path {cli_path!r} is not an executable file. {install_hint}")
    found = shutil.which(name)
    if found:
        return found
    for folder in search_dirs:
        candidate = folder / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate.resolve())
    places = ", ".join(str(d) for d in search_dirs)
    where = f"on PATH or in {places}" if places else "on PATH"
    raise PermanentBackendError(f"the {name!r} command was not found {where}. {install_hint}")


def render_prompt(request: ModelRequest, tool_label: Callable[[str], str]) -> str:
    """The conversation as one text, with how to end the turn through the MCP tools."""
    blocks: list[str] = []
    for message in request.messages:
        body = message.content
        if message.tool_calls:
            calls = "\n".join(f"(called {c.name} with {c.raw_arguments or c.arguments})" for c in message.tool_calls)
            body = f"{body}\n{calls}" if body else calls
        role = f"tool result: {message.name}" if message.role == "tool" else message.role
        blocks.append(f"[{role}]\n{body}")
    offered = [t.name for t in request.tools if t.name in WORKFLOW_TOOLS]
    if request.kind == "present" or not offered:
        blocks.append("[instructions]\nReply with the final answer text only. Do not call any tools.")
    else:
        names = " or ".join(tool_label(name) for name in offered)
        blocks.append(
            f"[instructions]\nThe workflow tools named above come from the MCP server `massgen`: {names}. "
            "End your turn by calling exactly one of them, then stop."
        )
    return "\n\n".join(blocks)


def mcp_server_entries(servers: list[McpServerConfig], url_key: str) -> dict[str, dict[str, Any]]:
    """The user's own MCP servers from the config, in the ``mcpServers`` shape both CLIs read."""
    entries: dict[str, dict[str, Any]] = {}
    for server in servers:
        if server.type == "stdio":
            entry: dict[str, Any] = {"command": server.command, "args": list(server.args)}
            if server.env:
                entry["env"] = dict(server.env)
        else:
            entry = {url_key: server.url}
            if server.headers:
                entry["headers"] = dict(server.headers)
        entries[server.name] = entry
    return entries


@dataclass
class CliRun:
    """One CLI process and what is known about it while it runs."""

    process: asyncio.subprocess.Process
    stderr: deque[str] = field(default_factory=lambda: deque(maxlen=_STDERR_KEEP))
    state: dict[str, Any] = field(default_factory=dict)

    def stderr_tail(self, secrets: tuple[str | None, ...] = ()) -> str:
        return redact(" | ".join(line for line in self.stderr if line.strip())[-1500:], secrets)


async def terminate(process: asyncio.subprocess.Process, grace_s: float = TERM_GRACE_S) -> None:
    """SIGTERM the process group, wait ``grace_s``, SIGKILL it; the leader is always reaped."""
    if process.returncode is None:
        _signal_group(process.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), grace_s)
        except TimeoutError:
            _signal_group(process.pid, signal.SIGKILL)
            await process.wait()
    # Anything the CLI started in its group and left behind goes too.
    _signal_group(process.pid, signal.SIGKILL)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class CliBackend:
    """The life cycle and stream plumbing; subclasses say how to run and read their CLI."""

    name = "cli"
    executable = "cli"
    install_hint = ""
    search_dirs: tuple[Path, ...] = ()
    # The CLI is an MCP client itself: the config's mcp_servers are handed to it, so the agent
    # need not start McpServer actors for this backend (their tools could not reach the CLI).
    handles_mcp_servers = True

    def __init__(self, config: BackendConfig, context: BackendContext) -> None:
        self.config = config
        self.context = context
        self.cli = ""
        self.workspace = Path()
        self.mcp = WorkflowToolServer(context.agent_id)
        self._owned_dirs: list[Path] = []
        self._live: set[asyncio.subprocess.Process] = set()

    # -- life cycle -----------------------------------------------------------------------------

    @property
    def decides_separately(self) -> bool:
        return False

    def replayed(self, request: ModelRequest, tool_calls: int) -> None:
        """Nothing to move on: the backend keeps no state between calls."""

    async def start(self) -> None:
        cli_path = getattr(self.config, "cli_path", None)
        self.cli = find_cli(cli_path, self.executable, self.install_hint, self.search_dirs)
        self.workspace = self._workspace()
        try:
            await self.mcp.start()
            await self.prepare()
        except BaseException:
            await self.aclose()  # nothing half-started stays behind: server, temp dirs, config files
            raise

    def _workspace(self) -> Path:
        """The agent's working directory: config ``cwd``, else the context's, else a fresh temp one."""
        if self.config.cwd:
            path = Path(self.config.cwd).expanduser().resolve()
            path.mkdir(parents=True, exist_ok=True)
            return path
        if self.context.workspace is not None:
            self.context.workspace.mkdir(parents=True, exist_ok=True)
            return self.context.workspace.resolve()
        return self.scratch_dir("workspace")

    def scratch_dir(self, what: str) -> Path:
        """A private temporary directory removed by ``aclose``."""
        path = Path(tempfile.mkdtemp(prefix=f"massgen-{self.name}-{self.context.agent_id}-{what}-"))
        self._owned_dirs.append(path)
        return path

    async def aclose(self) -> None:
        for process in list(self._live):
            await terminate(process, grace_s=1.0)
        self._live.clear()
        await self.mcp.aclose()
        self.cleanup()
        for path in self._owned_dirs:
            shutil.rmtree(path, ignore_errors=True)
        self._owned_dirs.clear()

    # -- hooks ------------------------------------------------------------------------------------

    async def prepare(self) -> None:
        """Once, after the MCP server is up (write config files)."""

    def cleanup(self) -> None:
        """Once, on close (undo what ``prepare`` changed)."""

    def command(self, request: ModelRequest) -> tuple[list[str], str | None]:
        """The argv for this call, and the text for stdin (``None``: stdin is closed)."""
        raise NotImplementedError

    def environment(self) -> dict[str, str]:
        return {**os.environ, **self.context.env}

    def secrets(self) -> tuple[str | None, ...]:
        """Values never to show in an error message (the CLI's stderr may echo its environment)."""
        keyish = ("KEY", "TOKEN", "SECRET", "PASSWORD")
        found = [v for k, v in self.context.env.items() if any(word in k.upper() for word in keyish)]
        return (self.config.api_key, *found)

    def read(self, run: CliRun, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """The events of the CLI's own output, until it is exhausted."""
        raise NotImplementedError

    def conclude(self, run: CliRun, request: ModelRequest) -> list[StreamEvent]:
        """The closing events once the process has exited (usage and finish, or an error)."""
        raise NotImplementedError

    def report(self, name: str, info: Mapping[str, Any]) -> None:
        if self.context.on_event is not None:
            self.context.on_event(name, {"provider": self.name, **info})

    # -- one model call ----------------------------------------------------------------------------

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[StreamEvent | None] = asyncio.Queue()
        self.mcp.begin(request.tools if request.kind == "turn" else (), queue_deliverer(queue, loop))
        run: CliRun | None = None
        tasks: list[asyncio.Task[None]] = []
        try:
            argv, stdin_text = self.command(request)
            try:
                process = await asyncio.create_subprocess_exec(
                    *argv, cwd=str(self.workspace), env=self.environment(), start_new_session=True,
                    stdin=asyncio.subprocess.PIPE if stdin_text is not None else asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, limit=_LINE_LIMIT,
                )
            except OSError as exc:
                yield StreamError(message=f"{self.name}: could not run {argv[0]}: {exc}")
                return
            self._live.add(process)
            run = CliRun(process)
            tasks = [loop.create_task(self._pump(run, request, queue)), loop.create_task(self._drain_stderr(run))]
            if stdin_text is not None:
                tasks.append(loop.create_task(self._feed(process, stdin_text)))
            while (event := await queue.get()) is not None:
                if isinstance(event, StreamError):
                    # The process is gone before the error is reported: a consumer that stops
                    # reading at an error never leaves a CLI behind.
                    await self._finish(run, tasks)
                    yield event
                    return
                yield event
            # Output is over; a CLI that lingers after closing stdout is not waited on for long.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), EXIT_WAIT_S)
            await asyncio.gather(*tasks[1:], return_exceptions=True)
            late = [e for e in _drain(queue) if e is not None]  # a workflow call that beat the output
            closing = self.conclude(run, request)
            await self._finish(run, tasks)
            for event in (*late, *closing):
                yield event
        finally:
            await self._finish(run, tasks)

    async def _finish(self, run: CliRun | None, tasks: list[asyncio.Task[None]]) -> None:
        """End the call: no more workflow calls, helpers stopped, the process group gone."""
        self.mcp.end()
        for task in tasks:
            task.cancel()
        if run is not None and run.process in self._live:
            self._live.discard(run.process)
            await terminate(run.process)

    async def _pump(self, run: CliRun, request: ModelRequest, queue: asyncio.Queue[StreamEvent | None]) -> None:
        try:
            async for event in self.read(run, request):
                queue.put_nowait(event)
        except Exception as exc:
            queue.put_nowait(StreamError(message=f"{self.name}: reading its output failed: {exc!r}"))
        finally:
            queue.put_nowait(None)

    async def _drain_stderr(self, run: CliRun) -> None:
        assert run.process.stderr is not None
        async for raw in run.process.stderr:
            run.stderr.append(raw.decode("utf-8", "replace").rstrip())

    async def _feed(self, process: asyncio.subprocess.Process, text: str) -> None:
        assert process.stdin is not None
        with contextlib.suppress(ConnectionError):
            process.stdin.write(text.encode())
            await process.stdin.drain()
            process.stdin.close()


def _drain(queue: asyncio.Queue[StreamEvent | None]) -> list[StreamEvent | None]:
    items = []
    while not queue.empty():
        items.append(queue.get_nowait())
    return items
