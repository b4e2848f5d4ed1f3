"""The ``claude`` backend on Anthropic's Messages API (streamed server-sent events).

Tool input arrives as ``input_json_delta`` fragments per content block and is complete
at ``content_block_stop``; usage is split between ``message_start`` (input) and
``message_delta`` (output). Anthropic reports overload mid-stream as an ``error`` event
inside a 200 response; it is mapped back to 529 so the policy treats it as transient.
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
from massgen.backends.retry import AttemptClock, Failure, Retrier, StreamFailure, classify
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

DEFAULT_MODEL = "claude-sonnet-4-6"
DEFAULT_MAX_TOKENS = 4096
# Error types Anthropic sends inside a stream, and the HTTP status each stands for.
_STREAM_ERROR_STATUS = {
    "overloaded_error": 529, "api_error": 500, "rate_limit_error": 429, "timeout_error": 504,
    "invalid_request_error": 400, "authentication_error": 401, "permission_error": 403,
    "not_found_error": 404, "request_too_large": 413,
}
_STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls",
                 "max_tokens": "length", "refusal": "content_filter", "pause_turn": "stop"}


@dataclass
class _Block:
    id: str
    name: str
    parts: list[str] = field(default_factory=list)


@dataclass
class _Reply:
    """What one attempt has read so far."""

    blocks: dict[int, _Block] = field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0
    stop_reason: str | None = None
    finished: bool = False
    any_call: bool = False
    argument_chars: int = 0  # of every tool_use block's input: at most wire_limits.MAX_TOOL_ARGUMENT_CHARS


def _messages(request: ModelRequest) -> tuple[str | None, list[dict[str, Any]]]:
    """Split out the system text; turn the rest into alternating user/assistant block lists."""
    system = "\n\n".join(m.content for m in request.messages if m.role == "system") or None
    wire: list[dict[str, Any]] = []
    for message in request.messages:
        blocks: list[dict[str, Any]] = []
        role = "assistant" if message.role == "assistant" else "user"
        if message.role == "system":
            continue
        if message.role == "tool":
            blocks.append({"type": "tool_result", "tool_use_id": message.tool_call_id or "",
                           "content": message.content})
        elif message.content:
            blocks.append({"type": "text", "text": message.content})
        if message.role == "user":
            blocks.extend(_file_block(a) for a in attachments.wanted("anthropic", message))
        blocks.extend({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
                      for c in message.tool_calls)
        if not blocks:
            continue
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})
    return system, wire


def _file_block(attachment: Attachment) -> dict[str, Any]:
    """An ``image`` block, or a ``document`` (a PDF, or a text document's text)."""
    if attachments.is_text(attachment):
        return {"type": "document", "title": attachments.file_name(attachment),
                "source": {"type": "text", "media_type": "text/plain",
                           "data": attachments.payload(attachment).decode("utf-8", "replace")}}
    kind = "image" if attachment.kind == "image" else "document"
    if attachment.url is not None:
        return {"type": kind, "source": {"type": "url", "url": attachment.url}}
    return {"type": kind, "source": {"type": "base64", "media_type": attachment.mime_type,
                                     "data": attachments.base64_data(attachment)}}


class AnthropicBackend(HttpBackend):
    provider = "claude"

    def _make_client(self) -> Any:
        with IMPORTS:  # never beside another agent thread's import of this SDK
            import anthropic

        return self._sdk_client(anthropic.AsyncAnthropic, anthropic.DefaultAsyncHttpxClient)

    def _classify(self, exc: BaseException) -> Failure | None:
        """A 200 stream's ``error`` event carries its real status in the error type."""
        status = getattr(exc, "status_code", None)
        body = getattr(exc, "body", None)
        if isinstance(status, int) and status < 400 and isinstance(body, dict):
            inner = body.get("error")
            error: dict[str, Any] = inner if isinstance(inner, dict) else body
            kind = str(error.get("type", ""))
            real = _STREAM_ERROR_STATUS.get(kind, 500)
            message = str(error.get("message") or kind or "error event")
            return classify(StreamFailure(f"{message} ({kind})", status=real,
                                          retryable=real in (429, 500, 504, 529)))
        return super()._classify(exc)

    def _request_kwargs(self, request: ModelRequest) -> dict[str, Any]:
        system, messages = _messages(request)
        kwargs: dict[str, Any] = {
            "model": self.model, "messages": messages, "stream": True,
            "max_tokens": self._max_tokens(request) or DEFAULT_MAX_TOKENS,
        }
        if system:
            kwargs["system"] = system
        tools: list[dict[str, Any]] = [{"name": t.name, "description": t.description,
                                        "input_schema": t.parameters} for t in request.tools]
        if request.kind == "turn":
            tools += native_tools.anthropic_tools(self.config)  # server tools: Anthropic runs them
        if tools:
            kwargs["tools"] = tools
        kwargs.update(native_tools.anthropic_options(self.config))
        thinking = kwargs.get("thinking", {})
        if thinking.get("type") == "enabled":
            # Extended thinking: the budget is part of max_tokens, and temperature must stay unset.
            kwargs["max_tokens"] = max(kwargs["max_tokens"], thinking["budget_tokens"] + 1024)
        elif (temperature := self._temperature(request)) is not None:
            kwargs["temperature"] = min(temperature, 1.0)
        return kwargs

    async def _attempt(self, request: ModelRequest, clock: AttemptClock) -> AsyncGenerator[StreamEvent, None]:
        stream = await clock.wait(self._client.messages.create(**self._request_kwargs(request)))
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
        if not reply.finished:
            raise StreamFailure("stream ended before message_stop", retryable=True, kind="cut")
        yield self._usage(reply.input_tokens, reply.output_tokens)
        reason = _STOP_REASONS.get(reply.stop_reason or "end_turn", reply.stop_reason or "stop")
        yield Finish(reason="tool_calls" if reply.any_call else reason)

    def _read(self, event: Any, kind: str, reply: _Reply) -> list[StreamEvent]:
        """One event's output; blocks, usage and stop noted in ``reply``. A shape the protocol does not allow
        raises (``_parsing`` makes it a provider fault); tool input fragments are capped (``wire_limits``)."""
        blocks = reply.blocks
        if kind == "message_start":
            usage = event.message.usage
            reply.input_tokens = self._count(usage.input_tokens, "input_tokens") + self._count(
                getattr(usage, "cache_read_input_tokens", None), "cache_read_input_tokens")
            reply.output_tokens = self._count(usage.output_tokens, "output_tokens")
        elif kind == "content_block_start":
            block = event.content_block
            if block.type == "tool_use":
                blocks[event.index] = _Block(block.id, block.name)
            elif block.type == "text" and block.text:
                return [TextDelta(text=block.text)]
        elif kind == "content_block_delta":
            delta = event.delta
            if delta.type == "text_delta":
                return [TextDelta(text=delta.text)]
            if delta.type == "thinking_delta":
                return [ReasoningDelta(text=delta.thinking)]
            if delta.type == "input_json_delta" and event.index in blocks:
                fragment = delta.partial_json
                if not isinstance(fragment, str):
                    raise TypeError(f"partial_json is a {type(fragment).__name__}, not a string")
                reply.argument_chars += len(fragment)
                if reply.argument_chars > wire_limits.MAX_TOOL_ARGUMENT_CHARS:
                    raise wire_limits.tool_arguments_failure(self.endpoint)
                blocks[event.index].parts.append(fragment)
        elif kind == "content_block_stop" and event.index in blocks:
            reply.any_call = True
            return [ToolCallEvent(call=self._tool_call(blocks.pop(event.index)))]
        elif kind == "message_delta":
            if event.delta.stop_reason:
                reply.stop_reason = str(event.delta.stop_reason)
            reply.output_tokens = self._count(event.usage.output_tokens, "output_tokens") or reply.output_tokens
            reply.input_tokens = (self._count(getattr(event.usage, "input_tokens", None), "input_tokens")
                                  or reply.input_tokens)
        elif kind == "message_stop":
            reply.finished = True
        return []

    def _tool_call(self, block: _Block) -> ToolCall:
        raw = "".join(block.parts)
        arguments, error = parse_arguments(raw)
        return ToolCall(id=block.id or self._new_call_id(), name=block.name, arguments=arguments,
                        raw_arguments=raw or json.dumps(arguments), parse_error=error)


def create(config: BackendConfig, context: BackendContext, retrier: Retrier | None = None
           ) -> AnthropicBackend:
    if config.type != "claude":
        raise BackendError(f"backend.type {config.type!r} is not 'claude'")
    api_key = require_key("claude", config.api_key, ("ANTHROPIC_API_KEY",), context.env)
    return AnthropicBackend(config, context, base_url=config.base_url or "https://api.anthropic.com",
                            api_key=api_key, model=config.model or DEFAULT_MODEL, retrier=retrier)
