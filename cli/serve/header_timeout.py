"""uvicorn's HTTP/1.1 protocol with a deadline on reading a request's headers.

uvicorn bounds an idle keep-alive connection but not a request whose headers arrive
slowly or never: a client that sends half a request line holds a connection (and a file
descriptor) for as long as it likes. This protocol gives every request ``timeout_s`` from
the connection (or the previous response) to its last header byte, then answers 408 and
closes. The body has its own deadline in the app (``Limits.body_timeout_s``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

_TIMEOUT_BODY = (b'{"error": {"message": "the request headers did not arrive in time", '
                 b'"type": "invalid_request_error", "param": null, "code": "request_timeout"}}')
_TIMEOUT_REPLY = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\n"
                  b"content-length: %d\r\n\r\n%s" % (len(_TIMEOUT_BODY), _TIMEOUT_BODY))


class HeaderTimeoutProtocol(H11Protocol):
    timeout_s: float = 10.0
    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        if self.conn.their_state is not h11.IDLE:  # the headers are in: the app takes over
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._arm()  # the next request on this connection has the same deadline

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self.timeout_s, self._headers_late)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.write(_TIMEOUT_REPLY)
            self.transport.close()


def with_timeout(seconds: float) -> Any:
    """The protocol class to hand ``uvicorn.Config(http=...)``."""
    return type("HeaderTimeoutProtocol", (HeaderTimeoutProtocol,), {"timeout_s": seconds})
