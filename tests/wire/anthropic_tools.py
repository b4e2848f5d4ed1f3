"""A loopback Anthropic Messages server that plays a model using the massgen workflow tools.

The scripted ``WireServer`` answers requests in a fixed order; an agent CLI such as Claude
Code makes a varying number of requests (tool follow-ups, and for some versions small side
requests), so this server decides each reply from the request itself instead:

- a request whose last user turn carries a ``tool_result`` gets a short closing text;
- one offering ``mcp__massgen__new_answer`` whose prompt does not yet show this agent's own
  answer (``(yours)``) gets a streamed ``tool_use`` of it with ``answer``;
- otherwise one offering ``mcp__massgen__vote`` gets a ``tool_use`` voting for the first
  ``agent_id`` of the tool's enum (so the test sees that the enum reached the model);
- anything else (the final presentation, side requests) gets ``final_text``.
"""

from __future__ import annotations

import json
from typing import Any

from wire import protocols as p
from wire.server import Hang, Recorded, Reply, Respond, Stream, WireServer

NEW_ANSWER_TOOL = "mcp__massgen__new_answer"
VOTE_TOOL = "mcp__massgen__vote"


def tool_names(body: Any) -> list[str]:
    return [str(t.get("name")) for t in (body or {}).get("tools", []) if isinstance(t, dict)]


def tool_schema(body: Any, name: str) -> dict[str, Any]:
    for tool in (body or {}).get("tools", []):
        if isinstance(tool, dict) and tool.get("name") == name:
            schema = tool.get("input_schema", {})
            return schema if isinstance(schema, dict) else {}
    return {}


def prompt_text(body: Any) -> str:
    """Every text the request's messages carry, joined."""
    texts: list[str] = []
    for message in (body or {}).get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return "\n".join(texts)


def _after_tool_result(body: Any) -> bool:
    messages = (body or {}).get("messages", [])
    if not messages or messages[-1].get("role") != "user":
        return False
    content = messages[-1].get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


class AnthropicToolServer(WireServer):
    """Use as a context manager, like ``WireServer``; ``requests`` records every request."""

    def __init__(self, answer: str = "2 + 2 = 4", final_text: str = "The answer is 4.") -> None:
        super().__init__()
        self.answer = answer
        self.final_text = final_text
        self.tool_uses: list[tuple[str, dict[str, Any]]] = []
        # Faults: answer every Messages request with this (status, error type, message) ...
        self.fail_with: tuple[int, str, str] | None = None
        # ... or accept it and never answer.
        self.hang = False

    def message_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.path.endswith("/v1/messages")]

    def decide(self, request: Recorded) -> Reply:
        if request.path.endswith("/count_tokens"):
            return Respond(200, {"input_tokens": 10})
        if not request.path.endswith("/v1/messages"):
            return Respond(404, p.anthropic_error("not_found_error", f"no route {request.path}"))
        if self.hang:
            return Hang()
        if self.fail_with is not None:
            status, type_, message = self.fail_with
            return Respond(status, p.anthropic_error(type_, message))
        body = request.body if isinstance(request.body, dict) else {}
        names = tool_names(body)
        if _after_tool_result(body):
            return self._text(body, "Recorded.")
        answered = "(yours)" in prompt_text(body)  # the prompt shows this agent's own answer
        if NEW_ANSWER_TOOL in names and not (answered and VOTE_TOOL in names):
            return self._tool(body, NEW_ANSWER_TOOL, {"content": self.answer})
        if VOTE_TOOL in names:
            enum = tool_schema(body, VOTE_TOOL).get("properties", {}).get("agent_id", {}).get("enum", [])
            target = str(enum[0]) if enum else "agent1"
            return self._tool(body, VOTE_TOOL, {"agent_id": target, "reason": "It is correct and complete."})
        return self._text(body, self.final_text)

    def _tool(self, body: dict[str, Any], name: str, arguments: dict[str, Any]) -> Reply:
        self.tool_uses.append((name, arguments))
        call_id = f"toolu_{len(self.tool_uses):04d}"
        if not body.get("stream"):
            content = [{"type": "tool_use", "id": call_id, "name": name, "input": arguments}]
            return Respond(200, _message(content, "tool_use"))
        raw = json.dumps(arguments)
        fragments = [raw[: len(raw) // 2], raw[len(raw) // 2 :]]
        chunks = [
            p.anthropic_start(),
            *p.anthropic_text_block(0, "Calling the workflow tool."),
            *p.anthropic_tool_block(1, call_id, name, fragments),
            *p.anthropic_end("tool_use"),
        ]
        return Stream(chunks)

    def _text(self, body: dict[str, Any], text: str) -> Reply:
        if not body.get("stream"):
            return Respond(200, _message([{"type": "text", "text": text}], "end_turn"))
        return Stream([p.anthropic_start(), *p.anthropic_text_block(0, text), *p.anthropic_end()])

    def next_reply(self, recorded: Recorded) -> Reply:
        return self.decide(recorded)


def _message(content: list[dict[str, Any]], stop_reason: str) -> dict[str, Any]:
    return {
        "id": "msg_1", "type": "message", "role": "assistant", "model": p.MODEL, "content": content,
        "stop_reason": stop_reason, "stop_sequence": None, "usage": {"input_tokens": 20, "output_tokens": 9},
    }
