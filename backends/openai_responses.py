"""The ``openai`` backend on the Responses API (streamed typed events).

The Responses API is OpenAI's own path for new models (reasoning summaries, function
calls as output items), so ``openai`` uses it rather than Chat Completions. Function
call arguments arrive as deltas keyed by item id and are complete at
``function_call_arguments.done``/``output_item.done``; ``response.completed`` carries usage.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any

from massgen.backends import attachments, native_tools, wire_limits
from massgen.backends.base import BackendContext, BackendError
from massgen.backends.factories import IMPORTS
from massgen.backends.http_base import HttpBackend
from massgen.backends.keys import require_key
from massgen.backends.retry import AttemptClock, Retrier, StreamFailure
from massgen.backends.toolcall_text import parse_arguments
from massgen.configs.schema import BackendConfig
from massgen.messages.stream import (
    Attachment,
    Finish,
    ModelRequest,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallEvent,
)

DEFAULT_MODEL = "gpt-4o-mini"
_RETRYABLE_CODES = ("server_error", "rate_limit", "overloaded", "timeout")


@dataclass
class _Call:
    call_id: str
    name: str
    arguments: list[str] = field(default_factory=list)
    final: str | None = None
    emitted: bool = False


@dataclass
class _Reply:
    """What one attempt has read so far."""

    calls: dict[str, _Call] = field(default_factory=dict)
    finish: str | None = None
    usage: Any = None
    argument_chars: int = 0  # of every call's argument fragments: at most wire_limits.MAX_TOOL_ARGUMENT_CHARS


def _input_items(request: ModelRequest) -> tuple[str | None, list[dict[str, Any]]]:
    """System messages become ``instructions``; the rest become Responses input items."""
    instructions = [m.content for m in request.messages if m.role == "system"]
    items: list[dict[str, Any]] = []
    for message in request.messages:
        files = attachments.wanted("responses", message) if message.role == "user" else ()
        if files:
            items.append({"role": "user", "content": [{"type": "input_text", "text": message.content},
                                                      *(_input_part(a) for a in files)]})
        elif message.role in ("user", "assistant") and message.content:
            items.append({"role": message.role, "content": message.content})
        if message.role == "assistant":
            items.extend(
                {"type": "function_call", "call_id": c.id, "name": c.name,
                 "arguments": c.raw_arguments or json.dumps(c.arguments)}
                for c in message.tool_calls
            )
        elif message.role == "tool":
            items.append({"type": "function_call_output", "call_id": message.tool_call_id or "",
                          "output": message.content})
    return ("\n\n".join(instructions) or None), items


def _input_part(attachment: Attachment) -> dict[str, Any]:
    """``input_image``, ``input_file`` (a PDF) or, for a text document, its text."""
    if attachment.kind == "image":
        return {"type": "input_image", "image_url": attachments.data_url(attachment), "detail": "auto"}
    if attachments.is_text(attachment):
        return {"type": "input_text", "text": attachments.text(attachment)}
    if attachment.url is not None:
        return {"type": "input_file", "file_url": attachment.url}
    return {"type": "input_file", "filename": attachments.file_name(attachment),
            "file_data": attachments.data_url(attachment)}


class ResponsesBackend(HttpBackend):
    provider = "openai"

    def _make_client(self) -> Any:
        with IMPORTS:  # never beside another agent thread's import of this SDK
            import openai

        return self._sdk_client(openai.AsyncOpenAI, openai.DefaultAsyncHttpxClient)

    def _request_kwargs(self, request: ModelRequest) -> dict[str, Any]:
        instructions, items = _input_items(request)
        kwargs: dict[str, Any] = {"model": self.model, "input": items, "stream": True, "store": False}
        if instructions:
            kwargs["instructions"] = instructions
        tools: list[dict[str, Any]] = [
            {"type": "function", "name": t.name, "description": t.description,
             "parameters": t.parameters, "strict": False}
            for t in request.tools
        ]
        if request.kind == "turn":
            tools += native_tools.responses_tools(self.config)  # run by OpenAI inside the reply
        if tools:
            kwargs["tools"] = tools
        kwargs.update(native_tools.responses_options(self.config))
        if (temperature := self._temperature(request)) is not None:
            kwargs["temperature"] = temperature
        if (max_tokens := self._max_tokens(request)) is not None:
            kwargs["max_output_tokens"] = max_tokens
        return kwargs

    async def _attempt(self, request: ModelRequest, clock: AttemptClock) -> AsyncGenerator[StreamEvent, None]:
        stream = await clock.wait(self._client.responses.create(**self._request_kwargs(request)))
        reply = _Reply()
        try:
            async for event in self._replies(stream, clock):
                kind = getattr(event, "type", "")
                with self._parsing(f"{kind or 'untyped'} event"):
                    events = self._read(event, kind, reply)
                for one in events:
                    yield one
        finally:
            await stream.close()
        if reply.finish is None:
            raise StreamFailure("stream ended before response.completed", retryable=True, kind="cut")
        with self._parsing("function call"):
            pending = [ToolCallEvent(call=self._tool_call(c)) for c in reply.calls.values() if not c.emitted]
        for one in pending:
            yield one
        usage = reply.usage
        yield self._usage(getattr(usage, "input_tokens", 0), getattr(usage, "output_tokens", 0))
        yield Finish(reason="tool_calls" if reply.calls else reply.finish)

    def _read(self, event: Any, kind: str, reply: _Reply) -> list[StreamEvent]:
        """One event's output; calls, usage and finish noted in ``reply``. A shape the protocol does not allow
        raises (``_parsing`` makes it a provider fault); argument fragments are capped (``wire_limits``)."""
        calls = reply.calls
        if kind == "response.output_text.delta":
            return [TextDelta(text=event.delta)]
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            return [ReasoningDelta(text=event.delta)]
        if kind == "response.output_item.added" and event.item.type == "function_call":
            item = event.item
            calls[item.id or item.call_id] = _Call(item.call_id, item.name)
        elif kind == "response.function_call_arguments.delta":
            if event.item_id in calls:
                self._count_arguments(reply, event.delta)
                calls[event.item_id].arguments.append(event.delta)
        elif kind == "response.function_call_arguments.done":
            if event.item_id in calls:
                calls[event.item_id].final = event.arguments
        elif kind == "response.output_item.done" and event.item.type == "function_call":
            item = event.item
            call = calls.setdefault(item.id or item.call_id, _Call(item.call_id, item.name))
            call.final = item.arguments
            call.emitted = True
            return [ToolCallEvent(call=self._tool_call(call))]
        elif kind == "response.completed":
            reply.usage = event.response.usage
            reply.finish = "stop"
        elif kind == "response.incomplete":
            reply.usage = event.response.usage
            reply.finish = "length"
        elif kind == "response.failed":
            error = event.response.error
            code = str(getattr(error, "code", "") or "")
            message = getattr(error, "message", None) or "response failed"
            raise StreamFailure(f"{message} ({code})" if code else message,
                                retryable=any(c in code for c in _RETRYABLE_CODES))
        elif kind == "error":
            code = str(getattr(event, "code", "") or "")
            raise StreamFailure(event.message or "error event",
                                retryable=any(c in code for c in _RETRYABLE_CODES))
        return []

    def _count_arguments(self, reply: _Reply, fragment: object) -> None:
        if not isinstance(fragment, str):
            raise TypeError(f"an arguments fragment is a {type(fragment).__name__}, not a string")
        reply.argument_chars += len(fragment)
        if reply.argument_chars > wire_limits.MAX_TOOL_ARGUMENT_CHARS:
            raise wire_limits.tool_arguments_failure(self.endpoint)

    def _tool_call(self, call: _Call) -> ToolCall:
        raw = call.final if call.final is not None else "".join(call.arguments)
        arguments, error = parse_arguments(raw)
        return ToolCall(id=call.call_id or self._new_call_id(), name=call.name, arguments=arguments,
                        raw_arguments=raw, parse_error=error)


def create(config: BackendConfig, context: BackendContext, retrier: Retrier | None = None
           ) -> ResponsesBackend:
    if config.type not in ("openai", "codex"):
        raise BackendError(f"backend.type {config.type!r} is not 'openai'")
    base_url = config.base_url or "https://api.openai.com/v1"
    api_key = require_key(config.type, config.api_key, ("OPENAI_API_KEY",), context.env)
    return ResponsesBackend(config, context, base_url=base_url, api_key=api_key,
                            model=config.model or DEFAULT_MODEL, retrier=retrier)
