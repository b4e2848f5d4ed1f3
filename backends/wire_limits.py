"""Bounds on every byte a model provider sends, for every HTTP client a backend builds.

A provider's reply is read by httpx (the Chat Completions wire, Gemini) or httpx2 (the
``openai`` and ``anthropic`` SDKs), and the readers above it buffer without limit: an SSE
line that never ends, an error body that never ends, a 200 body of gigabytes with no
newline. So each client a backend builds gets ``event_hooks(module)``: hooks that see every
response before its body is read (under the SDKs too, and through a proxy mount) and put
the body behind these caps, each of which ends the attempt with a ``StreamFailure`` that
names the endpoint and the cap, after reading at most the cap (plus one network chunk):

- ``MAX_EVENT_BYTES``: a successful body is read one event at a time (an SSE event ends at a
  blank line); an event, a line, or a body with neither, longer than this is not a reply;
- ``MAX_ERROR_BODY_BYTES``: a refusal (4xx/5xx) says why in a few hundred bytes; more is not
  read, and the failure keeps the status (and so its retry verdict);
- a redirect (3xx) is never followed: the request holds the prompt, and it goes only to the
  configured address; the failure names the ``Location``;
- a compressed body is decompressed here, in bounded pieces (only gzip and deflate are
  asked for), so the caps count what the readers above get, not what crossed the wire;
- ``text/html`` with a 2xx status is a web page (a proxy's login page, a wrong URL), not a
  model's stream; the failure says so.

``MAX_TOOL_ARGUMENT_CHARS`` bounds what a backend accumulates for a reply's tool-call
arguments (the stream guard, ``actors/agent/stream_guard.py``, counts them too).
"""

from __future__ import annotations

import functools
import re
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from types import ModuleType
from typing import Any

from massgen.backends.retry import StreamFailure, status_is_retryable

MAX_EVENT_BYTES = 8 * 1024 * 1024
MAX_ERROR_BODY_BYTES = 64 * 1024
# What one model reply's tool calls may carry in arguments, all calls together.
MAX_TOOL_ARGUMENT_CHARS = 1_000_000
_PIECE = 64 * 1024  # decompressed output per step
_ACCEPTED_ENCODINGS = "gzip, deflate"
# A blank line: one line terminator (CRLF, LF, or a CR not before LF) right after another.
_BLANK_LINE = re.compile(rb"\r\n[\r\n]|\n[\r\n]|\r\r")


def origin(url: Any) -> str:
    """``scheme://host:port`` of an httpx(2) URL."""
    port = url.port or (443 if url.scheme == "https" else 80)
    return f"{url.scheme}://{url.host}:{port}"


def tool_arguments_failure(endpoint: str) -> StreamFailure:
    """The failure of a reply whose tool-call arguments passed ``MAX_TOOL_ARGUMENT_CHARS``."""
    return StreamFailure(f"{endpoint}: the reply's tool-call arguments passed {MAX_TOOL_ARGUMENT_CHARS} characters "
                         "(the cap on one reply's tool arguments); the rest was not read", retryable=True)


def event_hooks(http: ModuleType) -> dict[str, list[Callable[[Any], Awaitable[None]]]]:
    """The ``event_hooks`` of an ``http.AsyncClient`` (``http`` is httpx or httpx2) that bound its replies."""
    body_class = _body_class(http)

    async def on_request(request: Any) -> None:
        request.headers["accept-encoding"] = _ACCEPTED_ENCODINGS

    async def on_response(response: Any) -> None:
        await _bound(response, body_class)

    return {"request": [on_request], "response": [on_response]}


def http_module(client_class: Any) -> ModuleType:
    """httpx or httpx2: the library of an SDK's ``AsyncClient`` subclass."""
    import importlib

    for cls in client_class.__mro__:
        if cls.__name__ == "AsyncClient" and cls.__module__.partition(".")[0] in ("httpx", "httpx2"):
            return importlib.import_module(cls.__module__.partition(".")[0])
    raise TypeError(f"{client_class!r} is not an httpx or httpx2 AsyncClient")


