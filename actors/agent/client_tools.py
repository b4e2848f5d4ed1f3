"""Client tools: tools an outside caller offers the team, which the team may call but not run.

An OpenAI-compatible caller (``massgen serve``) sends ``tools`` it will run itself.
The agents are offered them next to ``new_answer``/``vote``; calling one ends the turn
the way ``new_answer`` does, with an answer whose content is the tool call encoded by
``encode``. So a tool call is an answer like any other: it is shown to the other agents,
voted on, and wins or loses. When it wins, the winner does not present it (a model
would turn it into prose): ``TurnRunner.present`` hands it back unchanged, and the
caller turns the final answer back into a structured call with ``decode``.

Only plain JSON crosses this boundary, so the trace and every log stay readable.
"""

from __future__ import annotations

import json
from typing import Any

from massgen.messages import ToolCall, ToolSpec

MARKER = "massgen_tool_calls"
_NOTE = " Calling this tool ends your turn: the call is your answer, and the team votes on it."


def offer(tools: tuple[ToolSpec, ...]) -> tuple[ToolSpec, ...]:
    """The client tools as the model sees them: each says that calling it is an answer."""
    return tuple(t.model_copy(update={"description": (t.description + _NOTE).strip()}) for t in tools)


def problem(calls: list[ToolCall]) -> str | None:
    """Why these client tool calls cannot be an answer, or None when they can."""
    for call in calls:
        if call.parse_error:
            return f"The arguments of your {call.name} call were not valid JSON ({call.parse_error})."
    return None


def encode(calls: list[ToolCall]) -> str:
    """An answer's content for one or more client tool calls (parallel calls stay together)."""
    body = [{"name": c.name, "arguments": c.arguments} for c in calls]
    return json.dumps({MARKER: body}, ensure_ascii=False, sort_keys=True)


def decode(text: str | None) -> list[dict[str, Any]] | None:
    """The calls an answer encodes, as ``[{"name", "arguments"}]``; None when it is plain text."""
    if not text:
        return None
    stripped = text.strip()
    if not stripped.startswith("{") or MARKER not in stripped:
        return None
    try:
        data = json.loads(stripped)
    except ValueError:
        return None
    calls = data.get(MARKER) if isinstance(data, dict) and len(data) == 1 else None
    if not isinstance(calls, list) or not calls:
        return None
    decoded: list[dict[str, Any]] = []
    for call in calls:
        if not (isinstance(call, dict) and isinstance(call.get("name"), str)
                and isinstance(call.get("arguments"), dict)):
            return None
        decoded.append({"name": call["name"], "arguments": call["arguments"]})
    return decoded
