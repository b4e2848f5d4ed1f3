"""An agent's MCP tools: what its model is offered, and its calls in flight.

Lives on the agent's event loop (the actor hands it messages with
``call_soon_threadsafe``), so the turn worker awaits a tool result like any other
coroutine while the agent's mailbox stays free. Calls go out as ``McpCallTool``
messages through the supervisor, which routes them to the live server incarnation;
results come back as ``McpToolResult`` and resolve the waiting future.

The McpServer actor enforces each call's deadline and cancels the request the MCP way;
the wait here has a longer backstop only for the case where no reply can come at all.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from massgen.actors.agent.turn_io import TurnIO
from massgen.actors.mcp.spec import exposed_name
from massgen.configs.schema import McpServerConfig
from massgen.messages import McpCallTool, McpCancelCall, McpToolResult, McpToolsListed, McpToolsWithdrawn, Message
from massgen.messages.stream import ToolSpec

Emit = Callable[[Message], None]  # a message built with its cause; the agent signs and sends it

_BACKSTOP_S = 10.0


class AgentTools:
    def __init__(self, agent_id: str, incarnation: int, servers: Sequence[McpServerConfig], io: TurnIO,
                 emit: Emit) -> None:
        self.agent_id = agent_id
        self.servers = {s.name: s for s in servers}
        self.io = io
        self.emit = emit
        self.cause = ""
        self._tools: dict[str, tuple[ToolSpec, ...]] = {}
        self._withdrawn: dict[str, str] = {}
        self._calls: dict[str, asyncio.Future[tuple[str, bool]]] = {}
        self._ids = (f"{agent_id}#{incarnation}:mcp{n}" for n in itertools.count(1))
        self._settled = asyncio.Event()
        self._ready_cap = max((s.start_timeout_seconds for s in servers), default=0.0)
        self._fixed = io.extra_tools  # tools offered before these (the file tools), kept first
        self._update()

    # -- messages, on the loop thread ----------------------------------------------------------

    def on_message(self, message: Message) -> None:
        if isinstance(message, McpToolsListed) and message.server in self.servers:
            self._tools[message.server] = message.tools
            self._withdrawn.pop(message.server, None)
            self._update()
        elif isinstance(message, McpToolsWithdrawn) and message.server in self.servers:
            self._tools.pop(message.server, None)
            self._withdrawn[message.server] = message.reason
            self._update()
        elif isinstance(message, McpToolResult):
            future = self._calls.get(message.call_id)
            if future is not None and not future.done():
                future.set_result((message.content, message.is_error))

    def _update(self) -> None:
        """The model is offered exactly the listed tools of the servers not withdrawn, in config order."""
        self.io.extra_tools = self._fixed + tuple(t for name in self.servers for t in self._tools.get(name, ()))
        if all(name in self._tools or name in self._withdrawn for name in self.servers):
            self._settled.set()

    # -- the turn worker ---------------------------------------------------------------------------

    async def ready_then(self, turn: Coroutine[Any, Any, None], cause: str) -> None:
        """Run ``turn`` once every server has listed its tools or been withdrawn.

        So the first model call already sees the tools. The wait is capped: a server
        still restarting after that joins the turn at a later model call.
        """
        self.cause = cause
        try:
            if not self._settled.is_set():
                try:
                    await asyncio.wait_for(self._settled.wait(), self._ready_cap)
                except TimeoutError:
                    pass
        except BaseException:
            turn.close()
            raise
        await turn

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        server = next((s for s in self.servers.values() if name.startswith(exposed_name(s.name, ""))), None)
        if server is None:
            return f"unknown tool {name!r}", True
        if server.name in self._withdrawn:
            return f"{name} is unavailable: {self._withdrawn[server.name]}", True
        if name not in {t.name for t in self._tools.get(server.name, ())}:
            return f"unknown tool {name!r}", True
        call_id = next(self._ids)
        future: asyncio.Future[tuple[str, bool]] = asyncio.get_running_loop().create_future()
        self._calls[call_id] = future
        self.emit(McpCallTool(causation_id=self.cause, call_id=call_id, agent=self.agent_id, server=server.name,
                              tool=name[len(exposed_name(server.name, "")):], arguments=arguments))
        backstop = 2 * server.call_timeout_seconds + _BACKSTOP_S
        try:
            return await asyncio.wait_for(future, backstop)
        except TimeoutError:
            self.emit(McpCancelCall(causation_id=self.cause, call_id=call_id, agent=self.agent_id,
                                    server=server.name, reason=f"no reply within {backstop:g} s"))
            return f"{name}: no reply from MCP server {server.name!r} within {backstop:g} s", True
        except asyncio.CancelledError:
            self.emit(McpCancelCall(causation_id=self.cause, call_id=call_id, agent=self.agent_id,
                                    server=server.name, reason="the turn was cancelled"))
            raise
        finally:
            self._calls.pop(call_id, None)
