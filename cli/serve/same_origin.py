"""Which Host a request may name and which Origin may send it: the checks every route makes.

A server on loopback is still reachable from any web page the user opens. ``Host`` must name
this server (a loopback name, or the address it was told to bind), which stops DNS-rebinding
pages: their requests carry the attacker's name. An ``Origin`` header, which browsers send on
every cross-site request, must be this server's own, which stops cross-site posts; API clients
(the ``openai`` SDK, curl) send none. A server bound to every address (``0.0.0.0``, which needs
``--api-key``) answers to any name, but still not to another site's pages.
"""

from __future__ import annotations

from starlette.requests import Request

from massgen.cli.serve.errors import ApiError

__all__ = ["LOOPBACK_NAMES", "WILDCARD_HOSTS", "check_host", "check_origin", "require_json"]

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})


def _host_ok(request: Request, bind_host: str) -> bool:
    if bind_host in WILDCARD_HOSTS:  # any name may reach it (--api-key is required there)
        return True
    host = request.headers.get("host", "")
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    allowed = LOOPBACK_NAMES | {bind_host, f"[{bind_host}]"}
    return bool(name) and name.lower() in allowed


def check_host(request: Request, bind_host: str) -> None:
    """403 unless ``Host`` names this server."""
    if not _host_ok(request, bind_host):
        raise ApiError(403, "this server answers only to its own host name (the Host header named another)",
                       code="forbidden_host")


def check_origin(request: Request, *, required: bool) -> None:
    """403 when an ``Origin`` other than this server's own came (or none came, when ``required``)."""
    origin = request.headers.get("origin")
    if origin is None and not required:
        return
    if origin != f"{request.url.scheme}://{request.headers.get('host', '')}":
        raise ApiError(403, "cross-origin requests are refused", code="forbidden_origin")


def require_json(request: Request) -> None:
    """415 unless the body is declared JSON: a page of another site can post ``text/plain`` or a form
    without asking first (a "simple" request), but never ``application/json``."""
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media != "application/json":
        raise ApiError(415, "send JSON (content-type: application/json)", code="unsupported_media_type",
                       param="content-type")
