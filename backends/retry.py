"""One retry policy for every HTTP backend, in place of the SDKs' own (which are turned off).

Why ours: the SDKs retry blindly inside one call, cannot see our deadlines, and would
replay a half-read stream. Here an attempt is retried only before its first event
reached the caller; connection errors, our own deadlines, 408, 409, 429 and 5xx are
retried with exponential backoff and jitter (``Retry-After`` wins, up to a cap); a stream
that was flowing and broke (a cut, not a refusal) is retried after a short, fixed delay; other
4xx go to the user at once with the provider's message. Each endpoint has a circuit
breaker, opened at once when a call has used all its attempts on the endpoint's faults (a
persistent fault then costs one call's attempts, not one per restart), and every attempt is
reported through ``on_event`` so it lands in the trace.

The policy has two depths, both here, on one backoff curve (``exponential_backoff``): ``RetryPolicy``, the
attempts inside one model call, and ``CallRetry``, the calls inside one turn. An attempt is retried only
before its first event reached the caller, since after that the caller has seen text it would have to take
back. But text is not a commitment: until a tool call (``new_answer``, ``vote``, any tool) arrived, nothing
of the call was acted on, so the turn (``actors/agent/turn.py``) drops the partial text and sends the same
request again, a bounded number of times with a short backoff: a cut stream costs one more call, not a
restart of the whole incarnation. Each such retry is a ``BackendEvent`` (``call.retry``) in the trace.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import random
import sys
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import httpx

from massgen.backends.base import PERMANENT_STATUSES
from massgen.backends.circuit import BreakerRegistry
from massgen.backends.keys import redact
from massgen.messages.stream import StreamError, StreamEvent

T = TypeVar("T")
OnEvent = Callable[[str, dict[str, Any]], None]
_RETRY_STATUSES = frozenset({408, 409, 429})
# Failures of a stream that had started: the connection broke, the stream ended early or went quiet.
_CUT_KINDS = frozenset({"connection", "cut", "idle_timeout"})


def _transport_errors() -> tuple[type[BaseException], ...]:
    """Connection-level errors of every HTTP stack a backend may use.

    The openai and anthropic SDKs ship on httpx2, and google-genai switches its async
    transport to aiohttp whenever aiohttp is installed. Their errors are only looked up
    once the SDK has loaded that stack (an error of it can't exist before): importing
    aiohttp just to name its errors costs 0.1 s of CPU on every run.
    """
    errors: tuple[type[BaseException], ...] = (httpx.TransportError, ConnectionError)
    if (httpx2 := sys.modules.get("httpx2")) is not None:
        errors += (httpx2.TransportError,)
    if (aiohttp := sys.modules.get("aiohttp")) is not None:
        errors += (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError)
    return errors


def exponential_backoff(attempt: int, base_s: float, max_s: float, jitter: float, rand: float) -> float:
    """``min(max, base * 2^(attempt-1)) * (1 + rand * jitter)``: the one backoff curve of every retry."""
    return float(min(max_s, base_s * 2 ** (attempt - 1)) * (1 + rand * jitter))


@dataclass(frozen=True)
class RetryPolicy:
    """Knobs of the policy; the defaults suit cloud APIs, tests shrink them."""

    max_attempts: int = 4
    base_delay_s: float = 0.5
    # A stream that had started and then broke says nothing about load: retry it almost at once.
    cut_base_delay_s: float = 0.05
    max_delay_s: float = 20.0
    retry_after_cap_s: float = 60.0
    jitter: float = 0.2
    first_byte_timeout_s: float = 120.0
    idle_timeout_s: float = 120.0
    breaker_threshold: int = 5
    breaker_cooldown_s: float = 30.0

    def backoff(self, attempt: int, rand: float) -> float:
        """Delay before attempt ``attempt + 1``."""
        return exponential_backoff(attempt, self.base_delay_s, self.max_delay_s, self.jitter, rand)

    def cut_backoff(self, attempt: int, rand: float) -> float:
        """For a stream that got going, then broke: ``cut_base_delay_s`` every time, not a growing
        curve, since a cut says nothing about load; a cut that persists opens the breaker instead."""
        return exponential_backoff(1, self.cut_base_delay_s, self.max_delay_s, self.jitter, rand)


@dataclass(frozen=True)
class CallRetry:
    """How often and how soon a turn sends again a call whose stream broke (``max_retries`` 0 turns it off)."""

    max_retries: int = 2
    base_delay_s: float = 0.1
    max_delay_s: float = 2.0
    jitter: float = 0.2
    rand: Callable[[], float] = field(default=random.random, compare=False, repr=False)

    def delay(self, retry: int, *, retryable: bool, had_output: bool, had_tool_call: bool) -> float | None:
        """Seconds before retry number ``retry`` (1-based), or None when the call must fail.

        Only a retryable error after some output and before any tool call qualifies: an
        error with no output at all was already retried by ``RetryPolicy``."""
        if not retryable or not had_output or had_tool_call or retry > self.max_retries:
            return None
        return exponential_backoff(retry, self.base_delay_s, self.max_delay_s, self.jitter, self.rand())


CALL_RETRY_EVENT = "call.retry"


@dataclass(frozen=True)
class Failure:
    """What went wrong in an attempt, as the policy sees it."""

    message: str
    status: int | None = None
    retryable: bool = False
    retry_after_s: float | None = None
    kind: str = "http"  # http | connection | first_byte_timeout | idle_timeout | cut | protocol | circuit_open
    # False for errors that say nothing about the endpoint's health (a bad request).
    endpoint_fault: bool = True


class StreamFailure(Exception):
    """Raised by a backend for faults it finds in a stream (an error event, an early end)."""

    def __init__(self, message: str, status: int | None = None, retryable: bool = False,
                 kind: str = "protocol") -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.retryable = retryable
        self.kind = kind


class StreamTimeout(Exception):
    """Our own deadline fired: nothing arrived in time (first byte) or the stream went quiet (idle)."""

    def __init__(self, kind: Literal["first_byte_timeout", "idle_timeout"], seconds: float) -> None:
        what = "no response within" if kind == "first_byte_timeout" else "stream silent for"
        super().__init__(f"{what} {seconds:g} s")
        self.kind = kind


def status_is_retryable(status: int) -> bool:
    """5xx and the statuses that say "later" are retried; a server saying it does not do this is not."""
    return status in _RETRY_STATUSES or (status >= 500 and status not in PERMANENT_STATUSES)


def parse_retry_after(headers: Any, now: float | None = None) -> float | None:
    """Seconds to wait from ``Retry-After`` (seconds or HTTP-date) or ``retry-after-ms``; None if absent.

    A number that is no wait (negative, NaN, infinite) or unreadable counts as absent, so the normal
    backoff applies: a server cannot turn backoff off by asking for a negative wait. A date already
    past is a valid answer (RFC 9110: no delay; clocks differ) and reads as 0."""
    if headers is None:
        return None

    def wait(seconds: float) -> float | None:
        return seconds if 0.0 <= seconds < float("inf") else None  # NaN fails both comparisons

    millis = headers.get("retry-after-ms")
    if millis:
        with contextlib.suppress(ValueError):
            if (found := wait(float(millis) / 1000)) is not None:
                return found
    value = headers.get("retry-after")
    if not value:
        return None
    value = value.strip()
    with contextlib.suppress(ValueError):
        return wait(float(value))
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return wait(max(0.0, when.timestamp() - (time.time() if now is None else now)))


def _error_message(exc: BaseException, body: Any) -> str:
    """The provider's own message when the body has one, else the exception text."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(body.get("message"), str):
            return str(body["message"])
    message = getattr(exc, "message", None)
    return message if isinstance(message, str) and message else str(exc) or type(exc).__name__


def classify(exc: BaseException, now: float | None = None) -> Failure | None:
    """Map any SDK's exception to a ``Failure``; None means "not a provider fault" (a bug: re-raise)."""
    if isinstance(exc, StreamTimeout):
        return Failure(str(exc), retryable=True, kind=exc.kind)
    if isinstance(exc, StreamFailure):
        return Failure(exc.message, exc.status, exc.retryable, kind=exc.kind)
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "APIConnectionError" in names or isinstance(exc, _transport_errors()):
        detail = str(exc.__cause__ or exc) or type(exc).__name__
        return Failure(f"connection failed: {detail}", retryable=True, kind="connection")
    # openai/anthropic APIStatusError carry status_code; google-genai APIError carries code.
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int):
        status = getattr(exc, "code", None) if "APIError" in names else None
    body = getattr(exc, "body", None)
    if body is None:
        body = getattr(exc, "details", None)
    if isinstance(status, int) and status >= 400:
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
        retryable = status_is_retryable(status)
        return Failure(
            _error_message(exc, body), status, retryable,
            parse_retry_after(headers, now) if retryable else None,
            endpoint_fault=status >= 500 or status == 429,
        )
    if "APIError" in names:  # an error event inside a 200 stream
        text = f"{body}".lower()
        retryable = any(s in text for s in ("server_error", "overloaded", "rate_limit", "internal"))
        return Failure(_error_message(exc, body), None, retryable, kind="protocol")
    return None


class AttemptClock:
    """Our deadlines for one attempt: first byte (open + first chunk), then idle between chunks."""

    def __init__(self, first_byte_s: float, idle_s: float) -> None:
        self.first_byte_s = first_byte_s
        self.idle_s = idle_s
        self._loop = asyncio.get_running_loop()
        self._first_deadline = self._loop.time() + first_byte_s
        self.got_first = False

    def _deadline(self) -> tuple[float, StreamTimeout]:
        if self.got_first:
            return self._loop.time() + self.idle_s, StreamTimeout("idle_timeout", self.idle_s)
        return self._first_deadline, StreamTimeout("first_byte_timeout", self.first_byte_s)

    async def wait(self, awaitable: Awaitable[T]) -> T:
        """Await ``awaitable`` (opening the stream) under the current deadline."""
        when, error = self._deadline()
        timeout = asyncio.timeout_at(when)
        try:
            async with timeout:
                return await awaitable
        except TimeoutError:
            if timeout.expired():
                raise error from None
            raise

    async def chunks(self, source: AsyncIterator[T]) -> AsyncIterator[T]:
        """Iterate ``source`` with a deadline around every ``__anext__``."""
        iterator = source.__aiter__()
        while True:
            when, error = self._deadline()
            timeout = asyncio.timeout_at(when)
            try:
                async with timeout:
                    item = await iterator.__anext__()
            except StopAsyncIteration:
                return
            except TimeoutError:
                if timeout.expired():
                    raise error from None
                raise
            self.got_first = True
            yield item


