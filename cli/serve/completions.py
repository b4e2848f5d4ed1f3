"""A team's run in OpenAI's words: ``chat.completion`` objects, stream chunks, progress text.

Everything here is a pure function of a ``RunResult`` or of trace records, so the HTTP
layer only moves dicts. A final answer that encodes client tool calls
(``actors/agent/client_tools.py``) becomes ``tool_calls`` with ``finish_reason: "tool_calls"``.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias, assert_never

from massgen import LogProjection, RunResult, TraceRecord, decode_client_tool_calls, messages

_PREVIEW_CHARS = 200
CONTENT_CHUNK_CHARS = 256


def completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"


def now() -> int:
    return int(time.time())


def usage_of(result: RunResult) -> dict[str, int]:
    prompt = int(result.usage.get("input_tokens", 0))
    completion = int(result.usage.get("output_tokens", 0))
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def metadata_of(result: RunResult, request_id: str) -> dict[str, Any]:
    """``massgen_metadata``: how the answer came about, and where its full record lies."""
    return {
        "request_id": request_id,
        "run_id": result.run_id,
        "status": result.status,
        "reason": result.reason,
        "partial": result.partial,
        "presentation_not_used": result.presentation_not_used,
        "winner": result.winner,
        "winner_label": result.winner_label,
        "votes": result.votes,
        "answers": result.answers,
        "log_dir": str(result.log_dir),
        "elapsed_s": result.elapsed_s,
        "model_calls": result.usage.get("model_calls", 0),
        "cost_usd": result.usage.get("cost_usd", 0.0),
    }


@dataclass(frozen=True)
class Answer:
    """The final answer as a message: text, or client tool calls."""

    content: str | None
    tool_calls: list[dict[str, Any]] | None

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.tool_calls else "stop"


def answer_of(result: RunResult) -> Answer:
    calls = decode_client_tool_calls(result.final_answer)
    if calls is None:
        return Answer(content=result.final_answer or "", tool_calls=None)
    return Answer(content=None, tool_calls=[
        {"id": f"call_{uuid.uuid4().hex[:24]}", "type": "function",
         "function": {"name": c["name"], "arguments": json.dumps(c["arguments"], ensure_ascii=False)}}
        for c in calls
    ])


def completion(result: RunResult, model: str, request_id: str) -> dict[str, Any]:
    answer = answer_of(result)
    message: dict[str, Any] = {"role": "assistant", "content": answer.content, "refusal": None}
    if answer.tool_calls:
        message["tool_calls"] = answer.tool_calls
    return {
        "id": completion_id(),
        "object": "chat.completion",
        "created": now(),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": answer.finish_reason, "logprobs": None}],
        "usage": usage_of(result),
        "massgen_metadata": metadata_of(result, request_id),
    }


@dataclass(frozen=True)
class ChunkFactory:
    """Stream chunks that share one id, creation time and model, as OpenAI's do."""

    id: str
    created: int
    model: str

    def chunk(self, delta: dict[str, Any] | None, finish_reason: str | None = None,
              **extra: Any) -> dict[str, Any]:
        choices = [] if delta is None else [
            {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
        ]
        return {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
                "choices": choices, **extra}

    def answer_chunks(self, answer: Answer) -> list[dict[str, Any]]:
        """The final answer as deltas: content in pieces, or each tool call (name first, then arguments)."""
        if answer.tool_calls:
            chunks = []
            for index, call in enumerate(answer.tool_calls):
                head = {"index": index, "id": call["id"], "type": "function",
                        "function": {"name": call["function"]["name"], "arguments": ""}}
                chunks.append(self.chunk({"tool_calls": [head]}))
                args = {"index": index, "function": {"arguments": call["function"]["arguments"]}}
                chunks.append(self.chunk({"tool_calls": [args]}))
            return chunks
        text = answer.content or ""
        pieces = [text[i:i + CONTENT_CHUNK_CHARS] for i in range(0, len(text), CONTENT_CHUNK_CHARS)]
        return [self.chunk({"content": piece}) for piece in pieces]


def _preview(content: str) -> str:
    calls = decode_client_tool_calls(content)
    if calls is not None:
        return "calls " + ", ".join(f"{c['name']}({json.dumps(c['arguments'])})" for c in calls)
    flat = " ".join(content.split())
    return flat if len(flat) <= _PREVIEW_CHARS else flat[:_PREVIEW_CHARS] + "..."


class ContentText(str):
    """Text the presenter wrote: it streams as ``content`` deltas, not as progress."""

    __slots__ = ()


def rest_of_answer(streamed: str, content: str) -> str:
    """What is left to send of ``content`` after ``streamed`` went out as content deltas.

    The final answer is the presentation stripped, so leading and trailing blanks may
    differ; a presentation that was cut off (its agent failed or ran out of time, and
    the winner's answer stands) is followed by the answer in full, after a note.
    """
    head = streamed.lstrip()
    if content.startswith(head):
        return content[len(head):]
    if head.rstrip() == content:
        return ""
    return "\n\n[the presentation was cut off; the team's answer follows]\n\n" + content


# The records a chat stream shows as progress: streamed text, and a line for each of the others.
Progressed: TypeAlias = (
    messages.AgentChunk | messages.RunStarted | messages.AnswerAccepted | messages.RecordVote
    | messages.ToolCallRequested | messages.AgentRestarting | messages.AgentMarkedFailed | messages.DeadlineExpired
    | messages.CancelRun | messages.PresentFinal
)
_PROGRESSED = messages.RecordSubset[Progressed](Progressed)


class Progress:
    """Trace records -> short progress text for ``reasoning_content`` deltas.

    Called on the trace writer's thread, one record at a time, in trace order. Agent
    text streams through under a ``[agent]`` header whenever the speaker changes;
    coordination events (answers, votes, restarts, deadlines) get a line each. The
    presenter's own text is ``ContentText`` when ``content`` is set (it is the answer,
    streamed as it is written), else left out.
    """

    def __init__(self, content: bool = True) -> None:
        self._speaker: str | None = None
        self._presenting = False
        self._presenter: str | None = None
        self._content = content

    def _line(self, text: str) -> str:
        lead = "\n" if self._speaker is not None else ""
        self._speaker = None
        return f"{lead}{text}\n"

    def __call__(self, raw: Mapping[str, Any] | TraceRecord, projection: LogProjection) -> str | None:
        record = TraceRecord.of(raw)
        if record.kind not in ("tell", "event"):
            return None
        message = _PROGRESSED.message(record)
        if isinstance(message, messages.AgentChunk):
            return self._chunk(record, message)
        text = None if message is None else self._describe(message, record)
        return None if text is None else self._line(text)

    def _chunk(self, record: TraceRecord, chunk: messages.AgentChunk) -> str | None:
        if self._presenting:
            presenter = record.sender_name == self._presenter
            if self._content and presenter and chunk.kind == "text" and chunk.text:
                return ContentText(chunk.text)
            return None
        if not chunk.text:
            return None
        agent = record.sender_name
        if agent == self._speaker:
            return chunk.text
        lead = "\n" if self._speaker is not None else ""
        self._speaker = agent
        return f"{lead}[{agent}] {chunk.text}"

    def _describe(self, message: Progressed, record: TraceRecord) -> str | None:
        match message:
            case messages.RunStarted():
                return f"Team of {len(message.agents)}: {', '.join(message.agents)}."
            case messages.AnswerAccepted():
                return f"{message.agent} answered ({message.label}): {_preview(message.content)}"
            case messages.RecordVote():
                return f"{message.voter} votes for {message.target_label}: {message.reason}"
            case messages.ToolCallRequested():
                return f"{record.sender_name} calls {message.name}"
            case messages.AgentRestarting():
                return f"{message.name} restarts: {message.reason}"
            case messages.AgentMarkedFailed():
                return f"{message.name} is out of the team: {message.reason}"
            case messages.DeadlineExpired():
                return f"deadline ({message.scope}): {message.detail}"
            case messages.CancelRun():
                return f"cancelled: {message.reason}"
            case messages.PresentFinal():
                self._presenting = True
                self._presenter = record.to_name
                return f"{self._presenter} presents the final answer."
            case messages.AgentChunk():
                return None  # streamed text, not a line (see _chunk)
            case _ as unreachable:
                assert_never(unreachable)
