"""The ``gemini`` backend against a loopback server playing streamGenerateContent (``alt=sse``)."""

from __future__ import annotations

import email.utils
import time
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
from massgen.backends.gemini import GeminiBackend, create
from massgen.configs.schema import BackendConfig
from massgen.messages.stream import ChatMessage, ToolCall

KEY = "gemini-test-key-0123456789"


def backend(server: WireServer, rec: Recorder, model: str = "test-model") -> GeminiBackend:
    config = BackendConfig(type="gemini", base_url=server.url + "/", model=model)
    return create(config, rec.context(env={"GEMINI_API_KEY": KEY}), retrier=rec.retrier())


def test_text_function_call_and_usage(server: WireServer) -> None:
    server.script(
        Stream(
            [
                p.gemini_chunk([{"text": "Let me "}]),
                p.gemini_chunk([{"text": "answer."}]),
                p.gemini_chunk(
                    [{"functionCall": {"name": "new_answer", "args": {"content": "4"}}}],
                    "STOP",
                    usage=(50, 12),
                    thoughts=3,
                ),
            ]
        )
    )
    out = run_call(backend(server, Recorder(), model="gemini-2.5-flash"), request(tools=True))
    assert text_of(out) == "Let me answer."
    (call,) = calls_of(out)
    assert (call.name, call.arguments) == ("new_answer", {"content": "4"}) and call.id
    usage = usage_of(out)
    assert (usage.input_tokens, usage.output_tokens) == (50, 15)
    assert usage.cost_usd == pytest.approx((50 * 0.30 + 15 * 2.50) / 1e6)
    assert finish_of(out) == "tool_calls"
    sent = server.requests[0]
    # The API version in the path is the SDK's choice (v1 in google-genai 3.x).
    assert sent.path.endswith("/models/gemini-2.5-flash:streamGenerateContent")
    assert sent.query["alt"] == ["sse"] and sent.headers["x-goog-api-key"] == KEY
    assert sent.body["systemInstruction"]["parts"] == [{"text": "Be brief."}]
    assert sent.body["contents"] == [{"role": "user", "parts": [{"text": "What is 2+2?"}]}]
    names = [f["name"] for f in sent.body["tools"][0]["functionDeclarations"]]
    assert names == ["new_answer", "vote"]


def test_thoughts_are_reasoning(server: WireServer) -> None:
    server.script(
        Stream(
            [
                p.gemini_chunk([{"text": "Adding up.", "thought": True}]),
                p.gemini_chunk([{"text": "4"}], "STOP", usage=(5, 1)),
            ]
        )
    )
    out = run_call(backend(server, Recorder()), request())
    assert reasoning_of(out) == "Adding up." and text_of(out) == "4" and finish_of(out) == "stop"


def test_function_history_round_trips(server: WireServer) -> None:
    call = ToolCall(id="c1", name="lookup", arguments={"q": "x"})
    history = (
        ChatMessage(role="assistant", content="", tool_calls=(call,)),
        ChatMessage(role="tool", content="42", tool_call_id="c1"),
    )
    server.script(Stream([p.gemini_chunk([{"text": "ok"}], "STOP")]))
    run_call(backend(server, Recorder()), request(history=history))
    contents = server.requests[0].body["contents"]
    assert contents[1] == {
        "role": "model",
        "parts": [{"functionCall": {"name": "lookup", "args": {"q": "x"}}}],
    }
    assert contents[2] == {
        "role": "user",
        "parts": [{"functionResponse": {"name": "lookup", "response": {"result": "42"}}}],
    }


def test_unavailable_then_rate_limited_then_answer(server: WireServer) -> None:
    later = email.utils.formatdate(time.time() + 3600, usegmt=True)  # far beyond the 5 s cap
    server.script(
        Respond(503, p.gemini_error(503, "The model is overloaded.", "UNAVAILABLE")),
        Respond(429, p.gemini_error(429, "Quota exceeded.", "RESOURCE_EXHAUSTED"), {"retry-after": later}),
        Stream([p.gemini_chunk([{"text": "third time"}], "STOP")]),
    )
    rec = Recorder()
    assert text_of(run_call(backend(server, rec), request())) == "third time"
    assert rec.outcomes() == ["retry", "retry", "ok"]
    assert [a["status"] for a in rec.attempts()[:2]] == [503, 429]
    assert rec.sleeps == [0.01, 5.0]


def test_invalid_argument_is_final(server: WireServer) -> None:
    server.script(Respond(400, p.gemini_error(400, "Invalid JSON payload received.", "INVALID_ARGUMENT")))
    rec = Recorder()
    error = error_of(run_call(backend(server, rec), request()))
    assert error.status == 400 and not error.retryable and "Invalid JSON payload received." in error.message
    assert len(server.requests) == 1


def test_stream_cut_before_finish_is_retried(server: WireServer) -> None:
    server.script(
        Stream([p.gemini_chunk([{"text": ""}])], end="close"),
        Stream([p.gemini_chunk([{"text": "whole"}], "STOP")]),
    )
    rec = Recorder()
    assert text_of(run_call(backend(server, rec), request())) == "whole"
    assert rec.outcomes() == ["retry", "ok"]


def test_missing_key_names_both_variables(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(BackendError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        create_backend(BackendConfig(type="gemini"), BackendContext(agent_id="a"))
    monkeypatch.setenv("GOOGLE_API_KEY", "from-google-env")
    assert isinstance(
        create_backend(BackendConfig(type="gemini"), BackendContext(agent_id="a")), GeminiBackend
    )
