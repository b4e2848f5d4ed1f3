"""A real terminal for the full-screen UI: a tmux server of the test's own, read with capture-pane.

tmux is a real terminal emulator: the program under test gets a pty of the size asked for,
``capture-pane`` returns the screen as a person sees it (not the bytes written), and
``resize-window`` changes the size the way a user dragging the window does (SIGWINCH).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from support import FACTOR

WAIT_S = 20.0 * FACTOR
_POLL_S = 0.05


class TmuxScreen:
    """One command on a detached tmux session of ``columns`` x ``rows``."""

    def __init__(self, tmp_path: Path, argv: list[str], *, columns: int = 160, rows: int = 45,
                 env: dict[str, str] | None = None, name: str = "tui", cwd: Path | None = None) -> None:
        if shutil.which("tmux") is None:
            raise RuntimeError("tmux is not installed (.ci/run installs it)")
        self.socket = tmp_path / f"{name}.sock"
        self.rc_file = tmp_path / f"{name}.rc"
        self.err_file = tmp_path / f"{name}.stderr"
        command = (f"{shlex.join(argv)} 2>{shlex.quote(str(self.err_file))}; "
                   f"echo $? > {shlex.quote(str(self.rc_file))}; sleep 600")
        environment = {**os.environ, **(env or {}), "PROMPT_TOOLKIT_NO_CPR": "1"}
        self._tmux("new-session", "-d", "-s", name, "-x", str(columns), "-y", str(rows),
                   "-c", str(cwd or tmp_path), "sh", "-c", command, env=environment)
        self._tmux("set-option", "-t", name, "status", "off")
        self.name = name

    def _tmux(self, *args: str, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(["tmux", "-S", str(self.socket), *args], capture_output=True, text=True,
                              env=env, check=True, timeout=30)
        return done.stdout

    def text(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", self.name)

    def lines(self) -> list[str]:
        return self.text().split("\n")

    def expect(self, *needles: str, timeout: float = WAIT_S, width: int | None = None) -> str:
        """The screen once it shows every needle at once (``width``: and is drawn that wide, after a resize)."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.text()
            drawn = width is None or any(len(line) == width for line in screen.splitlines())
            if drawn and all(n in screen for n in needles):
                return screen
            if time.monotonic() > deadline:
                missing = [n for n in needles if n not in screen]
                err = self.err_file.read_text(errors="replace")[-2000:] if self.err_file.exists() else ""
                raise AssertionError(f"{missing!r} never showed; the screen:\n{screen}\nstderr:\n{err}")
            time.sleep(_POLL_S)  # the screen is the event; tmux offers no wait for "this text is drawn"

    def type(self, text: str, enter: bool = True) -> None:
        self._tmux("send-keys", "-t", self.name, "-l", text)
        if enter:
            self._tmux("send-keys", "-t", self.name, "Enter")

    def keys(self, *names: str) -> None:
        self._tmux("send-keys", "-t", self.name, *names)

    def resize(self, columns: int, rows: int) -> None:
        self._tmux("resize-window", "-t", self.name, "-x", str(columns), "-y", str(rows))

    def exit_code(self, timeout: float = WAIT_S) -> int:
        deadline = time.monotonic() + timeout
        while not (self.rc_file.exists() and self.rc_file.read_text().strip()):
            if time.monotonic() > deadline:
                raise AssertionError(f"the program did not exit; the screen:\n{self.text()}")
            time.sleep(_POLL_S)
        return int(self.rc_file.read_text())

    def close(self) -> None:
        subprocess.run(["tmux", "-S", str(self.socket), "kill-server"], capture_output=True, check=False)


def massgen_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "massgen.cli.main", *args]
