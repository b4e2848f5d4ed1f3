"""Names, specs and tool filters of MCP connections: light, imported by every run (no SDK)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from massgen.configs.schema import McpServerConfig
from massgen.messages import ToolSpec

if TYPE_CHECKING:  # the SDK costs a second to import: only runs with MCP servers pay for it
    import mcp_types


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


def select_tools(spec: McpServerSpec, tools: Sequence[mcp_types.Tool]) -> tuple[tuple[ToolSpec, ...], tuple[str, ...]]:
    """Apply the filters before the model sees anything; returns (offered, hidden).

    One rule for both lists: per server, ``allowed_tools``/``exclude_tools`` may name a tool
    bare (``forecast``) or exposed (``mcp__weather__forecast``); the backend's lists use
    exposed names; names match exactly (case included). When a backend ``allowed_tools`` is
    set it is a whitelist for every tool of that agent, MCP tools included. Any name in
    either list for this server that the server does not have raises ``McpConfigError``: a
    typo would otherwise silently hide a tool (allowed) or silently expose one (excluded).
    """
    server = spec.server
    prefix = exposed_name(server, "")
    by_name = {t.name: t for t in tools}
    have = {exposed_name(server, t.name) for t in tools}

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
            raise McpConfigError(
                f"MCP server {server!r}: {key} names tools it does not have: {', '.join(unknown)} "
                f"(it has: {', '.join(sorted(t.name for t in tools)) or 'no tools'}); names match exactly"
            )
    offered: list[ToolSpec] = []
    hidden: list[str] = []
    for name, tool in by_name.items():
        full = exposed_name(server, name)
        visible = full not in excluded
        if spec.config.allowed_tools is not None:
            visible = visible and full in {exposed(n) for n in spec.config.allowed_tools}
        if spec.allowed_tools is not None:
            visible = visible and full in spec.allowed_tools
        if visible:
            schema = tool.input_schema or {"type": "object", "properties": {}}
            offered.append(ToolSpec(name=full, description=tool.description or tool.title or name,
                                    parameters=dict(schema)))
        else:
            hidden.append(full)
    return tuple(offered), tuple(hidden)
