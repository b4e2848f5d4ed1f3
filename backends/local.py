"""The ``local`` backend: a GGUF model on an embedded llama.cpp server, no API key needed.

It resolves the model (assembling it from the chunk packages once), shares one
``llama_cpp.server`` process with every agent using the same file, and streams Chat
Completions from it. That server does not turn a model's reply into ``tool_calls``,
so workflow turns use a JSON-schema ``response_format`` (llama.cpp enforces it with a
grammar): one object schema per action under ``oneOf``, ``action`` naming the tool.
The JSON text streams as reasoning so progress is visible; the finished object
becomes a ``ToolCallEvent``. A presentation (``kind == "present"``) is plain text.

When the server dies mid-call, the backend restarts it and yields a retryable
``StreamError``; the agent's retry then lands on the new server.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx

from massgen.backends.base import BackendContext, BackendError
from massgen.backends.llama_server import LlamaServer, ServerStartError, acquire_server, release_server
from massgen.backends.local_model import Progress, resolve_model
from massgen.backends.remote_server import RemoteServer, lookup
from massgen.backends.toolcall_text import (
    action_schema,
    flatten_messages,
    json_mode_instructions,
    parse_action_object,
    response_format,
)
from massgen.configs.schema import BackendConfig, LocalBackendConfig
from massgen.messages.stream import (
    Finish,
    ModelRequest,
    ReasoningDelta,
    StreamError,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    Usage,
)

log = logging.getLogger(__name__)

# A small model can fill a JSON string (or loop in text) forever; a cap turns that into a correctable call.
DEFAULT_TURN_MAX_TOKENS = 1024
# The server queues requests from agents sharing it, so a first byte can take a few calls' time.
DEFAULT_READ_TIMEOUT_S = 600.0
_QUEUE_POLL_S = 0.25
_QUEUE_REPORT_EVERY = 40  # polls: one report every 10 s of waiting
_ACTION = re.compile(r'"action"\s*:\s*"([^"]*)"')


def chat_messages(request: ModelRequest, extra_system: str | None = None) -> list[dict[str, str]]:
    """Provider-neutral history as plain chat turns any GGUF chat template accepts.

    Tool calls and results become text (the server has no tool roles); all system text
    goes first in one message; consecutive turns of one role are merged, because
    templates such as Gemma's raise unless user and assistant alternate.
    """
    flat = flatten_messages(request.messages)
    system = [m.content for m in flat if m.role == "system" and m.content]
    if extra_system:
        system.append(extra_system)
    out: list[dict[str, str]] = [{"role": "system", "content": "\n\n".join(system)}] if system else []
    for message in flat:
        if message.role == "system":
            continue
        role = "assistant" if message.role == "assistant" else "user"
        if out and out[-1]["role"] == role:
            out[-1]["content"] += "\n\n" + message.content
        else:
            out.append({"role": role, "content": message.content})
    if not any(m["role"] == "user" for m in out):
        out.append({"role": "user", "content": "Go ahead."})
    return out


class LocalBackend:
    """One agent's view of the shared local model server; see the module docstring."""

    # Workflow calls come through a grammar, so the turn lets the model reason in free text first
    # and then asks for a short constrained decision (actors/agent/turn.py, two-phase turns).
    decides_separately = True

    def __init__(
        self, config: LocalBackendConfig, context: BackendContext, progress: Progress | None = None
    ) -> None:
        self.config = config
        self.context = context
        self.progress: Progress = progress or (lambda text: log.info("%s: %s", context.agent_id, text))
        self.server: LlamaServer | None = None
        self._remote: RemoteServer | None = None  # a server this backend does not own (backends/remote_server.py)
        self._remote_url: str | None = None
        self._client: httpx.AsyncClient | None = None
        self._ids = itertools.count(1)

    def replayed(self, request: ModelRequest, tool_calls: int) -> None:
        """Nothing to move on: the server keeps no state between calls."""

    async def start(self) -> None:
        """Resolve (maybe assemble) the model, then start or join its shared server."""
        if self.server is not None or self._remote_url is not None:
            return
        remote = lookup(self.config.model)
        if remote is not None:  # the run placed this model's server elsewhere (on Ray): reach it over HTTP
            self.progress(f"waiting for the local model server {remote.name}")
            self._remote_url = await remote.base_url(self.config.server_start_timeout_seconds)
            self._remote = remote
            self._client = self._http_client()
            return
        model_path = await asyncio.to_thread(resolve_model, self.config.model, progress=self.progress)
        server = acquire_server(
            model_path,
            n_ctx=self.config.n_ctx,
            n_threads=self.config.n_threads,
            start_timeout=self.config.server_start_timeout_seconds,
        )
        self.server = server
        try:
            await asyncio.to_thread(server.ensure_running, self.progress)
        except BaseException:
            self.server = None
            release_server(server)
            raise
        self._client = self._http_client()

    def _http_client(self) -> httpx.AsyncClient:
        read = self.config.timeout_seconds or DEFAULT_READ_TIMEOUT_S
        return httpx.AsyncClient(timeout=httpx.Timeout(read, connect=5.0), trust_env=False)

    async def aclose(self) -> None:
        client, server = self._client, self.server
        self._client, self.server, self._remote, self._remote_url = None, None, None, None
        if client is not None:
            await client.aclose()
        if server is not None:
            await asyncio.to_thread(release_server, server)

    def _new_id(self) -> str:
        return f"call_{self.context.agent_id}_{next(self._ids)}"

    def _body(self, request: ModelRequest) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The request body, and the action schema when this is a JSON-mode turn."""
        schema: dict[str, Any] | None = None
        if request.kind == "turn" and request.tools:
            candidate = action_schema(request.tools, request.vote_targets)
            if candidate.get("oneOf", True):  # an empty oneOf: nothing the model could choose
                schema = candidate
        extra = json_mode_instructions(request.tools, request.vote_targets) if schema else None
        body: dict[str, Any] = {"messages": chat_messages(request, extra), "stream": True}
        temperature = request.temperature if request.temperature is not None else self.config.temperature
        if temperature is not None:
            body["temperature"] = temperature
        if self.config.seed is not None:
            body["seed"] = self.config.seed
        max_tokens = request.max_tokens or self.config.max_tokens
        if max_tokens is None and request.kind == "turn":
            max_tokens = DEFAULT_TURN_MAX_TOKENS
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if schema is not None:
            body["response_format"] = response_format(schema, "llamacpp")
        return body, schema

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if (self.server is None and self._remote_url is None) or self._client is None:
            await self.start()
        if self._remote_url is not None:  # its owner queues and supervises it; a failure ends this incarnation
            async for event in self._stream_holding_slot(None, self._remote_url, request):
                yield event
            return
        server, client = self.server, self._client
        assert server is not None and client is not None
        try:
            # A server found dead between calls is restarted here, before anyone sees an error.
            base_url = await asyncio.to_thread(server.ensure_running, self.progress)
        except ServerStartError as exc:
            yield StreamError(message=str(exc), retryable=False)
            return
        polls = 0
        while not server.slot.acquire(blocking=False):  # polled: a cancelled wait must never hold the slot
            await asyncio.sleep(_QUEUE_POLL_S)
            polls += 1
            if polls % _QUEUE_REPORT_EVERY == 0 and self.context.on_event is not None:
                # Traced as a BackendEvent: the agent is waiting its turn on the shared server, not idle.
                self.context.on_event("local.queued", {"waited_s": round(polls * _QUEUE_POLL_S)})
        try:
            async for event in self._stream_holding_slot(server, base_url, request):
                yield event
        finally:
            server.slot.release()

    async def _stream_holding_slot(self, server: LlamaServer | None, base_url: str, request: ModelRequest
                                   ) -> AsyncIterator[StreamEvent]:
        client = self._client
        assert client is not None
        generation = server.generation if server is not None else 0
        body, schema = self._body(request)
        text: list[str] = []
        finish: str | None = None
        usage: dict[str, Any] | None = None
        pieces = 0
        try:
            async with client.stream("POST", f"{base_url}/chat/completions", json=body) as response:
                if response.status_code != 200:
                    detail = (await response.aread()).decode("utf-8", "replace")[:500]
                    yield StreamError(
                        message=f"local model server answered {response.status_code}: {detail}",
                        status=response.status_code,
                        retryable=response.status_code >= 500,
                    )
                    return
                async for line in response.aiter_lines():
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        break
                    chunk = json.loads(data)
                    usage = chunk.get("usage") or usage
                    for choice in chunk.get("choices") or ():
                        piece = (choice.get("delta") or {}).get("content")
                        if piece:
                            pieces += 1
                            text.append(piece)
                            yield ReasoningDelta(text=piece) if schema is not None else TextDelta(text=piece)
                        finish = choice.get("finish_reason") or finish
        except httpx.TimeoutException as exc:
            # Slow is not dead: other agents' calls may be queued on the same server.
            yield StreamError(message=f"local model server timed out ({type(exc).__name__})", retryable=True)
            return
        except json.JSONDecodeError as exc:
            yield StreamError(message=f"local model server sent a broken chunk ({exc})", retryable=True)
            return
        except httpx.TransportError as exc:
            if self._remote is not None:  # a server elsewhere: its runtime restarts it, and this agent
                yield await self._remote.call_failed(base_url, exc)
                return
            assert server is not None
            async for event in self._server_failed(server, generation, exc):
                yield event
            return
        if finish is None:
            # The server ended the stream without saying why (it was interrupted): not the model's fault.
            yield StreamError(message="local model server ended the reply without a finish reason",
                              retryable=True)
            return
        calls = self._calls("".join(text), request) if schema is not None else []
        for call in calls:
            yield ToolCallEvent(call=call)
        prompt_chars = sum(len(m["content"]) for m in body["messages"])
        yield Usage(
            input_tokens=int((usage or {}).get("prompt_tokens") or prompt_chars // 4),
            output_tokens=int((usage or {}).get("completion_tokens") or pieces),
        )
        yield Finish(reason="tool_calls" if calls else finish)

    def _calls(self, text: str, request: ModelRequest) -> list[ToolCall]:
        """The JSON reply as tool calls; broken JSON gives one call with ``parse_error`` set."""
        names = [t.name for t in request.tools]
        calls = parse_action_object(text, self._new_id, names)
        if calls:
            return calls[:1]
        try:
            json.loads(text)
            error = "the reply is JSON but names no known action"
        except json.JSONDecodeError as exc:
            error = f"the reply is not complete JSON ({exc})"
        match = _ACTION.search(text)
        guess = match.group(1) if match and match.group(1) in names else names[0]
        return [ToolCall(id=self._new_id(), name=guess, raw_arguments=text, parse_error=error)]

    async def _server_failed(
        self, server: LlamaServer, generation: int, exc: Exception
    ) -> AsyncIterator[StreamEvent]:
        """Restart the server this call was using, then tell the agent to retry."""
        cause = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        was_alive = server.is_alive()
        try:
            await asyncio.to_thread(server.restart, generation, self.progress)
        except ServerStartError as start_exc:
            yield StreamError(
                message=f"local model server failed ({cause}) and could not be restarted: {start_exc}",
                retryable=False,
            )
            return
        what = "stopped answering" if was_alive else "died"
        yield StreamError(
            message=f"local model server {what} mid-call ({cause}); restarted it as pid {server.pid}",
            retryable=True,
        )


def create(config: BackendConfig, context: BackendContext) -> LocalBackend:
    if not isinstance(config, LocalBackendConfig):
        raise BackendError("the local backend needs a 'local' backend config")
    return LocalBackend(config, context)


__all__ = ["DEFAULT_TURN_MAX_TOKENS", "LocalBackend", "chat_messages", "create"]
