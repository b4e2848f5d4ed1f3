"""Every model call on the record, and finished calls of a resumed turn answered from it.

``CallRecorder`` wraps an agent's backend. Before a request goes out it records
``ModelRequestSent`` (a delta against the previous request of this incarnation), and
when the stream ends it records ``ModelReplyRecorded``: so each call can be replayed
from the trace alone. In a resumed run it also holds the finished calls of the turn the
agent was in when the earlier attempt stopped; when the redone turn asks exactly the
same request again, the recorded reply is streamed back instead of calling the model,
with the finish reason ``replayed`` (the supervisor does not count it as a call).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from massgen.backends import Backend
from massgen.logs.calls import REPLAYED
from massgen.messages import (
    AgentResumeState,
    Finish,
    Message,
    ModelReplyRecorded,
    ModelRequest,
    ModelRequestSent,
    ReasoningDelta,
    StreamError,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    Usage,
)
from massgen.messages.text import escape_text, escape_value, what_was_escaped

Record = Callable[[type[Message], dict[str, Any]], None]


def _key(request: ModelRequest) -> str:
    # json.dumps escapes lone surrogates (any text may reach a model); pydantic's JSON refuses them.
    return json.dumps(request.model_dump(mode="python"), sort_keys=True, default=str)


class CallRecorder:
    def __init__(
        self, inner: Backend, record: Record, carried: AgentResumeState | None = None,
        before_call: Callable[[], None] | None = None,
    ) -> None:
        self.inner = inner
        self._record = record
        self._before_call = before_call
        self._calls = 0
        self._last: ModelRequest | None = None
        self._played = carried.played if carried else ()
        self._replay: list[tuple[str, dict[str, Any]]] = [
            (_key(ModelRequest.model_validate(item["request"])), item) for item in (carried.replay if carried else ())
        ]

    @property
    def decides_separately(self) -> bool:
        return self.inner.decides_separately

    def replayed(self, request: ModelRequest, tool_calls: int) -> None:
        self.inner.replayed(request, tool_calls)

    async def start(self) -> None:
        await self.inner.start()
        for played in self._played:  # a backend with state (scripted) continues where it was
            self.inner.replayed(ModelRequest(messages=(), kind=played["kind"],
                                             vote_targets=tuple(played["vote_targets"])), int(played["tool_calls"]))

    async def aclose(self) -> None:
        await self.inner.aclose()

    def _request_fields(self, request: ModelRequest) -> dict[str, Any]:
        keep = 0
        before = self._last.messages if self._last is not None else ()
        while keep < min(len(before), len(request.messages)) and before[keep] == request.messages[keep]:
            keep += 1
        same_tools = self._last is not None and self._last.tools == request.tools
        return {
            "call": self._calls, "keep": keep, "messages": request.messages[keep:],
            "tools": None if same_tools else request.tools, "kind": request.kind,
            "temperature": request.temperature, "max_tokens": request.max_tokens,
            "vote_targets": request.vote_targets,
        }

    def _take_replay(self, request: ModelRequest) -> dict[str, Any] | None:
        key = _key(request)
        for index, (candidate, item) in enumerate(self._replay):
            if candidate == key:
                del self._replay[index]
                return item
        return None

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self._calls += 1
        call = self._calls
        self._record(ModelRequestSent, self._request_fields(request))
        self._last = request
        if self._before_call is not None:
            self._before_call()
        item = self._take_replay(request)
        if item is not None:
            # the call counts as played for a backend with state of its own
            self.inner.replayed(request, len(item["reply"].get("tool_calls", ())))
            async for event in self._replayed(call, item):
                yield event
            return
        reply: dict[str, Any] = {"call": call, "text": "", "reasoning": "", "tool_calls": []}
        escaped = _Escapes()
        async for raw_event in self.inner.stream(request):
            event = escaped.of(raw_event, len(reply["tool_calls"]))  # the edge where a model's text enters
            if isinstance(event, TextDelta):
                reply["text"] += event.text
            elif isinstance(event, ReasoningDelta):
                reply["reasoning"] += event.text
            elif isinstance(event, ToolCallEvent):
                reply["tool_calls"].append(event.call)
            elif isinstance(event, Usage):
                reply.update(input_tokens=event.input_tokens, output_tokens=event.output_tokens,
                             cost_usd=event.cost_usd)
            elif isinstance(event, Finish):
                reply["finish_reason"] = event.reason
            elif isinstance(event, StreamError):  # the caller stops reading here: record it first
                self._record(ModelReplyRecorded, {**reply, "finish_reason": "error", "error": event.message,
                                                  "escaped": escaped.summary()})
                yield event
                return
            yield event
        self._record(ModelReplyRecorded, {**reply, "escaped": escaped.summary()})

    async def _replayed(self, call: int, item: dict[str, Any]) -> AsyncIterator[StreamEvent]:
        # A replay takes no time: first let callbacks queued on this loop run (answers injected into
        # the redone turn), as they would have while the model streamed.
        await asyncio.sleep(0)
        reply = dict(item["reply"])
        if reply.get("reasoning"):
            yield ReasoningDelta(text=reply["reasoning"])
        if reply.get("text"):
            yield TextDelta(text=reply["text"])
        for raw in reply.get("tool_calls", ()):
            yield ToolCallEvent(call=ToolCall.model_validate(raw))
        yield Usage()  # nothing was spent on it this time
        self._record(ModelReplyRecorded, {**reply, "call": call, "replayed_from": int(item["seq"])})
        yield Finish(reason=REPLAYED)


class _Escapes:
    """A reply's text made valid as it streams in (``messages/text.py``), and notes of what was escaped."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self._streamed: dict[str, str] = {"text": "", "reasoning": ""}

    def of(self, event: StreamEvent, index: int) -> StreamEvent:
        if isinstance(event, TextDelta | ReasoningDelta):
            if what_was_escaped(event.text) is None:
                return event
            self._streamed[event.type] += event.text
            return event.model_copy(update={"text": escape_text(event.text, event.type)})
        if isinstance(event, ToolCallEvent):
            call = event.call
            where = f"tool call {index} ({escape_text(call.name, 'name')})"
            fields = {"id": escape_text(call.id, f"{where} id", self.notes),
                      "name": escape_text(call.name, f"{where} name", self.notes),
                      "arguments": escape_value(call.arguments, f"{where} arguments", self.notes),
                      "raw_arguments": escape_text(call.raw_arguments, f"{where} raw arguments", self.notes)}
            if all(fields[name] is getattr(call, name) for name in fields):
                return event
            return ToolCallEvent(call=call.model_copy(update=fields))
        if isinstance(event, StreamError) and what_was_escaped(event.message) is not None:
            return event.model_copy(update={"message": escape_text(event.message, "error", self.notes)})
        return event

    def summary(self) -> tuple[str, ...]:
        streamed = [f"{kind}: {what} escaped" for kind, text in self._streamed.items()
                    if (what := what_was_escaped(text)) is not None]
        return (*streamed, *self.notes)
