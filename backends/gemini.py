"""The ``gemini`` backend on google-genai (``generate_content_stream``, SSE on the wire).

Gemini sends function calls whole (arguments already parsed), marks thought parts
with ``thought``, and repeats cumulative ``usage_metadata`` on chunks; the last one
counts. The SDK's retries stay off (``HttpRetryOptions(attempts=1)``) under our policy.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any

import httpx

from massgen.backends import attachments, native_tools, wire_limits
from massgen.backends.base import BackendContext, BackendError
from massgen.backends.factories import IMPORTS
from massgen.backends.http_base import DEFAULT_HTTP_TIMEOUT_S, HttpBackend, shared_ssl_context
from massgen.backends.keys import require_key
from massgen.backends.retry import AttemptClock, Retrier, StreamFailure
from massgen.configs.schema import BackendConfig
from massgen.messages.stream import (
    Finish,
    ModelRequest,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallEvent,
)

DEFAULT_MODEL = "gemini-2.5-flash"
_FINISH = {"STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content_filter",
           "RECITATION": "content_filter", "PROHIBITED_CONTENT": "content_filter"}


def _contents(request: ModelRequest) -> tuple[str | None, list[dict[str, Any]]]:
    """System text apart; user/model turns with function calls and responses as parts."""
    system = "\n\n".join(m.content for m in request.messages if m.role == "system") or None
    names_by_id = {c.id: c.name for m in request.messages for c in m.tool_calls}
    contents: list[dict[str, Any]] = []
    for message in request.messages:
        if message.role == "system":
            continue
        role = "model" if message.role == "assistant" else "user"
        parts: list[dict[str, Any]] = []
        if message.role == "tool":
            name = message.name or names_by_id.get(message.tool_call_id or "", "")
            parts.append({"function_response": {"name": name, "response": {"result": message.content}}})
        elif message.content:
            parts.append({"text": message.content})
        if message.role == "user":
            parts.extend({"text": attachments.text(a)} if attachments.is_text(a) else
                         {"inline_data": {"mime_type": a.mime_type, "data": attachments.payload(a)}}
                         for a in attachments.wanted("gemini", message))
        parts.extend({"function_call": {"name": c.name, "args": c.arguments}} for c in message.tool_calls)
        if not parts:
            continue
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": role, "parts": parts})
    return system, contents


class GeminiBackend(HttpBackend):
    provider = "gemini"
    _http: httpx.AsyncClient | None = None

    def _make_client(self) -> Any:
        with IMPORTS:  # never beside another agent thread's import of this SDK
            from google import genai
            from google.genai import types

        timeout_s = self.config.timeout_seconds or DEFAULT_HTTP_TIMEOUT_S
        # Our own httpx client: google-genai would otherwise switch to aiohttp whenever that happens
        # to be installed, and behave differently from one environment to the next.
        # Every reply bounded and no redirect followed (backends/wire_limits.py).
        self._http = httpx.AsyncClient(timeout=timeout_s, verify=shared_ssl_context(),
                                       event_hooks=wire_limits.event_hooks(httpx))
        options = types.HttpOptions(base_url=self.base_url, timeout=int(timeout_s * 1000),
                                    retry_options=types.HttpRetryOptions(attempts=1),
                                    httpx_async_client=self._http)
        return genai.Client(api_key=self._api_key, http_options=options)

    async def _close_client(self, client: Any) -> None:
        await client.aio.aclose()
        client.close()
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    def _config(self, request: ModelRequest, system: str | None) -> Any:
        from google.genai import types

        tools: list[Any] = []
        if request.tools:
            tools = [types.Tool(function_declarations=[
                types.FunctionDeclaration(name=t.name, description=t.description,
                                          parameters_json_schema=t.parameters)
                for t in request.tools
            ])]
        if request.kind == "turn":
            tools += native_tools.gemini_tools(self.config)  # google_search, code_execution: run by Google
        return types.GenerateContentConfig(
            system_instruction=system, tools=tools or None, temperature=self._temperature(request),
            max_output_tokens=self._max_tokens(request), seed=self.config.seed, top_p=self.config.top_p,
            thinking_config=native_tools.gemini_thinking(self.config),
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )

    async def _attempt(self, request: ModelRequest, clock: AttemptClock) -> AsyncGenerator[StreamEvent, None]:
        system, contents = _contents(request)
        stream = await clock.wait(self._client.aio.models.generate_content_stream(
            model=self.model, contents=contents, config=self._config(request, system)))
        usage: Any = None
        finish: str | None = None
        calls = 0
        try:
            async for chunk in self._replies(stream, clock):
                events: list[StreamEvent] = []
                with self._parsing("chunk"):
                    usage = chunk.usage_metadata or usage
                    for candidate in (chunk.candidates or [])[:1]:
                        for part in (candidate.content.parts if candidate.content else None) or ():
                            if part.function_call is not None:
                                events.append(ToolCallEvent(call=self._tool_call(part.function_call)))
                            elif part.text and part.thought:
                                events.append(ReasoningDelta(text=part.text))
                            elif part.text:
                                events.append(TextDelta(text=part.text))
                        if candidate.finish_reason is not None:
                            name = getattr(candidate.finish_reason, "name", str(candidate.finish_reason))
                            finish = _FINISH.get(name, name.lower())
                for event in events:
                    calls += isinstance(event, ToolCallEvent)
                    yield event
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()
        if finish is None:
            raise StreamFailure("stream ended before a finish reason", retryable=True, kind="cut")
        with self._parsing("usage_metadata"):
            counts = [getattr(usage, name, None) for name in
                      ("prompt_token_count", "candidates_token_count", "thoughts_token_count")]
        output = self._count(counts[1], "candidates_token_count") + self._count(counts[2], "thoughts_token_count")
        yield self._usage(counts[0], output)
        yield Finish(reason="tool_calls" if calls else finish)

    def _tool_call(self, call: Any) -> ToolCall:
        arguments = dict(call.args or {})
        return ToolCall(id=call.id or self._new_call_id(), name=call.name or "", arguments=arguments,
                        raw_arguments=json.dumps(arguments))


def create(config: BackendConfig, context: BackendContext, retrier: Retrier | None = None) -> GeminiBackend:
    if config.type not in ("gemini", "gemini_cli"):
        raise BackendError(f"backend.type {config.type!r} is not 'gemini'")
    api_key = require_key(config.type, config.api_key, ("GEMINI_API_KEY", "GOOGLE_API_KEY"), context.env)
    return GeminiBackend(config, context, base_url=config.base_url or "https://generativelanguage.googleapis.com/",
                         api_key=api_key, model=config.model or DEFAULT_MODEL, retrier=retrier)
