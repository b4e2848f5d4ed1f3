"""Key bindings every prompt of ours has (the line REPL's and the full screen's), for keys a terminal sends
that prompt-toolkit's defaults turn into damage.

- ``ESC [ 0 m`` typed (coloured text pasted without bracketed paste, or Esc then ``[0m``) reaches the
  key parser as a mouse report; prompt-toolkit's handler assumes ``x;y;z`` and raises, which puts a
  traceback on screen and a "Press ENTER to continue" that eats the user's next Enter. A report that
  does not parse is ignored here; a real one is handled by prompt-toolkit's own handler.
- Ctrl-Z inserted a literal ``\\x1a``: ``/help`` typed after it was no longer a command but a question,
  sent to the team (a paid run). It does nothing here.
"""

from __future__ import annotations

from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.key_binding.bindings.mouse import load_mouse_bindings
from prompt_toolkit.key_binding.key_processor import KeyPressEvent
from prompt_toolkit.keys import Keys

__all__ = ["add_terminal_noise_bindings"]

_MOUSE = next(b.handler for b in load_mouse_bindings().bindings if b.keys == (Keys.Vt100MouseEvent,))


def add_terminal_noise_bindings(bindings: KeyBindings) -> KeyBindings:
    """``bindings`` with the two bindings above added (user bindings come after the defaults: these win)."""

    @bindings.add(Keys.Vt100MouseEvent)
    def _mouse_report_or_noise(event: KeyPressEvent) -> object:
        try:
            return _MOUSE(event)
        except (ValueError, KeyError, IndexError, TypeError):
            return None

    @bindings.add("c-z")
    def _no_control_character(event: KeyPressEvent) -> None:
        return None

    return bindings
