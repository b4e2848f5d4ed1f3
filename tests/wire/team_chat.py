"""A Chat Completions server for a whole team on one endpoint, with faults per agent.

Each agent's ``model`` names its behaviour, so one loopback port serves healthy agents
and faulty ones side by side (as a shared provider endpoint does):

- ``healthy``: answers when it sees no answer, else votes for the first one;
- ``hang``: reads the request and never answers; ``loop``: text that repeats forever;
- ``drip``: a healthy answer sent one byte every ``drip_s`` seconds;
- ``drop`` (cut mid-stream), ``reset`` (TCP RST mid-stream), ``truncated`` (cut inside an SSE
  event), ``drop_text`` (cut after some text, before the tool call),
  ``malformed`` (broken tool JSON), ``429``, ``500``, ``502``, ``hang_mid`` (silent
  after the first chunk): that fault on the first ``times`` requests, then healthy;
- ``503``: always 503; ``404...``: an unknown model (a permanent error);
- any model in ``failing`` (a set the test may change): 503 while it is there.

A model name may carry a suffix after ``#`` (``healthy#2``) to tell agents apart.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from wire.protocols import chat_chunk, chat_text, chat_tool_delta, openai_error, sse
from wire.server import Hang, Recorded, Reply, Respond, Stream, WireServer


def _vote_targets(body: dict[str, Any]) -> list[str]:
    for tool in body.get("tools") or []:
        function = tool.get("function", {})
        if function.get("name") == "vote":
            return list(function["parameters"]["properties"]["agent_id"].get("enum", []))
    return []


def tool_call(name: str, arguments: str) -> list[bytes]:
    return [
        chat_chunk({"role": "assistant", "content": None}),
        chat_tool_delta(0, id="call_1", name=name, arguments=arguments),
        chat_chunk({}, "tool_calls"),
        chat_chunk(None, usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}),
        sse("[DONE]"),
    ]


def healthy(body: dict[str, Any], model: str) -> list[bytes]:
    """One healthy reply: the final text, a vote, or a new answer."""
    if not body.get("tools"):
        return chat_text(f"The answer is 4 (presented by {model}).")
    targets = _vote_targets(body)
    if targets:
        return tool_call("vote", json.dumps({"agent_id": targets[0], "reason": "correct"}))
    return tool_call("new_answer", json.dumps({"content": f"2 + 2 = 4, says {model}"}))


class TeamChatServer(WireServer):
    def __init__(self, times: int = 1, drip_s: float = 2.0) -> None:
        super().__init__()
        self.times = times
        self.drip_s = drip_s
        self.seen: Counter[str] = Counter()
        self.failing: set[str] = set()

    def next_reply(self, recorded: Recorded) -> Reply:
        body = recorded.body if isinstance(recorded.body, dict) else {}
        model = str(body.get("model", ""))
        kind = model.partition("#")[0]
        self.seen[model] += 1
        early = self.seen[model] <= self.times
        if kind == "hang":
            return Hang()
        if kind == "loop":
            return Stream(chat_text(*["Let me think about this again. "] * 4000), end="hang")
        if kind == "drip":
            return Stream(healthy(body, model), drip_s=self.drip_s, drip_from=1)
        if kind == "503" or model in self.failing:
            return Respond(503, openai_error("overloaded", "server_error"))
        if kind.startswith("404"):
            return Respond(404, openai_error(f"The model `{model}` does not exist", code="model_not_found"))
        if kind == "drop" and early:
            return Stream(healthy(body, model)[:2], end="close")
        if kind == "drop_text" and early:
            return Stream(chat_text("Working it out: 2 + 2 is", " the sum of two twos")[:3], end="close")
        if kind == "reset" and early:
            return Stream(healthy(body, model)[:2], end="reset")
        if kind == "truncated" and early:
            chunks = healthy(body, model)
            return Stream([chunks[0], chunks[1][: len(chunks[1]) // 2]], end="close")
        if kind == "hang_mid" and early:
            return Stream(healthy(body, model)[:1], end="hang")
        if kind in ("500", "502") and early:
            return Respond(int(kind), openai_error("upstream trouble", "server_error"))
        if kind == "malformed" and early:
            return Stream(tool_call("new_answer", '{"content": "2 + 2 = 4, trunc'))
        if kind == "429" and early:
            return Respond(429, openai_error("rate limited", "rate_limit_error"), {"retry-after": "0.2"})
        return Stream(healthy(body, model))
