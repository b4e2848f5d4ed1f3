"""The architecture map stays true: its message table lists every message type, and only those."""

from __future__ import annotations

import re
from pathlib import Path

from massgen.messages import MESSAGE_TYPES, protocols

ARCHITECTURE = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"


def message_table() -> str:
    text = ARCHITECTURE.read_text()
    start = text.index("| from | to | messages |")
    return text[start:text.index("\n\n", start)]


def test_the_message_table_lists_every_message_type_and_no_other() -> None:
    rows = message_table().splitlines()[2:]
    names = {name for row in rows for name in re.findall(r"`([A-Z][A-Za-z]+)`", row.rsplit("|", 2)[1])}
    aliases = {name for name in names if hasattr(protocols, name) and not isinstance(getattr(protocols, name), type)}
    listed = names - aliases  # a protocol's name (`TurnReport`) aside
    assert sorted(listed) == sorted(MESSAGE_TYPES), "docs/architecture.md, One run: the message table"
