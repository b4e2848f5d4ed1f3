"""What every SDK-driven HTTP backend shares: client lifetime, the retry runner, usage.

A subclass says how to build its SDK client (with the SDK's retries off) and how one
attempt turns a request into normalised events; this class wraps each attempt in the
common retry policy, deadlines and circuit breaker, and reports attempts to the agent.

What a provider sends is checked where it is read: every client's bytes are bounded
(``backends/wire_limits.py``); a reply the SDK cannot decode, or whose shape our parsing
cannot read, ends the attempt as a provider fault (``StreamFailure``, kind ``protocol``,
one line naming the provider and endpoint: ``_replies``, ``_parsing``); usage numbers are
taken only when they are counts (``_usage``), so a server cannot move the run's budgets.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import ssl
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from typing import Any, ClassVar
from urllib.parse import urlsplit

from massgen.backends import wire_limits
from massgen.backends.base import BackendContext
from massgen.backends.circuit import breaker_key
from massgen.backends.pricing import cost_usd
from massgen.backends.retry import AttemptClock, Failure, Retrier, RetryPolicy, StreamFailure, classify
from massgen.configs.schema import BackendConfig
from massgen.messages.stream import ModelRequest, StreamEvent, Usage

# Connect and per-read limits for the SDK's own HTTP client; our deadlines do the real work.
DEFAULT_HTTP_TIMEOUT_S = 600.0
# The most tokens one call may report for one side; a larger (or negative, or non-integer) count is ignored.
MAX_USAGE_TOKENS = 100_000_000
# What a provider's reply can raise when its shape is not what the protocol says (pydantic's
# ValidationError and json's JSONDecodeError are ValueErrors).
MALFORMED = (ValueError, TypeError, AttributeError, LookupError)


def one_line(exc: BaseException, limit: int = 200) -> str:
    """An exception in one short line: pydantic's first error (where and what), else the first line of its text."""
    errors = getattr(exc, "errors", None)
    if callable(errors) and type(exc).__name__ == "ValidationError":
        with contextlib.suppress(Exception):
            found = errors()
            first = found[0]
            where = ".".join(str(part) for part in first.get("loc", ())) or "value"
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            return f"{where}: {first.get('msg', 'invalid')}{more}"[:limit]
    text = (str(exc).strip().splitlines() or [""])[0]
    return f"{type(exc).__name__}: {text}"[:limit] if text else type(exc).__name__


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
        hooks = wire_limits.event_hooks(wire_limits.http_module(http_client))  # every reply bounded, no redirect
        return client(api_key=self._api_key, base_url=self.base_url, max_retries=0,
                      timeout=self.config.timeout_seconds or DEFAULT_HTTP_TIMEOUT_S,
                      http_client=http_client(verify=shared_ssl_context(), event_hooks=hooks))

    def _attempt(self, request: ModelRequest, clock: AttemptClock) -> AsyncGenerator[StreamEvent, None]:
        raise NotImplementedError

    def _classify(self, exc: BaseException) -> Failure | None:
        """``classify``, after unwrapping our own ``StreamFailure`` (a cap of ``wire_limits``) that an SDK
        re-raised as the cause of its own error."""
        cause = exc.__cause__
        while cause is not None:
            if isinstance(cause, StreamFailure):
                return classify(cause)
            cause = cause.__cause__
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

    def _usage(self, input_tokens: object, output_tokens: object) -> Usage:
        """The call's usage from the provider's counts; a count that is not one is ignored (see ``_count``)."""
        tokens_in, tokens_out = self._count(input_tokens, "input_tokens"), self._count(output_tokens, "output_tokens")
        return Usage(input_tokens=tokens_in, output_tokens=tokens_out,
                     cost_usd=cost_usd(self.model, tokens_in, tokens_out))

    def _count(self, value: object, name: str) -> int:
        """A token count as the provider sent it, if it is one: an int from 0 to ``MAX_USAGE_TOKENS``.
        Anything else (negative, huge, a string, a float) counts 0, with a ``backend.usage_ignored`` event
        in the trace: a server's numbers never lower or blow up the run's totals and budgets."""
        if value is None:
            return 0
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_USAGE_TOKENS:
            return value
        self._emit("backend.usage_ignored", {
            "field": name, "value": repr(value)[:80],
            "reason": f"not a token count (an integer from 0 to {MAX_USAGE_TOKENS})",
        })
        return 0

    def _malformed(self, what: str, exc: BaseException) -> StreamFailure:
        """A reply the provider's protocol does not allow, as a retryable provider fault in one line."""
        return StreamFailure(f"{self.endpoint}: malformed {what} from {self.provider}: {one_line(exc)}",
                             retryable=True, kind="protocol")

    @contextlib.contextmanager
    def _parsing(self, what: str) -> Iterator[None]:
        """Reading one of the provider's events: a shape it cannot have by the protocol is a provider fault
        (``_malformed``), never an error of the agent."""
        try:
            yield
        except MALFORMED as exc:
            raise self._malformed(what, exc) from exc

    async def _replies(self, source: Any, clock: AttemptClock) -> AsyncIterator[Any]:
        """``clock.chunks(source)``: the SDK's stream under our deadlines, where what the SDK cannot decode
        (not JSON, not the protocol's shape) ends the attempt as a provider fault."""
        iterator = clock.chunks(source).__aiter__()
        while True:
            try:
                item = await iterator.__anext__()
            except StopAsyncIteration:
                return
            except MALFORMED as exc:
                raise self._malformed("stream event", exc) from exc
            yield item

    def _max_tokens(self, request: ModelRequest) -> int | None:
        return request.max_tokens or self.config.max_tokens

    def _temperature(self, request: ModelRequest) -> float | None:
        return request.temperature if request.temperature is not None else self.config.temperature
