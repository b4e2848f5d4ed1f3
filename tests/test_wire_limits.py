"""What a hostile model server can send, and what each backend does with it (backends/wire_limits.py).

Every backend speaks to a real server on 127.0.0.1 through its real client (httpx for Chat
Completions and Gemini, the openai and anthropic SDKs on httpx2). The rules:

- every byte read from a provider is bounded: one stream event (a line that never ends, a body
  that is not a stream), an error body, a reply's tool-call arguments; past a cap the attempt
  ends as a provider fault whose message names the endpoint and the cap, after reading at most
  the cap (what the server managed to send is asserted, never a wall-clock time);
- a reply that breaks its protocol is a provider fault (retried, then reported), never a crash;
- a redirect is not followed: the prompt goes only to the configured address;
- usage numbers that are not token counts are ignored, with a note in the trace;
- a negative ``Retry-After`` is no ``Retry-After`` (normal backoff).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from wire import protocols as p
from wire.harness import Recorder, error_of, request, run_call, text_of, usage_of
from wire.server import Endless, Respond, Stream, WireServer

from massgen.backends import anthropic_messages, gemini, openai_chat, openai_responses, wire_limits
from massgen.backends.base import Backend
from massgen.backends.retry import parse_retry_after
from massgen.configs.schema import BackendConfig

KEY = "sk-test-key"
MiB = 1024 * 1024
# What a client may hold unread beyond a cap: its socket receive buffer and the server's send buffer.
SLACK = 16 * MiB
Build = Callable[[WireServer, Recorder], Backend]


def chat(server: WireServer, rec: Recorder) -> Backend:
    config = BackendConfig(type="vllm", base_url=server.url + "/v1", model="test-model")
    return openai_chat.create(config, rec.context(), retrier=rec.retrier())


def responses(server: WireServer, rec: Recorder) -> Backend:
    config = BackendConfig(type="openai", base_url=server.url + "/v1", model="test-model")
    return openai_responses.create(config, rec.context(env={"OPENAI_API_KEY": KEY}), retrier=rec.retrier())


def anthropic(server: WireServer, rec: Recorder) -> Backend:
    config = BackendConfig(type="claude", base_url=server.url, model="test-model")
    return anthropic_messages.create(config, rec.context(env={"ANTHROPIC_API_KEY": KEY}), retrier=rec.retrier())


def google(server: WireServer, rec: Recorder) -> Backend:
    config = BackendConfig(type="gemini", base_url=server.url + "/", model="test-model")
    return gemini.create(config, rec.context(env={"GEMINI_API_KEY": KEY}), retrier=rec.retrier())


WIRES = {"chat": chat, "responses": responses, "anthropic": anthropic, "gemini": google}
# An SSE event's opening, in each wire's framing, that never ends.
OPENINGS = {
    "chat": b'data: {"choices": [{"index": 0, "delta": {"content": "',
    "responses": b'event: response.output_text.delta\ndata: {"type": "response.output_text.delta", "delta": "',
    "anthropic": b'event: content_block_delta\ndata: {"type": "content_block_delta", "delta": {"text": "',
    "gemini": b'data: {"candidates": [{"content": {"parts": [{"text": "',
}


def attempts_errors(rec: Recorder) -> list[str]:
    return [str(info.get("error")) for info in rec.attempts()]


# -- 1. every byte bounded --------------------------------------------------------------------------------------
@pytest.mark.parametrize("wire", list(WIRES))
def test_a_stream_event_that_never_ends_is_cut_at_the_event_cap(server: WireServer, wire: str) -> None:
    server.script(*[Endless(head=OPENINGS[wire], unit=b"x" * 65536) for _ in range(3)])
    rec = Recorder()
    error = error_of(run_call(WIRES[wire](server, rec), request()))
    assert server.url in error.message
    assert f"no event end (blank line) in {wire_limits.MAX_EVENT_BYTES} bytes" in error.message
    assert rec.outcomes() == ["retry", "retry", "error"]  # a provider fault: retried, then reported
    assert len(server.body_bytes) == 3
    assert all(sent <= wire_limits.MAX_EVENT_BYTES + SLACK for sent in server.body_bytes), server.body_bytes


def test_a_200_body_that_is_not_a_stream_is_cut_at_the_event_cap(server: WireServer) -> None:
    server.script(*[Endless(unit=b"{" * 65536, content_type="application/json") for _ in range(3)])
    error = error_of(run_call(chat(server, Recorder()), request()))
    assert f"in {wire_limits.MAX_EVENT_BYTES} bytes (the cap on one stream event" in error.message
    assert all(sent <= wire_limits.MAX_EVENT_BYTES + SLACK for sent in server.body_bytes), server.body_bytes


@pytest.mark.parametrize("wire", list(WIRES))
def test_an_error_body_that_never_ends_is_read_up_to_its_cap_and_keeps_its_status(server: WireServer,
                                                                                   wire: str) -> None:
    server.script(*[Endless(status=500, head=b'{"error": {"message": "', content_type="application/json")
                    for _ in range(3)])
    rec = Recorder()
    error = error_of(run_call(WIRES[wire](server, rec), request()))
    assert error.status == 500 and error.retryable
    assert f"{server.url} answered 500 with an error body over {wire_limits.MAX_ERROR_BODY_BYTES} bytes" in (
        error.message)
    assert rec.outcomes() == ["retry", "retry", "error"]
    assert all(sent <= wire_limits.MAX_ERROR_BODY_BYTES + SLACK for sent in server.body_bytes), server.body_bytes


def _endless_arguments(wire: str) -> Endless:
    fragment = "a" * 16_000
    if wire == "chat":
        return Endless(head=p.chat_tool_delta(0, id="call_1", name="new_answer", arguments='{"content": "'),
                       unit=p.chat_tool_delta(0, arguments=fragment))
    if wire == "responses":
        opening = p.ResponsesStream().created().events[0] + p.sse(
            {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
             "item": {"id": "fc_0", "type": "function_call", "call_id": "call_1", "name": "new_answer",
                      "arguments": "", "status": "in_progress"}}, event="response.output_item.added")
        return Endless(head=opening, unit=p.sse(
            {"type": "response.function_call_arguments.delta", "sequence_number": 2, "item_id": "fc_0",
             "output_index": 0, "delta": fragment}, event="response.function_call_arguments.delta"))
    tool = p.anthropic_tool_block(0, "toolu_1", "new_answer", [fragment])
    return Endless(head=p.anthropic_start() + tool[0], unit=tool[1])


@pytest.mark.parametrize("wire", ["chat", "responses", "anthropic"])
def test_tool_call_arguments_that_never_end_are_cut_at_their_cap(server: WireServer, wire: str) -> None:
    server.script(*[_endless_arguments(wire) for _ in range(3)])
    rec = Recorder()
    error = error_of(run_call(WIRES[wire](server, rec), request(tools=True)))
    assert f"{server.url}: the reply's tool-call arguments passed {wire_limits.MAX_TOOL_ARGUMENT_CHARS} characters" in (
        error.message)
    assert all(sent <= 2 * wire_limits.MAX_TOOL_ARGUMENT_CHARS + SLACK for sent in server.body_bytes)


# -- 2. a malformed reply is a provider fault, never a crash ---------------------------------------------------
def _protocol_fault(server: WireServer, wire: str, *replies: Respond | Stream) -> str:
    server.script(*replies, *replies, *replies)
    rec = Recorder()
    error = error_of(run_call(WIRES[wire](server, rec), request()))
    assert rec.outcomes() == ["retry", "retry", "error"], rec.attempts()
    assert error.retryable and "\n" not in error.message and "errors.pydantic.dev" not in error.message
    assert server.url in error.message
    return error.message


def test_chat_choices_that_are_not_a_list(server: WireServer) -> None:
    message = _protocol_fault(server, "chat", Stream([p.sse({"choices": "nope"}), p.sse("[DONE]")]))
    assert "malformed stream chunk from vllm" in message and "'choices' is a str, not a list" in message


def test_chat_content_that_is_not_text(server: WireServer) -> None:
    message = _protocol_fault(server, "chat", Stream([p.chat_chunk({"content": {"a": 1}}), p.sse("[DONE]")]))
    assert "malformed stream chunk from vllm" in message


@pytest.mark.parametrize("wire", ["responses", "anthropic"])
def test_sse_data_that_is_not_json(server: WireServer, wire: str) -> None:
    message = _protocol_fault(server, wire, Stream([p.sse("this is not json", event="message_start")]))
    assert "malformed stream event from" in message and "JSONDecodeError" in message


def test_gemini_usage_that_is_not_a_number(server: WireServer) -> None:
    chunk = (b'data: {"candidates": [{"content": {"role": "model", "parts": [{"text": "4"}]}, "finishReason": "STOP"}],'
             b' "usageMetadata": {"promptTokenCount": "lots"}}\r\n\r\n')
    message = _protocol_fault(server, "gemini", Stream([chunk]))
    assert "malformed stream event from gemini" in message and "promptTokenCount" in message.replace(
        "prompt_token_count", "promptTokenCount")


def test_gemini_data_that_is_not_json(server: WireServer) -> None:
    message = _protocol_fault(server, "gemini", Stream([b"data: <html>not json</html>\r\n\r\n"]))
    assert "malformed stream event from gemini: UnknownApiResponseError" in message


@pytest.mark.parametrize("wire", list(WIRES))
def test_a_web_page_with_status_200_is_named_as_one(server: WireServer, wire: str) -> None:
    page = Respond(200, b"<html><body>Sign in</body></html>", headers={"content-type": "text/html"})
    message = _protocol_fault(server, wire, page)
    assert "answered 200 with a web page (text/html), not a model's stream" in message


def test_anthropic_usage_that_is_not_a_number_is_ignored_with_a_note(server: WireServer) -> None:
    start = p.anthropic_start().replace(b'"input_tokens": 20', b'"input_tokens": "lots"')
    server.script(Stream([start, *p.anthropic_text_block(0, "4"), *p.anthropic_end(output_tokens=-5)]))
    rec = Recorder()
    events = run_call(anthropic(server, rec), request())
    assert text_of(events) == "4"
    usage = usage_of(events)
    assert (usage.input_tokens, usage.output_tokens) == (0, 1)  # -5 ignored: message_start's 1 stands
    ignored = [info for name, info in rec.events if name == "backend.usage_ignored"]
    assert [(i["field"], i["value"]) for i in ignored] == [("input_tokens", "'lots'"), ("output_tokens", "-5")]


# -- 3. redirects ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("wire", list(WIRES))
def test_a_redirect_is_not_followed_and_its_location_is_named(server: WireServer, wire: str) -> None:
    with WireServer() as other:
        other.script(*[Stream(p.chat_text("captured")) for _ in range(3)])
        target = other.url + "/v1/chat/completions"
        server.script(*[Respond(307, b"", headers={"location": target}) for _ in range(3)])
        rec = Recorder()
        error = error_of(run_call(WIRES[wire](server, rec), request("a secret prompt")))
        assert other.requests == []  # the prompt never left for the other host
    assert f"{server.url} answered 307 redirecting to '{target}': not followed" in error.message
    assert not error.retryable and rec.outcomes() == ["error"]


def test_a_redirect_loop_is_one_refusal_not_a_crash(server: WireServer) -> None:
    server.script(Respond(302, b"", headers={"location": server.url + "/v1/chat/completions"}))
    error = error_of(run_call(chat(server, Recorder()), request()))
    assert "answered 302 redirecting to" in error.message and len(server.requests) == 1


# -- 4. usage numbers --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("prompt, completion", [(-100_000, 10**30), ("lots", 2.5), (True, None)])
def test_usage_that_is_not_a_token_count_is_ignored_with_a_note(server: WireServer, prompt: object,
                                                                 completion: object) -> None:
    usage = {"prompt_tokens": prompt, "completion_tokens": completion}
    server.script(Stream([p.chat_chunk({"content": "4"}), p.chat_chunk({}, "stop"),
                          p.sse({"choices": [], "usage": usage}), p.sse("[DONE]")]))
    rec = Recorder()
    events = run_call(chat(server, rec), request())
    assert text_of(events) == "4"
    got = usage_of(events)
    assert (got.input_tokens, got.output_tokens, got.cost_usd) == (0, 0, 0.0)
    noted = {info["field"] for name, info in rec.events if name == "backend.usage_ignored"}
    assert noted == {field for field, value in (("input_tokens", prompt), ("output_tokens", completion))
                     if value is not None}


def test_usage_within_bounds_is_kept(server: WireServer) -> None:
    server.script(Stream(p.chat_text("4", usage=(0, 100_000_000))))
    rec = Recorder()
    got = usage_of(run_call(chat(server, rec), request()))
    assert (got.input_tokens, got.output_tokens) == (0, 100_000_000)
    assert not [name for name, _ in rec.events if name == "backend.usage_ignored"]


# -- 5. Retry-After ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["-30", "-0.5", "nan", "-inf", "soon"])
def test_a_negative_or_invalid_retry_after_is_absent(value: str) -> None:
    assert parse_retry_after({"retry-after": value}, now=1_000_000_000.0) is None
    assert parse_retry_after({"retry-after-ms": value}) is None


def test_a_valid_retry_after_is_kept() -> None:
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "1500"}) == 1.5
    assert parse_retry_after({"retry-after": "0"}) == 0.0
    assert parse_retry_after({"retry-after": "Mon, 01 Jan 1990 00:00:00 GMT"}) == 0.0  # past: RFC 9110's "now"


def test_a_negative_retry_after_keeps_the_normal_backoff(server: WireServer) -> None:
    refusal = Respond(429, p.openai_error("slow down", "rate_limit_error"), headers={"retry-after": "-30"})
    server.script(refusal, refusal, Stream(p.chat_text("4")))
    rec = Recorder()
    assert text_of(run_call(chat(server, rec), request())) == "4"
    assert rec.sleeps == [0.01, 0.02]  # FAST's backoff (base 0.01, doubling), not 0


# -- the stream guard counts tool arguments as it counts text ---------------------------------------------------
def test_the_stream_guard_ends_a_call_whose_tool_arguments_pass_its_limit(server: WireServer) -> None:
    import asyncio

    from massgen.actors.agent.stream_guard import StreamLimits, guard
    from massgen.messages.stream import StreamError, ToolCallEvent

    server.script(Stream([*(p.chat_tool_delta(i, id=f"call_{i}", name="new_answer", arguments='{"content": "' +
                                              "x" * 40 + '"}') for i in range(5)),
                          p.chat_chunk({}, "tool_calls"), p.sse("[DONE]")]))
    backend = chat(server, Recorder())

    async def main() -> list[object]:
        await backend.start()
        try:
            limits = StreamLimits(max_tool_argument_chars=150)
            return [e async for e in guard(backend.stream(request(tools=True)), limits)]
        finally:
            await backend.aclose()

    events = asyncio.run(main())
    assert len([e for e in events if isinstance(e, ToolCallEvent)]) == 2  # 2 x 55 characters fit in 150; 3 do not
    last = events[-1]
    assert isinstance(last, StreamError)
    assert last.message == ("stream guard: tool-call arguments exceeded: more than 150 characters in one call's"
                            " tool calls")
