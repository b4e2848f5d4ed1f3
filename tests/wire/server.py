"""A scripted HTTP/1.1 server on 127.0.0.1 for wire-protocol and fault tests.

Plain asyncio sockets rather than a web framework, because the faults under test live
below HTTP: a chunked stream cut without its terminator, a TCP reset, a request
accepted and never answered, headers and then silence, one byte at a time. Each
request takes the next scripted reply; requests are recorded for assertions. The
server runs its own event loop on a daemon thread, so tests can drive clients with
``asyncio.run`` on theirs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import struct
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    408: "Request Timeout",
    409: "Conflict",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    529: "Overloaded",
}


@dataclass(frozen=True)
class Respond:
    """A complete response with a JSON (or raw) body."""

    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Stream:
    """A 200 chunked stream of ``chunks``, then: ``done`` (proper end), ``close`` (cut, no terminator),
    ``reset`` (TCP RST) or ``hang`` (stay open, silent). ``drip_s`` sends the bytes of the chunks
    from index ``drip_from`` on one at a time with that pause between them."""

    chunks: list[bytes]
    end: Literal["done", "close", "reset", "hang"] = "done"
    drip_s: float | None = None
    drip_from: int = 0
    content_type: str = "text/event-stream"


@dataclass(frozen=True)
class Hang:
    """Read the request, then never answer (not even headers)."""


@dataclass(frozen=True)
class Endless:
    """A reply whose body never ends, as far as the client can tell: ``head``, then ``unit`` again and again,
    chunked, until the client stops reading or ``limit`` bytes were sent (then it ends, so a client with no
    cap fails its assertions instead of the machine). The body bytes sent are recorded in ``body_bytes``.
    The send buffer is small, so what was sent bounds what the client read, to within its receive buffer."""

    status: int = 200
    head: bytes = b""
    unit: bytes = b"x" * 65536
    limit: int = 64 * 1024 * 1024
    content_type: str = "text/event-stream"
    headers: dict[str, str] = field(default_factory=dict)


Reply = Respond | Stream | Hang | Endless


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


class WireServer:
    """Use as a context manager; ``url`` is ``http://127.0.0.1:PORT``."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="wire-server", daemon=True)
        self._server: asyncio.Server | None = None
        self._release: asyncio.Event | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.port = 0
        self.body_bytes: list[int] = []  # per Endless reply: the body bytes sent

    # -- lifecycle ------------------------------------------------------------------------------
    def __enter__(self) -> WireServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(5)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()

    async def _start(self) -> None:
        self._release = asyncio.Event()
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        assert self._server is not None and self._release is not None
        self._release.set()
        self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        await self._server.wait_closed()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def script(self, *replies: Reply) -> WireServer:
        with self._lock:
            self._replies.extend(replies)
        return self

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._replies)

    # -- one connection -------------------------------------------------------------------------
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while await self._one_request(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._writers.discard(writer)
            writer.transport.abort()

    async def _one_request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        recorded = await _read_request(reader)
        if recorded is None:
            return False
        with self._lock:
            self.requests.append(recorded)
            reply = self.next_reply(recorded)
        return await self._send(reply, writer)

    def next_reply(self, recorded: Recorded) -> Reply:
        """The reply to a request (called under the lock): the next scripted one."""
        if self._replies:
            return self._replies.popleft()
        return Respond(500, {"error": {"message": "wire server: no scripted reply left", "type": "server_error"}})

    async def _send(self, reply: Reply, writer: asyncio.StreamWriter) -> bool:
        assert self._release is not None
        if isinstance(reply, Hang):
            await self._release.wait()
            return False
        if isinstance(reply, Endless):
            return await self._send_endless(reply, writer)
        if isinstance(reply, Respond):
            payload = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
            head = {"content-type": "application/json", "content-length": str(len(payload)), **reply.headers}
            writer.write(_status_line(reply.status, head) + payload)
            await writer.drain()
            return True
        writer.write(
            _status_line(
                200,
                {
                    "content-type": reply.content_type,
                    "transfer-encoding": "chunked",
                    "cache-control": "no-cache",
                },
            )
        )
        await writer.drain()
        for index, chunk in enumerate(reply.chunks):
            if reply.drip_s is not None and index >= reply.drip_from:
                for byte in chunk:
                    writer.write(_chunk(bytes([byte])))
                    await writer.drain()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._release.wait(), reply.drip_s)
                    if self._release.is_set():
                        return False
            else:
                writer.write(_chunk(chunk))
                await writer.drain()
        if reply.end == "done":
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        if reply.end == "hang":
            await self._release.wait()
        elif reply.end == "reset":
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        return False


    async def _send_endless(self, reply: Endless, writer: asyncio.StreamWriter) -> bool:
        writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
        writer.transport.set_write_buffer_limits(high=64 * 1024)
        head = {"content-type": reply.content_type, "transfer-encoding": "chunked", **reply.headers}
        writer.write(_status_line(reply.status, head))
        with self._lock:
            self.body_bytes.append(0)
            slot = len(self.body_bytes) - 1
        data = reply.head or reply.unit
        try:
            while True:
                with self._lock:
                    sent = self.body_bytes[slot]
                if sent >= reply.limit:
                    break
                data = data[: reply.limit - sent]
                writer.write(_chunk(data))
                await writer.drain()
                with self._lock:
                    self.body_bytes[slot] += len(data)
                data = reply.unit
        except ConnectionError:
            return False
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True


def _status_line(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


async def _read_request(reader: asyncio.StreamReader) -> Recorded | None:
    """One HTTP/1.1 request off the socket, or None when the client closed it."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
    raw = await reader.readexactly(int(headers.get("content-length", "0") or 0))
    try:
        body: Any = json.loads(raw) if raw else None
    except ValueError:
        body = raw.decode("utf-8", "replace")
    parts = urlsplit(target)
    return Recorded(method, parts.path, parse_qs(parts.query), headers, body)
