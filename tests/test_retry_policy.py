"""The shared retry policy: its parts alone, then every fault on a real socket through a real backend.

Faults are played by the loopback server through the Chat Completions backend (the
other protocols share the same runner); sleeps are recorded, not slept, and deadlines
are short, so nothing here depends on how fast the machine is.
"""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest
from wire import protocols as p
from wire.harness import FAST, SHORT, Recorder, error_of, request, run_call, run_calls, text_of
from wire.server import Hang, Respond, Stream, WireServer

from massgen.backends.base import BackendError
from massgen.backends.circuit import BreakerRegistry, CircuitBreaker
from massgen.backends.keys import redact, require_key
from massgen.backends.openai_chat import ChatCompletionsBackend, create
from massgen.backends.retry import RetryPolicy, parse_retry_after
from massgen.configs.defaults import read_dotenv
from massgen.configs.schema import BackendConfig


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def server() -> Iterator[WireServer]:
    with WireServer() as wire:
        yield wire


def backend(
    url: str, rec: Recorder, policy: RetryPolicy = FAST, breakers: BreakerRegistry | None = None
) -> ChatCompletionsBackend:
    config = BackendConfig(type="vllm", base_url=url + "/v1", model="test-model")
    return create(config, rec.context(), retrier=rec.retrier(policy, breakers))


# -- the parts ----------------------------------------------------------------------------------
def test_retry_after_forms() -> None:
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 42, usegmt=True)
    assert parse_retry_after({"retry-after": "7"}) == 7.0
    assert parse_retry_after({"retry-after": "1.5"}) == 1.5
    assert parse_retry_after({"retry-after": date}, now=now) == 42.0
    assert parse_retry_after({"retry-after": email.utils.formatdate(now - 5, usegmt=True)}, now=now) == 0.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


def test_backoff_doubles_to_a_cap_with_jitter() -> None:
    policy = RetryPolicy(base_delay_s=0.5, max_delay_s=3.0, jitter=0.2)
    assert [policy.backoff(n, 0.0) for n in (1, 2, 3, 4, 5)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert policy.backoff(1, 1.0) == pytest.approx(0.6)


def test_breaker_opens_probes_once_and_closes() -> None:
    clock = FakeClock()
    breaker = CircuitBreaker(threshold=2, cooldown_s=10, clock=clock)
    breaker.record_failure()
    assert breaker.state == "closed" and breaker.allow()
    breaker.record_failure()
    assert breaker.state == "open" and not breaker.allow()
    assert breaker.retry_in() == 10
    clock.now += 10
    assert breaker.state == "half_open"
    assert breaker.allow() and not breaker.allow()  # exactly one probe
    breaker.record_failure()  # the probe failed: open for another cool-down
    assert breaker.state == "open"
    clock.now += 10
    assert breaker.allow()
    breaker.record_success()
    assert breaker.state == "closed" and breaker.allow() and breaker.allow()


def test_keys_from_dotenv_and_redaction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".env").write_text("# keys\nexport XAI_API_KEY='xai-abc'\nOTHER=1 # note\n")
    assert read_dotenv(tmp_path / ".env") == {"XAI_API_KEY": "xai-abc", "OTHER": "1"}
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("XAI_API_KEY", raising=False)
    assert require_key("grok", None, ("XAI_API_KEY",)) == "xai-abc"
    with pytest.raises(BackendError, match=r"set NOPE_KEY in the environment, \./\.env or ~/\.massgen/\.env"):
        require_key("x", None, ("NOPE_KEY",))
    assert redact("key my-secret-value leaked", ["my-secret-value"]) == "key *** leaked"
    assert redact("got sk-proj-abcdefghijklmnop0123") == "got ***"


# -- faults on the wire -------------------------------------------------------------------------
@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503])
def test_transient_statuses_are_retried(server: WireServer, status: int) -> None:
    server.script(Respond(status, p.openai_error("try again", "server_error")), Stream(p.chat_text("ok")))
    rec = Recorder()
    assert text_of(run_call(backend(server.url, rec), request())) == "ok"
    assert rec.outcomes() == ["retry", "ok"] and rec.attempts()[0]["status"] == status


@pytest.mark.parametrize("status", [401, 403, 404, 422])
def test_other_client_errors_are_not(server: WireServer, status: int) -> None:
    server.script(Respond(status, p.openai_error(f"refused with {status}")))
    rec = Recorder()
    error = error_of(run_call(backend(server.url, rec), request()))
    assert (error.status, error.retryable) == (status, False) and f"refused with {status}" in error.message
    assert rec.outcomes() == ["error"] and rec.sleeps == []


def test_backoff_grows_and_gives_up(server: WireServer) -> None:
    server.script(*[Respond(502, p.openai_error("bad gateway", "server_error"))] * 3)
    rec = Recorder()
    error = error_of(run_call(backend(server.url, rec), request()))
    assert error.status == 502 and error.retryable and "after 3 attempts" in error.message
    assert rec.sleeps == [0.01, 0.02]
    assert rec.outcomes() == ["retry", "retry", "error"]
    assert [a["attempt"] for a in rec.attempts()] == [1, 2, 3]


def test_retry_after_seconds_and_date_are_honoured_up_to_the_cap(server: WireServer) -> None:
    far = email.utils.formatdate(time.time() + 3600, usegmt=True)
    server.script(
        Respond(429, p.openai_error("slow down"), {"retry-after": "3"}),
        Respond(429, p.openai_error("slow down"), {"retry-after": far}),
        Stream(p.chat_text("ok")),
    )
    rec = Recorder()
    assert text_of(run_call(backend(server.url, rec), request())) == "ok"
    assert rec.sleeps == [3.0, FAST.retry_after_cap_s]


def test_connection_refused_where_nothing_ever_answered_is_retried_then_reported_as_permanent() -> None:
    """A wrong URL or a server not running: retrying past the attempts (or restarting the agent) cannot help."""
    with socket.socket() as sock:  # a port that was free a moment ago and has no listener
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    rec = Recorder()
    chat = backend(f"http://127.0.0.1:{port}", rec)
    error = error_of(run_call(chat, request()))
    assert error.permanent and not error.retryable and error.status is None
    assert f"cannot reach http://127.0.0.1:{port}" in error.message and "connection failed" in error.message
    assert "is the server running" in error.message
    assert rec.outcomes() == ["retry", "retry", "error"]
    assert {a["kind"] for a in rec.attempts()} == {"connection"}
    again = error_of(run_call(chat, request()))  # the breaker is open: said at once, without a wait
    assert again.permanent and "cannot reach" in again.message


def test_connection_refused_that_opens_the_breaker_by_its_count_is_said_to_be_permanent_at_once() -> None:
    """The agents of one team call one model server at once, so their refused attempts together reach the
    breaker's threshold before any one call has used all its attempts. Nothing ever answered there: each call
    says so (permanent) at once, not "circuit open, next try in 30 s", which restarted every agent after each
    cool-down (a ``massgen serve`` client asking for ``ollama/llama3.2`` with no Ollama running waited 61 s)."""
    with socket.socket() as sock:  # a port that was free a moment ago and has no listener
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    rec = Recorder()
    policy = dataclasses.replace(FAST, max_attempts=4, breaker_threshold=2)  # the count opens it, not trip()
    breakers = BreakerRegistry()
    chat = backend(f"http://127.0.0.1:{port}", rec, policy, breakers)
    error = error_of(run_call(chat, request()))
    assert error.permanent and not error.retryable, error.message
    assert f"cannot reach http://127.0.0.1:{port}" in error.message and "is the server running" in error.message
    assert rec.outcomes() == ["retry", "retry", "error"]
    other = backend(f"http://127.0.0.1:{port}", rec, policy, breakers)  # another agent of the team: told at once
    again = error_of(run_call(other, request()))
    assert again.permanent and "cannot reach" in again.message
    assert rec.outcomes()[3:] == ["error"]


def test_connection_refused_after_the_server_answered_in_this_run_stays_retryable() -> None:
    """A server that answered and went away may come back: the agent is restarted as before."""
    rec = Recorder()
    with WireServer() as wire:
        wire.script(Stream(p.chat_text("first")))
        chat = backend(wire.url, rec)
        assert text_of(run_call(chat, request())) == "first"
    error = error_of(run_call(chat, request()))  # the server is gone now
    assert error.retryable and not error.permanent and "connection failed" in error.message


