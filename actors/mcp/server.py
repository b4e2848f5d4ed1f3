"""The McpServer actor itself; see ``actors/mcp/__init__.py`` for the design and what users see."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from typing import Any, assert_never

import mcp_types
from mcp.shared.exceptions import MCPError

from massgen.actors.mcp.session import McpConnection
from massgen.actors.mcp.spec import McpConfigError, McpServerSpec, exposed_name, select_tools
from massgen.actors.runtime.dispatcher import blocking
from massgen.actors.runtime.loop_thread import run_loop
from massgen.actors.runtime.port import Peer, RunContext, TracedActor
from massgen.messages import (
    McpCallTool,
    McpCancelCall,
    McpServerFailed,
    McpToolResult,
    McpToolsListed,
    Message,
)
from massgen.messages.mcp import McpFailureKind
from massgen.messages.protocols import McpServerInbox, members
from massgen.messages.text import escape_text

_STOP_S = 2.5  # below the supervisor's stop grace, so the process is always killed in time
_PING_S = 5.0
MCP_RESULT_CAP_CHARS = 100_000  # what a model is shown of one tool result; the rest is named in a note


def render_result(result: mcp_types.CallToolResult) -> str:
    """A tool result as the text a model reads; non-text content is named, not inlined."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        elif isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
            parts.append(f"[{block.type} content, {block.mime_type}, {len(block.data)} base64 characters]")
        elif isinstance(block, mcp_types.EmbeddedResource):
            text = getattr(block.resource, "text", None)
            parts.append(text if isinstance(text, str) else f"[binary resource {block.resource.uri}]")
        elif isinstance(block, mcp_types.ResourceLink):
            parts.append(f"[resource link {block.uri}]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    escaped: list[str] = []  # the edge where an MCP server's text enters: escaped once, with a note
    text = escape_text("\n".join(parts), "MCP result", escaped) + "".join(f"\n[note: {n}]" for n in escaped)
    if len(text) > MCP_RESULT_CAP_CHARS:
        text = (text[:MCP_RESULT_CAP_CHARS]
                + f"\n[tool result cut: {MCP_RESULT_CAP_CHARS:,} of {len(text):,} characters shown]")
    return text


def _describe(exc: BaseException) -> str:
    """Our own start errors are already sentences; anything else keeps its type name."""
    text = str(exc).strip()
    if isinstance(exc, ConnectionError | TimeoutError) and text:
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class McpServerActor(TracedActor[McpServerInbox]):
    accepts = members(McpServerInbox)

    def __init__(self, ctx: RunContext, spec: McpServerSpec, incarnation: int, supervisor: Peer) -> None:
        super().__init__(ctx, spec.name, incarnation)
        self.spec = spec
        self.supervisor = supervisor
        self._loop: asyncio.AbstractEventLoop | None = None
        self._conn = McpConnection(spec.config, client_name=f"massgen:{spec.agent_id}")
        self._offered: frozenset[str] = frozenset()
        self._ready = False  # written on the loop thread, read on the actor thread
        self._closing = False
        self._failed = False
        self._lost_reason = "the connection was lost"
        self._tasks: dict[str, asyncio.Task[None]] = {}  # loop thread only
        self._finished: asyncio.Event | None = None  # set on the loop once the connection has ended

    # -- life cycle -------------------------------------------------------------------------

    def on_start(self) -> None:
        try:
            self._loop = asyncio.new_event_loop()
            threading.Thread(target=run_loop, args=(self._loop,), name=f"{self.me}-loop", daemon=True).start()
            asyncio.run_coroutine_threadsafe(self._main(), self._loop)
        except Exception as exc:  # reported, never raised: Pykka would not tell anyone
            self._report(f"could not start: {_describe(exc)}", "start")
            self.actor_ref.stop(block=False)

    def on_failure(self, exception_type: Any, exception_value: Any, traceback: Any) -> None:
        self._report(f"handler failed: {_describe(exception_value)}", "handler")
        self._shutdown()

    def on_stop(self) -> None:
        self._shutdown()

    def _shutdown(self) -> None:
        """Close the session, stop the server (stdin, SIGTERM, SIGKILL to its group) within ``_STOP_S``."""
        self._closing = True
        loop, self._loop = self._loop, None
        if loop is None:
            self._conn.kill_now()
            return
        try:
            if loop.is_running():
                with blocking():
                    asyncio.run_coroutine_threadsafe(self._close(), loop).result(_STOP_S)
        except Exception:  # a stuck loop: the kill below still works from this thread
            pass
        finally:
            self._conn.kill_now()
            loop.call_soon_threadsafe(loop.stop)

    async def _close(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        self._conn.close()
        if self._finished is not None:
            await self._finished.wait()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _main(self) -> None:
        self._finished = asyncio.Event()
        try:
            lost = await self._conn.run(self._on_ready)
            if lost is not None and not self._closing:
                self._lost_reason = lost
                self._report(lost, "exited" if self._conn.process is not None else "lost")
        except McpConfigError as exc:
            self._report(str(exc), "config", permanent=True)
        except Exception as exc:  # a failed start is this incarnation's failure
            if not self._closing:
                self._report(_describe(exc), "start")
        finally:
            self._ready = False
            self._finished.set()

    def _on_ready(self, tools: list[mcp_types.Tool], refused: list[str]) -> None:
        notes = list(self._conn.listing.notes)  # tools whose listing was refused, then select_tools' own
        offered, hidden = select_tools(self.spec, tools, notes, refused)
        self._offered = frozenset(t.name for t in offered)
        self._ready = True
        self._tell(McpToolsListed(agent=self.spec.agent_id, server=self.spec.server, tools=offered, hidden=hidden,
                                  notes=tuple(notes)))

    # -- messages (actor thread) --------------------------------------------------------------

    def handle(self, message: McpServerInbox) -> None:
        match message:
            case McpCallTool():
                full = exposed_name(self.spec.server, message.tool)
                if not self._ready or self._loop is None:
                    self._reply(message, f"MCP server {self.spec.server!r} is not connected", True)
                elif full not in self._offered:
                    self._reply(message, f"unknown tool {full!r}", True)
                else:
                    asyncio.run_coroutine_threadsafe(self._call(message), self._loop)
            case McpCancelCall():
                if self._loop is not None:  # no loop: nothing runs that could be cancelled
                    self._loop.call_soon_threadsafe(self._cancel, message.call_id)
            case _ as unreachable:
                assert_never(unreachable)

    # -- calls (loop thread) ------------------------------------------------------------------

    def _cancel(self, call_id: str) -> None:
        task = self._tasks.get(call_id)
        if task is not None:
            task.cancel()  # the SDK sends notifications/cancelled for a request the caller abandons

    async def _call(self, message: McpCallTool) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks[message.call_id] = task
        timeout = self.spec.config.call_timeout_seconds
        full = exposed_name(self.spec.server, message.tool)
        content, is_error = "", True
        try:
            result = await self._conn.call(message.tool, dict(message.arguments), timeout)
            content, is_error = render_result(result), result.is_error
        except MCPError as exc:
            if exc.code == mcp_types.REQUEST_TIMEOUT:
                content = f"{full} timed out after {timeout:g} s; the request was cancelled."
                if not self._closing and not await self._conn.ping(min(timeout, _PING_S)):
                    content += " The server stopped responding; it is being restarted."
                    self._report(f"stopped responding: no answer to a ping after {full} timed out", "hung")
            elif exc.code == mcp_types.PARSE_ERROR:  # a reply that came but could not be read: says why
                content = f"{full} failed: {exc.message}"
            elif exc.code == mcp_types.CONNECTION_CLOSED and not self._conn.lost:
                content = f"{full} failed: {exc.message}"  # this call's own stream ended; the server is still there
            elif exc.code == mcp_types.CONNECTION_CLOSED:
                if self._finished is not None:  # the failure report goes out before this result
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._finished.wait(), _STOP_S)
                content = f"MCP server {self.spec.server!r} was lost during the call: {self._lost_reason}"
            else:
                content = f"MCP error {exc.code} from {full}: {exc.message}"
        except asyncio.CancelledError:
            content = f"{full} was cancelled"
            raise
        except Exception as exc:  # every failure becomes a tool error the model can read
            content = f"{full} failed: {_describe(exc)}"
        finally:
            self._tasks.pop(message.call_id, None)
            self._reply(message, content, is_error)

    # -- reporting (any thread) -----------------------------------------------------------------

    def _reply(self, call: McpCallTool, content: str, is_error: bool) -> None:
        self._tell(McpToolResult(causation_id=call.msg_id, call_id=call.call_id, agent=call.agent,
                                 server=call.server, tool=call.tool, content=content, is_error=is_error))

    def _report(self, error: str, where: McpFailureKind, permanent: bool = False) -> None:
        if self._failed:
            return
        self._failed = True
        text = error if error.startswith("MCP server") else f"MCP server {self.spec.server!r}: {error}"
        self._tell(McpServerFailed(agent=self.spec.agent_id, server=self.spec.server, name=self.name,
                                   incarnation=self.incarnation, error=text, where=where, permanent=permanent))

    def _tell(self, message: Message) -> None:
        """Send from any thread; signed, not stamped: ``_handling`` belongs to the actor thread."""
        self.ctx.tell(self.supervisor, self.sign(message))
