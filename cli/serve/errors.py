"""Errors in OpenAI's JSON shape, so every OpenAI client maps them to its own exception types.

``{"error": {"message", "type", "param", "code"}}`` with the status the SDKs key on:
400 BadRequestError, 401 AuthenticationError, 404 NotFoundError, 413, 422
UnprocessableEntityError, 429 RateLimitError (with ``Retry-After``), 500/502/503
InternalServerError. A 5xx says ``x-should-retry: false``: it is our bug, a run that failed, or
(502) model servers that could not be reached or refused for good, and a blind retry would only
pay for the same failure again.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response

log = logging.getLogger("massgen.serve")

_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    404: "invalid_request_error",
    405: "invalid_request_error",
    408: "invalid_request_error",
    413: "invalid_request_error",
    415: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
    500: "server_error",
    502: "server_error",
    503: "server_error",
}


class ApiError(Exception):
    """An error meant for the client; ``headers`` are added to the response."""

    def __init__(self, status: int, message: str, *, code: str | None = None, param: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.param = param
        self.headers = dict(headers or {})

    def body(self) -> dict[str, Any]:
        return {"error": {"message": _printable(self.message),
                          "type": _TYPES.get(self.status, "invalid_request_error"),
                          "param": _printable(self.param), "code": self.code}}


def _printable(text: str | None) -> str | None:
    """``text`` with what UTF-8 cannot carry (lone surrogates echoed from a request) escaped."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8") if text else text


def error_response(error: ApiError, request_id: str | None = None) -> JSONResponse:
    headers = dict(error.headers)
    if error.status >= 500:
        headers.setdefault("x-should-retry", "false")
    if request_id:
        headers["x-request-id"] = request_id
    return JSONResponse(error.body(), status_code=error.status, headers=headers)


def internal_error(request_id: str | None = None) -> JSONResponse:
    """What an unexpected exception becomes: no traceback or path leaks to the client."""
    return error_response(ApiError(500, "internal server error; see the server log", code="internal_error"),
                          request_id)


async def answered(request: Request, rid: str, call: Callable[[], Awaitable[Response]]) -> Response:
    """One request's reply: ``ApiError`` in OpenAI's shape, anything else a logged 500, the id on every reply."""
    try:
        response = await call()
    except ClientDisconnect:  # gone while sending the body: nobody to answer
        return Response(status_code=499)
    except ApiError as exc:
        if exc.status >= 500:
            log.error("request_id=%s %s %s: %s", rid, request.method, request.url.path, exc.message)
        return error_response(exc, rid)
    except Exception:
        log.exception("request_id=%s %s %s failed", rid, request.method, request.url.path)
        return internal_error(rid)
    response.headers["x-request-id"] = rid
    return response
