"""SIGTERM and SIGHUP end a run the way Ctrl-C does: cancel, keep the best answer, finish the logs.

Python turns only SIGINT into ``KeyboardInterrupt``; without this a service manager's
SIGTERM or a closed terminal's SIGHUP would kill the process at once, with no final
status, no ``RunFinished`` in the trace and no derived files. While the context is
active both signals raise ``SignalInterrupt`` (a ``KeyboardInterrupt``) in the main
thread, so the one Ctrl-C path handles all three.

The interactive session (``in_session``) is different: there a SIGINT cancels the running
turn and the session goes on, while SIGTERM and SIGHUP end the session, each after the
running turn is cancelled and its trace is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

HANDLED = tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None)


class SignalInterrupt(KeyboardInterrupt):
    """A termination signal, delivered as an interrupt; ``name`` is the signal's (``SIGTERM``)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _raise(signum: int, frame: FrameType | None) -> None:
    raise SignalInterrupt(signal.Signals(signum).name)


@contextlib.contextmanager
def as_interrupts() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise ``SignalInterrupt``; outside, the old handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers; elsewhere signals stay as they are
        return
    previous: dict[int, Any] = {}
    for signum in HANDLED:
        previous[signum] = signal.signal(signum, _raise)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextlib.contextmanager
def held() -> Iterator[None]:
    """Within the block, SIGINT, SIGTERM and SIGHUP are ignored: the command's last lines (the
    automation lines a script parses) are written whole, however often the user presses
    Ctrl-C. Only for the end of a command, which returns its exit code right after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, signal.SIG_IGN) for signum in (signal.SIGINT, *HANDLED)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def describe(exc: KeyboardInterrupt) -> str:
    """How the user stopped us, for messages: ``SIGTERM`` or ``Ctrl-C``."""
    return exc.name if isinstance(exc, SignalInterrupt) else "Ctrl-C"


def in_session(loop: asyncio.AbstractEventLoop, interrupt: Callable[[], None],
               terminate: Callable[[str], None]) -> Callable[[], None]:
    """Install the interactive session's signals; returns the call that puts the old ones back.

    SIGINT calls ``interrupt`` (cancel the running turn, the session goes on); SIGTERM and
    SIGHUP call ``terminate(name)`` (end the session cleanly). Both run on ``loop``'s thread.
    SIGINT is a Python-level handler, not a loop one: prompt-toolkit installs its own loop
    handler while it prompts (a SIGINT then reaches the prompt as Ctrl-C, the same path) and
    restores the Python-level one after, so ours is back between prompts. Outside the main
    thread (tests drive the session from one) nothing is installed."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        loop.call_soon_threadsafe(interrupt)

    previous = signal.signal(signal.SIGINT, on_sigint)
    for signum in HANDLED:
        loop.add_signal_handler(signum, terminate, signal.Signals(signum).name)

    def restore() -> None:
        for signum in HANDLED:
            loop.remove_signal_handler(signum)
        signal.signal(signal.SIGINT, previous)

    return restore
