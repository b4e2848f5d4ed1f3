"""The text of ``status.json``, each agent's part kept from the last write while the agent is unchanged.

A 1,000-agent status is megabytes of indented JSON, and ``json`` indents in Python, not C; the
writer rewrites it four times a second. Each agent's part is encoded once per change (the
projection's ``StatusFold`` names the agents that changed) and the parts are joined, so a write
encodes what changed and copies the rest. The text is byte for byte ``json.dumps(status,
indent=2, ensure_ascii=False)`` of the whole dict (tested), so it reads as before.
"""

from __future__ import annotations

import json
from typing import Any

from massgen.logs.projection import LogProjection
from massgen.logs.upstream_status import upstream_agent, upstream_status

__all__ = ["StatusText", "status_dict", "status_text"]

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


def _part(projection: LogProjection, agent_id: str) -> str:
    text = json.dumps(_agent(projection, agent_id), indent=2, ensure_ascii=False).replace("\n", _DEPTH)
    return f"    {json.dumps(agent_id, ensure_ascii=False)}: {text}"


def _compose(projection: LogProjection, parts: list[str]) -> str:
    """The top level encoded whole, the agents' parts (in the projection's order) set into it."""
    top = {**projection.status(agents=False), **upstream_status(projection)}
    top[_AGENTS] = _HOLE
    agents = "{\n" + ",\n".join(parts) + "\n  }" if parts else "{}"
    text = json.dumps(top, indent=2, ensure_ascii=False)
    return text.replace(f'"{_AGENTS}": {json.dumps(_HOLE)}', f'"{_AGENTS}": {agents}', 1) + "\n"


def status_text(projection: LogProjection) -> str:
    """The status rendered once, keeping nothing (a rebuild, a test's reference)."""
    return _compose(projection, [_part(projection, agent_id) for agent_id in projection.agents])


class StatusText:
    """Renders one projection's status again and again; the agents' parts are kept for its next render."""

    def __init__(self) -> None:
        self._projection: LogProjection | None = None
        self._changed: set[str] = set()  # filled by the projection's fold between renders
        self._parts: dict[str, str] = {}  # agent -> its '"id": {...}' line, in the projection's agent order
        self.encoded = 0  # agents' parts encoded so far (tests count them)

    def _encode(self, agent_id: str) -> None:
        assert self._projection is not None
        self.encoded += 1
        self._parts[agent_id] = _part(self._projection, agent_id)

    def render(self, projection: LogProjection) -> str:
        if projection is not self._projection:
            self._projection, self._changed, self._parts = projection, projection.fold.watch(), {}
        if self._parts.keys() != projection.agents.keys():  # the first render, or the team was just named
            self._changed.clear()
            self._parts = {}
            for agent_id in projection.agents:
                self._encode(agent_id)
        else:
            changed = list(self._changed)
            self._changed.clear()
            for agent_id in changed:
                if agent_id in self._parts:
                    self._encode(agent_id)
        return _compose(projection, list(self._parts.values()))
