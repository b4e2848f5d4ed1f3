"""``massgen serve`` as a real process, driven by the official ``openai`` client.

One server serves every test here (scripted teams, no model, no key); each test checks
what the client saw and, where it matters, what the run's trace recorded.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from serve_process import ServerProcess, find_trace, start_server, trace_of, wait_until, write_configs

WEATHER_TOOL: Any = {
    "type": "function",
    "function": {"name": "get_weather", "description": "Current weather in a city.",
                 "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                "required": ["city"]}},
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    workdir = tmp_path_factory.mktemp("serve")
    write_configs(workdir)
    proc = start_server(workdir, "--config", "team.yaml", "--max-concurrent-runs", "32",
                        "--max-body-bytes", "65536", "--max-messages", "50", "--keepalive", "0.2")
    try:
        yield proc
    finally:
        proc.stop()


@pytest.fixture
def client(server: ServerProcess) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=server.api_url, api_key="unused", max_retries=0, timeout=30.0) as c:
        yield c


def _metadata(obj: Any) -> dict[str, Any]:
    data: dict[str, Any] = obj.model_extra["massgen_metadata"]
    return data


def _ask(text: str) -> Any:
    return [{"role": "user", "content": text}]


def test_health_and_models(server: ServerProcess, client: openai.OpenAI) -> None:
    health = server.health()
    assert health["status"] == "ok" and health["runs_in_progress"] == 0 and health["version"]
    ids = [m.id for m in client.models.list()]
    assert ids[0] == "team"
    assert "massgen/basic/scripted_three_agents" in ids
    assert client.models.retrieve("massgen/basic/scripted_three_agents").owned_by == "massgen"
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("massgen/nope")


def test_non_streaming_completion_has_usage_metadata_and_request_id(client: openai.OpenAI) -> None:
    raw = client.chat.completions.with_raw_response.create(
        model="team", messages=_ask("What is 2+2?"), extra_headers={"x-request-id": "test-req-1"})
    assert raw.headers["x-request-id"] == "test-req-1"
    reply = raw.parse()
    assert reply.object == "chat.completion"
    assert reply.choices[0].message.content == "The answer is 4."
    assert reply.choices[0].finish_reason == "stop"
    assert reply.usage is not None and reply.usage.total_tokens > 0
    meta = _metadata(reply)
    assert meta["request_id"] == "test-req-1"
    assert meta["winner"] == "alpha" and meta["winner_label"] == "agent1.1" and meta["status"] == "completed"
    # beta's text before its new_answer call is kept in its answer (the work others can check)
    assert meta["answers"] == {"agent1.1": "4", "agent2.1": "Quick check.\n\nfour"}
    assert {v["target_label"] for v in meta["votes"] if v["valid"]} == {"agent1.1"}
    trace = trace_of(meta["log_dir"])
    assert trace[0]["payload"]["question"] == "What is 2+2?"
    assert [r["payload"]["status"] for r in trace if r["type"] == "RunFinished"] == ["completed"]


def test_each_run_has_its_own_log_dir_and_history_reaches_the_team(client: openai.OpenAI) -> None:
    messages: Any = [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "What is 1+1?"},
        {"role": "assistant", "content": "2"},
        {"role": "user", "content": [{"type": "text", "text": "And 2+2?"}]},
    ]
    first = _metadata(client.chat.completions.create(model="team", messages=messages))
    second = _metadata(client.chat.completions.create(model="team", messages=messages))
    assert first["log_dir"] != second["log_dir"]
    started = trace_of(first["log_dir"])[0]["payload"]
    assert started["question"] == "Answer briefly.\n\nAnd 2+2?"
    assert started["history"] == [["What is 1+1?", "2"]]


def test_streaming_sends_role_progress_content_usage_in_order(client: openai.OpenAI) -> None:
    stream = client.chat.completions.create(model="team", messages=_ask("What is 2+2?"), stream=True,
                                            stream_options={"include_usage": True})
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    reasoning = "".join((c.choices[0].delta.model_extra or {}).get("reasoning_content", "")
                        for c in chunks if c.choices)
    assert "alpha answered (agent1.1)" in reasoning and "votes for agent1.1" in reasoning
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert content == "The answer is 4."
    finishes = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert [c.choices[0].finish_reason for c in finishes] == ["stop"]
    assert _metadata(finishes[0])["winner"] == "alpha"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0


def test_the_presentation_streams_as_it_is_written(client: openai.OpenAI) -> None:
    stream = client.chat.completions.create(model="massgen/path:presenting.yaml", messages=_ask("2+2?"),
                                            stream=True)
    pieces = [c.choices[0].delta.content for c in list(stream) if c.choices and c.choices[0].delta.content]
    assert pieces == ["The answer ", "is 4, ", "because 2+2 ", "is 4."]  # each delta as the presenter wrote it


def test_a_model_that_matches_nothing_is_a_404_in_openai_shape(server: ServerProcess,
                                                              client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as missing:
        client.chat.completions.create(model="no-such-model", messages=_ask("hi"))
    assert missing.value.code == "model_not_found"
    body = httpx.post(f"{server.api_url}/chat/completions", timeout=10.0,
                      json={"model": "no-such-model", "messages": _ask("hi")}).json()
    assert body["error"]["type"] == "invalid_request_error" and body["error"]["param"] == "model"
    assert "no-such-model" in body["error"]["message"]


def test_raw_stream_ends_with_done(server: ServerProcess) -> None:
    body = {"model": "team", "stream": True, "messages": _ask("What is 2+2?")}
    with httpx.stream("POST", f"{server.api_url}/chat/completions", json=body, timeout=30.0) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        data = [line[len("data: "):] for line in response.iter_lines() if line.startswith("data: ")]
    assert json.loads(data[0])["choices"][0]["delta"]["role"] == "assistant"
    assert data[-1] == "[DONE]"


def test_shipped_example_as_model(client: openai.OpenAI) -> None:
    reply = client.chat.completions.create(model="massgen/basic/scripted_three_agents",
                                           messages=_ask("Which is larger, 9.11 or 9.9?"))
    assert (reply.choices[0].message.content or "").startswith("9.9 is larger")


def test_tool_call_round_trip(client: openai.OpenAI, server: ServerProcess) -> None:
    reply = client.chat.completions.create(model="massgen/path:tool.yaml", messages=_ask("Weather in Paris?"),
                                           tools=[WEATHER_TOOL])
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
    assert choice.message.tool_calls is not None and len(choice.message.tool_calls) == 1
    call: Any = choice.message.tool_calls[0]
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"city": "Paris"}

    # The same answer, streamed as tool-call deltas.
    chunks = list(client.chat.completions.create(model="massgen/path:tool.yaml", messages=_ask("Weather?"),
                                                 tools=[WEATHER_TOOL], stream=True))
    deltas = [tc for c in chunks if c.choices for tc in (c.choices[0].delta.tool_calls or [])]
    assert deltas[0].id and deltas[0].function is not None and deltas[0].function.name == "get_weather"
    arguments = "".join(d.function.arguments or "" for d in deltas if d.function is not None)
    assert json.loads(arguments) == {"city": "Paris"}
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == [
        "tool_calls"]

    # The client runs the tool and continues the conversation with its result.
    follow_up: Any = [
        *_ask("Weather in Paris?"),
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call.id, "type": "function",
             "function": {"name": "get_weather", "arguments": call.function.arguments}}]},
        {"role": "tool", "tool_call_id": call.id, "content": "sunny, 21 C"},
    ]
    final = client.chat.completions.create(model="massgen/path:after_tool.yaml", messages=follow_up,
                                           tools=[WEATHER_TOOL])
    assert final.choices[0].message.content == "It is sunny in Paris."
    question = trace_of(_metadata(final)["log_dir"])[0]["payload"]["question"]
    assert question.startswith("Weather in Paris?") and 'get_weather({"city": "Paris"})' in question
    assert "sunny, 21 C" in question


def test_errors_map_to_sdk_exceptions(client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as missing:
        client.chat.completions.create(model="massgen/no_such_example", messages=_ask("hi"))
    assert missing.value.code == "model_not_found"
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="massgen/path:nope.yaml", messages=_ask("hi"))
    with pytest.raises(openai.NotFoundError):  # outside the config roots, even if it exists
        client.chat.completions.create(model="massgen/path:/etc/hostname", messages=_ask("hi"))
    vote_tool: Any = {"type": "function", "function": {"name": "vote", "parameters": {"type": "object"}}}
    with pytest.raises(openai.BadRequestError) as reserved:
        client.chat.completions.create(model="team", messages=_ask("hi"), tools=[vote_tool])
    assert reserved.value.code == "reserved_tool_name"
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="team", messages=[{"role": "system", "content": "no task"}])
    with pytest.raises(openai.UnprocessableEntityError):
        client.chat.completions.create(model="team", messages=[{"role": "robot", "content": "hi"}])  # type: ignore


def test_failed_run_is_500_without_retry_or_an_error_event(server: ServerProcess, client: openai.OpenAI) -> None:
    with pytest.raises(openai.InternalServerError) as failed:
        client.chat.completions.create(model="massgen/path:failing.yaml", messages=_ask("hi"))
    assert failed.value.response.headers["x-should-retry"] == "false"
    assert failed.value.code == "run_failed"

    stream = client.chat.completions.create(model="massgen/path:failing.yaml", messages=_ask("hi"), stream=True)
    first = next(iter(stream))
    assert first.choices[0].delta.role == "assistant"
    with pytest.raises(openai.APIError, match="produced no answer"):
        list(stream)


MALFORMED: list[tuple[bytes, int]] = [
    (b"{not json", 400),
    (b"[1, 2]", 400),
    (b"\xff\xfe", 400),
    (b'{"model": "team"}', 422),
    (b'{"model": "team", "messages": "hello"}', 422),
    (b'{"model": "team", "messages": []}', 422),
    (b'{"model": "team", "messages": [{"role": "user", "content": "hi"}], "stream": "yes"}', 422),
    (b'{"model": 7, "messages": [{"role": "user", "content": "hi"}]}', 422),
    (b'{"model": "team", "messages": [{"role": "user", "content": ""}]}', 400),
    (b'{"model": "team", "messages": [{"role": "user", "content": [{"type": "image_url"}]}]}', 400),
    (b'{"model": "team", "messages": [{"role": "user", "content": "hi"},'
     b' {"role": "tool", "tool_call_id": "x", "content": "r"}]}', 400),
    (b'{"model": "team", "messages": [{"role": "user", "content": "hi"}], "n": 2}', 400),
    (b'{"model": "team", "messages": [{"role": "user", "content": "hi"}], "stream_options": {}}', 400),
    (json.dumps({"model": "team", "messages": _ask("hi") * 51}).encode(), 400),
    (json.dumps({"model": "team", "messages": _ask("x" * 70000)}).encode(), 413),
]


@pytest.mark.parametrize(("body", "status"), MALFORMED)
def test_malformed_bodies_get_openai_shaped_errors(server: ServerProcess, body: bytes, status: int) -> None:
    response = httpx.post(f"{server.api_url}/chat/completions", content=body, timeout=10.0,
                          headers={"content-type": "application/json", "x-request-id": "bad-1"})
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["message"] and error["type"] == "invalid_request_error"
    assert response.headers["x-request-id"] == "bad-1"
    assert server.health()["status"] == "ok"


def test_unknown_routes_and_methods_are_json_errors(server: ServerProcess) -> None:
    missing = httpx.get(f"{server.base_url}/v2/nothing", timeout=5.0)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    wrong = httpx.get(f"{server.api_url}/chat/completions", timeout=5.0)
    assert wrong.status_code == 405 and "error" in wrong.json()
    generated = wrong.headers["x-request-id"]
    assert generated.startswith("req_")
    odd = httpx.get(f"{server.base_url}/health", headers={"x-request-id": "bad id\twith tabs"}, timeout=5.0)
    assert odd.headers["x-request-id"].startswith("req_")


def test_twenty_concurrent_requests(server: ServerProcess) -> None:
    async def one(client: openai.AsyncOpenAI, index: int) -> tuple[str, str]:
        if index % 2:
            stream = await client.chat.completions.create(model="team", messages=_ask(f"q{index}"), stream=True)
            text, log_dir = "", ""
            async for chunk in stream:
                if chunk.choices:
                    text += chunk.choices[0].delta.content or ""
                    if chunk.choices[0].finish_reason:
                        log_dir = _metadata(chunk)["log_dir"]
            return text, log_dir
        reply = await client.chat.completions.create(model="team", messages=_ask(f"q{index}"))
        return reply.choices[0].message.content or "", _metadata(reply)["log_dir"]

    async def main() -> list[tuple[str, str]]:
        async with openai.AsyncOpenAI(base_url=server.api_url, api_key="unused", max_retries=0,
                                      timeout=60.0) as client:
            return await asyncio.gather(*(one(client, i) for i in range(20)))

    results = asyncio.run(main())
    assert [text for text, _ in results] == ["The answer is 4."] * 20
    assert len({log_dir for _, log_dir in results}) == 20
    server.wait_idle()


def test_client_disconnect_mid_stream_cancels_the_run(server: ServerProcess) -> None:
    body = {"model": "massgen/path:slow.yaml", "stream": True, "messages": _ask("disconnect-stream-1")}
    seen: set[str] = set()
    with httpx.stream("POST", f"{server.api_url}/chat/completions", json=body, timeout=30.0) as response:
        for line in response.iter_lines():
            if line.startswith(": keep-alive"):
                seen.add("keep-alive")
            elif "reasoning_content" in line:
                seen.add("progress")
            if seen == {"keep-alive", "progress"}:
                break  # leaving the block closes the connection mid-stream
    server.wait_idle()
    trace = find_trace(server.log_dir, "disconnect-stream-1")
    cancels = [r for r in trace if r["type"] == "CancelRun"]
    assert [c["payload"]["reason"] for c in cancels] == ["the client disconnected"]
    finished = [r["payload"] for r in trace if r["type"] == "RunFinished"]
    assert [f["status"] for f in finished] == ["interrupted"]  # cancelled before any answer: no answer, not a failure
    assert finished[0]["final_answer"] is None
    assert "the client disconnected" in finished[0]["reason"]


def test_client_disconnect_while_waiting_cancels_the_run(server: ServerProcess) -> None:
    async def main() -> None:
        body = {"model": "massgen/path:slow.yaml", "messages": _ask("disconnect-wait-1")}
        async with httpx.AsyncClient(timeout=30.0) as http:
            request = asyncio.ensure_future(http.post(f"{server.api_url}/chat/completions", json=body))
            await asyncio.to_thread(wait_until, lambda: server.health()["runs_in_progress"] == 1, 10.0,
                                    "the run to start")
            request.cancel()
            with pytest.raises(asyncio.CancelledError):
                await request

    asyncio.run(main())
    server.wait_idle()
    trace = find_trace(server.log_dir, "disconnect-wait-1")
    assert [r["payload"]["reason"] for r in trace if r["type"] == "CancelRun"] == ["the client disconnected"]


def test_log_dirs_live_under_the_server_log_dir(server: ServerProcess) -> None:
    assert any(Path(server.log_dir).rglob("trace.jsonl"))
