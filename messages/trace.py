"""The trace record format: one JSON object per line of ``trace.jsonl``.

``{"seq", "ts", "kind", "type", "to", "msg_id", "run_id", "sender", "causation_id", "payload"}``
where ``kind`` is tell | ask | reply | ask_timeout | event. Records can be turned
back into the message that produced them, which is how logs are rebuilt and runs resumed.

Every reader reads a ``TraceRecord``: the envelope typed, and its message (the discriminated
union of ``MESSAGE_TYPES``, by ``type``) parsed at most once per record, however many readers
look at it (the live writer hands over the message it wrote, so live readers parse nothing).
A reader that shows a subset of the types declares it as a union and selects it with a
``RecordSubset``; it then dispatches with ``match`` ending in ``assert_never``, so a type added
to its union without a case is a type error, and a type in no reader's union is visibly shown
by none.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar, cast

from pydantic import ValidationError

from massgen.messages.envelope import MESSAGE_TYPES, Message, Sender
from massgen.messages.protocols import members
from massgen.outcome.errors import TraceError

TraceKind = Literal["tell", "ask", "reply", "ask_timeout", "event"]


class RecordError(TraceError, ValueError):
    """A record whose payload is not the message its ``type`` names (a trace is input like any other)."""


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


_FIELDS = ("seq", "ts", "kind", "type", "to", "msg_id", "run_id", "sender", "causation_id", "payload")


@dataclass(frozen=True, slots=True)
class TraceRecord(Mapping[str, Any]):
    """One line of ``trace.jsonl``, typed. ``sender`` and ``to`` stay in their written form
    (``"name#incarnation"``; ``to`` is ``""`` for an event); ``source``/``target`` parse them.

    It also reads as the written mapping (``record["type"]``), for subscribers written against
    the line's dict; our readers use the fields and ``message()``."""

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
    # The parsed message, kept: set by ``written`` (the live writer has it) or by the first ``message()``.
    _message: Message | None = field(default=None, compare=False, repr=False)

    @classmethod
    def written(cls, record: Mapping[str, Any], message: Message) -> TraceRecord:
        """The record the writer just wrote for ``message``, holding it (no reader parses it again)."""
        return cls(seq=int(record["seq"]), ts=float(record["ts"]), kind=cast(TraceKind, record["kind"]),
                   type=str(record["type"]), to=str(record["to"]), msg_id=message.msg_id, run_id=message.run_id,
                   sender=str(record["sender"]), causation_id=message.causation_id, payload=record["payload"],
                   extra=record.get("extra"), _message=message)

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
        """The message this record was made from, parsed once (pydantic raises on a payload that is not it)."""
        if self._message is None:
            try:
                message = from_record(self.as_dict())
            except KeyError as exc:
                raise RecordError(f"trace record {self.seq}: no message type {self.type!r}") from exc
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(part) for part in first["loc"]) or "payload"
                raise RecordError(f"trace record {self.seq} ({self.type}): {where}: {first['msg']}") from exc
            object.__setattr__(self, "_message", message)
        assert self._message is not None
        return self._message

    # -- the written mapping ------------------------------------------------------------------

    def __getitem__(self, key: str) -> Any:
        if key in _FIELDS or (key == "extra" and self.extra):
            return getattr(self, key)
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter((*_FIELDS, "extra") if self.extra else _FIELDS)

    def __len__(self) -> int:
        return len(_FIELDS) + (1 if self.extra else 0)


M = TypeVar("M", bound=Message)


class RecordSubset(Generic[M]):
    """The record types one reader handles, as the union ``M`` of message classes.

    ``RecordSubset[Shown](Shown)`` (the union named twice: once for the checker, once at runtime);
    ``subset.message(record)`` is the record's message when its type is in the union, else None,
    and a record of another type is never parsed.
    """

    def __init__(self, union: object) -> None:
        self.classes: tuple[type, ...] = members(union)
        self.names = frozenset(cls.__name__ for cls in self.classes)

    def __contains__(self, record: TraceRecord) -> bool:
        return record.type in self.names

    def message(self, record: TraceRecord) -> M | None:
        if record.type not in self.names:
            return None
        message = record.message()
        assert isinstance(message, self.classes)
        return cast(M, message)


def message_class(record: Mapping[str, Any]) -> type[Message] | None:
    """The message class a written record (or a timeline entry) names by its ``type``; None for a name no
    message has. Readers that keep the written form (a timeline, the Web UI's feed) compare classes, never
    type names: the name is read here, in the decoder, once."""
    name = record.get("type")
    return MESSAGE_TYPES.get(name) if isinstance(name, str) else None


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
