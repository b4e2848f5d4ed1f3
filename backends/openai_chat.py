"""Chat Completions backends: any OpenAI-compatible server, its presets, and Azure OpenAI.

One class serves ``chatcompletion``, ``grok``, the local presets (``vllm``, ``sglang``,
``lmstudio``, ``ollama``, ``llamacpp``) and ``azure_openai``; they differ only in URL,
key and tool mode. Tool calls come natively when the server can, else through a
JSON-schema response format, else parsed from the reply text (see ``toolcall_text``);
with no ``tool_mode`` configured, a 400 that blames tools or the schema moves one step
down that ladder for the rest of the backend's life, and the switch is reported.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal

from massgen.backends import attachments, native_tools, toolcall_text, wire_limits
from massgen.backends.base import BackendContext, BackendError, PermanentBackendError
from massgen.backends.chat_wire import ChatClient
from massgen.backends.http_base import DEFAULT_HTTP_TIMEOUT_S, HttpBackend, shared_ssl_context
from massgen.backends.keys import lookup, require_key
from massgen.backends.retry import AttemptClock, Retrier, StreamFailure
from massgen.configs.backend_types import BackendType
from massgen.configs.backend_types import lookup as lookup_type
from massgen.configs.schema import AzureOpenAIBackendConfig, BackendConfig
from massgen.messages.stream import (
    Attachment,
    ChatMessage,
    Finish,
    ModelRequest,
    ReasoningDelta,
    StreamError,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallEvent,
)

ToolMode = Literal["native", "json_schema", "text"]
_LADDER: dict[ToolMode, ToolMode] = {"native": "json_schema", "json_schema": "text"}
_BLAME = {
    "native": ("tool",),
    "json_schema": ("response_format", "json_schema", "json_object", "schema", "grammar"),
}


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class _Reply:
    """What one attempt has read so far."""

    text: list[str] = field(default_factory=list)
    partial: dict[int, _PartialCall] = field(default_factory=dict)
    finish: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    argument_chars: int = 0  # of every call's arguments: at most wire_limits.MAX_TOOL_ARGUMENT_CHARS


class ChatCompletionsBackend(HttpBackend):
    """Streams Chat Completions over httpx (``chat_wire``): the request the ``openai`` SDK would send."""

    provider = "chatcompletion"

    def __init__(self, config: BackendConfig, context: BackendContext, *, preset: BackendType,
                 base_url: str, api_key: str | None, model: str, retrier: Retrier | None = None) -> None:
        super().__init__(config, context, base_url=base_url, api_key=api_key, model=model, retrier=retrier)
        self.provider = config.type
        self.preset = preset
        self.tool_mode: ToolMode = config.tool_mode or preset.tool_mode

    @property
    def decides_separately(self) -> bool:
        """Grammar-constrained (JSON-schema) calls leave no room to reason: turns decide in a second call."""
        return self.tool_mode == "json_schema"

    def _make_client(self) -> ChatClient:
        timeout = self.config.timeout_seconds or DEFAULT_HTTP_TIMEOUT_S
        azure_version = self.config.api_version if isinstance(self.config, AzureOpenAIBackendConfig) else None
        return ChatClient(self.base_url, self._api_key or "not-needed", timeout=timeout,
                          verify=shared_ssl_context(), azure_api_version=azure_version)

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        return self._stream_with_fallback(request)

    async def _stream_with_fallback(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        while True:
            first, switched = True, False
            async with contextlib.aclosing(super().stream(request)) as events:
                async for event in events:
                    if first and isinstance(event, StreamError) and self._should_fall_back(request, event):
                        switched = True
                        break
                    first = False
                    yield event
            if not switched:
                return

    def _should_fall_back(self, request: ModelRequest, error: StreamError) -> bool:
        """After a refusal that blames tools (or the schema), step down the tool-mode ladder once."""
        if self.config.tool_mode is not None or not request.tools or self.tool_mode not in _LADDER:
            return False
        if error.status not in (400, 404, 415, 422, 500, 501):
            return False
        text = error.message.lower()
        if not any(word in text for word in _BLAME[self.tool_mode]):
            return False
        old, self.tool_mode = self.tool_mode, _LADDER[self.tool_mode]
        self._emit("backend.tool_mode", {"from": old, "to": self.tool_mode, "reason": error.message[:300]})
        return True

    # -- request --------------------------------------------------------------------------------
    def _request_kwargs(self, request: ModelRequest) -> dict[str, Any]:
        mode = self.tool_mode if request.tools else "native"
        messages = list(request.messages) if mode == "native" else toolcall_text.flatten_messages(
            request.messages)
        kwargs: dict[str, Any] = {
            "model": self.model, "stream": True, "stream_options": {"include_usage": True},
        }
        if mode == "native" and request.tools:
            kwargs["tools"] = [
                {"type": "function",
                 "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
                for t in request.tools
            ]
        elif mode == "json_schema":
            schema = toolcall_text.action_schema(request.tools, request.vote_targets)
            kwargs["response_format"] = toolcall_text.response_format(schema, self.preset.schema_style)
            messages = _with_system(messages, toolcall_text.json_mode_instructions(
                request.tools, request.vote_targets))
        elif mode == "text":
            messages = _with_system(messages, toolcall_text.text_mode_instructions(request.tools))
        kwargs["messages"] = [_wire_message(m) for m in messages]
        if (temperature := self._temperature(request)) is not None:
            kwargs["temperature"] = temperature
        if (max_tokens := self._max_tokens(request)) is not None:
            kwargs["max_tokens"] = max_tokens
        if self.config.seed is not None:
            kwargs["seed"] = self.config.seed
        kwargs.update(native_tools.chat_options(self.config, "web_search" in self.preset.native_tools))
        return kwargs

    # -- one attempt ----------------------------------------------------------------------------
    async def _attempt(self, request: ModelRequest, clock: AttemptClock) -> AsyncGenerator[StreamEvent, None]:
        mode = self.tool_mode if request.tools else "native"
        stream = await clock.wait(self._client.stream(self._request_kwargs(request)))
        reply = _Reply()
        try:
            async for chunk in clock.chunks(stream):
                with self._parsing("stream chunk"):
                    events = self._read(chunk, reply)
                for event in events:
                    yield event
        finally:
            await stream.close()
        if reply.finish is None:
            raise StreamFailure("stream ended before the model finished", retryable=True, kind="cut")
        calls = [self._native_call(reply.partial[i]) for i in sorted(reply.partial)]
        if not calls and request.tools:
            names = [t.name for t in request.tools]
            text = "".join(reply.text)
            calls = (toolcall_text.parse_action_object(text, self._new_call_id, names)
                     if mode == "json_schema" else
                     toolcall_text.parse_tool_calls(text, self._new_call_id, names))
        for call in calls:
            yield ToolCallEvent(call=call)
        yield self._usage(reply.usage.get("prompt_tokens"), reply.usage.get("completion_tokens"))
        yield Finish(reason="tool_calls" if calls else reply.finish)

    def _read(self, chunk: dict[str, Any], reply: _Reply) -> list[StreamEvent]:
        """One chunk's events, its tool-call fragments and finish noted in ``reply``. A chunk of the wrong shape
        raises (``_parsing`` makes that a provider fault); the arguments are capped (``wire_limits``)."""
        events: list[StreamEvent] = []
        if isinstance(chunk.get("usage"), dict):
            reply.usage = chunk["usage"]
        choices = chunk.get("choices") or []
        if not isinstance(choices, list):
            raise TypeError(f"'choices' is a {type(choices).__name__}, not a list")
        for choice in choices:
            delta = choice.get("delta")
            if isinstance(delta, dict):
                reasoning = delta.get("reasoning_content") or delta.get("reasoning")
                if isinstance(reasoning, str) and reasoning:
                    events.append(ReasoningDelta(text=reasoning))
                if content := delta.get("content"):
                    reply.text.append(content)
                    events.append(TextDelta(text=content))
                for fragment in delta.get("tool_calls") or ():
                    index = fragment.get("index") or 0
                    if not isinstance(index, int):
                        raise TypeError(f"a tool call's 'index' is a {type(index).__name__}, not an integer")
                    slot = reply.partial.setdefault(index, _PartialCall())
                    slot.id = str(fragment.get("id") or slot.id)
                    if isinstance(function := fragment.get("function"), dict):
                        slot.name = str(function.get("name") or slot.name)
                        if arguments := function.get("arguments"):
                            if not isinstance(arguments, str):
                                raise TypeError(f"a tool call's 'arguments' is a {type(arguments).__name__}")
                            reply.argument_chars += len(arguments)
                            if reply.argument_chars > wire_limits.MAX_TOOL_ARGUMENT_CHARS:
                                raise wire_limits.tool_arguments_failure(self.endpoint)
                            slot.arguments.append(arguments)
            if choice.get("finish_reason"):
                reply.finish = str(choice["finish_reason"])
        return events

    def _native_call(self, slot: _PartialCall) -> ToolCall:
        raw = "".join(slot.arguments)
        arguments, error = toolcall_text.parse_arguments(raw)
        return ToolCall(id=slot.id or self._new_call_id(), name=slot.name, arguments=arguments,
                        raw_arguments=raw, parse_error=error)


def _with_system(messages: list[ChatMessage], instructions: str) -> list[ChatMessage]:
    """Add ``instructions`` to the first system message, or put one first."""
    if messages and messages[0].role == "system":
        first = messages[0]
        return [first.model_copy(update={"content": f"{first.content}\n\n{instructions}"}), *messages[1:]]
    return [ChatMessage(role="system", content=instructions), *messages]


def _wire_message(message: ChatMessage) -> dict[str, Any]:
    """One message in Chat Completions form."""
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": message.content}
    wire: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.role == "user" and (files := attachments.wanted("chat", message)):
        wire["content"] = [{"type": "text", "text": message.content}, *(_chat_part(a) for a in files)]
    if message.role == "assistant" and message.tool_calls:
        wire["content"] = message.content or None
        wire["tool_calls"] = [
            {"id": c.id, "type": "function",
             "function": {"name": c.name, "arguments": c.raw_arguments or json.dumps(c.arguments)}}
            for c in message.tool_calls
        ]
    return wire


def _chat_part(attachment: Attachment) -> dict[str, Any]:
    """An image, audio or video content part, as OpenAI (audio) and vLLM/Qwen (video) take them."""
    if attachment.kind == "audio":
        audio_format = "mp3" if attachment.mime_type == "audio/mpeg" else "wav"
        return {"type": "input_audio",
                "input_audio": {"data": attachments.base64_data(attachment), "format": audio_format}}
    if attachment.kind == "video":
        return {"type": "video_url", "video_url": {"url": attachments.data_url(attachment)}}
    return {"type": "image_url", "image_url": {"url": attachments.data_url(attachment)}}


def create(config: BackendConfig, context: BackendContext, retrier: Retrier | None = None
           ) -> ChatCompletionsBackend:
    """Factory for every Chat Completions type; see ``configs/backend_types.py`` for each one's defaults."""
    preset = lookup_type(config.type)
    if preset is None or preset.wire != "chat":
        raise BackendError(f"backend.type {config.type!r} is not a Chat Completions type")
    if config.type == "azure_openai":
        base_url = config.base_url or lookup(("AZURE_OPENAI_ENDPOINT",), context.env)
        if not base_url:
            raise PermanentBackendError("backend 'azure_openai' needs an endpoint: set AZURE_OPENAI_ENDPOINT in the"
                               " environment or ./.env (or base_url in the config)")
    else:
        base_url = config.base_url or preset.base_url or "https://api.openai.com/v1"
    api_key: str | None
    if (preset.keys and preset.key_always) or "api.openai.com" in base_url:
        api_key = require_key(config.type, config.api_key, preset.keys or ("OPENAI_API_KEY",), context.env)
    else:
        # A provider key from the environment is never sent to some other host.
        api_key = config.api_key
    model = config.model or preset.model
    if not model:
        if config.type in ("chatcompletion", "azure_openai", "poe"):
            raise PermanentBackendError(f"backend {config.type!r} needs 'model' (the model or deployment name)")
        model = "default"
    return ChatCompletionsBackend(config, context, preset=preset, base_url=base_url, api_key=api_key,
                                  model=model, retrier=retrier)
