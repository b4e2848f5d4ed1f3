"""Every model call of a run, rebuilt from the trace: the exact request and what came back.

``ModelRequestSent`` records deltas (see ``massgen.messages.calls``); this folds them
back into whole ``ModelRequest`` objects, which is what replaying a call, explaining
an answer or resuming a turn needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from massgen.messages.stream import ChatMessage, ModelRequest, ToolSpec
from massgen.messages.trace import TraceRecord

REPLAYED = "replayed"  # the finish reason of a call answered from an earlier trace


@dataclass
class RecordedCall:
    agent: str
    incarnation: int
    call: int
    cause: str | None  # the StartTurn / PresentFinal the call served
    request: ModelRequest
    request_seq: int
    reply: dict[str, Any] | None = None  # the ModelReplyRecorded payload; None: never finished
    reply_seq: int | None = None

    @property
    def finished(self) -> bool:
        return self.reply is not None

    @property
    def replayed(self) -> bool:
        return self.reply is not None and self.reply.get("replayed_from") is not None


def model_calls(records: Iterable[Mapping[str, Any] | TraceRecord]) -> list[RecordedCall]:
    """Each model call in trace order, with its full request and, once finished, its reply."""
    calls: list[RecordedCall] = []
    open_calls: dict[tuple[str, int, int], RecordedCall] = {}
    last: dict[tuple[str, int], tuple[tuple[ChatMessage, ...], tuple[ToolSpec, ...]]] = {}
    for raw in records:
        mtype = raw.type if isinstance(raw, TraceRecord) else raw["type"]
        if mtype not in ("ModelRequestSent", "ModelReplyRecorded"):
            continue  # most records: not worth typing
        record = TraceRecord.of(raw)
        kind = record.type
        sender = record.source
        agent, incarnation = sender.name, sender.incarnation
        p = record.payload
        if kind == "ModelRequestSent":
            before_messages, before_tools = last.get((agent, incarnation), ((), ()))
            messages = before_messages[: int(p["keep"])] + tuple(ChatMessage.model_validate(m) for m in p["messages"])
            tools = before_tools if p["tools"] is None else tuple(ToolSpec.model_validate(t) for t in p["tools"])
            last[(agent, incarnation)] = (messages, tools)
            request = ModelRequest(messages=messages, tools=tools, kind=p["kind"], temperature=p["temperature"],
                                   max_tokens=p["max_tokens"], vote_targets=tuple(p["vote_targets"]))
            call = RecordedCall(agent=agent, incarnation=incarnation, call=int(p["call"]),
                                cause=record.causation_id, request=request, request_seq=int(record.seq))
            calls.append(call)
            open_calls[(agent, incarnation, call.call)] = call
        else:
            found = open_calls.pop((agent, incarnation, int(p["call"])), None)
            if found is not None:
                found.reply, found.reply_seq = p, int(record.seq)
    return calls
