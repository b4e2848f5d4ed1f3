"""The ``openai`` backend (Responses API) against a loopback server playing Responses events."""

from __future__ import annotations

from pathlib import Path

import pytest
from wire import protocols as p
from wire.harness import (
    Recorder,
    calls_of,
    error_of,
    finish_of,
    reasoning_of,
    request,
    run_call,
    text_of,
    usage_of,
)
from wire.server import Respond, Stream, WireServer

from massgen.backends import create as create_backend
from massgen.backends.base import BackendContext, BackendError
from massgen.backends.openai_responses import ResponsesBackend, create
from massgen.configs.schema import BackendConfig
from massgen.messages.stream import ChatMessage, ToolCall

KEY = "sk-test-responses-0123456789abcdef"


def backend(server: WireServer, rec: Recorder, model: str = "test-model") -> ResponsesBackend:
    config = BackendConfig(type="openai", base_url=server.url + "/v1", model=model)
    return create(config, rec.context(env={"OPENAI_API_KEY": KEY}), retrier=rec.retrier())


def test_text_function_call_and_usage(server: WireServer) -> None:
    events = (
        p.ResponsesStream()
        .created()
        .text("Thinking it over: ", "4")
        .function_call(1, "call_9", "new_answer", ['{"cont', 'ent": ', '"4"}'])
        .completed(usage=(120, 30))
    )
    server.script(Stream(events))
    rec = Recorder()
    out = run_call(backend(server, rec, model="gpt-4o-mini"), request(tools=True, vote_targets=("agent1",)))
    assert text_of(out) == "Thinking it over: 4"
    assert calls_of(out) == [
        ToolCall(id="call_9", name="new_answer", arguments={"content": "4"}, raw_arguments='{"content": "4"}')
    ]
    usage = usage_of(out)
    assert (usage.input_tokens, usage.output_tokens) == (120, 30)
    assert usage.cost_usd == pytest.approx((120 * 0.15 + 30 * 0.60) / 1e6)
    assert finish_of(out) == "tool_calls"
    sent = server.requests[0]
    assert sent.path == "/v1/responses" and sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.body["instructions"] == "Be brief." and sent.body["stream"] is True
    assert sent.body["input"] == [{"role": "user", "content": "What is 2+2?"}]
    assert [t["name"] for t in sent.body["tools"]] == ["new_answer", "vote"]
    assert sent.body["tools"][0]["type"] == "function"


def test_reasoning_summary_and_plain_finish(server: WireServer) -> None:
    stream = p.ResponsesStream().created()
    stream.event(
        "response.reasoning_summary_text.delta",
        item_id="rs_1",
        output_index=0,
        summary_index=0,
        delta="Adding.",
    )
    server.script(Stream(stream.text("4").completed()))
    out = run_call(backend(server, Recorder()), request())
    assert reasoning_of(out) == "Adding." and text_of(out) == "4"
    assert finish_of(out) == "stop"


def test_malformed_arguments_are_reported_not_raised(server: WireServer) -> None:
    events = (
        p.ResponsesStream()
        .created()
        .function_call(0, "call_1", "vote", ['{"agent_id": "a', "gent1"])
        .completed()
    )
    server.script(Stream(events))
    (call,) = calls_of(run_call(backend(server, Recorder()), request(tools=True)))
    assert call.name == "vote" and call.arguments == {} and call.parse_error
    assert call.raw_arguments == '{"agent_id": "agent1'


def test_history_becomes_function_call_items(server: WireServer) -> None:
    call = ToolCall(id="call_1", name="lookup", arguments={"q": "x"}, raw_arguments='{"q": "x"}')
    history = (
        ChatMessage(role="assistant", content="Looking.", tool_calls=(call,)),
        ChatMessage(role="tool", content="42", tool_call_id="call_1"),
    )
    server.script(Stream(p.ResponsesStream().created().text("ok").completed()))
    run_call(backend(server, Recorder()), request(history=history))
    assert server.requests[0].body["input"][1:] == [
        {"role": "assistant", "content": "Looking."},
        {"type": "function_call", "call_id": "call_1", "name": "lookup", "arguments": '{"q": "x"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "42"},
    ]


def test_failed_response_before_any_output_is_retried(server: WireServer) -> None:
    server.script(
        Stream(p.ResponsesStream().created().failed("server_error", "The server had an error")),
        Stream(p.ResponsesStream().created().text("recovered").completed()),
    )
    rec = Recorder()
    out = run_call(backend(server, rec), request())
    assert text_of(out) == "recovered"
    assert rec.outcomes() == ["retry", "ok"]
    assert rec.attempts()[0]["error"].startswith("The server had an error")


def test_error_event_after_output_ends_the_stream_without_replay(server: WireServer) -> None:
    stream = p.ResponsesStream().created().text("partial ")
    stream.event("error", code="server_error", message="stream broke", param=None)
    server.script(Stream(stream.events), Stream(p.ResponsesStream().created().text("never").completed()))
    rec = Recorder()
    out = run_call(backend(server, rec), request())
    assert text_of(out) == "partial "
    error = error_of(out)
    assert error.retryable and "stream broke" in error.message
    assert len(server.requests) == 1 and server.pending == 1


def test_rate_limit_waits_as_told(server: WireServer) -> None:
    server.script(
        Respond(
            429, p.openai_error("Rate limit reached", "requests", "rate_limit_exceeded"), {"retry-after": "2"}
        ),
        Stream(p.ResponsesStream().created().text("ok").completed()),
    )
    rec = Recorder()
    assert text_of(run_call(backend(server, rec), request())) == "ok"
    assert rec.sleeps == [2.0]
    assert rec.attempts()[0]["status"] == 429 and rec.attempts()[0]["retry_in_s"] == 2.0


def test_key_never_reaches_the_error_message(server: WireServer) -> None:
    server.script(Respond(401, p.openai_error(f"Incorrect API key provided: {KEY}.", code="invalid_api_key")))
    rec = Recorder()
    error = error_of(run_call(backend(server, rec), request()))
    assert error.status == 401 and not error.retryable
    assert KEY not in error.message and "Incorrect API key provided: ***" in error.message
    assert all(KEY not in str(info) for _, info in rec.events)


def test_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(BackendError, match="OPENAI_API_KEY"):
        create_backend(BackendConfig(type="openai"), BackendContext(agent_id="a"))
    (tmp_path / ".env").write_text('OPENAI_API_KEY="sk-from-dotenv-file-000"\n')
    built = create_backend(BackendConfig(type="openai"), BackendContext(agent_id="a"))
    assert isinstance(built, ResponsesBackend)
    assert "sk-from" not in repr(built)
