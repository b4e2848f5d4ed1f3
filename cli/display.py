"""``--display textual|rich|simple|none`` and ``--no-display``: how a run is shown (MassGen's names).

- ``textual`` (the default on a terminal): the full-screen view (``cli/tui``), then the next
  question; it needs a terminal on stdin and stdout and never starts without one;
- ``rich``: the line displays: a redrawn status line under event lines, the line REPL;
- ``simple`` (also ``--no-display``): event lines only, no cursor movement (pipes, CI logs,
  screen readers);
- ``none``: nothing but the answer (and the log directory) for a one-shot run.

A config's ``ui.display_type`` (upstream MassGen's names) picks the display when no flag does
(``CONFIG_DISPLAYS``); a flag always wins, as upstream's ``--display``/``--no-display`` do.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from massgen.cli.request import Request

__all__ = ["CHOICES", "CONFIG_DISPLAYS", "Display", "add_arguments", "chosen", "full_screen", "line_mode",
           "note_without_terminal"]

Display = Literal["textual", "rich", "simple", "none"]
CHOICES: tuple[Display, ...] = ("textual", "rich", "simple", "none")

# Upstream's ui.display_type -> ours. Upstream 0.1.97 runs its Textual view for rich_terminal
# (deprecated there, overridden unless --display rich is given), so rich_terminal is the full screen here
# too; silent is upstream's display for --automation: nothing but the result.
CONFIG_DISPLAYS: dict[str, Display] = {
    "textual_terminal": "textual", "rich_terminal": "textual", "terminal": "rich", "simple": "simple",
    "silent": "none", "none": "none",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The display flags, added to the ``massgen`` parser."""
    group = parser.add_argument_group("display")
    group.add_argument("--display", choices=CHOICES, default=None,
                       help="textual: the full-screen view (the default on a terminal); rich: status lines; "
                            "simple: plain event lines (pipes, CI, screen readers); none: only the answer")
    group.add_argument("--no-display", action="store_true", help="plain event lines: the same as --display simple")


def _terminal() -> bool:
    """A terminal the full screen can draw on: TERM=dumb (an editor's shell, a CI log) moves no cursor."""
    return bool(sys.stdin is not None and sys.stdin.isatty() and sys.stdout is not None and sys.stdout.isatty()
                and os.environ.get("TERM", "") != "dumb")


def chosen(request: Request) -> Display:
    """The display the flags ask for, else the config's (``Request.config_display``); ``--display`` wins
    over ``--no-display`` (as in MassGen), and both over ``ui.display_type``."""
    if request.display is not None:
        return request.display
    if request.no_display:
        return "simple"
    return request.config_display or "textual"


def full_screen(request: Request) -> bool:
    """Whether this run gets the full-screen view: asked for (or the default), on a terminal,
    and no flag that writes stdout for a program or needs the one-shot path."""
    if chosen(request) != "textual" or not _terminal():
        return False
    return not (request.automation or request.stream_events or request.output_file or request.no_logs
                or request.debug or request.web or request.resume)


def note_without_terminal(request: Request) -> str | None:
    """What to say when ``--display textual`` was asked for and cannot start."""
    if request.display == "textual" and not _terminal():
        return ("massgen: --display textual needs a terminal on stdin and stdout (and TERM other than dumb); "
                "showing plain lines")
    return None


def line_mode(request: Request) -> Display:
    """For the line paths (one-shot and the line REPL): rich, simple or none."""
    display = chosen(request)
    # The full screen could not start here: status lines, redrawn only where stderr is a terminal.
    return "rich" if display == "textual" else display