@pytest.mark.parametrize("end", ["close", "reset"])
def test_cut_before_the_first_event_is_retried(server: WireServer, end: Literal["close", "reset"]) -> None:
    server.script(
        Stream([p.chat_chunk({"role": "assistant", "content": ""})], end=end),
        Stream(p.chat_text("second try")),
    )
    rec = Recorder()
    assert text_of(run_call(backend(server.url, rec), request())) == "second try"
    assert rec.outcomes() == ["retry", "ok"] and rec.attempts()[0]["kind"] == "connection"


def test_cut_after_the_first_event_is_reported_not_replayed(server: WireServer) -> None:
    server.script(Stream(p.chat_text("Half an ans", "wer")[:2], end="close"), Stream(p.chat_text("never")))
    rec = Recorder()
    events = run_call(backend(server.url, rec), request())
    assert text_of(events) == "Half an ans"
    error = error_of(events)
    assert error.retryable and "connection failed" in error.message
    assert len(server.requests) == 1 and server.pending == 1
    assert rec.outcomes() == ["error"]


def test_clean_end_without_finish_is_an_error(server: WireServer) -> None:
    server.script(Stream([p.chat_chunk({"content": "cut"})]))
    events = run_call(backend(server.url, Recorder(), dataclasses.replace(FAST, max_attempts=1)), request())
    assert "stream ended before the model finished" in error_of(events).message


def test_no_answer_trips_the_first_byte_deadline(server: WireServer) -> None:
    server.script(Hang(), Stream([], end="hang"), Stream(p.chat_text("awake")))
    rec = Recorder()
    assert text_of(run_call(backend(server.url, rec, SHORT), request())) == "awake"
    assert rec.outcomes() == ["retry", "retry", "ok"]
    assert [a["kind"] for a in rec.attempts()[:2]] == ["first_byte_timeout", "first_byte_timeout"]


def test_slow_drip_trips_the_idle_deadline(server: WireServer) -> None:
    # The first event arrives whole; the rest comes one byte per 50 ms: the SDK's per-read
    # timeout would never fire, our idle deadline (0.5 s between SSE events) does.
    server.script(Stream(p.chat_text("first", "rest of a long answer"), drip_s=0.05, drip_from=2))
    rec = Recorder()
    events = run_call(backend(server.url, rec, SHORT), request())
    assert text_of(events) == "first"
    error = error_of(events)
    assert error.retryable and "stream silent for" in error.message
    assert rec.attempts()[0]["kind"] == "idle_timeout" and len(server.requests) == 1


def test_slow_drip_from_the_start_trips_the_first_byte_deadline(server: WireServer) -> None:
    server.script(Stream(p.chat_text("x"), drip_s=0.05), Stream(p.chat_text("fast")))
    rec = Recorder()
    assert text_of(run_call(backend(server.url, rec, SHORT), request())) == "fast"
    assert rec.attempts()[0]["kind"] == "first_byte_timeout"


def test_breaker_opens_and_lets_one_probe_through_after_cool_down(server: WireServer) -> None:
    clock = FakeClock()
    breakers = BreakerRegistry(clock=clock)
    policy = dataclasses.replace(FAST, max_attempts=1, breaker_threshold=2, breaker_cooldown_s=30)
    server.script(
        Respond(500, p.openai_error("down", "server_error")),
        Respond(500, p.openai_error("down", "server_error")),
        Stream(p.chat_text("back")),
    )
    rec = Recorder()

    async def advance(number: int) -> None:
        if number == 3:
            clock.now += 30
        await asyncio.sleep(0)

    results = run_calls(backend(server.url, rec, policy, breakers), *[request()] * 4, between=advance)
    assert [e.status for e in (error_of(r) for r in results[:2])] == [500, 500]
    refused = error_of(results[2])
    assert refused.retryable and "circuit open" in refused.message
    assert text_of(results[3]) == "back"
    assert len(server.requests) == 3  # the refused call never reached the server
    assert rec.outcomes() == ["error", "error", "circuit_open", "ok"]
    assert breakers.get(f"http://127.0.0.1:{server.port}", 2, 30).state == "closed"
