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
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import ClientSession
from mcp.client._transport import ReadStream, WriteStream
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types import methods as mcp_methods
from pydantic import ValidationError

from massgen.actors.mcp.spec import MCP_MESSAGE_CAP_BYTES, McpConfigError, oversize, shown
from massgen.actors.mcp.stdio import OWNER_ENV, REAP_S, StdioServer, Streams

__all__ = ["OWNER_ENV", "McpConnection"]  # OWNER_ENV: re-exported for callers of the session
from massgen.configs.schema import McpServerConfig

# The SDK logs transport teardown noise; a library must not print it on the user's terminal.
logging.getLogger("mcp").addHandler(logging.NullHandler())

E = TypeVar("E", bound=BaseException)
_Inbound = MemoryObjectReceiveStream[SessionMessage | Exception]


def _describe(exc: BaseException) -> str:
    """An exception as one line; exception groups (anyio task groups) by their leaves."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions)
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _validation_summary(error: ValidationError, skip: int = 0, most: int = 3) -> str:
    """A pydantic error as one short line: ``inputSchema.required: Input should be a valid list``.

    ``skip`` drops that many leading parts of each location (``tools``, ``0`` for one listed tool).
    """
    found = error.errors(include_url=False, include_input=False)
    parts = [f"{'.'.join(shown(str(p), 40) for p in e['loc'][skip:]) or 'the reply'}: {e['msg']}" for e in found]
    more = f" (and {len(parts) - most} more)" if len(parts) > most else ""
    return "; ".join(parts[:most])[:600] + more


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
        self.listing = _Listing(config.name)
        self._lost: anyio.Event | None = None
        self._stage = "initialize"  # the request a start failure happened in
        self._scope: anyio.CancelScope | None = None
        self._closing = False

    @property
    def lost(self) -> bool:
        """The transport has ended (the server process exited, its output closed)."""
        return self._lost is not None and self._lost.is_set()

    def close(self) -> None:
        """Ask ``run`` to end (on the loop thread)."""
        self._closing = True
        if self._scope is not None:
            self._scope.cancel()

    def kill_now(self) -> None:
        if self.process is not None:
            self.process.kill_now()

    async def run(self, on_ready: Callable[[list[mcp_types.Tool], list[str]], None]) -> str | None:
        """Connect, list tools, call ``on_ready`` (the tools, and the names of the tools whose listing
        was refused: ``listing.notes`` says why), then hold the session until it is lost or closed.

        Returns why the connection was lost, or None when it was closed on purpose. A
        failed start raises: ``McpConfigError`` (permanent), ``TimeoutError`` (past
        ``start_timeout_seconds``) or ``ConnectionError`` saying what the server did.
        """
        lost = self._lost = anyio.Event()
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
                        self.listing.version = (await session.initialize()).protocol_version
                        self._stage = "tools/list"
                        tools = await _list_all_tools(session)
                        scope.deadline = math.inf
                        self.session = session
                        on_ready(tools, self.listing.refused)
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
        """Why the start failed. The process's exit is the cause only when the connection closed: a reply
        we refused makes us close the session, and the server then exits because we did."""
        refused = _find(failure, ValidationError) if failure is not None else None
        if refused is not None:
            return f"its reply to {self._stage} was refused: {_validation_summary(refused)}"
        error = _find(failure, MCPError) if failure is not None else None
        if error is not None and error.code != mcp_types.CONNECTION_CLOSED:
            return f"its reply to {self._stage} was an error: {_describe(error)}"
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
            async with (
                self.process.connect() as (reads, writes),
                _pump(reads, writes, lost, self.listing) as pumped,
            ):
                yield pumped
            return
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        assert self.config.url is not None
        timeout = httpx2.Timeout(self.config.start_timeout_seconds, read=300.0)
        async with (
            httpx2.AsyncClient(headers=self.config.headers, timeout=timeout) as client,
            streamable_http_client(self.config.url, http_client=client,
                                   max_sse_event_size=MCP_MESSAGE_CAP_BYTES) as (http_reads, http_writes),
            _pump(http_reads, http_writes, lost, self.listing) as http_pumped,
        ):
            yield http_pumped

    async def call(self, tool: str, arguments: dict[str, Any], timeout: float) -> mcp_types.CallToolResult:
        """One tools/call; past ``timeout`` the SDK sends ``notifications/cancelled`` and raises.

        A reply over ``MCP_MESSAGE_CAP_BYTES`` fails with ``PARSE_ERROR`` and says so, on either
        transport (the SDK's HTTP client reports its event limit as a closed connection).
        """
        if self.session is None:
            raise ConnectionError("not connected")
        try:
            return await self.session.call_tool(tool, arguments, read_timeout_seconds=timeout)
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED and "byte limit" in exc.message and not self.lost:
                raise MCPError(mcp_types.PARSE_ERROR, f"{oversize(self.config.name)} ({exc.message})") from exc
            raise

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


class _Listing:
    """Tools/list replies, read at the JSON level before the SDK's strict validation sees them.

    The SDK refuses a whole ``tools/list`` page when one tool in it does not validate, so every
    tool of the server would be lost for one bad schema. Each tool is checked on its own here,
    against the same models (the negotiated version's wire type and the SDK's ``Tool``); the ones
    that fail are taken out of the reply, and named in ``notes`` with what was wrong.
    """

    def __init__(self, server: str) -> None:
        self.server = server
        self.version = "2025-11-25"  # until initialize says which
        self.requests: set[mcp_types.RequestId] = set()
        self.refused: list[str] = []
        self.notes: list[str] = []

    def sent(self, item: SessionMessage) -> None:
        message = item.message
        if isinstance(message, mcp_types.JSONRPCRequest) and message.method == "tools/list":
            self.requests.add(message.id)

    def received(self, item: SessionMessage | Exception) -> SessionMessage | Exception:
        if not self.requests or not isinstance(item, SessionMessage):
            return item
        message = item.message
        if not isinstance(message, mcp_types.JSONRPCResponse) or message.id not in self.requests:
            return item
        self.requests.discard(message.id)
        tools = message.result.get("tools")
        if not isinstance(tools, list):
            return item  # nothing to keep: the SDK refuses the reply, and the start failure says why
        kept = [tool for tool in tools if self._valid(tool)]
        if len(kept) == len(tools):
            return item
        result = {**message.result, "tools": kept}
        return SessionMessage(message.model_copy(update={"result": result}), metadata=item.metadata)

    def _valid(self, tool: Any) -> bool:
        page = {"tools": [tool]}
        try:
            try:
                mcp_methods.validate_server_result("tools/list", self.version, page)
            except ValidationError:
                raise
            except (KeyError, ValueError):  # a version or method the SDK's table lacks: the model below still checks
                pass
            mcp_types.ListToolsResult.model_validate(page, by_name=False)
            return True
        except ValidationError as exc:
            name = tool.get("name") if isinstance(tool, dict) else None
            if isinstance(name, str):
                self.refused.append(name)
            label = f"tool '{shown(name)}'" if isinstance(name, str) else "a tool with no name"
            self.notes.append(f"MCP server {self.server!r}: {label} left out: its listing was refused: "
                              f"{_validation_summary(exc, skip=2)}")
            return False


@contextlib.asynccontextmanager
async def _pump(
    reads: ReadStream[SessionMessage | Exception], writes: WriteStream[SessionMessage], lost: anyio.Event,
    listing: _Listing,
) -> AsyncIterator[tuple[_Inbound, MemoryObjectSendStream[SessionMessage]]]:
    """Stand between the transport and the session: set ``lost`` when the inbound stream ends, and
    hand ``listing`` the tools/list requests going out and their replies coming in.

    The session itself does not tell anyone that its stream closed while no request was
    in flight; this is how the actor learns that a server went away between calls.
    """
    send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    session_writes, outbound = anyio.create_memory_object_stream[SessionMessage](0)

    async def forward() -> None:
        try:
            async with reads:
                async for item in reads:
                    await send.send(listing.received(item))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            pass
        finally:
            send.close()
            lost.set()

    async def backward() -> None:
        try:
            async with outbound:
                async for item in outbound:
                    listing.sent(item)
                    await writes.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            pass
        finally:
            outbound.close()  # the session's next send fails, as it did on the transport's own stream
            with anyio.CancelScope(shield=True):  # and the transport sees the end of what the session sends
                await writes.aclose()

    async with anyio.create_task_group() as tg:
        tg.start_soon(forward)
        tg.start_soon(backward)
        try:
            yield receive, session_writes
        finally:
            tg.cancel_scope.cancel()
            send.close()
            receive.close()
            session_writes.close()


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
