"""The actor every actor of ours runs as: a Pykka actor whose mailbox is run by its run's dispatcher.

Pykka's ``ThreadingActor`` gives each actor a thread that waits on its mailbox; a team of two
thousand agents was two thousand threads taking turns under one GIL (issue 51). This actor is a
``pykka.Actor`` like it (refs, proxies, futures, ``on_start``/``on_stop``/``on_failure``, the
registry are Pykka's, unchanged), but its mailbox, once a message arrives, puts itself on a
``Dispatcher``'s ready queue (``dispatcher.py``) and is run there: ``on_start`` first, then its
messages in order, one worker at a time. What Pykka's loop does with each message (a reply set,
a failure reported, a ``BaseException`` stopping every actor) is done here the same way.

A wait inside a handler holds a worker, so the futures this actor hands out mark their ``get``
as ``blocking()``: an actor that asks another and waits never starves the one it asks.
"""

from __future__ import annotations

import queue
import sys
import threading
from typing import Any

import pykka
from pykka import ActorRegistry

from massgen.actors.runtime.dispatcher import THROUGHPUT, Dispatcher, blocking

__all__ = ["DispatchedActor", "Mailbox"]


class _Future(pykka.ThreadingFuture[Any]):
    """Pykka's threading future; a ``get`` on a dispatcher's worker lets another worker run meanwhile."""

    def get(self, *, timeout: float | None = None) -> Any:
        with blocking():
            return super().get(timeout=timeout)


class Mailbox:
    """An actor's messages (Pykka's ``ActorInbox``: put, get, empty) and its turn on the dispatcher."""

    def __init__(self) -> None:
        self._messages: queue.SimpleQueue[Any] = queue.SimpleQueue()  # put and get in C, never blocking
        self._lock = threading.Lock()
        self._scheduled = False  # on the ready queue or running: never twice at once
        self._started = False
        self._actor: DispatchedActor | None = None
        self._dispatcher: Dispatcher | None = None

    def put(self, envelope: Any) -> None:
        self._messages.put(envelope)
        self._schedule()

    def get(self) -> Any:
        return self._messages.get_nowait()  # Pykka's teardown asks only after ``empty()`` said no

    def empty(self) -> bool:
        return self._messages.empty()

    def bind(self, actor: DispatchedActor, dispatcher: Dispatcher) -> None:
        """Messages sent before the actor started wait; from now on they are run (``on_start`` first)."""
        self._actor, self._dispatcher = actor, dispatcher
        self._schedule()

    def _schedule(self) -> None:
        with self._lock:
            if self._scheduled or self._dispatcher is None:
                return
            self._scheduled = True
        self._dispatcher.schedule(self)

    def run(self) -> None:
        """On a worker: start the actor if new, handle up to ``THROUGHPUT`` messages, and give the
        worker back; still scheduled if more are waiting, never again once the actor has stopped."""
        actor = self._actor
        assert actor is not None
        if not self._started:
            self._started = True
            actor._actor_loop_setup()
        for _ in range(THROUGHPUT):
            if actor.actor_stopped.is_set():
                break
            try:
                envelope = self._messages.get_nowait()
            except queue.Empty:
                break
            actor._handle_envelope(envelope)
        if actor.actor_stopped.is_set():
            actor._actor_loop_teardown()  # what is left is answered with ActorDeadError, as Pykka does
            return
        with self._lock:
            self._scheduled = False
        if not self._messages.empty():
            self._schedule()


class DispatchedActor(pykka.Actor):
    """A Pykka actor run by a ``Dispatcher``: subclasses say which one (``_dispatcher``)."""

    @staticmethod
    def _create_actor_inbox() -> Mailbox:
        return Mailbox()

    @staticmethod
    def _create_future() -> pykka.Future[Any]:
        return _Future()

    def _dispatcher(self) -> Dispatcher:  # pragma: no cover - every actor class of ours overrides it
        raise NotImplementedError

    def _start_actor_loop(self) -> None:
        inbox = self.actor_inbox
        assert isinstance(inbox, Mailbox)
        inbox.bind(self, self._dispatcher())

    def _handle_envelope(self, envelope: Any) -> None:
        """One message, as Pykka's ``_actor_loop_running`` handles it."""
        try:
            response = self._handle_receive(envelope.message)
            if envelope.reply_to is not None:
                envelope.reply_to.set(response)
        except Exception:
            if envelope.reply_to is not None:
                envelope.reply_to.set_exception()
            else:
                self._handle_failure(*sys.exc_info())
                try:
                    self.on_failure(*sys.exc_info())
                except Exception:
                    self._handle_failure(*sys.exc_info())
        except BaseException:
            self._stop()
            ActorRegistry.stop_all()
