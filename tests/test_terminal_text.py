"""One rule for what must not reach a terminal as it is (``messages/text.py``), read by both edges that need it:
``for_terminal`` escapes it in text leaving for a terminal, and a served model name may not hold it (nor, being one
line of plain text compared by eye, a tab, a newline or an invisible format character)."""

from __future__ import annotations

from massgen.cli.serve.errors import ApiError
from massgen.cli.serve.models import check_model_text
from massgen.cli.text import for_terminal


def refused_in_a_model_name(char: str) -> str | None:
    try:
        check_model_text(f"ollama/x{char}y")
    except ApiError as error:
        assert error.param == "model"
        return error.message
    return None


def test_a_model_name_may_hold_nothing_that_for_terminal_escapes() -> None:
    escaped = [char for char in map(chr, range(0x110000)) if for_terminal(char) != char]
    assert {"\x1b", "\x9b", "\x7f", "\u202e", "\u2066", "\ud800"} <= set(escaped)
    assert [char for char in escaped if refused_in_a_model_name(char) is None] == []


def test_each_edge_keeps_what_its_text_needs() -> None:
    # text with lines keeps its layout and the characters that join emoji; a name has neither
    kept = "a\tb\nc 👨\u200d👩 \u00ad"
    assert for_terminal(kept) == kept
    assert for_terminal("\x1b]0;title\x07 \u202egol.exe") == "\\x1b]0;title\\x07 \\u202egol.exe"
    for char, says in (("\t", "U+0009, a control character"), ("\n", "U+000A, a control character"),
                       ("\x9b", "U+009B, a control character"), ("\u200b", "U+200B, a format character"),
                       ("\u202e", "U+202E, a format character"), ("\ud800", "U+D800, a lone surrogate")):
        refused = refused_in_a_model_name(char)
        assert refused is not None and says in refused, (char, refused)
    assert refused_in_a_model_name("é") is None and refused_in_a_model_name("模型") is None
