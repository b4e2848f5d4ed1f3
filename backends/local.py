"""The ``local`` backend: a GGUF model on an embedded llama.cpp server, no API key needed.

It resolves the model (assembling it from the chunk packages once), shares one
``llama_cpp.server`` process with every agent using the same file, and streams Chat
Completions from it. That server does not turn a model's reply into ``tool_calls``,
so workflow turns use a JSON-schema ``response_format`` (llama.cpp enforces it with a
grammar): one object schema per action under ``oneOf``, ``action`` naming the tool.
The JSON text streams as reasoning so progress is visible; the finished object
becomes a ``ToolCallEvent``. A presentation (``kind == "present"``) is plain text.

Agents take turns on the shared server (``LlamaServer.slot``) and read its URL and
generation only once it is their turn, so a server that failed while they queued is
restarted once, by the caller that saw it fail, and never again by the queue behind it.

A server that stops answering is noticed here, not by the agent's idle deadline: after
``_SILENCE_S`` without a byte the call asks the server process whether it is alive and
answering (``LlamaServer.health``, a short deadline); one that is not is killed and
restarted. A caller waiting its turn checks the same way when the server has made no
progress for ``_QUEUE_STALL_S``, and gives up after the read timeout without progress.
When the server dies or hangs mid-call, the backend restarts it, says which server it was
(pid, port) and how it ended, and sends the call again if nothing of it reached the agent
yet; otherwise it yields a retryable ``StreamError``, and the agent's retry lands on the
new server. What the backend does with its server is reported as ``BackendEvent``s
(``local.progress``: assembly, start; ``local.server``: ready, failed, restarted), which the
trace keeps and the progress display prints.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx

from massgen.backends.base import BackendContext, BackendError, PermanentBackendError
from massgen.backends.llama_server import (
    Endpoint,
    LlamaServer,
    ServerExitedError,
    ServerStartError,
    acquire_server,
    release_server,
)
from massgen.backends.local_model import Progress, is_cached, resolve_model
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
# The server sends an SSE ping every 15 s while it computes, so a healthy one is never silent this long
# for long; past it, the call asks whether the server is still there (a cheap check, repeated as needed).
_SILENCE_S = 10.0
_HEALTH_TIMEOUT_S = 5.0
# A caller waiting its turn checks the server itself when nobody has heard from it for this long.
_QUEUE_STALL_S = 30.0
_ACTION = re.compile(r'"action"\s*:\s*"([^"]*)"')

T = TypeVar("T")


class _Unresponsive(Exception):
    """The server did not answer a health check while a call waited on it; ``str()`` says how."""


class ModelLoadError(ServerStartError, PermanentBackendError):
    """The server cannot load the model file, and the file checks out (or is the user's): no restart helps."""


@dataclass
class _Attempt:
    """What one call on the server came to, for ``stream`` to decide whether to send it again."""

    yielded: bool = False  # something of the reply reached the agent
    resend: bool = False  # the server was replaced before anything reached the agent: send it again


async def _next_line(lines: AsyncIterator[str]) -> str | None:
    try:
        return await anext(lines)
    except StopAsyncIteration:
        return None


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
        self.progress: Progress = progress or self._report_progress
        self.server: LlamaServer | None = None
        self._remote: RemoteServer | None = None  # a server this backend does not own (backends/remote_server.py)
        self._remote_url: str | None = None
        self._client: httpx.AsyncClient | None = None
        self._ids = itertools.count(1)

    def _report_progress(self, text: str) -> None:
        """Assembly and server start: a ``local.progress`` event the trace keeps and the display prints."""
        log.info("%s: %s", self.context.agent_id, text)
        if self.context.on_event is not None:
            self.context.on_event("local.progress", {"text": text})

    def _tell(self, text: str, **info: Any) -> None:
        """What happened to the server (ready, failed, restarted): a ``local.server`` event."""
        log.info("%s: %s", self.context.agent_id, text)
        if self.context.on_event is not None:
            self.context.on_event("local.server", {"text": text, **info})

    def _read_timeout(self) -> float:
        return self.config.timeout_seconds or DEFAULT_READ_TIMEOUT_S

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
            await self._first_start(server, model_path)
        except BaseException:
            self.server = None
            release_server(server)
            raise
        self._client = self._http_client()

    async def _first_start(self, server: LlamaServer, model_path: Path) -> None:
        """Start (or join) the server; when it cannot load the model, check the file before saying so.

        A cached model whose bytes changed behind its marker's back is found here: it is hashed again,
        rebuilt when damaged, and the server started once more. A load failure that remains is permanent.
        """
        before = _identity(model_path)
        try:
            await self._endpoint(server)
            return
        except ServerExitedError as exc:
            failure = exc
        if is_cached(self.config.model):
            await asyncio.to_thread(resolve_model, self.config.model, progress=self.progress, recheck=True)
            if _identity(model_path) != before:  # rebuilt (here or by another agent): try the new file
                await self._endpoint(server)
                return
            hint = (f"The model file {model_path} matches its sha256, so it is not damaged; the server could not "
                    "load it here (its output above says why: not enough memory is common; try a smaller n_ctx). "
                    f"If in doubt, delete it (`rm {model_path}`) and it is rebuilt on the next run.")
        else:
            hint = f"Check that {model_path} is a complete GGUF model file that llama.cpp can load."
        raise ModelLoadError(f"{failure} {hint}") from None

    async def _endpoint(self, server: LlamaServer) -> Endpoint:
        """The server's URL and generation, read together (starting it first if it is down)."""
        endpoint = await asyncio.to_thread(server.endpoint, self.progress)
        if endpoint.started:
            self._tell(f"the local model server ({endpoint.where}) is ready after "
                       f"{server.last_start_seconds or 0:.1f} s ({server.model_path.name})",
                       pid=endpoint.pid, port=endpoint.port, action="started")
        return endpoint

    def _http_client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=httpx.Timeout(self._read_timeout(), connect=5.0), trust_env=False)

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
            async for event in self._stream_holding_slot(None, None, self._remote_url, request, _Attempt()):
                yield event
            return
        server, client = self.server, self._client
        assert server is not None and client is not None
        gave_up = await self._take_turn(server)
        if gave_up is not None:
            yield gave_up
            return
        try:
            for resend in (False, True):
                try:
                    # Read only now that it is this call's turn: a server that failed while it queued has been
                    # replaced (or is replaced here, if found dead), and this call restarts no other.
                    endpoint = await self._endpoint(server)
                except ServerStartError as exc:
                    yield StreamError(message=str(exc), retryable=False)
                    return
                attempt = _Attempt(resend=False)
                async for event in self._stream_holding_slot(server, endpoint, endpoint.url, request, attempt,
                                                             may_resend=not resend):
                    attempt.yielded = True
                    yield event
                if not attempt.resend:
                    return
        finally:
            server.touch()
            server.slot.release()

    async def _take_turn(self, server: LlamaServer) -> StreamError | None:
        """Wait for the server's slot; None once held. A server nobody hears from is checked (and restarted
        if it does not answer); waiting gives up when it has made no progress for the read timeout."""
        polls = 0
        waiting_since = last_check = time.monotonic()
        while not server.slot.acquire(blocking=False):  # polled: a cancelled wait must never hold the slot
            await asyncio.sleep(_QUEUE_POLL_S)
            polls += 1
            now = time.monotonic()
            silent = now - server.last_activity
            if silent >= self._read_timeout():
                return StreamError(
                    message=f"gave up waiting for the local model server ({self._where(server)}) after "
                            f"{now - waiting_since:.0f} s: nothing was heard from it for {silent:.0f} s",
                    retryable=False)
            if silent >= _QUEUE_STALL_S and now - last_check >= _QUEUE_STALL_S:
                last_check = now
                generation, where = server.generation, self._where(server)
                problem = await asyncio.to_thread(server.health, _HEALTH_TIMEOUT_S)
                if problem is not None:  # the call ahead did not notice (it would have restarted it)
                    await self._replace(server, generation, f"the local model server ({where}) stopped "
                                        f"answering ({problem}) while calls queued on it", hung=True)
                    continue
            if polls % _QUEUE_REPORT_EVERY == 0 and self.context.on_event is not None and silent < _QUEUE_STALL_S:
                # Traced as a BackendEvent: the agent is waiting its turn on a server that is making progress,
                # not idle. Sent only then, so that waiting on a frozen server never hides it.
                self.context.on_event("local.queued", {"waited_s": round(now - waiting_since)})
        server.touch()
        return None

    @staticmethod
    def _where(server: LlamaServer) -> str:
        return f"pid {server.pid}, port {server.port}"

    async def _watched(self, step: Awaitable[T], server: LlamaServer | None) -> T:
        """Await one step of a call (the reply's head, its next line); while it is silent for ``_SILENCE_S``,
        check that the server is still there, and raise ``_Unresponsive`` when it is not."""
        task = asyncio.ensure_future(step)
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=_SILENCE_S)
                if done:
                    return task.result()
                if server is not None:
                    problem = await asyncio.to_thread(server.health, _HEALTH_TIMEOUT_S)
                    if problem is not None:
                        raise _Unresponsive(problem)
        finally:
            if not task.done():
                task.cancel()
                await asyncio.wait({task}, timeout=1.0)

    async def _stream_holding_slot(self, server: LlamaServer | None, endpoint: Endpoint | None, base_url: str,
                                   request: ModelRequest, attempt: _Attempt, *, may_resend: bool = False
                                   ) -> AsyncIterator[StreamEvent]:
        client = self._client
        assert client is not None
        body, schema = self._body(request)
        text: list[str] = []
        finish: str | None = None
        usage: dict[str, Any] | None = None
        pieces = 0
        try:
            head = client.send(client.build_request("POST", f"{base_url}/chat/completions", json=body), stream=True)
            response = await self._watched(head, server)
            try:
                if response.status_code != 200:
                    detail = (await response.aread()).decode("utf-8", "replace")[:500]
                    yield StreamError(
                        message=f"local model server answered {response.status_code}: {detail}",
                        status=response.status_code,
                        retryable=response.status_code >= 500,
                    )
                    return
                lines = response.aiter_lines()
                while (line := await self._watched(_next_line(lines), server)) is not None:
                    if server is not None:
                        server.touch()  # an SSE ping counts: the server is computing
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
            finally:
                await response.aclose()
        except _Unresponsive as exc:
            assert server is not None and endpoint is not None
            async for event in self._server_failed(server, endpoint, f"stopped answering ({exc})", attempt,
                                                   may_resend=may_resend, hung=True):
                yield event
            return
        except httpx.TimeoutException as exc:
            # Slow is not dead: the server answered its health checks all along.
            yield StreamError(message=f"local model server timed out ({type(exc).__name__})", retryable=True)
            return
        except json.JSONDecodeError as exc:
            yield StreamError(message=f"local model server sent a broken chunk ({exc})", retryable=True)
            return
        except httpx.TransportError as exc:
            if self._remote is not None:  # a server elsewhere: its runtime restarts it, and this agent
                yield await self._remote.call_failed(base_url, exc)
                return
            assert server is not None and endpoint is not None
            cause = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            async for event in self._server_failed(server, endpoint, None, attempt, may_resend=may_resend,
                                                   cause=cause):
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

    async def _server_failed(self, server: LlamaServer, endpoint: Endpoint, what: str | None, attempt: _Attempt,
                             *, may_resend: bool, hung: bool = False, cause: str = ""
                             ) -> AsyncIterator[StreamEvent]:
        """The server this call used failed: say which and how, restart it (once: only if nobody has), and
        send the call again or tell the agent to retry.

        ``what``: how it failed, when known (it stopped answering); else it is asked (``health``)."""
        where = f"the local model server ({endpoint.where})"
        if server.generation != endpoint.generation:
            text = f"{where} was replaced (pid {server.pid}) while this call used it"
            restarted = True
        else:
            if what is None:
                problem = await asyncio.to_thread(server.health, _HEALTH_TIMEOUT_S)
                if problem is None:  # it answers: the connection broke, not the server
                    yield StreamError(message=f"the connection to {where} broke mid-call ({cause}); "
                                              "the server still answers", retryable=True)
                    return
                hung = not problem.startswith("it exited")
                what = (f"stopped answering ({problem})" if hung else problem.removeprefix("it ") + " mid-call")
            text = f"{where} {what}" + (f" ({cause})" if cause and hung else "")
            restarted = await self._replace(server, endpoint.generation, text, hung=hung)
        if not restarted:
            yield StreamError(message=f"{text}; it could not be restarted", retryable=False)
            return
        if may_resend and not attempt.yielded:
            attempt.resend = True  # nothing reached the agent: the same call goes to the new server
            return
        yield StreamError(message=f"{text}; restarted it as pid {server.pid}", retryable=True)

    async def _replace(self, server: LlamaServer, generation: int, text: str, *, hung: bool) -> bool:
        """Restart ``generation`` of the server (no-op if another caller did) and tell the user; False if it
        could not be started again (the reason is told)."""
        try:
            replaced = await asyncio.to_thread(server.replace, generation, self.progress, hung=hung)
        except ServerStartError as exc:
            self._tell(f"{text}; it could not be restarted: {exc}", action="failed")
            return False
        if not replaced:
            return True  # another caller replaced it first, and said so
        self._tell(f"{text}; restarted it as pid {server.pid} (port {server.port})", action="restarted",
                   pid=server.pid, port=server.port)
        return True


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns


def create(config: BackendConfig, context: BackendContext) -> LocalBackend:
    if not isinstance(config, LocalBackendConfig):
        raise BackendError("the local backend needs a 'local' backend config")
    return LocalBackend(config, context)


__all__ = ["DEFAULT_TURN_MAX_TOKENS", "LocalBackend", "chat_messages", "create"]
