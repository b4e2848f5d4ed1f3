"""The input line: history file, completion, key bindings, multi-line blocks, the toolbar.

Enter submits, except inside a block opened with three double quotes, where it adds a
line until the closing quotes; a paste keeps its line breaks; Esc then Enter adds a
line anywhere. Commands complete after ``/`` and agent ids or labels after the
commands that take an agent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import AnyFormattedText
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from massgen.cli.prompt_keys import add_terminal_noise_bindings
from massgen.cli.repl.commands import COMMANDS
from massgen.cli.slash_commands import parse_line

BLOCK = '"""'
_REFRESH_S = 0.25


def open_block(text: str) -> bool:
    """True while the text is a ``\"\"\"`` block that has not been closed yet."""
    stripped = text.lstrip()
    return stripped.startswith(BLOCK) and (stripped.count(BLOCK) < 2 or not stripped.rstrip().endswith(BLOCK))


def unwrap_block(text: str) -> str:
    """The question inside a closed ``\"\"\"`` block; other text unchanged."""
    stripped = text.strip()
    if stripped.startswith(BLOCK) and stripped.endswith(BLOCK) and len(stripped) >= 2 * len(BLOCK):
        return stripped[len(BLOCK):-len(BLOCK)].strip("\n")
    return text


class ReplCompleter(Completer):
    """``/command`` names, and agent ids and labels for the commands that take an agent."""

    def __init__(self, agents: Callable[[], dict[str, str]]) -> None:
        self._agents = agents  # label -> agent id

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        text = document.text_before_cursor
        if not text.startswith("/") or "\n" in text:
            return
        name, space, arg = text[1:].partition(" ")
        if not space:
            for command in COMMANDS.values():
                if command.name.startswith(name.lower()):
                    yield Completion(f"/{command.name}", start_position=-len(text), display_meta=command.help)
            return
        chosen = COMMANDS.get(parse_line(text)[0])
        if chosen is None or not chosen.takes_agent or " " in arg:
            return
        choices = [(agent, label) for label, agent in self._agents().items()]
        for agent, label in choices:
            for word in (agent, label):
                if word.startswith(arg):
                    yield Completion(word, start_position=-len(arg), display_meta=label if word == agent else agent)
        if chosen.name == "follow" and "off".startswith(arg):
            yield Completion("off", start_position=-len(arg))


def key_bindings() -> KeyBindings:
    bindings = KeyBindings()
    in_block = Condition(lambda: _current_text_open())

    @bindings.add("enter", filter=in_block)
    def _newline_in_block(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @bindings.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    return add_terminal_noise_bindings(bindings)


def _current_text_open() -> bool:
    from prompt_toolkit.application.current import get_app

    return open_block(get_app().current_buffer.text)


def open_history(path: Path | None) -> History:
    """A file history when the file can be used; otherwise this session's lines only."""
    if path is None:
        return InMemoryHistory()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(exist_ok=True)
    except OSError:
        return InMemoryHistory()
    return FileHistory(str(path))


def build_session(*, message: Callable[[], AnyFormattedText], agents: Callable[[], dict[str, str]],
                  history: History, vi: bool) -> PromptSession[str]:
    """The prompt erases itself when a line is submitted: the live block above it must not pile
    up in the scrollback, so the REPL echoes the submitted line itself."""
    return PromptSession(
        message=message,
        history=history,
        completer=ReplCompleter(agents),
        complete_while_typing=True,
        key_bindings=key_bindings(),
        refresh_interval=_REFRESH_S,
        erase_when_done=True,
        reserve_space_for_menu=4,
        vi_mode=vi,
        enable_history_search=False,
        prompt_continuation=lambda width, line, wrap: "." * (width - 1) + " ",
    )
