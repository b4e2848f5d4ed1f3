"""What a slash command is, for the line REPL and the terminal UI alike.

Both read a typed ``/name args`` line the same way (the same aliases, case folded), look the
name up in a table of :class:`Command`, and list that table in their help and completion. The
REPL's table (``cli/repl/commands.py``) is the session's commands; the terminal UI's
(``cli/tui/commands.py``) is its screen views in front of the REPL's, so a command is written
once and means the same in both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

# A command written for the REPL's app serves any app that offers at least that (the TUI's).
AppT_contra = TypeVar("AppT_contra", contravariant=True)
AppT = TypeVar("AppT")

# Our own short names, then upstream MassGen 0.1.97's (``frontend/interactive_controller.py``,
# ``SlashCommandDispatcher.dispatch``, and the Textual display's fallback table), each to the command of
# ours that does what upstream's does.
ALIASES = {
    "exit": "quit", "q": "quit", "?": "help", "answernow": "answer-now", "stop": "cancel",
    "h": "help", "clear": "reset", "i": "inspect", "o": "events", "v": "votes", "vote": "votes",
    "s": "status", "c": "cost", "w": "workspace", "files": "workspace", "m": "metrics", "p": "mcp",
    "b": "answers", "t": "timeline", "hist": "history", "vim": "vi",
}
# Upstream commands with no counterpart here: one line saying so, and what to use instead.
UNOFFERED = {
    "browser": "upstream's /browser (tabs of answers, votes, workspace and timeline) is not offered here: "
               "/answers, /votes, /workspace and /timeline show each",
    "u": "upstream's /u (/browser, tabs of answers, votes, workspace and timeline) is not offered here: "
         "/answers, /votes, /workspace and /timeline show each",
    "skills": "upstream's /skills manager is not offered: this edition has no skills to toggle",
    "k": "upstream's /k (/skills manager) is not offered: this edition has no skills to toggle",
}
# The views only the full-screen display has (``cli/tui/commands.py``): the line REPL names where they are.
SCREEN_ONLY = ("inspect", "output", "timeline", "metrics", "cost", "workspace", "mcp", "history", "note", "zoom",
               "search", "tools")
REPLAY_REFUSAL = "this is a replay: nothing can be steered"


@dataclass(frozen=True)
class Command(Generic[AppT_contra]):
    """One slash command: its name, how it is typed, what it does, and what runs it."""

    name: str
    usage: str
    help: str
    handler: Callable[[AppT_contra, str], str]
    takes_agent: bool = False  # the line completes an agent id or label after it
    # Needs a live session: it steers the team or reads the conversation, and a replay has neither.
    live_only: bool = False


def parse_line(line: str) -> tuple[str, str]:
    """``/Name args`` -> (the command's name, lower-cased and with its alias resolved; the arguments)."""
    name, _, args = line.strip().removeprefix("/").partition(" ")
    name = name.lower()
    return ALIASES.get(name, name), args


def run_line(app: AppT, line: str, commands: Mapping[str, Command[AppT]], *, replay: bool = False) -> tuple[str, str]:
    """Run one typed line: (the command's name, "" when there is none by that name; the text to show)."""
    name, args = parse_line(line)
    command = commands.get(name)
    if command is None:
        if name in UNOFFERED:
            return "", UNOFFERED[name]
        if name in SCREEN_ONLY:
            return "", f"/{name} is a view of the full-screen display (massgen --display textual on a terminal)"
        return "", f"unknown command /{name}; /help lists them"
    if replay and command.live_only:
        return name, REPLAY_REFUSAL
    return name, command.handler(app, args)


def in_front(first: Mapping[str, Command[AppT]], then: Mapping[str, Command[AppT]]) -> dict[str, Command[AppT]]:
    """One table: ``first``'s commands, then those of ``then`` that ``first`` has no command of that name for."""
    return {**first, **{name: command for name, command in then.items() if name not in first}}


def help_text(intro: Iterable[str], commands: Iterable[Command[AppT]]) -> str:
    """``/help``: the intro's lines, a blank line, then a line a command: its usage, and what it does."""
    listed = list(commands)
    width = max((len(c.usage) for c in listed), default=0) + 2
    names = {c.name for c in listed}
    short: dict[str, list[str]] = {}
    for alias, name in ALIASES.items():
        if name in names:
            short.setdefault(name, []).append("/" + alias)
    aliases = "Aliases (upstream MassGen's too): " + ", ".join(
        f"{' '.join(found)} = /{name}" for name, found in short.items())
    return "\n".join([*intro, "", *(f"  {c.usage:<{width}}{c.help}" for c in listed), "", aliases])
