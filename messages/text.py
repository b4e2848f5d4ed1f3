"""Text from outside made valid once, where it enters: no lone surrogate and no NUL goes further.

A model's reply, an MCP server's result, a question or a trace written before this rule
may hold a lone surrogate (the JSON escape ``"\\ud800"`` decodes to one) or a NUL. Neither
can be encoded as UTF-8 (a surrogate) or passed to a path or a C string (NUL), so one such
character in one answer used to fail every agent that had the answer in view. Each edge
calls ``escape_text`` / ``escape_value`` once: the character becomes a visible escape
(``\\ud800``, ``\\x00``), the rest of the text is unchanged, and the edge traces the
returned ``Escaped`` notes, which say where and what was escaped.

What a terminal must not be given as it is, is decided here too, once (``unsafe_for_terminal``): the
text the command line writes escapes it (``escape_for_terminal``, through ``cli/text.py``), and a
model name a server is asked for may not hold it (``cli/serve/models.py``).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from typing import Any

__all__ = ["escape_for_terminal", "escape_text", "escape_value", "unsafe_for_terminal", "what_was_escaped"]

# Every surrogate code point is lone in a Python str (pairs decode to one code point).
_INVALID = re.compile("[\ud800-\udfff\x00]")


# What a terminal obeys, or shows as other than it is: C0 controls, DEL and C1 controls (Unicode's Cc:
# ESC, and the 8-bit CSI/OSC a terminal obeys as ESC [ and ESC ]), bidirectional overrides and isolates
# (text that reads one way and is stored another) and lone surrogates (Cs: no encoding carries them).
# Tab and newline are controls too: text with lines keeps them, a name may not hold them.
_TERMINAL_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_TERMINAL_UNSAFE_IN_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_KINDS = {"Cc": "a control character", "Cf": "a format character (such as a bidi override)",
          "Cs": "a lone surrogate"}


def unsafe_for_terminal(text: str, *, name: bool = False) -> str | None:
    """The first character of ``text`` a terminal must not be given as it is, by code point and kind
    (``"U+009B, a control character"``); None when there is none.

    ``name``: ``text`` is a name (one line of plain text, read and compared by eye), so a tab or a newline
    is unsafe in it too, and so is every other format character (Unicode's Cf: a zero-width space makes
    one name look like another). Text with lines keeps those: a zero-width joiner joins emoji."""
    found = _TERMINAL_UNSAFE.search(text) if name else _TERMINAL_UNSAFE_IN_LINES.search(text)
    first = found.start() if found is not None else len(text)
    if name:  # a format character before it?
        first = next((i for i, char in enumerate(text[:first]) if unicodedata.category(char) == "Cf"), first)
    if first == len(text):
        return None
    char = text[first]
    return f"U+{ord(char):04X}, {_KINDS.get(unicodedata.category(char), 'a control character')}"


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_for_terminal(text: str) -> str:
    """``text`` with every character ``unsafe_for_terminal`` finds in text with lines written as a visible
    escape (``\\x1b``, ``\\u202e``); tabs, newlines and the readable text stay as they are."""
    return _TERMINAL_UNSAFE_IN_LINES.sub(_visible, text)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return "\\x00" if char == "\x00" else f"\\u{ord(char):04x}"


def what_was_escaped(text: str) -> str | None:
    """``"1 lone surrogate (U+D800), 1 NUL"`` for what ``escape_text`` would escape in ``text``; None if nothing."""
    found = Counter(_INVALID.findall(text))
    if not found:
        return None
    parts = []
    surrogates = sorted(c for c in found if c != "\x00")
    if surrogates:
        count = sum(found[c] for c in surrogates)
        shown = ", ".join(f"U+{ord(c):04X}" for c in surrogates[:4]) + (", ..." if len(surrogates) > 4 else "")
        parts.append(f"{count} lone surrogate{'s' if count > 1 else ''} ({shown})")
    nuls = found["\x00"]
    if nuls:
        parts.append(f"{nuls} NUL")
    return ", ".join(parts)


def escape_text(text: str, where: str, notes: list[str] | None = None) -> str:
    """``text`` with lone surrogates written ``\\udXXX`` and NUL ``\\x00``; a note "where: what" added to ``notes``."""
    if _INVALID.search(text) is None:
        return text
    if notes is not None:
        notes.append(f"{where}: {what_was_escaped(text)} escaped")
    return _INVALID.sub(_escape, text)


def escape_value(value: Any, where: str, notes: list[str] | None = None) -> Any:
    """``value`` (JSON-like: dicts, lists, strings) with every string and key passed through ``escape_text``.

    Walked with a stack, not recursion: a hostile value may nest deeper than Python's stack.
    The value is returned as is (the same object) when nothing in it needed escaping.
    """
    if not _needs(value):
        return value
    return _rebuild(value, where, notes)


def _needs(value: Any) -> bool:
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if _INVALID.search(item) is not None:
                return True
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
    return False


def _rebuild(value: Any, where: str, notes: list[str] | None) -> Any:
    # Iterative post-order rebuild: each container is rebuilt after its children.
    root: list[Any] = [None]
    stack: list[tuple[Any, str, list[Any], int]] = [(value, where, root, 0)]
    fixups: list[tuple[list[Any], int, type, list[Any]]] = []
    while stack:
        item, path, parent, slot = stack.pop()
        if isinstance(item, str):
            parent[slot] = escape_text(item, path, notes)
        elif isinstance(item, dict):
            pairs: list[Any] = [None] * (2 * len(item))
            for index, (key, inner) in enumerate(item.items()):
                name = str(key)
                pairs[2 * index] = escape_text(key, f"{path}/(a key)", notes) if isinstance(key, str) else key
                stack.append((inner, f"{path}/{name}" if path else name, pairs, 2 * index + 1))
            fixups.append((parent, slot, dict, pairs))
        elif isinstance(item, list | tuple):
            items: list[Any] = [None] * len(item)
            for index, inner in enumerate(item):
                stack.append((inner, f"{path}/{index}" if path else str(index), items, index))
            fixups.append((parent, slot, type(item), items))
        else:
            parent[slot] = item
    for parent, slot, kind, items in reversed(fixups):
        if kind is dict:
            built: Any = dict(zip(items[0::2], items[1::2], strict=True))
        else:
            built = kind(items)
        parent[slot] = built
    return root[0]
