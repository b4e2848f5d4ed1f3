"""Names, specs and tool filters of MCP connections: light, imported by every run (no SDK)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from massgen.configs.schema import McpServerConfig
from massgen.messages import ToolSpec
from massgen.messages.text import escape_text

if TYPE_CHECKING:  # the SDK costs a second to import: only runs with MCP servers pay for it
    import mcp_types


# What a server's tools may be, checked where they enter (``select_tools``); what is left out or cut
# is named in a note (``McpToolsListed.notes``). Sizes are per tool and are sent with every model request.
TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")  # OpenAI's rule for function names, the strictest provider's
TOOL_NAME_RULE = "^[a-zA-Z0-9_-]{1,64}$"
MCP_TOOLS_PER_SERVER = 256
MCP_DESCRIPTION_CAP_CHARS = 4096
MCP_SCHEMA_CAP_CHARS = 65_536  # an input schema, as JSON
# One JSON-RPC message from a server, on any transport: a longer one is not read, and the call it
# answers fails with ``oversize``. A model sees at most ``MCP_RESULT_CAP_CHARS`` of a result anyway.
MCP_MESSAGE_CAP_BYTES = 32 * 2**20  # a text result counts about twice: as content and as structuredContent
_SHOWN_CHARS = 80


def oversize(server: str) -> str:
    return (f"MCP server {server!r} sent a reply larger than the {MCP_MESSAGE_CAP_BYTES // 2**20} MiB an MCP "
            "message may be; it was not read")


def shown(name: str, limit: int = _SHOWN_CHARS) -> str:
    """A name from a server as a note may show it: control and format characters as escapes, cut."""
    def char(c: str) -> str:
        if c.isprintable():
            return c
        code = ord(c)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
    return "".join(char(c) for c in name[:limit]) + ("..." if len(name) > limit else "")


class McpConfigError(Exception):
    """A problem no restart can fix: a command that does not exist, an unknown allowed tool."""


def exposed_name(server: str, tool: str) -> str:
    """The name the model sees: ``mcp__<server>__<tool>``, as MassGen users already write it."""
    return f"mcp__{server}__{tool}"


@dataclass(frozen=True)
class McpServerSpec:
    """What the supervisor needs to (re)start one agent's connection to one server."""

    agent_id: str
    config: McpServerConfig
    # The backend's own filters, which also name the agent's other tools.
    allowed_tools: tuple[str, ...] | None = None
    exclude_tools: tuple[str, ...] = ()

    @property
    def server(self) -> str:
        return self.config.name

    @property
    def name(self) -> str:
        return f"mcp:{self.agent_id}:{self.config.name}"


def select_tools(
    spec: McpServerSpec, tools: Sequence[mcp_types.Tool], notes: list[str] | None = None,
    refused: Sequence[str] = (),
) -> tuple[tuple[ToolSpec, ...], tuple[str, ...]]:
    """Apply the filters and the limits before the model sees anything; returns (offered, hidden).

    One rule for both lists: per server, ``allowed_tools``/``exclude_tools`` may name a tool
    bare (``forecast``) or exposed (``mcp__weather__forecast``); the backend's lists use
    exposed names; names match exactly (case included). When a backend ``allowed_tools`` is
    set it is a whitelist for every tool of that agent, MCP tools included. Any name in
    either list for this server that the server does not have raises ``McpConfigError``: a
    typo would otherwise silently hide a tool (allowed) or silently expose one (excluded).
    ``refused`` names the tools the server listed whose listing the client refused (they count
    as tools it has, so a filter naming one is no typo).

    Then the limits, each a note added to ``notes`` and nothing left out silently: a tool whose
    exposed name providers would refuse (``TOOL_NAME``) or whose input schema is over
    ``MCP_SCHEMA_CAP_CHARS`` is left out; a description is cut to ``MCP_DESCRIPTION_CAP_CHARS``
    (marked ``[truncated: ...]``); at most ``MCP_TOOLS_PER_SERVER`` tools are taken, in the
    server's order.
    """
    server = spec.server
    prefix = exposed_name(server, "")
    by_name = {t.name: t for t in tools}
    have = {exposed_name(server, t.name) for t in tools} | {exposed_name(server, n) for n in refused}

    def exposed(name: str) -> str:
        return name if name.startswith(prefix) else exposed_name(server, name)

    wanted: list[str] = []
    if spec.config.allowed_tools is not None:
        wanted += [exposed(n) for n in spec.config.allowed_tools]
    if spec.allowed_tools is not None:
        wanted += [n for n in spec.allowed_tools if n.startswith(prefix)]
    excluded = {exposed(n) for n in spec.config.exclude_tools} | {
        n for n in spec.exclude_tools if n.startswith(prefix)}
    for key, names in (("allowed_tools", wanted), ("exclude_tools", excluded)):
        unknown = sorted({n for n in names if n not in have})
        if unknown:
            listed = sorted([*(t.name for t in tools), *refused])
            raise McpConfigError(
                f"MCP server {server!r}: {key} names tools it does not have: {', '.join(map(shown, unknown))} "
                f"(it has: {', '.join(map(shown, listed[:50])) or 'no tools'}"
                f"{f' and {len(listed) - 50} more' if len(listed) > 50 else ''}); names match exactly"
            )
    notes = notes if notes is not None else []
    offered: list[ToolSpec] = []
    hidden: list[str] = []
    over: list[str] = []
    for name, tool in by_name.items():
        full = exposed_name(server, name)
        visible = full not in excluded
        if spec.config.allowed_tools is not None:
            visible = visible and full in {exposed(n) for n in spec.config.allowed_tools}
        if spec.allowed_tools is not None:
            visible = visible and full in spec.allowed_tools
        if not visible:
            hidden.append(full)
            continue
        about = f"MCP server {server!r}: tool '{shown(name)}'"
        if TOOL_NAME.fullmatch(full) is None:
            notes.append(f"{about} left out: its name as offered to the model, '{shown(full)}', does not match "
                         f"{TOOL_NAME_RULE} ({len(full):,} characters)")
            continue
        schema = dict(tool.input_schema or {"type": "object", "properties": {}})
        size = len(json.dumps(schema, ensure_ascii=False))
        if size > MCP_SCHEMA_CAP_CHARS:
            notes.append(f"{about} left out: its input schema is {size:,} characters of JSON, "
                         f"more than the {MCP_SCHEMA_CAP_CHARS:,} a tool may have")
            continue
        if len(offered) == MCP_TOOLS_PER_SERVER:
            over.append(name)
            continue
        description = escape_text(tool.description or tool.title or name, f"{about}: description", notes)
        if len(description) > MCP_DESCRIPTION_CAP_CHARS:
            notes.append(f"{about}: description cut to {MCP_DESCRIPTION_CAP_CHARS:,} of "
                         f"{len(description):,} characters")
            description = (description[:MCP_DESCRIPTION_CAP_CHARS] + f"\n[truncated: {MCP_DESCRIPTION_CAP_CHARS:,} "
                           f"of {len(description):,} characters shown]")
        offered.append(ToolSpec(name=full, description=description, parameters=schema))
    if over:
        more = f", ... and {len(over) - 5:,} more" if len(over) > 5 else ""
        notes.append(f"MCP server {server!r}: {len(over):,} of {len(offered) + len(over):,} tools left out (at most "
                     f"{MCP_TOOLS_PER_SERVER} are taken from one server): {', '.join(over[:5])}{more}")
    return tuple(offered), tuple(hidden)
