"""An MCP server's ``security`` block: what it allows, checked before the server is started.

Upstream MassGen checks each server against a level (``strict``, ``moderate``,
``permissive``; ``high`` reads as ``strict``, as upstream reads it): a stdio command is
one executable of a known set with no shell metacharacters, and a URL server names
no loopback or private address unless ``allow_localhost`` / ``allow_private_ips`` say
so. Host names are checked as written (no DNS lookup while a config loads).
"""

from __future__ import annotations

import ipaddress
import shlex
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from massgen.configs.backend_options import McpServerConfig

_STRICT_EXECUTABLES = frozenset({
    "python", "python3", "python3.8", "python3.9", "python3.10", "python3.11", "python3.12", "python3.13",
    "python3.14", "py", "uv", "uvx", "pipx", "pip", "pip3", "node", "npm", "npx", "yarn", "pnpm", "bun",
    "deno", "java", "ruby", "go", "rust", "cargo", "fastmcp", "srt", "mcp-server-filesystem",
    "sh", "bash", "zsh", "fish", "powershell", "pwsh", "cmd",
})
_EXECUTABLES = {
    "strict": _STRICT_EXECUTABLES,
    "moderate": _STRICT_EXECUTABLES | {"git", "nodejs"},
    "permissive": _STRICT_EXECUTABLES | {"git", "curl", "wget", "nodejs"},
}
_SHELL_CHARACTERS = "&|;`$()<>"
_LOCAL_NAMES = frozenset({"localhost", "ip6-localhost", "localhost.localdomain"})


def problems(server: McpServerConfig) -> list[str]:
    """What ``server`` does that its security level forbids; empty when it passes."""
    assert server.security is not None
    level = "strict" if server.security.level == "high" else server.security.level
    found: list[str] = []
    if server.command is not None:
        found += _command_problems(server.command, level)
    if server.url is not None:
        found += _url_problems(server.url, server.security.allow_localhost, server.security.allow_private_ips)
    return found


def _command_problems(command: str, level: str) -> list[str]:
    bad = sorted({c for c in command if c in _SHELL_CHARACTERS})
    if bad:
        return [f"command contains shell metacharacters {''.join(bad)!r}"]
    if "../" in command:
        return ["command contains a directory traversal (../)"]
    try:
        parts = shlex.split(command)
    except ValueError as exc:
        return [f"command is not valid: {exc}"]
    if not parts:
        return ["command is empty"]
    executable = Path(parts[0]).name.lower().removesuffix(".exe")
    allowed = _EXECUTABLES[level]
    if executable not in allowed:
        return [f"command {executable!r} is not an allowed executable at this level "
                f"(allowed: {', '.join(sorted(allowed))})"]
    return []


def _url_problems(url: str, allow_localhost: bool, allow_private_ips: bool) -> list[str]:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return [f"url scheme {parts.scheme!r} is not http or https"]
    host = (parts.hostname or "").lower()
    if not host:
        return ["url has no host"]
    if host in _LOCAL_NAMES:
        return [] if allow_localhost else [f"url host {host!r} is local (set security.allow_localhost: true)"]
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return []  # a host name: not resolved while loading a config
    if address.is_loopback:
        return [] if allow_localhost else [f"url host {host} is loopback (set security.allow_localhost: true)"]
    if address.is_private or address.is_link_local or address.is_reserved:
        return [] if allow_private_ips else [
            f"url host {host} is a private address (set security.allow_private_ips: true)"]
    return []
