"""Every model call of a run, rebuilt from the trace: the exact request and what came back.

``ModelRequestSent`` records deltas (see ``massgen.messages.calls``); this folds them
back into whole ``ModelRequest`` objects, which is what replaying a call, explaining
an answer or resuming a turn needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias, assert_never

from massgen.messages.calls import ModelReplyRecorded, ModelRequestSent
from massgen.messages.stream import ChatMessage, ModelRequest, ToolSpec
from massgen.messages.trace import RecordSubset, TraceRecord

REPLAYED = "replayed"  # the finish reason of a call answered from an earlier trace

# The records a call is rebuilt from: its request (deltas against the previous one) and its reply.
CallRecord: TypeAlias = ModelRequestSent | ModelReplyRecorded
_CALLS = RecordSubset[CallRecord](CallRecord)


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
        record = TraceRecord.of(raw)
        match _CALLS.message(record):
            case None:
                pass  # most records: never parsed here
            case ModelRequestSent() as sent:
                agent, incarnation = record.source.name, record.source.incarnation
                before_messages, before_tools = last.get((agent, incarnation), ((), ()))
                messages = before_messages[: sent.keep] + sent.messages
                tools = before_tools if sent.tools is None else sent.tools
                last[(agent, incarnation)] = (messages, tools)
                request = ModelRequest(messages=messages, tools=tools, kind=sent.kind, temperature=sent.temperature,
                                       max_tokens=sent.max_tokens, vote_targets=sent.vote_targets)
                call = RecordedCall(agent=agent, incarnation=incarnation, call=sent.call, cause=record.causation_id,
                                    request=request, request_seq=record.seq)
                calls.append(call)
                open_calls[(agent, incarnation, call.call)] = call
            case ModelReplyRecorded() as reply:
                found = open_calls.pop((record.source.name, record.source.incarnation, reply.call), None)
                if found is not None:  # the reply as written: replaying it needs its exact data
                    found.reply, found.reply_seq = record.payload, record.seq
            case _ as unreachable:
                assert_never(unreachable)
    return calls
