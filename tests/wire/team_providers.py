"""One loopback server that answers a whole team on every wire we speak, as each provider would.

The path says the wire: ``/v1/responses`` (OpenAI Responses), ``/v1/messages`` (Anthropic),
``...:streamGenerateContent`` (Gemini), ``/chat/completions`` (Chat Completions). Every agent
is healthy: with no tools it presents, with a vote target in view it votes for the first one,
else it answers. A tool named in ``call_first`` is called once by the first model call that
is offered it, before the agent answers, so a test sees that tool run. Requests are recorded.
"""

from __future__ import annotations

import json
from typing import Any

from wire import protocols as p
from wire.server import Recorded, Reply, Respond, Stream, WireServer


def _tool_names_and_targets(wire: str, body: dict[str, Any]) -> tuple[list[str], list[str]]:
    names: list[str] = []
    targets: list[str] = []
    tools = body.get("tools") or []
    if wire == "gemini":
        declared = [d for t in tools for d in t.get("functionDeclarations") or t.get("function_declarations") or []]
        tools = [{"name": d.get("name"), "schema": d.get("parametersJsonSchema") or d.get("parameters_json_schema")
                  or d.get("parameters") or {}} for d in declared]
    for tool in tools:
        function = tool.get("function") if wire == "chat" else tool
        if not isinstance(function, dict) or not function.get("name"):
            continue
        names.append(function["name"])
        schema = function.get("schema") or function.get("parameters") or function.get("input_schema") or {}
        if function["name"] == "vote":
            targets = list(schema.get("properties", {}).get("agent_id", {}).get("enum", []))
    return names, targets


def _has_tool_result(wire: str, body: dict[str, Any]) -> bool:
    text = json.dumps(body)
    return {"responses": '"function_call_output"', "anthropic": '"tool_result"', "gemini": "functionResponse",
            "chat": '"role": "tool"'}[wire] in text or (wire == "gemini" and "function_response" in text)


class ProviderTeamServer(WireServer):
    def __init__(self, call_first: tuple[tuple[str, dict[str, Any]], ...] = ()) -> None:
        super().__init__()
        self.call_first = dict(call_first)
        self.called: set[str] = set()

    @staticmethod
    def wire_of(path: str) -> str:
        if path.endswith("/responses"):
            return "responses"
        if path.endswith("/messages"):
            return "anthropic"
        if "generatecontent" in path.lower():
            return "gemini"
        return "chat"

    def bodies(self, wire: str | None = None) -> list[dict[str, Any]]:
        """The recorded request bodies of one wire, or of all."""
        return [r.body for r in self.requests
                if (wire is None or self.wire_of(r.path) == wire) and isinstance(r.body, dict)]

    def next_reply(self, recorded: Recorded) -> Reply:
        body = recorded.body if isinstance(recorded.body, dict) else {}
        wire = self.wire_of(recorded.path)
        names, targets = _tool_names_and_targets(wire, body)
        model = str(body.get("model") or recorded.path.rsplit("/", 1)[-1].split(":")[0])
        if not names:
            return Stream(self._text(wire, f"The answer is 4 (presented by {model})."))
        pending = [n for n in names if n in self.call_first and n not in self.called]
        if pending and not _has_tool_result(wire, body):
            self.called.add(pending[0])
            return Stream(self._call(wire, pending[0], self.call_first[pending[0]]))
        if targets:
            return Stream(self._call(wire, "vote", {"agent_id": targets[0], "reason": "correct"}))
        if "new_answer" in names:
            return Stream(self._call(wire, "new_answer", {"content": f"2 + 2 = 4, says {model}. Answer: 4"}))
        return Respond(500, p.openai_error("no workflow tool offered", "server_error"))

    @staticmethod
    def _text(wire: str, text: str) -> list[bytes]:
        if wire == "responses":
            return p.ResponsesStream().created().text(text).completed()
        if wire == "anthropic":
            return [p.anthropic_start(), *p.anthropic_text_block(0, text), *p.anthropic_end()]
        if wire == "gemini":
            return [p.gemini_chunk([{"text": text}], finish="STOP", usage=(10, 5))]
        return p.chat_text(text)

    @staticmethod
    def _call(wire: str, name: str, arguments: dict[str, Any]) -> list[bytes]:
        raw = json.dumps(arguments)
        if wire == "responses":
            return p.ResponsesStream().created().function_call(0, "call_1", name, [raw]).completed()
        if wire == "anthropic":
            return [p.anthropic_start(), *p.anthropic_tool_block(0, "toolu_1", name, [raw]),
                    *p.anthropic_end("tool_use")]
        if wire == "gemini":
            return [p.gemini_chunk([{"functionCall": {"name": name, "args": arguments}}], finish="STOP",
                                   usage=(10, 5))]
        from wire.team_chat import tool_call

        return tool_call(name, raw)
