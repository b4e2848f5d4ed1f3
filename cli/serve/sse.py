"""``stream: true``: the run as Server-Sent Events, in the order OpenAI clients expect.

1. a role chunk at once (clients and proxies see bytes before any model has spoken);
2. team progress as ``reasoning_content`` deltas, batched from whatever is queued, and
   the presenter's text as ``content`` deltas while it is written;
3. the rest of the final answer as ``content`` deltas, or ``tool_calls`` deltas, then the finish
   chunk (with ``massgen_metadata``), a usage chunk when ``include_usage`` was asked for,
   and ``data: [DONE]``.

Keep-alives are SSE comments (``: keep-alive``), which every SSE parser skips. A run
that ends with no answer, or any failure after the first byte, is an ``error`` event
carrying ``{"error": {...}}``: the OpenAI SDKs raise ``APIError`` on it instead of
seeing a stream that merely stopped. Leaving the generator early (the client went away,
or a send timed out) cancels the run.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from sse_starlette import EventSourceResponse, ServerSentEvent

from massgen.cli.serve.completions import (
    ChunkFactory,
    ContentText,
    answer_of,
    completion_id,
    metadata_of,
    now,
    rest_of_answer,
    usage_of,
)
from massgen.cli.serve.runs import ServedRun

log = logging.getLogger("massgen.serve")
_MAX_BATCH = 256


@dataclass(frozen=True)
class StreamSettings:
    include_usage: bool
    keepalive_s: float
    shutdown_grace_s: float
    send_timeout_s: float = 60.0


def _data(payload: dict[str, Any]) -> ServerSentEvent:
    return ServerSentEvent(data=json.dumps(payload, ensure_ascii=False), sep="\n")


def _error(message: str, code: str) -> ServerSentEvent:
    body = {"error": {"message": message, "type": "server_error", "param": None, "code": code}}
    return ServerSentEvent(event="error", data=json.dumps(body, ensure_ascii=False), sep="\n")


async def events(run: ServedRun, settings: StreamSettings) -> AsyncIterator[ServerSentEvent]:
    chunks = ChunkFactory(completion_id(), now(), run.model)
    why = "the client disconnected"  # leaving early without an exception of ours means the client left
    try:
        yield _data(chunks.chunk({"role": "assistant", "content": ""}))
        finished = False
        streamed: list[str] = []
        while not finished:
            item = await run.progress.get()
            texts: list[str] = []
            while item is not None:
                texts.append(item)
                if run.progress.empty() or len(texts) >= _MAX_BATCH:
                    break
                item = run.progress.get_nowait()
            finished = item is None
            for is_content, group in _runs(texts):
                if is_content:  # one delta per piece the presenter wrote, as a model's stream has
                    for text in group:
                        streamed.append(text)
                        yield _data(chunks.chunk({"content": text}))
                else:
                    yield _data(chunks.chunk({"reasoning_content": "".join(group)}))
        result = await run.result
        if result.final_answer is None:
            failure = run.no_answer(result, shutting_down=False)
            yield _error(f"{failure.message} (logs: {result.log_dir})", failure.code or "run_failed")
            return
        answer = answer_of(result)
        if streamed and not answer.tool_calls:
            rest = rest_of_answer("".join(streamed), answer.content or "")
            if rest:
                yield _data(chunks.chunk({"content": rest}))
        else:
            for chunk in chunks.answer_chunks(answer):
                yield _data(chunk)
        yield _data(chunks.chunk({}, answer.finish_reason, massgen_metadata=metadata_of(result, run.request_id)))
        if settings.include_usage:
            yield _data(chunks.chunk(None, usage=usage_of(result)))
        yield ServerSentEvent(data="[DONE]", sep="\n")
    except Exception:
        why = "the stream to the client failed"
        log.exception("stream failed request_id=%s log_dir=%s", run.request_id, run.log_dir)
        yield _error("internal server error while streaming; see the server log", "internal_error")
    finally:
        run.cancel(why)  # a no-op once the run has finished


def _runs(texts: list[str]) -> list[tuple[bool, list[str]]]:
    """Consecutive texts grouped by kind (content or progress), in order."""
    groups: list[tuple[bool, list[str]]] = []
    for text in texts:
        is_content = isinstance(text, ContentText)
        if groups and groups[-1][0] == is_content:
            groups[-1][1].append(text)
        else:
            groups.append((is_content, [text]))
    return groups


def response(run: ServedRun, settings: StreamSettings, headers: dict[str, str]) -> EventSourceResponse:
    return EventSourceResponse(
        events(run, settings),
        headers=headers,
        ping=settings.keepalive_s,
        sep="\n",
        ping_message_factory=lambda: ServerSentEvent(comment="keep-alive", sep="\n"),
        send_timeout=settings.send_timeout_s,
        # Let a run that is finishing during shutdown stream its answer instead of being cut off.
        shutdown_grace_period=settings.shutdown_grace_s,
    )
