"""Who may use the Web UI: a token in a header, the Host it is reached by, and the Origin of writes.

The credential is bound to this server's origin, port included. A browser sends a cookie to every
port of its host (ports count neither for cookies nor for SameSite), so any other local server, a dev
server an agent started say, would receive one: there is no cookie. Instead:

- ``token`` unlocks the UI: fresh at every launch and printed in the URL, or with ``--api-key`` the key
  itself (``UiAccess(token=api_key)``, from ``serve.main``).
- The page trades it once (``POST /ui/api/session``) for ``session``, a second random token made at
  launch: never the API key. The tab keeps it in ``sessionStorage`` (per origin, port included) and
  sends it as ``Authorization: Bearer`` on every ``/ui/api`` request, the event stream included.
- Scripts may send either token as ``Authorization: Bearer``.

``Host`` must name this server and every POST must carry an ``Origin`` equal to the page's own
(``cli/serve/same_origin.py``, the checks every route of the server makes). The page itself and its
static files hold no data and need no token (a browser cannot add a header to a page load or a
``<script src>``); a wrong ``?token=`` in the page's URL is still refused. Tokens are compared in
constant time.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field

from starlette.requests import Request

from massgen.cli.serve.errors import ApiError
from massgen.cli.serve.same_origin import check_host, check_origin


def new_token() -> str:
    return secrets.token_urlsafe(24)


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


@dataclass(frozen=True)
class UiAccess:
    token: str = field(default_factory=new_token, repr=False)
    bind_host: str = "127.0.0.1"
    session: str = field(default_factory=new_token, repr=False)

    def _bearer(self, request: Request) -> str | None:
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        return value.strip() if scheme.lower() == "bearer" and value.strip() else None

    def _known(self, given: str) -> bool:
        return _same(given, self.token) | _same(given, self.session)  # both compared, whichever matches

    def check(self, request: Request) -> None:
        """For ``/ui/api``: 403 (wrong host, token or origin) or 401 (no token in the header)."""
        check_host(request, self.bind_host)
        check_origin(request, required=request.method == "POST")
        given = self._bearer(request)
        if not given:
            raise ApiError(401, "send the UI token as 'Authorization: Bearer <token>': open the URL "
                                "`massgen serve --ui` printed", code="missing_token")
        if not self._known(given):
            raise ApiError(403, "wrong UI token", code="invalid_token")

    def check_page(self, request: Request) -> None:
        """For the page and its static files: this server's host; a token in the URL must be right."""
        check_host(request, self.bind_host)
        check_origin(request, required=False)
        given = request.query_params.get("token")
        if given is not None and not self._known(given):
            raise ApiError(403, "wrong UI token", code="invalid_token")

    def trade(self, request: Request, given: object) -> str:
        """The page's sign-in (a POST from its own origin): the printed token or the key for ``session``."""
        check_host(request, self.bind_host)
        check_origin(request, required=True)
        if not isinstance(given, str) or not given:
            raise ApiError(401, "'token' must be the UI token `massgen serve --ui` printed", code="missing_token",
                           param="token")
        if not self._known(given):
            raise ApiError(403, "wrong UI token", code="invalid_token")
        return self.session
