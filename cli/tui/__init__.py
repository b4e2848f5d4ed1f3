"""The full-screen terminal UI (prompt-toolkit): a view of the trace, like the Web UI.

- ``state``: the reducer, view events -> ``RunState`` (pure; a replay reaches the same state);
- ``view``: what the user chose about the screen (focus, zoom, scroll, search);
- ``layout``: the screen drawn from both, at the terminal's size of the moment;
- ``keys``: the key bindings; ``commands``: the command line;
- ``app``: the session (questions, turns, steering) and the replay of a finished run.
"""

from massgen.cli.tui.app import TuiApp, replay_tui, run_tui

__all__ = ["TuiApp", "replay_tui", "run_tui"]
