"""SIGTERM and SIGHUP end a run the way Ctrl-C does: cancel, keep the best answer, finish the logs.

Python turns only SIGINT into ``KeyboardInterrupt``; without this a service manager's
SIGTERM or a closed terminal's SIGHUP would kill the process at once, with no final
status, no ``RunFinished`` in the trace and no derived files. While the context is
active both signals raise ``SignalInterrupt`` (a ``KeyboardInterrupt``) in the main
thread, so the one Ctrl-C path handles all three.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
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


def describe(exc: KeyboardInterrupt) -> str:
    """How the user stopped us, for messages: ``SIGTERM`` or ``Ctrl-C``."""
    return exc.name if isinstance(exc, SignalInterrupt) else "Ctrl-C"
