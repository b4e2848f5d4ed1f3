"""What every SDK-driven HTTP backend shares: client lifetime, the retry runner, usage.

A subclass says how to build its SDK client (with the SDK's retries off) and how one
attempt turns a request into normalised events; this class wraps each attempt in the
common retry policy, deadlines and circuit breaker, and reports attempts to the agent.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import ssl
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any, ClassVar
from urllib.parse import urlsplit

from massgen.backends.base import BackendContext
from massgen.backends.circuit import breaker_key
from massgen.backends.pricing import cost_usd
from massgen.backends.retry import AttemptClock, Failure, Retrier, RetryPolicy, classify
from massgen.configs.schema import BackendConfig
from massgen.messages.stream import ModelRequest, StreamEvent, Usage

# Connect and per-read limits for the SDK's own HTTP client; our deadlines do the real work.
DEFAULT_HTTP_TIMEOUT_S = 600.0


_ssl_lock = threading.Lock()


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    import httpx

    return httpx.create_ssl_context()


def shared_ssl_context() -> ssl.SSLContext:
    """httpx's default verifying context (honours SSL_CERT_FILE/SSL_CERT_DIR), built once per process.

    Building one costs 20-40 ms, and every SDK client would build its own, even for a
    plain-HTTP local server. It holds only the trusted CA bundle, so one per process is
    deliberate; connections, pools and breakers stay per backend. The lock makes the agents
    that ask at once (and ``backends.preload``) wait for one build instead of each making one.
    """
    with _ssl_lock:
        return _ssl_context()


def endpoint_key(base_url: str) -> str:
    """``scheme://host:port`` of a base URL: the unit a circuit breaker protects."""
    parts = urlsplit(base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.scheme}://{parts.hostname}:{port}"


def retrier_for(config: BackendConfig, context: BackendContext | None = None) -> Retrier:
    """The default runner, with the config's ``timeout_seconds`` as the first-byte deadline
    and the run's breakers (``context.breakers``) when there is a run."""
    policy = RetryPolicy()
    if config.timeout_seconds is not None:
        policy = dataclasses.replace(policy, first_byte_timeout_s=config.timeout_seconds)
    if context is not None and context.breakers is not None:
        return Retrier(policy=policy, breakers=context.breakers)
    return Retrier(policy=policy)


class HttpBackend:
    """Base of the cloud and OpenAI-compatible backends; see the module docstring."""

    provider: ClassVar[str] = "http"

    def __init__(self, config: BackendConfig, context: BackendContext, *, base_url: str,
                 api_key: str | None, model: str, retrier: Retrier | None = None) -> None:
        self.config = config
        self.context = context
        self.base_url = base_url
        self.model = model
        self._api_key = api_key
        self.retrier = retrier or retrier_for(config, context)
        self.endpoint = endpoint_key(base_url)
        self._client: Any = None
        self._ids = itertools.count(1)

    def __repr__(self) -> str:  # never show the key
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"

    # -- subclass hooks -------------------------------------------------------------------------
    def _make_client(self) -> Any:
        raise NotImplementedError

    def _sdk_client(self, client: Callable[..., Any], http_client: Callable[..., Any]) -> Any:
        """An SDK's async client (openai's, anthropic's) as every such backend builds it: the SDK's own retries
        off (``backends/retry.py`` retries), the config's timeout, and the process's one TLS context."""
        return client(api_key=self._api_key, base_url=self.base_url, max_retries=0,
                      timeout=self.config.timeout_seconds or DEFAULT_HTTP_TIMEOUT_S,
                      http_client=http_client(verify=shared_ssl_context()))

    def _attempt(self, request: ModelRequest, clock: AttemptClock) -> AsyncGenerator[StreamEvent, None]:
        raise NotImplementedError

    def _classify(self, exc: BaseException) -> Failure | None:
        return classify(exc)

    async def _close_client(self, client: Any) -> None:
        await client.close()

    # -- Backend protocol -----------------------------------------------------------------------
    @property
    def decides_separately(self) -> bool:
        return False

    def replayed(self, request: ModelRequest, tool_calls: int) -> None:
        """Nothing to move on: the backend keeps no state between calls."""

    async def start(self) -> None:
        if self._client is None:
            self._client = self._make_client()

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await self._close_client(client)

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if self._client is None:
            self._client = self._make_client()
        return self.retrier.run(
            lambda clock: self._attempt(request, clock),
            endpoint=self.endpoint, provider=self.provider, classifier=self._classify,
            on_event=self.context.on_event, secrets=(self._api_key,),
            breaker_key=breaker_key(self.endpoint, self.model), use_breaker=request.kind != "present",
        )

    # -- helpers --------------------------------------------------------------------------------
    def _emit(self, name: str, info: dict[str, Any]) -> None:
        if self.context.on_event is not None:
            self.context.on_event(name, {"provider": self.provider, "endpoint": self.endpoint, **info})

    def _new_call_id(self) -> str:
        return f"call_{self.context.agent_id}_{next(self._ids)}"

    def _usage(self, input_tokens: int | None, output_tokens: int | None) -> Usage:
        tokens_in, tokens_out = input_tokens or 0, output_tokens or 0
        return Usage(input_tokens=tokens_in, output_tokens=tokens_out,
                     cost_usd=cost_usd(self.model, tokens_in, tokens_out))

    def _max_tokens(self, request: ModelRequest) -> int | None:
        return request.max_tokens or self.config.max_tokens

    def _temperature(self, request: ModelRequest) -> float | None:
        return request.temperature if request.temperature is not None else self.config.temperature