async def _bound(response: Any, body_class: type[Any]) -> None:
    endpoint = origin(response.request.url)
    status = int(response.status_code)
    failure: StreamFailure | None = None
    if 300 <= status < 400:
        location = response.headers.get("location", "")
        failure = StreamFailure(
            f"{endpoint} answered {status} redirecting to {location[:300]!r}: not followed (the request holds the "
            "prompt and goes only to the configured address; set base_url to the address meant)", status=status)
    elif status < 300 and response.headers.get("content-type", "").lower().startswith("text/html"):
        failure = StreamFailure(f"{endpoint} answered {status} with a web page (text/html), not a model's stream:"
                                " is base_url right?", retryable=True)
    encoding = response.headers.get("content-encoding", "").strip().lower()
    decoder: Any = None
    if failure is None and encoding not in ("", "identity"):
        if encoding in ("gzip", "x-gzip", "deflate"):
            decoder = zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib, by its header
            del response.headers["content-encoding"]
        else:
            failure = StreamFailure(f"{endpoint} sent its body in Content-Encoding {encoding[:60]!r}, which was not "
                                    f"asked for (only {_ACCEPTED_ENCODINGS})", status=status if status >= 400 else None,
                                    retryable=status_is_retryable(status) if status >= 400 else True)
    if failure is not None:
        await response.aclose()
        raise failure
    response.stream = body_class(response.stream, _bounded(response.stream, endpoint, status, decoder))


@functools.cache
def _body_class(http: ModuleType) -> type[Any]:
    class BoundedBody(http.AsyncByteStream):  # type: ignore[misc,name-defined]
        """The body as ``_bounded`` lets it through; closing it closes the connection's stream."""

        def __init__(self, raw: Any, body: AsyncIterator[bytes]) -> None:
            self._raw = raw
            self._body = body

        def __aiter__(self) -> AsyncIterator[bytes]:
            return self._body

        async def aclose(self) -> None:
            await self._raw.aclose()

    return BoundedBody


async def _bounded(raw: Any, endpoint: str, status: int, decoder: Any) -> AsyncIterator[bytes]:
    """``raw``'s bytes (decompressed), ending in a ``StreamFailure`` past a cap (see the module docstring)."""
    error = status >= 400
    total = 0  # of an error body
    open_event = 0  # bytes since the last blank line
    tail = b""
    async for chunk in raw:
        for data in _pieces(decoder, chunk, endpoint):
            if error:
                total += len(data)
                if total > MAX_ERROR_BODY_BYTES:
                    raise StreamFailure(
                        f"{endpoint} answered {status} with an error body over {MAX_ERROR_BODY_BYTES} bytes (the cap "
                        "on an error body); the rest was not read", status=status,
                        retryable=status_is_retryable(status), kind="http")
            else:
                window = tail + data
                end = -1
                for match in _BLANK_LINE.finditer(window):
                    end = match.end()
                open_event = len(window) - end if end >= 0 else open_event + len(data)
                if open_event > MAX_EVENT_BYTES:
                    raise StreamFailure(
                        f"{endpoint} sent a reply with no event end (blank line) in {MAX_EVENT_BYTES} bytes (the cap "
                        "on one stream event, or on a body that is not a stream); the rest was not read",
                        retryable=True)
                tail = window[-3:]
            yield data
    if decoder is not None:
        rest = decoder.flush()
        if rest:
            yield rest


def _pieces(decoder: Any, chunk: bytes, endpoint: str) -> Iterator[bytes]:
    """``chunk`` itself, or what it decompresses to, in pieces of at most ``_PIECE`` bytes (lazily: a small
    chunk that expands enormously is stopped by the caps, never expanded whole)."""
    if decoder is None:
        if chunk:
            yield chunk
        return
    data = chunk
    while data:
        try:
            piece = decoder.decompress(data, _PIECE)
        except zlib.error as exc:
            raise StreamFailure(f"{endpoint} sent a malformed compressed body: {exc}", retryable=True) from None
        if piece:
            yield piece
        data = decoder.unconsumed_tail
