"""Byte-exact stream bodies as each provider sends them, for the wire server to play.

Shapes follow the providers' documented streaming formats: Chat Completions
``data:`` chunks ending in ``[DONE]``; Responses and Anthropic named events
(``event:`` + ``data:``); Gemini ``streamGenerateContent?alt=sse`` ``data:`` chunks.
"""

from __future__ import annotations

import json
from typing import Any

MODEL = "test-model"


def sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    body = data if isinstance(data, str) else json.dumps(data)
    return f"{head}data: {body}\n\n".encode()


# -- OpenAI Chat Completions ----------------------------------------------------------------------
def chat_chunk(
    delta: dict[str, Any] | None = None,
    finish: str | None = None,
    usage: dict[str, int] | None = None,
    index: int = 0,
) -> bytes:
    choices = (
        []
        if delta is None and finish is None
        else [{"index": index, "delta": delta or {}, "finish_reason": finish, "logprobs": None}]
    )
    return sse(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": MODEL,
            "choices": choices,
            "usage": usage,
        }
    )


def chat_text(*parts: str, usage: tuple[int, int] = (10, 5), finish: str = "stop") -> list[bytes]:
    chunks = [chat_chunk({"role": "assistant", "content": ""})]
    chunks += [chat_chunk({"content": p}) for p in parts]
    chunks.append(chat_chunk({}, finish))
    chunks.append(
        chat_chunk(
            None, usage={"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}
        )
    )
    return [*chunks, sse("[DONE]")]


def chat_tool_delta(
    index: int, *, id: str | None = None, name: str | None = None, arguments: str | None = None
) -> bytes:
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if arguments is not None:
        function["arguments"] = arguments
    call: dict[str, Any] = {"index": index, "function": function}
    if id is not None:
        call.update(id=id, type="function")
    return chat_chunk({"tool_calls": [call]})


def openai_error(
    message: str, type_: str = "invalid_request_error", code: str | None = None
) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


# -- OpenAI Responses ---------------------------------------------------------------------------
def _response(
    status: str,
    output: list[dict[str, Any]],
    usage: tuple[int, int] | None,
    error: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": status,
        "model": MODEL,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": error,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "temperature": None,
        "top_p": None,
        "usage": None
        if usage is None
        else {
            "input_tokens": usage[0],
            "output_tokens": usage[1],
            "total_tokens": sum(usage),
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


class ResponsesStream:
    """Builds a Responses event sequence with proper sequence numbers."""

    def __init__(self) -> None:
        self.events: list[bytes] = []
        self._seq = 0

    def event(self, type_: str, **fields: Any) -> ResponsesStream:
        self.events.append(sse({"type": type_, "sequence_number": self._seq, **fields}, event=type_))
        self._seq += 1
        return self

    def created(self) -> ResponsesStream:
        return self.event("response.created", response=_response("in_progress", [], None))

    def text(self, *parts: str) -> ResponsesStream:
        item = {"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress", "content": []}
        self.event("response.output_item.added", output_index=0, item=item)
        for part in parts:
            self.event(
                "response.output_text.delta",
                item_id="msg_1",
                output_index=0,
                content_index=0,
                delta=part,
                logprobs=[],
            )
        return self

    def function_call(
        self, output_index: int, call_id: str, name: str, fragments: list[str]
    ) -> ResponsesStream:
        item_id = f"fc_{output_index}"
        item = {
            "id": item_id,
            "type": "function_call",
            "call_id": call_id,
            "name": name,
            "arguments": "",
            "status": "in_progress",
        }
        self.event("response.output_item.added", output_index=output_index, item=item)
        for fragment in fragments:
            self.event(
                "response.function_call_arguments.delta",
                item_id=item_id,
                output_index=output_index,
                delta=fragment,
            )
        arguments = "".join(fragments)
        self.event(
            "response.function_call_arguments.done",
            item_id=item_id,
            output_index=output_index,
            arguments=arguments,
            name=name,
        )
        self.event(
            "response.output_item.done",
            output_index=output_index,
            item={**item, "arguments": arguments, "status": "completed"},
        )
        return self

    def completed(self, usage: tuple[int, int] = (12, 7)) -> list[bytes]:
        self.event("response.completed", response=_response("completed", [], usage))
        return self.events

    def failed(self, code: str, message: str) -> list[bytes]:
        self.event(
            "response.failed", response=_response("failed", [], None, {"code": code, "message": message})
        )
        return self.events


# -- Anthropic Messages ---------------------------------------------------------------------------
def anthropic_start(input_tokens: int = 20) -> bytes:
    return sse(
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": input_tokens, "output_tokens": 1},
            },
        },
        event="message_start",
    )


def anthropic_text_block(index: int, *parts: str) -> list[bytes]:
    events = [
        sse(
            {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
            event="content_block_start",
        )
    ]
    events += [
        sse(
            {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}},
            event="content_block_delta",
        )
        for p in parts
    ]
    events.append(sse({"type": "content_block_stop", "index": index}, event="content_block_stop"))
    return events


def anthropic_thinking_block(index: int, text: str) -> list[bytes]:
    return [
        sse(
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""},
            },
            event="content_block_start",
        ),
        sse(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "thinking_delta", "thinking": text},
            },
            event="content_block_delta",
        ),
        sse({"type": "content_block_stop", "index": index}, event="content_block_stop"),
    ]


def anthropic_tool_block(index: int, id: str, name: str, fragments: list[str]) -> list[bytes]:
    events = [
        sse(
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}},
            },
            event="content_block_start",
        )
    ]
    events += [
        sse(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": f},
            },
            event="content_block_delta",
        )
        for f in fragments
    ]
    events.append(sse({"type": "content_block_stop", "index": index}, event="content_block_stop"))
    return events


def anthropic_end(stop_reason: str = "end_turn", output_tokens: int = 9) -> list[bytes]:
    return [
        sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            },
            event="message_delta",
        ),
        sse({"type": "message_stop"}, event="message_stop"),
    ]


def anthropic_error_event(type_: str, message: str) -> bytes:
    return sse({"type": "error", "error": {"type": type_, "message": message}}, event="error")


def anthropic_error(type_: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": type_, "message": message}}


# -- Gemini ---------------------------------------------------------------------------------------
def gemini_chunk(
    parts: list[dict[str, Any]],
    finish: str | None = None,
    usage: tuple[int, int] | None = None,
    thoughts: int = 0,
) -> bytes:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    body: dict[str, Any] = {"candidates": [candidate], "modelVersion": MODEL, "responseId": "r1"}
    if usage:
        body["usageMetadata"] = {
            "promptTokenCount": usage[0],
            "candidatesTokenCount": usage[1],
            "thoughtsTokenCount": thoughts,
            "totalTokenCount": sum(usage) + thoughts,
        }
    return f"data: {json.dumps(body)}\r\n\r\n".encode()


def gemini_error(code: int, message: str, status: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status}}
