"""The text of ``status.json``, each agent's part kept from the last write while the agent is unchanged.

A 1,000-agent status is about a megabyte of indented JSON, and ``json`` indents in Python, not C;
the writer rewrites it four times a second. Each agent's part is encoded once per change (the
projection counts changes per agent, ``StatusFold.versions``) and the parts are joined, so a
write encodes what changed and copies the rest. The text is byte for byte ``json.dumps(status,
indent=2, ensure_ascii=False)`` of the whole dict (tested), so it reads as before.
"""

from __future__ import annotations

import json
from typing import Any

from massgen.logs.projection import LogProjection
from massgen.logs.upstream_status import upstream_agent, upstream_status

__all__ = ["StatusText", "status_dict"]

_AGENTS = "agents"
# Stands for the agents' part in the encoded top level: a JSON string holding a NUL, which no
# other value's text can hold unescaped at the top level's own indentation.
_HOLE = "\u0000agents\u0000"
_DEPTH = "\n    "  # an agent's part sits two levels in: {"agents": {"agent_1": {...}}}


def _agent(projection: LogProjection, agent_id: str) -> dict[str, Any]:
    """This version's keys for one agent, then upstream MassGen's (logs/upstream_status.py)."""
    return {**projection.agents[agent_id].as_dict(), **upstream_agent(projection, agent_id)}


def status_dict(projection: LogProjection) -> dict[str, Any]:
    """The whole status as one dict (what ``StatusText.render`` writes)."""
    status = projection.status(agents=False)
    status[_AGENTS] = {agent_id: _agent(projection, agent_id) for agent_id in projection.agents}
    return {**status, **upstream_status(projection)}


class StatusText:
    """Renders a projection's status; the agents' parts are kept for the next render of the same projection."""

    def __init__(self) -> None:
        self._parts: dict[str, tuple[int, str]] = {}  # agent -> (its version when encoded, its text)
        self.encoded = 0  # agents' parts encoded so far (tests count them)

    def render(self, projection: LogProjection) -> str:
        versions = projection.fold.versions
        parts: list[str] = []
        for agent_id in projection.agents:
            version = versions.get(agent_id, 0)
            kept = self._parts.get(agent_id)
            if kept is None or kept[0] != version:
                text = json.dumps(_agent(projection, agent_id), indent=2, ensure_ascii=False).replace("\n", _DEPTH)
                kept = self._parts[agent_id] = (version, text)
                self.encoded += 1
            parts.append(f"    {json.dumps(agent_id, ensure_ascii=False)}: {kept[1]}")
        top = {**projection.status(agents=False), **upstream_status(projection)}
        top[_AGENTS] = _HOLE
        agents = "{\n" + ",\n".join(parts) + "\n  }" if parts else "{}"
        text = json.dumps(top, indent=2, ensure_ascii=False)
        return text.replace(f'"{_AGENTS}": {json.dumps(_HOLE)}', f'"{_AGENTS}": {agents}', 1) + "\n"
