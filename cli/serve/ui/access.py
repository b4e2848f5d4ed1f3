"""Who may use the Web UI: a per-launch token, the Host it is reached by, and the Origin of writes.

The token is made fresh at every launch and printed in the URL; the first visit trades
it for an HttpOnly, SameSite=Strict cookie, so the token leaves the address bar and no
other site can ride on it. ``Host`` must name this server and every POST
must carry an ``Origin`` equal to the page's own (``cli/serve/same_origin.py``, the checks
every route of the server makes). The token is compared in constant time.

With ``--api-key`` the token *is* that key (``UiAccess(token=api_key)``): then every route of
the server, ``/ui`` included, is guarded by the one key, the printed URL leaves it out
(``?token=<your API key>``), and scripts may send it as ``Authorization: Bearer`` instead.
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


@dataclass(frozen=True)
class UiAccess:
    token: str = field(default_factory=new_token, repr=False)
    bind_host: str = "127.0.0.1"

    def cookie_name(self, request: Request) -> str:
        """Per port: cookies ignore ports, and two servers on one host must not overwrite each other's."""
        return f"massgen_ui_{request.url.port or 0}"

    def _matches(self, given: str | None) -> bool:
        return bool(given) and hmac.compare_digest(str(given).encode("utf-8"), self.token.encode("utf-8"))

    def check(self, request: Request) -> bool:
        """Raise 403 (wrong host, token or origin) or 401 (no token); True when the token came in the URL."""
        check_host(request, self.bind_host)
        check_origin(request, required=request.method == "POST")
        from_url = request.query_params.get("token")
        scheme, _, bearer = request.headers.get("authorization", "").partition(" ")
        given = from_url or request.cookies.get(self.cookie_name(request)) or (
            bearer.strip() if scheme.lower() == "bearer" else None)
        if not given:
            raise ApiError(401, "open the URL with ?token=... that `massgen serve --ui` printed",
                           code="missing_token")
        if not self._matches(given):
            raise ApiError(403, "wrong UI token", code="invalid_token")
        return bool(from_url)
