"""Chat Completions on the wire: one streamed POST, its ``data:`` chunks as plain dicts, over httpx.

The ``openai`` SDK spends about 0.45 s of CPU importing its typed models before it sends a
byte, more than a whole three-agent run against a local server costs; the Chat Completions
stream is one POST and JSON ``data:`` lines, so the Chat Completions backends speak it here
directly (the Responses backend keeps the SDK). The request is the one the SDK sends (URL,
``Authorization`` or Azure's ``api-key`` and ``api-version``, ``OpenAI-Organization`` and
``OpenAI-Project`` from the environment), and errors keep the shape
``retry.classify`` reads from the SDK's: a refused request raises ``ChatStatusError`` with
``status_code``, ``body`` and ``response``; an error object inside a 200 stream, the SDK's
``APIError``, becomes a ``StreamFailure`` with the same message and retry verdict. Unlike the SDK,
no redirect is followed (the request holds the prompt), and every byte read is bounded
(``backends/wire_limits.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from massgen.backends import wire_limits
from massgen.backends.retry import StreamFailure

# Words in an in-stream error object that say "try again" (as retry.classify reads an SDK APIError).
_RETRYABLE_WORDS = ("server_error", "overloaded", "rate_limit", "internal")
_DRAIN_S = 0.1  # how long the bytes after [DONE] are waited for (the SDK's limit)


class ChatStatusError(Exception):
    """The server refused the request (HTTP 4xx/5xx); read by ``retry.classify`` like the SDK's error."""

    def __init__(self, message: str, *, status_code: int, body: object, response: httpx.Response) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.body = body
        self.response = response


class ChatStream:
    """The chunks of one streamed completion, as dicts; ``close`` releases the connection."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._chunks()

    async def _chunks(self) -> AsyncIterator[dict[str, Any]]:
        events = _sse_data(self.response.aiter_lines())
        async for data in events:
            if data.startswith("[DONE]"):
                await _drain(events)
                return
            try:
                chunk = json.loads(data)
            except ValueError as exc:
                raise StreamFailure(f"{wire_limits.origin(self.response.request.url)}: malformed stream chunk: {exc}",
                                    retryable=True) from None
            if isinstance(chunk, dict) and chunk.get("error"):
                error = chunk["error"]
                message = error.get("message") if isinstance(error, dict) else None
                if not isinstance(message, str) or not message:
                    message = "An error occurred during streaming"
                retryable = any(word in f"{error}".lower() for word in _RETRYABLE_WORDS)
                raise StreamFailure(message, retryable=retryable, kind="protocol")
            if isinstance(chunk, dict):
                yield chunk

    async def close(self) -> None:
        await self.response.aclose()


async def _drain(events: AsyncIterator[str]) -> None:
    """Read what follows ``[DONE]`` (briefly, errors ignored) so the connection can be reused, as the SDK does."""
    with contextlib.suppress(TimeoutError, httpx.HTTPError):
        async with asyncio.timeout(_DRAIN_S):
            async for _ in events:
                pass


async def _sse_data(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    """The data of each server-sent event (multi-line data joined by newlines); comments skipped."""
    data: list[str] = []
    async for line in lines:
        if not line:
            if data:
                yield "\n".join(data)
                data = []
            continue
        field, _, value = line.partition(":")
        if field == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    if data:
        yield "\n".join(data)


class ChatClient:
    """Posts streamed Chat Completions requests to one OpenAI-compatible base URL (or Azure deployment)."""

    def __init__(self, base_url: str, api_key: str, *, timeout: float, verify: Any,
                 azure_api_version: str | None = None) -> None:
        self.azure_api_version = azure_api_version
        headers = {"Accept": "application/json"}
        if azure_api_version is not None:
            headers["api-key"] = api_key
            base_url = base_url.rstrip("/") + "/openai"
        else:
            headers["Authorization"] = f"Bearer {api_key}"
        for env, header in (("OPENAI_ORG_ID", "OpenAI-Organization"), ("OPENAI_PROJECT_ID", "OpenAI-Project")):
            if os.environ.get(env):
                headers[header] = os.environ[env]
        self.base_url = base_url.rstrip("/")
        # No redirect is followed and every reply is bounded: see backends/wire_limits.py.
        self._http = httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(timeout), verify=verify,
                                       follow_redirects=False, event_hooks=wire_limits.event_hooks(httpx),
                                       limits=httpx.Limits(max_connections=1000, max_keepalive_connections=100))

    def _url(self, body: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
        if self.azure_api_version is None:
            return f"{self.base_url}/chat/completions", {}
        return (f"{self.base_url}/deployments/{body['model']}/chat/completions",
                {"api-version": self.azure_api_version})

    async def stream(self, body: Mapping[str, Any]) -> ChatStream:
        """Send the request; the stream once the server accepted it, else ``ChatStatusError``."""
        url, params = self._url(body)
        request = self._http.build_request("POST", url, json=body, params=params)
        response = await self._http.send(request, stream=True)
        if response.status_code >= 400:
            try:
                await response.aread()  # at most wire_limits.MAX_ERROR_BODY_BYTES
            finally:
                await response.aclose()
            raise _status_error(response)
        return ChatStream(response)

    async def close(self) -> None:
        await self._http.aclose()


def _status_error(response: httpx.Response) -> ChatStatusError:
    """The SDK's wording (``Error code: N - message``) and its ``body``: the JSON's ``error`` object, else the text."""
    message = f"Error code: {response.status_code}"
    text = response.text.strip()
    body: object = text
    try:
        body = json.loads(text)
    except ValueError:
        pass
    else:
        error = body.get("error", body) if isinstance(body, dict) else None
        if isinstance(error, dict) and isinstance(error.get("message"), str) and error["message"]:
            message += f" - {error['message']}"
    data = body.get("error", body) if isinstance(body, dict) else body
    return ChatStatusError(message, status_code=response.status_code, body=data, response=response)
