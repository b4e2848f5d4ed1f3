"""The client side of one MCP server connection, run on the McpServer actor's event loop.

The SDK's ``ClientSession`` speaks the protocol (initialize, tools/list, tools/call with
its deadline and ``notifications/cancelled``, ping). The stdio transport and the server
process are ours (``actors/mcp/stdio.py``); streamable HTTP is the SDK's.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import anyio
import mcp_types
from anyio.streams.memory import MemoryObjectReceiveStream
from mcp import ClientSession
from mcp.shared.message import SessionMessage

from massgen.actors.mcp.spec import McpConfigError
from massgen.actors.mcp.stdio import OWNER_ENV, REAP_S, StdioServer, Streams

__all__ = ["OWNER_ENV", "McpConnection"]  # OWNER_ENV: re-exported for callers of the session
from massgen.configs.schema import McpServerConfig

# The SDK logs transport teardown noise; a library must not print it on the user's terminal.
logging.getLogger("mcp").addHandler(logging.NullHandler())

E = TypeVar("E", bound=BaseException)


def _describe(exc: BaseException) -> str:
    """An exception as one line; exception groups (anyio task groups) by their leaves."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions)
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _find(exc: BaseException, kind: type[E]) -> E | None:
    """``exc`` itself or the first ``kind`` inside (nested) exception groups."""
    if isinstance(exc, kind):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _find(inner, kind)
            if found is not None:
                return found
    return None


class McpConnection:
    """One session with one server: connect, initialise, list tools, call, ping, close.

    A stdio server that dies is noticed at once, call or no call. A streamable-HTTP
    server that goes away between calls is noticed by the next call (there is no process
    to watch), which then fails as "lost" and the server is restarted the same way.

    ``run`` holds every resource in one task and one cancel scope, so closing is
    "cancel the scope" and the start deadline is that scope's deadline; anyio requires
    that nesting, and it means no exit path can skip killing the server.
    """

    def __init__(self, config: McpServerConfig, client_name: str) -> None:
        self.config = config
        self.client_name = client_name
        self.process: StdioServer | None = StdioServer(config) if config.type == "stdio" else None
        self.session: ClientSession | None = None
        self.lost_reason: str | None = None
        self._scope: anyio.CancelScope | None = None
        self._closing = False

    def close(self) -> None:
        """Ask ``run`` to end (on the loop thread)."""
        self._closing = True
        if self._scope is not None:
            self._scope.cancel()

    def kill_now(self) -> None:
        if self.process is not None:
            self.process.kill_now()

    async def run(self, on_ready: Callable[[list[mcp_types.Tool]], None]) -> str | None:
        """Connect, list tools, call ``on_ready``, then hold the session until it is lost or closed.

        Returns why the connection was lost, or None when it was closed on purpose. A
        failed start raises: ``McpConfigError`` (permanent), ``TimeoutError`` (past
        ``start_timeout_seconds``) or ``ConnectionError`` saying what the server did.
        """
        lost = anyio.Event()
        started = False
        failure: Exception | None = None
        with anyio.CancelScope() as scope:
            self._scope = scope
            if self._closing:
                scope.cancel()
            scope.deadline = anyio.current_time() + self.config.start_timeout_seconds
            try:
                async with self._transport(lost) as (reads, writes):
                    info = mcp_types.Implementation(name=self.client_name, version="1")
                    async with ClientSession(reads, writes, client_info=info) as session:
                        await session.initialize()
                        tools = await _list_all_tools(session)
                        scope.deadline = math.inf
                        self.session = session
                        on_ready(tools)
                        started = True
                        await lost.wait()
                        if self.process is not None:  # EOF can come a moment before the exit status
                            with anyio.move_on_after(REAP_S):
                                await self.process.exited.wait()
                        self.lost_reason = self._describe_loss()
            except Exception as exc:
                config_error = _find(exc, McpConfigError)  # task groups wrap what the body raised
                if config_error is not None:
                    raise config_error from None
                if started:
                    raise
                failure = exc
            finally:
                self.session = None
        if self._closing:
            return None
        if not started:
            if scope.cancelled_caught:
                raise TimeoutError(f"did not finish starting within {self.config.start_timeout_seconds:g} s")
            raise ConnectionError(self._describe_start_failure(failure))
        return self.lost_reason

    def _describe_start_failure(self, failure: Exception | None) -> str:
        if self.process is not None and self.process.exited.is_set():
            return self.process.exit_detail(" before it finished starting")
        text = _describe(failure) if failure is not None else "the connection closed"
        if self.process is not None:
            return f"{text}; {self.process.exit_detail()}"
        return f"cannot reach {self.config.url}: {text}"

    def _describe_loss(self) -> str:
        if self.process is not None:
            return self.process.exit_detail()
        return f"the connection to {self.config.url} was closed"

    @contextlib.asynccontextmanager
    async def _transport(self, lost: anyio.Event) -> AsyncIterator[Streams]:
        """The transport's streams, with ``lost`` set when the server side goes away."""
        if self.process is not None:
            async with self.process.connect() as (reads, writes), _pump(reads, lost) as pumped:
                yield pumped, writes
            return
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        assert self.config.url is not None
        timeout = httpx2.Timeout(self.config.start_timeout_seconds, read=300.0)
        async with (
            httpx2.AsyncClient(headers=self.config.headers, timeout=timeout) as client,
            streamable_http_client(self.config.url, http_client=client) as (http_reads, http_writes),
            _pump(http_reads, lost) as http_pumped,
        ):
            yield http_pumped, http_writes

    async def call(self, tool: str, arguments: dict[str, Any], timeout: float) -> mcp_types.CallToolResult:
        """One tools/call; past ``timeout`` the SDK sends ``notifications/cancelled`` and raises."""
        if self.session is None:
            raise ConnectionError("not connected")
        return await self.session.call_tool(tool, arguments, read_timeout_seconds=timeout)

    async def ping(self, timeout: float) -> bool:
        session = self.session
        if session is None:
            return False
        with anyio.move_on_after(timeout):
            try:
                await session.send_ping()
            except Exception:  # any failure means "not answering"
                return False
            return True
        return False


@contextlib.asynccontextmanager
async def _pump(
    reads: Any, lost: anyio.Event
) -> AsyncIterator[MemoryObjectReceiveStream[SessionMessage | Exception]]:
    """Forward the transport's inbound stream to the session; set ``lost`` when it ends.

    The session itself does not tell anyone that its stream closed while no request was
    in flight; this is how the actor learns that a server went away between calls.
    """
    send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

    async def forward() -> None:
        try:
            async with reads:
                async for item in reads:
                    await send.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            pass
        finally:
            send.close()
            lost.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(forward)
        try:
            yield receive
        finally:
            tg.cancel_scope.cancel()
            send.close()
            receive.close()


async def _list_all_tools(session: ClientSession) -> list[mcp_types.Tool]:
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    for _ in range(100):  # a paginator that never ends must not hang the start
        params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools
