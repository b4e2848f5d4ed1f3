"""Chat Completions backends against a loopback server speaking the real SSE protocol."""

from __future__ import annotations

import json

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
    run_calls,
    text_of,
    usage_of,
)
from wire.server import Respond, Stream, WireServer

from massgen.backends import create as create_backend
from massgen.backends.base import BackendContext, BackendError
from massgen.backends.openai_chat import ChatCompletionsBackend, create
from massgen.configs.schema import AzureOpenAIBackendConfig, BackendConfig
from massgen.messages.stream import ChatMessage, ToolCall


def backend(server: WireServer, rec: Recorder, **options: object) -> ChatCompletionsBackend:
    fields: dict[str, object] = {"type": "vllm", "base_url": server.url + "/v1", "model": "test-model"}
    fields.update(options)
    return create(BackendConfig.model_validate(fields), rec.context(), retrier=rec.retrier())


def test_text_usage_and_request_shape(server: WireServer) -> None:
    server.script(Stream(p.chat_text("The answer", " is 4.", usage=(31, 6))))
    rec = Recorder()
    events = run_call(backend(server, rec, temperature=0.3, seed=7), request())
    assert text_of(events) == "The answer is 4."
    usage = usage_of(events)
    assert (usage.input_tokens, usage.output_tokens, usage.cost_usd) == (31, 6, 0.0)
    assert finish_of(events) == "stop"
    sent = server.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.body["stream"] is True and sent.body["stream_options"] == {"include_usage": True}
    assert sent.body["temperature"] == 0.3 and sent.body["seed"] == 7
    assert sent.body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert "tools" not in sent.body
    assert rec.outcomes() == ["ok"]


def test_known_model_has_a_cost(server: WireServer) -> None:
    server.script(Stream(p.chat_text("hi", usage=(1_000_000, 0))))
    events = run_call(backend(server, Recorder(), model="gpt-4o-mini"), request())
    assert usage_of(events).cost_usd == pytest.approx(0.15)


def test_tool_call_deltas_are_assembled_per_index(server: WireServer) -> None:
    chunks = [
        p.chat_chunk({"role": "assistant", "content": None}),
        p.chat_tool_delta(0, id="call_a", name="new_answer", arguments=""),
        p.chat_tool_delta(1, id="call_b", name="vote", arguments='{"agent_id": '),
        p.chat_tool_delta(0, arguments='{"content": "fo'),
        p.chat_tool_delta(1, arguments='"agent2", "reason": "best"}'),
        p.chat_tool_delta(0, arguments='ur"}'),
        p.chat_chunk({}, "tool_calls"),
        p.chat_chunk(None, usage={"prompt_tokens": 5, "completion_tokens": 9, "total_tokens": 14}),
        p.sse("[DONE]"),
    ]
    server.script(Stream(chunks))
    events = run_call(backend(server, Recorder()), request(tools=True, vote_targets=("agent2",)))
    assert calls_of(events) == [
        ToolCall(
            id="call_a", name="new_answer", arguments={"content": "four"}, raw_arguments='{"content": "four"}'
        ),
        ToolCall(
            id="call_b",
            name="vote",
            arguments={"agent_id": "agent2", "reason": "best"},
            raw_arguments='{"agent_id": "agent2", "reason": "best"}',
        ),
    ]
    assert finish_of(events) == "tool_calls"
    tools = server.requests[0].body["tools"]
    assert [t["function"]["name"] for t in tools] == ["new_answer", "vote"]
    assert tools[0]["type"] == "function" and tools[0]["function"]["parameters"]["required"] == ["content"]


def test_malformed_tool_arguments_become_a_parse_error(server: WireServer) -> None:
    chunks = [
        p.chat_tool_delta(0, id="call_x", name="new_answer", arguments='{"content": "unterminated'),
        p.chat_chunk({}, "tool_calls"),
        p.sse("[DONE]"),
    ]
    server.script(Stream(chunks))
    events = run_call(backend(server, Recorder()), request(tools=True))
    (call,) = calls_of(events)
    assert call.name == "new_answer" and call.arguments == {}
    assert call.raw_arguments == '{"content": "unterminated' and call.parse_error
    assert usage_of(events).input_tokens == 0  # the server sent no usage: reported as zero
    assert finish_of(events) == "tool_calls"


def test_reasoning_content_is_a_reasoning_delta(server: WireServer) -> None:
    server.script(Stream([p.chat_chunk({"reasoning_content": "Two plus two..."}), *p.chat_text("4")]))
    events = run_call(backend(server, Recorder()), request())
    assert reasoning_of(events) == "Two plus two..." and text_of(events) == "4"


def test_history_with_tool_calls_uses_the_native_wire_form(server: WireServer) -> None:
    call = ToolCall(id="call_1", name="lookup", arguments={"q": "x"}, raw_arguments='{"q": "x"}')
    history = (
        ChatMessage(role="assistant", content="", tool_calls=(call,)),
        ChatMessage(role="tool", content="42", tool_call_id="call_1", name="lookup"),
    )
    server.script(Stream(p.chat_text("done")))
    run_call(backend(server, Recorder()), request(history=history))
    messages = server.requests[0].body["messages"]
    assert messages[2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "x"}'}}
        ],
    }
    assert messages[3] == {"role": "tool", "tool_call_id": "call_1", "content": "42"}


def test_bad_request_is_not_retried_and_carries_the_provider_message(server: WireServer) -> None:
    server.script(Respond(400, p.openai_error("max_tokens is too large for this model")))
    rec = Recorder()
    events = run_call(backend(server, rec), request())
    error = error_of(events)
    assert error.status == 400 and not error.retryable
    assert "max_tokens is too large for this model" in error.message
    assert len(server.requests) == 1 and rec.sleeps == []
    assert rec.outcomes() == ["error"]


def test_an_error_object_in_the_stream_ends_the_call_with_its_message(server: WireServer) -> None:
    refusal = {"error": {"message": "content policy refused the prompt", "type": "invalid_request_error"}}
    server.script(Stream([p.chat_chunk({"role": "assistant", "content": ""}), p.sse(refusal)]))
    rec = Recorder()
    error = error_of(run_call(backend(server, rec), request()))
    assert error.message == "vllm: content policy refused the prompt" and not error.retryable
    assert rec.outcomes() == ["error"] and rec.attempts()[0]["kind"] == "protocol"


def test_an_overloaded_stream_is_retried(server: WireServer) -> None:
    overloaded = {"error": {"message": "The server is overloaded", "type": "server_error"}}
    server.script(Stream([p.sse(overloaded)]), Stream(p.chat_text("ok")))
    rec = Recorder()
    assert text_of(run_call(backend(server, rec), request())) == "ok"
    assert rec.outcomes() == ["retry", "ok"]


def test_a_chunk_that_is_not_json_is_a_retried_protocol_fault(server: WireServer) -> None:
    server.script(Stream([b"data: {not json\n\n"]), Stream(p.chat_text("ok")))
    rec = Recorder()
    assert text_of(run_call(backend(server, rec), request())) == "ok"
    assert rec.outcomes() == ["retry", "ok"] and "malformed stream chunk" in rec.attempts()[0]["error"]


def test_an_error_without_a_json_body_keeps_its_status(server: WireServer) -> None:
    server.script(Respond(403, b"<html>Forbidden by proxy</html>", {"content-type": "text/html"}))
    rec = Recorder()
    error = error_of(run_call(backend(server, rec), request()))
    assert (error.status, error.retryable) == (403, False)
    assert error.message == "vllm 403: Error code: 403"


def test_refused_tools_fall_back_to_a_json_schema(server: WireServer) -> None:
    server.script(
        Respond(400, p.openai_error("This model does not support tools")),
        Stream(p.chat_text('{"action": "vote", "agent_id": "agent2", ', '"reason": "correct"}')),
    )
    rec = Recorder()
    events = run_call(backend(server, rec), request(tools=True, vote_targets=("agent1", "agent2")))
    (call,) = calls_of(events)
    assert (call.name, call.arguments) == ("vote", {"agent_id": "agent2", "reason": "correct"})
    assert finish_of(events) == "tool_calls"
    retry_body = server.requests[1].body
    assert "tools" not in retry_body
    schema = retry_body["response_format"]["json_schema"]["schema"]
    vote = next(b for b in schema["oneOf"] if b["properties"]["action"]["enum"] == ["vote"])
    assert vote["properties"]["agent_id"]["enum"] == ["agent1", "agent2"]
    assert vote["required"] == ["action", "agent_id", "reason"]
    assert (
        "backend.tool_mode",
        {
            "provider": "vllm",
            "endpoint": server.url,
            "from": "native",
            "to": "json_schema",
            "reason": "vllm 400: This model does not support tools",
        },
    ) in rec.events
    assert rec.outcomes() == ["error", "ok"]


def test_llamacpp_uses_its_grammar_schema_form(server: WireServer) -> None:
    server.script(Stream(p.chat_text('{"action": "new_answer", "content": "4"}')))
    events = run_call(backend(server, Recorder(), type="llamacpp"), request(tools=True))
    assert [(c.name, c.arguments) for c in calls_of(events)] == [("new_answer", {"content": "4"})]
    body = server.requests[0].body
    assert body["response_format"]["type"] == "json_object"
    # No vote targets in view: the only branch left is new_answer, with content required.
    assert body["response_format"]["schema"]["required"] == ["action", "content"]
    assert "Reply with exactly one JSON object" in body["messages"][0]["content"]


def test_text_mode_parses_qwen_tool_call_tags(server: WireServer) -> None:
    reply = 'Let me answer.\n<tool_call>\n{"name": "new_answer", "arguments": {"content": "4"}}\n</tool_call>'
    server.script(Stream(p.chat_text(reply[:20], reply[20:])))
    events = run_call(backend(server, Recorder(), tool_mode="text"), request(tools=True))
    assert [(c.name, c.arguments) for c in calls_of(events)] == [("new_answer", {"content": "4"})]
    body = server.requests[0].body
    assert "tools" not in body and "response_format" not in body
    assert "<tool_call>" in body["messages"][0]["content"]


def test_native_mode_salvages_a_fenced_json_reply(server: WireServer) -> None:
    reply = 'Sure.\n```json\n{"name": "vote", "arguments": {"agent_id": "agent1", "reason": "ok"}}\n```'
    server.script(Stream(p.chat_text(reply)))
    events = run_call(backend(server, Recorder()), request(tools=True, vote_targets=("agent1",)))
    assert [(c.name, c.arguments) for c in calls_of(events)] == [
        ("vote", {"agent_id": "agent1", "reason": "ok"})
    ]
    assert "tools" in server.requests[0].body


def test_azure_openai_speaks_to_its_deployment(server: WireServer) -> None:
    server.script(Stream(p.chat_text("hi")))
    rec = Recorder()
    config = AzureOpenAIBackendConfig(type="azure_openai", base_url=server.url, model="my-deploy")
    azure = create(
        config, rec.context(env={"AZURE_OPENAI_API_KEY": "azure-secret-key"}), retrier=rec.retrier()
    )
    assert text_of(run_call(azure, request())) == "hi"
    sent = server.requests[0]
    assert sent.path == "/openai/deployments/my-deploy/chat/completions"
    assert sent.query["api-version"] == ["2025-04-01-preview"]
    assert sent.headers["api-key"] == "azure-secret-key"


def test_grok_needs_its_key_and_sends_it(
    server: WireServer, monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    monkeypatch.delenv("XAI_API_KEY", raising=False)
    monkeypatch.chdir(str(tmp_path))
    with pytest.raises(BackendError, match="XAI_API_KEY"):
        create_backend(BackendConfig(type="grok"), BackendContext(agent_id="a"))
    server.script(Stream(p.chat_text("hi")))
    rec = Recorder()
    grok = create(
        BackendConfig(type="grok", base_url=server.url + "/v1"),
        rec.context(env={"XAI_API_KEY": "xai-test-key-123456"}),
        retrier=rec.retrier(),
    )
    assert text_of(run_call(grok, request())) == "hi"
    assert server.requests[0].headers["authorization"] == "Bearer xai-test-key-123456"
    assert server.requests[0].body["model"] == "grok-4"


@pytest.mark.parametrize("preset", ["vllm", "sglang", "lmstudio", "ollama", "llamacpp", "chatcompletion"])
def test_every_chat_type_is_registered(preset: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = BackendConfig(
        type=preset, model="m", base_url=None if preset != "chatcompletion" else "http://127.0.0.1:9/v1"
    )
    built = create_backend(config, BackendContext(agent_id="a"))
    assert isinstance(built, ChatCompletionsBackend)
    assert built.base_url.startswith("http://")


def test_two_calls_share_one_client(server: WireServer) -> None:
    server.script(Stream(p.chat_text("one")), Stream(p.chat_text("two")))
    results = run_calls(backend(server, Recorder()), request(), request())
    assert [text_of(r) for r in results] == ["one", "two"]
    assert json.dumps(server.requests[1].body["messages"]) == json.dumps(server.requests[0].body["messages"])
