"""The trace record format: one JSON object per line of ``trace.jsonl``.

``{"seq", "ts", "kind", "type", "to", "msg_id", "run_id", "sender", "causation_id", "payload"}``
where ``kind`` is tell | ask | reply | ask_timeout | event. Records can be turned
back into the message that produced them, which is how logs are rebuilt and runs resumed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from massgen.messages.envelope import MESSAGE_TYPES, Message, Sender

TraceKind = Literal["tell", "ask", "reply", "ask_timeout", "event"]


def parse_sender(address: str) -> Sender:
    """``"name#incarnation"`` (how a record writes a sender or recipient) back into a ``Sender``.

    The name may itself contain ``#`` (the incarnation is after the last one); an address with
    no incarnation is incarnation 0, and ``""`` (an event's recipient) has the empty name.
    """
    name, sep, incarnation = address.rpartition("#")
    if not sep or not incarnation.isdigit():
        return Sender(name=address if not sep else name, incarnation=0)
    return Sender(name=name, incarnation=int(incarnation))


def sender_name(address: str) -> str:
    """The name part of ``"name#incarnation"``; cheaper than ``parse_sender`` for the hot fold."""
    return address.rpartition("#")[0]


@dataclass(frozen=True, slots=True)
class TraceRecord:
    """One line of ``trace.jsonl``, typed. ``sender`` and ``to`` stay in their written form
    (``"name#incarnation"``; ``to`` is ``""`` for an event); ``source``/``target`` parse them."""

    seq: int
    ts: float
    kind: TraceKind
    type: str
    to: str
    msg_id: str
    run_id: str
    sender: str
    causation_id: str | None
    payload: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] | None = None

    @classmethod
    def of(cls, record: Mapping[str, Any] | TraceRecord) -> TraceRecord:
        """A record as read from a line (or handed to a trace subscriber), typed; a typed one as is."""
        if isinstance(record, TraceRecord):
            return record
        return cls(seq=int(record["seq"]), ts=float(record["ts"]), kind=cast(TraceKind, record["kind"]),
                   type=str(record["type"]), to=str(record.get("to") or ""), msg_id=str(record.get("msg_id", "")),
                   run_id=str(record.get("run_id", "")), sender=str(record.get("sender", "")),
                   causation_id=record.get("causation_id"), payload=record.get("payload") or {},
                   extra=record.get("extra"))

    @property
    def source(self) -> Sender:
        """Who sent it: name and incarnation."""
        return parse_sender(self.sender)

    @property
    def target(self) -> Sender | None:
        """Who it was sent to; None for an event (sent to nobody)."""
        return parse_sender(self.to) if self.to else None

    @property
    def sender_name(self) -> str:
        return sender_name(self.sender)

    @property
    def to_name(self) -> str:
        return sender_name(self.to)

    def as_dict(self) -> dict[str, Any]:
        """The record as written: the same keys, in the same order, as ``to_record``."""
        data: dict[str, Any] = {"seq": self.seq, "ts": self.ts, "kind": self.kind, "type": self.type, "to": self.to,
                                "msg_id": self.msg_id, "run_id": self.run_id, "sender": self.sender,
                                "causation_id": self.causation_id, "payload": self.payload}
        if self.extra:
            data["extra"] = self.extra
        return data

    def message(self) -> Message:
        """The message this record was made from."""
        return from_record(self.as_dict())


def to_record(seq: int, kind: str, to: str, message: Message, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {
        "seq": seq,
        "ts": message.timestamp,
        "kind": kind,
        "type": type(message).__name__,
        "to": to,
        "msg_id": message.msg_id,
        "run_id": message.run_id,
        "sender": str(message.sender),
        "causation_id": message.causation_id,
        "payload": message.payload(),
    }
    if extra:
        record["extra"] = extra
    return record


def from_record(record: Mapping[str, Any]) -> Message:
    """Rebuild the message a record was made from."""
    cls = MESSAGE_TYPES[record["type"]]
    return cls.model_validate(
        {
            **record["payload"],
            "msg_id": record["msg_id"],
            "run_id": record["run_id"],
            "sender": parse_sender(str(record["sender"])),
            "causation_id": record["causation_id"],
            "timestamp": record["ts"],
        }
    )
