"""Who may call, and which request this is: bearer keys and ``x-request-id``.

The key comparison is constant-time (``hmac.compare_digest`` on bytes) so response
timing does not reveal how much of a guessed key was right. A request id sent by the
client is kept when it is short and plain (it ends up in logs), else one is made up.
"""

from __future__ import annotations

import hmac
import re
import uuid

from starlette.requests import Request

from massgen.cli.serve.errors import ApiError

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")


def request_id(request: Request) -> str:
    """The client's ``x-request-id`` when it is fit for a log line, else a fresh one."""
    given = request.headers.get("x-request-id", "")
    return given if _REQUEST_ID.match(given) else f"req_{uuid.uuid4().hex}"


def check_bearer(request: Request, api_key: str | None) -> None:
    """Raise a 401 unless ``Authorization: Bearer <api_key>`` was sent (no key configured: open)."""
    if not api_key:
        return
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    challenge = {"www-authenticate": 'Bearer realm="massgen"'}
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(401, "missing bearer token: send 'Authorization: Bearer <key>'",
                       code="invalid_api_key", headers=challenge)
    if not hmac.compare_digest(token.strip().encode("utf-8"), api_key.encode("utf-8")):
        raise ApiError(401, "incorrect API key", code="invalid_api_key", headers=challenge)
