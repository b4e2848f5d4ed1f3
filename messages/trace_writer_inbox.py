"""What the trace writer accepts: records to append, a flush barrier, its own status timer.

Plain frozen dataclasses rather than ``Message``s: they are never traced themselves (they
carry what is traced), and one is built for every traced message, so they stay cheap.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from massgen.messages.envelope import Message


@dataclass(frozen=True, slots=True)
class WriteRecord:
    """Append ``message`` to the trace as one record of ``kind`` (tell, ask, reply, ask_timeout, event)."""

    kind: str
    message: Message
    to: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Flush:
    """Asked, not told: the reply (the last ``seq`` written) means every earlier record is on disk."""


@dataclass(frozen=True, slots=True)
class WriteStatus:
    """The writer's own timer: a trailing ``status.json`` write for records that came too soon."""
