"""The workflow tools (``new_answer``, ``vote``) served over MCP, for agents that run as CLIs.

An agent CLI (Claude Code, Antigravity) runs its own tool loop, so the workflow calls
cannot be read off a model stream: they reach us as MCP ``tools/call`` requests on a
loopback streamable-HTTP server of ours. Each backend instance owns one server on a
free port of 127.0.0.1, run by uvicorn on a daemon thread with its own event loop, so
the backend's loop (the agent's) is never blocked by HTTP work.

Per model call the backend ``begin``s a turn with the request's tools: the tool list
the CLI sees is exactly the request's workflow tools (the vote ``agent_id`` enum is the
request's vote targets; ``new_answer`` is absent when the request lacks it). Each valid
call becomes a ``ToolCallEvent`` handed to the backend's ``deliver`` callback before the
CLI gets its acknowledgement, so the event is always on the stream before the CLI can
finish. Only the first valid call of a turn counts (a turn ends in exactly one); later
ones are told the turn is over.

The SDK's low-level ``Server`` is used rather than ``MCPServer``: the tool schemas change
with every request (a decorator-built tool has one fixed schema), and ``MCPServer()``
configures the root logger with ``logging.basicConfig`` as a side effect, which would
change logging for the whole ``massgen`` process.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server import Server, ServerRequestContext

from massgen.backends.base import BackendError
from massgen.messages.stream import ToolCall, ToolCallEvent, ToolSpec
from massgen.messages.workflow import AGENT_ID, CONTENT, NEW_ANSWER, WORKFLOW_TOOLS, vote_target

SERVER_NAME = "massgen"
_START_TIMEOUT_S = 10.0
_STOP_TIMEOUT_S = 3.0

Deliver = Callable[[ToolCallEvent], None]


def queue_deliverer(queue: asyncio.Queue[Any], loop: asyncio.AbstractEventLoop) -> Deliver:
    """A ``Deliver`` that puts events on ``queue`` from any thread, in call order."""

    def deliver(event: ToolCallEvent) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, event)

    return deliver


def tool_name(name: str) -> str:
    """How a CLI names our tool (``mcp__<server>__<tool>``, the Claude Code convention)."""
    return f"mcp__{SERVER_NAME}__{name}"


class _Turn:
    """What one model call may do: its tools, where calls go, and whether one was made."""

    def __init__(self, tools: dict[str, ToolSpec], deliver: Deliver) -> None:
        self.tools = tools
        self.deliver = deliver
        self.recorded: str | None = None


class WorkflowToolServer:
    """One loopback MCP server for one backend; ``start``/``aclose`` bound its life."""

    def __init__(self, agent_id: str) -> None:
        self.agent_id = agent_id
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._turn: _Turn | None = None
        self._uvicorn: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._port = 0
        self._failure: BaseException | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}/mcp"

    # -- life cycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Bind a free port, serve on a daemon thread, and return once it accepts requests."""
        if self._thread is not None:
            return
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self._port = sock.getsockname()[1]
        server = Server(SERVER_NAME, on_list_tools=self._list_tools, on_call_tool=self._call_tool)
        # Stateless JSON replies: every request stands alone, so no stream is held open and
        # shutdown never waits on a client's idle GET.
        app = server.streamable_http_app(stateless_http=True, json_response=True, host="127.0.0.1")
        config = uvicorn.Config(
            app, log_config=None, log_level="warning", access_log=False, lifespan="on",
            timeout_graceful_shutdown=1,
        )
        self._uvicorn = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._serve, args=(self._uvicorn, sock), name=f"{self.agent_id}-workflow-mcp", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not self._uvicorn.started:
            problem = None
            if self._failure is not None or not self._thread.is_alive():
                problem = f"failed: {self._failure!r}"
            elif time.monotonic() > deadline:
                problem = f"did not start within {_START_TIMEOUT_S:.0f}s"
            if problem is not None:
                await self.aclose()
                raise BackendError(f"the workflow MCP server on 127.0.0.1:{self._port} {problem}")
            await asyncio.sleep(0.01)

    def _serve(self, server: uvicorn.Server, sock: socket.socket) -> None:
        try:
            asyncio.run(server.serve(sockets=[sock]))
        except BaseException as exc:
            self._failure = exc
        finally:
            sock.close()

    async def aclose(self) -> None:
        """Ask uvicorn to exit and wait (briefly, without blocking the loop) for its thread."""
        server, thread = self._uvicorn, self._thread
        self._uvicorn = self._thread = None
        self.end()
        if server is None or thread is None:
            return
        server.should_exit = True
        deadline = time.monotonic() + _STOP_TIMEOUT_S
        while thread.is_alive() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        if thread.is_alive():
            server.force_exit = True
            thread.join(1.0)

    # -- one model call -------------------------------------------------------------------------

    def begin(self, tools: tuple[ToolSpec, ...], deliver: Deliver) -> None:
        """Offer the request's workflow tools until ``end``; valid calls go to ``deliver``."""
        offered = {t.name: t for t in tools if t.name in WORKFLOW_TOOLS}
        with self._lock:
            self._turn = _Turn(offered, deliver)

    def end(self) -> None:
        with self._lock:
            self._turn = None

    @property
    def recorded(self) -> str | None:
        """The workflow call made in the current turn, if any."""
        with self._lock:
            return self._turn.recorded if self._turn else None

    # -- MCP handlers (on the server thread) -------------------------------------------------------

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        with self._lock:
            specs = list(self._turn.tools.values()) if self._turn else []
        return types.ListToolsResult(
            tools=[types.Tool(name=s.name, description=s.description, input_schema=s.parameters) for s in specs]
        )

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        with self._lock:
            turn = self._turn
            if turn is None:
                return _reply("No turn is in progress; nothing was recorded.", error=True)
            spec = turn.tools.get(params.name)
            if spec is None:
                offered = ", ".join(turn.tools) or "none"
                return _reply(f"{params.name} is not available now (offered: {offered}).", error=True)
            problem = _check(spec, arguments)
            if problem is not None:
                return _reply(problem, error=True)
            if turn.recorded is not None:
                return _reply(f"Your turn already ended with {turn.recorded}; nothing more was recorded. Stop now.")
            turn.recorded = params.name
            call = ToolCall(
                id=f"mcp_{self.agent_id}_{next(self._ids)}", name=params.name, arguments=arguments,
                raw_arguments=json.dumps(arguments),
            )
            # Delivered before the acknowledgement: the event is queued before the CLI can exit.
            try:
                turn.deliver(ToolCallEvent(call=call))
            except RuntimeError:  # the backend's loop is gone: nobody is listening any more
                return _reply("The turn is over; nothing was recorded.", error=True)
        what = "Answer" if params.name == NEW_ANSWER else "Vote"
        return _reply(f"{what} recorded. Your turn is complete: do not call any more tools; stop now.")


def _check(spec: ToolSpec, arguments: dict[str, Any]) -> str | None:
    """The argument errors a model can fix in the same session (the turn runner re-checks)."""
    if spec.name == NEW_ANSWER:
        content = arguments.get(CONTENT)
        if not isinstance(content, str) or not content.strip():
            return "new_answer needs a non-empty 'content' string."
        return None
    properties = spec.parameters.get("properties", {})
    targets = [str(t) for t in properties.get(AGENT_ID, {}).get("enum", [])]
    label = vote_target(arguments.get(AGENT_ID))
    if (targets and label not in targets) or not label:
        return f"vote agent_id must be one of: {', '.join(targets) or '(no answers yet)'}."
    return None


def _reply(text: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)
