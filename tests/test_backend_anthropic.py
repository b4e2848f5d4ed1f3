"""The ``claude`` backend against a loopback server playing Anthropic Messages events."""

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
from massgen.backends.anthropic_messages import AnthropicBackend, create
from massgen.backends.base import BackendContext, BackendError
from massgen.configs.schema import BackendConfig
from massgen.messages.stream import ChatMessage, ToolCall

KEY = "sk-ant-test-key-0123456789"


def backend(server: WireServer, rec: Recorder, model: str = "test-model") -> AnthropicBackend:
    config = BackendConfig(type="claude", base_url=server.url, model=model)
    return create(config, rec.context(env={"ANTHROPIC_API_KEY": KEY}), retrier=rec.retrier())


def test_text_tool_use_and_usage(server: WireServer) -> None:
    server.script(
        Stream(
            [
                p.anthropic_start(input_tokens=40),
                *p.anthropic_text_block(0, "I will ", "answer."),
                *p.anthropic_tool_block(1, "toolu_1", "new_answer", ['{"con', 'tent": "4', '"}']),
                *p.anthropic_end("tool_use", output_tokens=22),
            ]
        )
    )
    out = run_call(backend(server, Recorder(), model="claude-sonnet-4-6"), request(tools=True))
    assert text_of(out) == "I will answer."
    assert calls_of(out) == [
        ToolCall(
            id="toolu_1", name="new_answer", arguments={"content": "4"}, raw_arguments='{"content": "4"}'
        )
    ]
    usage = usage_of(out)
    assert (usage.input_tokens, usage.output_tokens) == (40, 22)
    assert usage.cost_usd == pytest.approx((40 * 3 + 22 * 15) / 1e6)
    assert finish_of(out) == "tool_calls"
    sent = server.requests[0]
    assert sent.path == "/v1/messages"
    assert KEY in (
        sent.headers.get("x-api-key"),
        sent.headers.get("authorization", "").removeprefix("Bearer "),
    )
    assert sent.body["system"] == "Be brief." and sent.body["max_tokens"] == 4096
    assert sent.body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "What is 2+2?"}]}]
    assert sent.body["tools"][1]["name"] == "vote" and "input_schema" in sent.body["tools"][1]


def test_thinking_is_reasoning(server: WireServer) -> None:
    server.script(
        Stream(
            [
                p.anthropic_start(),
                *p.anthropic_thinking_block(0, "2+2 is 4."),
                *p.anthropic_text_block(1, "4"),
                *p.anthropic_end(),
            ]
        )
    )
    out = run_call(backend(server, Recorder()), request())
    assert reasoning_of(out) == "2+2 is 4." and text_of(out) == "4" and finish_of(out) == "stop"


def test_malformed_input_json(server: WireServer) -> None:
    server.script(
        Stream(
            [
                p.anthropic_start(),
                *p.anthropic_tool_block(0, "toolu_2", "vote", ['{"agent_id": ']),
                *p.anthropic_end("tool_use"),
            ]
        )
    )
    (call,) = calls_of(run_call(backend(server, Recorder()), request(tools=True)))
    assert call.name == "vote" and call.arguments == {} and call.parse_error


def test_tool_results_are_merged_into_one_user_turn(server: WireServer) -> None:
    calls = (ToolCall(id="t1", name="a", arguments={"x": 1}), ToolCall(id="t2", name="b", arguments={}))
    history = (
        ChatMessage(role="assistant", content="", tool_calls=calls),
        ChatMessage(role="tool", content="one", tool_call_id="t1"),
        ChatMessage(role="tool", content="two", tool_call_id="t2"),
    )
    server.script(Stream([p.anthropic_start(), *p.anthropic_text_block(0, "ok"), *p.anthropic_end()]))
    run_call(backend(server, Recorder()), request(history=history))
    messages = server.requests[0].body["messages"]
    assert messages[1] == {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "t1", "name": "a", "input": {"x": 1}},
            {"type": "tool_use", "id": "t2", "name": "b", "input": {}},
        ],
    }
    assert messages[2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "one"},
            {"type": "tool_result", "tool_use_id": "t2", "content": "two"},
        ],
    }


def test_overloaded_529_is_retried(server: WireServer) -> None:
    server.script(
        Respond(529, p.anthropic_error("overloaded_error", "Overloaded")),
        Stream([p.anthropic_start(), *p.anthropic_text_block(0, "fine"), *p.anthropic_end()]),
    )
    rec = Recorder()
    out = run_call(backend(server, rec), request())
    assert text_of(out) == "fine"
    assert rec.outcomes() == ["retry", "ok"] and rec.attempts()[0]["status"] == 529
    assert rec.sleeps == [0.01]


def test_overloaded_event_before_content_is_retried(server: WireServer) -> None:
    server.script(
        Stream([p.anthropic_start(), p.anthropic_error_event("overloaded_error", "Overloaded")]),
        Stream([p.anthropic_start(), *p.anthropic_text_block(0, "second"), *p.anthropic_end()]),
    )
    rec = Recorder()
    assert text_of(run_call(backend(server, rec), request())) == "second"
    assert rec.outcomes() == ["retry", "ok"] and rec.attempts()[0]["status"] == 529


def test_overloaded_event_mid_answer_is_reported_not_replayed(server: WireServer) -> None:
    server.script(
        Stream(
            [
                p.anthropic_start(),
                *p.anthropic_text_block(0, "half")[:2],
                p.anthropic_error_event("overloaded_error", "Overloaded"),
            ]
        )
    )
    rec = Recorder()
    out = run_call(backend(server, rec), request())
    assert text_of(out) == "half"
    error = error_of(out)
    assert error.status == 529 and error.retryable and "Overloaded" in error.message
    assert len(server.requests) == 1


def test_invalid_request_is_final(server: WireServer) -> None:
    server.script(Respond(400, p.anthropic_error("invalid_request_error", "messages: roles must alternate")))
    rec = Recorder()
    error = error_of(run_call(backend(server, rec), request()))
    assert error.status == 400 and not error.retryable
    assert error.message == "claude 400: messages: roles must alternate"
    assert rec.outcomes() == ["error"]


def test_missing_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(BackendError, match="ANTHROPIC_API_KEY"):
        create_backend(BackendConfig(type="claude"), BackendContext(agent_id="a"))
