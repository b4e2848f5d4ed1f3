"""The trace record format: one JSON object per line of ``trace.jsonl``.

``{"seq", "ts", "kind", "type", "to", "msg_id", "run_id", "sender", "causation_id", "payload"}``
where ``kind`` is tell | ask | reply | ask_timeout | event. Records can be turned
back into the message that produced them, which is how logs are rebuilt and runs resumed.
"""

from __future__ import annotations

from typing import Any

from massgen.messages.envelope import MESSAGE_TYPES, Message, Sender

TRACE_KINDS = ("tell", "ask", "reply", "ask_timeout", "event")


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


def from_record(record: dict[str, Any]) -> Message:
    """Rebuild the message a record was made from."""
    cls = MESSAGE_TYPES[record["type"]]
    name, _, incarnation = str(record["sender"]).rpartition("#")
    return cls.model_validate(
        {
            **record["payload"],
            "msg_id": record["msg_id"],
            "run_id": record["run_id"],
            "sender": Sender(name=name, incarnation=int(incarnation or 0)),
            "causation_id": record["causation_id"],
            "timestamp": record["ts"],
        }
    )
