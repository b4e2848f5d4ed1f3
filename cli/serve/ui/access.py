"""Who may use the Web UI: a per-launch token, the Host it is reached by, and the Origin of writes.

The token is made fresh at every launch and printed in the URL; the first visit trades
it for an HttpOnly, SameSite=Strict cookie, so the token leaves the address bar and no
other site can ride on it. ``Host`` must name this server (a loopback name, or the
address it was told to bind), which stops DNS-rebinding pages from reading the API
(bound to every address, which needs ``--api-key``, any name may reach it). Every POST
must also carry an ``Origin`` equal to the page's own, which stops cross-site form
posts. The token is compared in constant time.

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

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})


def new_token() -> str:
    return secrets.token_urlsafe(24)


@dataclass(frozen=True)
class UiAccess:
    token: str = field(default_factory=new_token, repr=False)
    bind_host: str = "127.0.0.1"

    def cookie_name(self, request: Request) -> str:
        """Per port: cookies ignore ports, and two servers on one host must not overwrite each other's."""
        return f"massgen_ui_{request.url.port or 0}"

    def _host_ok(self, request: Request) -> bool:
        if self.bind_host in WILDCARD_HOSTS:  # any name may reach it (--api-key is required there)
            return True
        host = request.headers.get("host", "")
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        allowed = LOOPBACK_NAMES | {self.bind_host, f"[{self.bind_host}]"}
        return bool(name) and name.lower() in allowed

    def _matches(self, given: str | None) -> bool:
        return bool(given) and hmac.compare_digest(str(given).encode("utf-8"), self.token.encode("utf-8"))

    def check(self, request: Request) -> bool:
        """Raise 403 (wrong host, token or origin) or 401 (no token); True when the token came in the URL."""
        if not self._host_ok(request):
            raise ApiError(403, "this UI answers only to its own host name", code="forbidden_host")
        if request.method == "POST":
            origin = request.headers.get("origin")
            own = f"{request.url.scheme}://{request.headers.get('host', '')}"
            if origin != own:
                raise ApiError(403, "cross-origin requests are refused", code="forbidden_origin")
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
