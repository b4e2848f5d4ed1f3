"""The threading actor every actor of ours runs as: Pykka's, with a lighter mailbox.

Pykka's threading actor holds its mailbox in a ``queue.Queue``: a Python-level lock and three
conditions that every sender takes on each ``tell``. The supervisor and the trace writer hear from
every agent, and with a large team that lock was contended (issue 51: in a profile, the time senders
spent entering it grew 3-4x from 500 to 1,000 agents). ``queue.SimpleQueue`` puts and gets in C under
the GIL, with no lock a sender can hold while it is switched out, and its ``put`` never blocks: an
actor's ``tell`` stays what Pykka promises, a send that does not wait.
"""

from __future__ import annotations

import queue
from typing import Any

import pykka

__all__ = ["ThreadingActor"]


class ThreadingActor(pykka.ThreadingActor):
    """``pykka.ThreadingActor`` whose mailbox is a ``queue.SimpleQueue`` (put, get and empty are all Pykka uses)."""

    @staticmethod
    def _create_actor_inbox() -> queue.SimpleQueue[Any]:
        return queue.SimpleQueue()