Attempt = Callable[[AttemptClock], AsyncGenerator[StreamEvent, None]]
Classifier = Callable[[BaseException], "Failure | None"]


@dataclass
class Retrier:
    """Runs attempts under the policy. Injectable sleep, randomness and breakers keep tests exact."""

    policy: RetryPolicy = field(default_factory=RetryPolicy)
    # A run hands its own registry (actors/runtime/port.py, RunContext); alone, a retrier has its own.
    breakers: BreakerRegistry = field(default_factory=BreakerRegistry)
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    rand: Callable[[], float] = random.random

    async def run(self, attempt: Attempt, *, endpoint: str, provider: str,
                  classifier: Classifier = classify, on_event: OnEvent | None = None,
                  secrets: Iterable[str | None] = (), breaker_key: str | None = None,
                  use_breaker: bool = True) -> AsyncIterator[StreamEvent]:
        """Yield the events of the first attempt that gets going; end with ``StreamError`` if none does.

        ``use_breaker=False`` (a final presentation) goes out even when the breaker is open:
        the call that ends a converged run is never refused for other calls' failures."""
        policy = self.policy
        secrets = tuple(secrets)
        breaker = self.breakers.get(breaker_key or endpoint, policy.breaker_threshold, policy.breaker_cooldown_s)
        loop = asyncio.get_running_loop()

        def report(number: int, outcome: str, started: float, failure: Failure | None = None,
                   delay: float | None = None, cut: bool = False, tripped: bool = False) -> None:
            if on_event is None:
                return
            info: dict[str, Any] = {
                "provider": provider, "endpoint": endpoint, "attempt": number, "outcome": outcome,
                "elapsed_s": round(loop.time() - started, 4),
            }
            if failure is not None:
                info.update(kind=failure.kind, status=failure.status,
                            error=redact(failure.message, secrets), retryable=failure.retryable)
            if delay is not None:
                info["retry_in_s"] = round(delay, 4)
            if cut:
                info["mid_stream"] = True  # the stream had started: retried from the short backoff
            if tripped:  # this failure opened the breaker: no call goes out for retry_in_s
                info.update(circuit_opened=True, retry_in_s=round(breaker.retry_in(), 4))
            on_event("backend.attempt", info)

        # Whether any attempt of this call heard from the server (a first byte, or events): a connection that
        # breaks after that is a server that answers and fails, not an address where nothing runs.
        heard = False
        for number in range(1, policy.max_attempts + 1):
            started = loop.time()
            if use_breaker and not breaker.allow():
                if breaker.never_reached:  # another call found nothing there: so would this one
                    failure = Failure("connection failed on every attempt of an earlier call", retryable=True,
                                      kind="connection")
                    report(number, "error", started, failure)
                    yield self._unreachable(provider, endpoint, failure, secrets, 0)
                    return
                wait = breaker.retry_in()
                failure = Failure(f"circuit open for {breaker_key or endpoint} after repeated failures; next try in "
                                  f"{wait:.1f} s", retryable=True, kind="circuit_open")
                report(number, "circuit_open", started, failure, wait)
                yield StreamError(message=f"{provider}: {failure.message}", retryable=True)
                return
            yielded = False
            verdict = False
            clock: AttemptClock | None = None
            try:
                clock = AttemptClock(policy.first_byte_timeout_s, policy.idle_timeout_s)
                async with contextlib.aclosing(attempt(clock)) as events:
                    async for event in events:
                        yielded = True
                        yield event
                breaker.record_success()
                verdict = True
                report(number, "ok", started)
                return
            except Exception as exc:
                failure_or_none = classifier(exc)
                if failure_or_none is None:
                    raise
                failure = failure_or_none
                heard = heard or yielded or (clock is not None and clock.got_first)
                # a connection that broke after the server was heard is a cut, not an address where nothing runs
                kind = "cut" if heard and failure.kind == "connection" else failure.kind
                if failure.endpoint_fault:
                    breaker.record_failure(kind)
                else:
                    breaker.record_success()
                verdict = True
                last = number == policy.max_attempts
                tripped = last and failure.retryable and failure.endpoint_fault and number > 1
                if tripped:  # every attempt failed: the endpoint is down for this model, for now
                    breaker.trip(kind)
                if yielded or not failure.retryable or last:
                    report(number, "error", started, failure, tripped=tripped)
                    if tripped and breaker.never_reached:
                        yield self._unreachable(provider, endpoint, failure, secrets, number)
                        return
                    yield self._error(provider, failure, secrets, number, endpoint)
                    return
                cut = clock is not None and clock.got_first and failure.kind in _CUT_KINDS
                delay = (policy.cut_backoff if cut else policy.backoff)(number, self.rand())
                if failure.retry_after_s is not None:
                    delay = min(failure.retry_after_s, policy.retry_after_cap_s)
                report(number, "retry", started, failure, delay, cut=cut)
            finally:
                if not verdict:
                    breaker.release()
            await self.sleep(delay)

    @staticmethod
    def _unreachable(provider: str, endpoint: str, failure: Failure, secrets: tuple[str | None, ...],
                     attempts: int) -> StreamError:
        """Every attempt failed to connect, and nothing has answered there in this run: a wrong URL or a
        server that is not running. Permanent, so a run ends with this reason instead of restarting the
        agent until its deadline (a server that answered once and then went away is retried as before)."""
        tries = f"after {attempts} attempts; " if attempts else ""
        message = redact(f"{provider}: cannot reach {endpoint}: {failure.message} ({tries}nothing answered there "
                         "in this run: is the server running, and is its URL right?)", secrets)
        return StreamError(message=message, retryable=False, permanent=True)

    @staticmethod
    def _error(provider: str, failure: Failure, secrets: tuple[str | None, ...],
               attempts: int, endpoint: str = "") -> StreamError:
        status = f" {failure.status}" if failure.status else ""
        tries = f" (after {attempts} attempts)" if attempts > 1 else ""
        # The server answered that it does not do this request: most often a base URL that is some other
        # web server, which the bare "Error code: 501" does not say.
        not_this = (f" ({endpoint} answered, but does not serve this request: is its URL a {provider} API?)"
                    if failure.status in (501, 505) and endpoint else "")
        message = redact(f"{provider}{status}: {failure.message}{tries}{not_this}", secrets)
        return StreamError(message=message, status=failure.status, retryable=failure.retryable)
