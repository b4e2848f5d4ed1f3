"""One model reply may ask for many tool calls; a turn handles at most ``max_tool_calls_per_reply`` of them.

The turn runs against a real Chat Completions server on 127.0.0.1. A reply of 100 calls gets 64 run
(each traced) and one trace record for the rest; the model's next request says, in plain words, that
the other 36 were not run, so nothing it asked for is dropped without a word.
"""

from __future__ import annotations

import asyncio

from wire import protocols as p
from wire.harness import Recorder
from wire.server import Stream, WireServer

from massgen.actors.agent.turn import TOOL_CALLS_CAPPED_EVENT, TurnRunner
from massgen.actors.agent.turn_io import TurnIO, TurnSettings
from massgen.backends.openai_chat import create
from massgen.configs.schema import BackendConfig
from massgen.messages import (
    AnswerProposed,
    AnswerView,
    BackendEvent,
    CallPermit,
    Message,
    StartTurn,
    ToolCallRequested,
    ToolCallResult,
    ToolSpec,
)

LOOKUP = ToolSpec(name="lookup", description="Look a word up.",
                  parameters={"type": "object", "properties": {"word": {"type": "string"}}})


def _many_calls(count: int) -> list[bytes]:
    chunks = [p.chat_tool_delta(i, id=f"call_{i}", name="lookup", arguments='{"word": "w"}') for i in range(count)]
    return [*chunks, p.chat_chunk({}, "tool_calls"), p.sse("[DONE]")]


def _answer() -> list[bytes]:
    return [p.chat_tool_delta(0, id="call_a", name="new_answer", arguments='{"content": "The answer is 4."}'),
            p.chat_chunk({}, "tool_calls"), p.sse("[DONE]")]


def test_a_reply_with_too_many_tool_calls_runs_the_first_64_and_tells_the_model_the_rest_were_not(
        server: WireServer) -> None:
    server.script(Stream(_many_calls(100)), Stream(_answer()))
    rec = Recorder()
    backend = create(BackendConfig(type="vllm", base_url=server.url + "/v1", model="test-model"), rec.context(),
                     retrier=rec.retrier())
    emitted: list[Message] = []
    ran: list[str] = []

    async def call_tool(name: str, arguments: dict[str, object]) -> tuple[str, bool]:
        ran.append(name)
        return "a word", False

    io = TurnIO(emit=emitted.append, permit=lambda turn, cause: CallPermit(granted=True), call_tool=call_tool,
                extra_tools=(LOOKUP,))
    settings = TurnSettings()

    async def main() -> None:
        await backend.start()
        try:
            await TurnRunner(backend, io, settings).run_turn(
                StartTurn(turn_id=1, task="What is 2+2?", view=AnswerView(), own_label="agent1"))
        finally:
            await backend.aclose()

    asyncio.run(main())
    assert len(ran) == 64
    assert len([m for m in emitted if isinstance(m, ToolCallRequested)]) == 64
    assert len([m for m in emitted if isinstance(m, ToolCallResult)]) == 64
    (capped,) = [m for m in emitted if isinstance(m, BackendEvent) and m.event == TOOL_CALLS_CAPPED_EVENT]
    assert capped.info["calls"] == 100 and capped.info["handled"] == 64 and capped.info["not_run"] == 36
    assert capped.info["not_run_names"] == {"lookup": 36}
    # The second request: the 64 results answer the 64 calls the assistant message carries, then the note.
    second = server.requests[1].body["messages"]
    assistant = next(m for m in second if m["role"] == "assistant")
    assert len(assistant["tool_calls"]) == 64
    assert [m["role"] for m in second[-65:]] == ["tool"] * 64 + ["user"]
    note = second[-1]["content"]
    assert "made 100 tool calls" in note and "the other 36 (lookup x36) were NOT run" in note
    assert [m.content for m in emitted if isinstance(m, AnswerProposed)] == ["The answer is 4."]
    assert settings.max_tool_calls_per_reply == 64  # the documented default
