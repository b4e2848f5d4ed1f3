"""The envelope every inter-actor message carries.

Messages are frozen pydantic models so they can be traced, pickled (for a later
multi-machine runtime) and compared in tests. The envelope fields are filled in by
the runtime port when a message is sent, so handlers build payloads only.
"""

from __future__ import annotations

import itertools
import os
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

_counter = itertools.count(1)
_prefix = f"{os.getpid():x}"


def new_msg_id() -> str:
    """A process-unique, cheap message id (uuid4 costs more than the tell itself)."""
    return f"{_prefix}-{next(_counter)}"


class Sender(BaseModel):
    """Who sent a message: a logical name plus the incarnation that sent it."""

    model_config = ConfigDict(frozen=True)

    name: str
    incarnation: int = 0

    def __str__(self) -> str:
        return f"{self.name}#{self.incarnation}"


SYSTEM = Sender(name="system", incarnation=0)


MESSAGE_TYPES: dict[str, type[Message]] = {}


class Message(BaseModel):
    """Base of every message; the class name is its type tag in the trace."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        MESSAGE_TYPES[cls.__name__] = cls

    msg_id: str = Field(default_factory=new_msg_id)
    run_id: str = ""
    sender: Sender = SYSTEM
    causation_id: str | None = None
    timestamp: float = Field(default_factory=time.time)

    def payload(self) -> dict[str, Any]:
        """The message without its envelope, as JSON-ready data."""
        return self.model_dump(mode="json", exclude=_ENVELOPE)


_ENVELOPE = {"msg_id", "run_id", "sender", "causation_id", "timestamp"}
