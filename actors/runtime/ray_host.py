"""The remote half of the Ray runtime: one Ray actor hosts one of our actors, unchanged.

Inside the Ray worker the hosted actor (an ``AgentActor``) is the same Pykka actor as on
one machine, with a ``RemoteContext``: every trace record, tell and ask it makes goes into
one outbox queue, in the order it made them. The driver pulls the outbox (``pull``, its
own concurrency group so it never blocks deliveries) and replays it there: records to the
one trace writer, tells to their recipients, asks answered with a ``reply`` call. So the
driver sees a remote actor's output in its own order, a send's record before its delivery,
and the hosted actor never waits on a Ray call: handlers stay free, replies are messages.
"""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

import ray

from massgen.actors.runtime.port import Peer, RunContext, TracedActor
from massgen.messages import Message

M = TypeVar("M", bound=Message)

# Items in the outbox, replayed by the driver in order (actors/runtime/ray_runtime.py).
Item = tuple[Any, ...]


class _OutboxRef:
    """A peer in the driver as the hosted actor sees it: telling it queues the message."""

    def __init__(self, outbox: queue.Queue[Item], to: str) -> None:
        self.outbox, self.to = outbox, to
        self.actor_stopped = threading.Event()

    def tell(self, message: Message) -> None:
        self.outbox.put(("tell", self.to, message))


class RemoteContext(RunContext):
    """The run context of an actor hosted in a Ray worker: everything goes through the outbox."""

    def __init__(self, run_id: str, outbox: queue.Queue[Item]) -> None:
        super().__init__(run_id, None)
        self.outbox = outbox
        self._asks: dict[str, Future[Message | None]] = {}
        self._asks_lock = threading.Lock()

    def trace(self, kind: str, message: Message, to: str = "", **extra: Any) -> None:
        self.outbox.put(("trace", kind, to, message, extra))

    def tell(self, to: Peer, message: Message, *, traced: bool = True) -> bool:
        if traced:
            self.trace("tell", message, to=str(to))
        self.outbox.put(("tell", str(to), message))
        return True

    def ask(self, to: Peer, message: Message, reply_type: type[M], timeout: float) -> M | None:
        """Queue the ask; the driver delivers it and calls ``resolve`` with the reply (None: dead letter)."""
        waiting: Future[Message | None] = Future()
        with self._asks_lock:
            self._asks[message.msg_id] = waiting
        self.trace("ask", message, to=str(to))
        self.outbox.put(("ask", str(to), message, timeout))
        try:
            reply = waiting.result(timeout)
        except FutureTimeout:
            self.trace("ask_timeout", message, to=str(to))
            return None
        finally:
            with self._asks_lock:
                self._asks.pop(message.msg_id, None)
        if reply is None:
            return None  # the driver recorded the dead letter
        if not isinstance(reply, reply_type):
            raise TypeError(f"{to} answered {type(message).__name__} with {type(reply).__name__}")
        return reply

    def resolve(self, msg_id: str, reply: Message | None) -> None:
        with self._asks_lock:
            waiting = self._asks.get(msg_id)
        if waiting is not None and not waiting.done():
            waiting.set_result(reply)


@ray.remote(concurrency_groups={"outbox": 1, "asks": 4})  # type: ignore[call-overload]
class ActorHost:
    """Hosts ``cls(ctx, *args)``; ``Peer`` arguments without a ref become outbox peers."""

    def __init__(self, run_id: str, cls: type[TracedActor[Any]], args: tuple[Any, ...],
                 model_servers: dict[str, Any] | None = None) -> None:
        if model_servers:  # before the hosted agent starts its backend (backends/remote_server.py)
            from massgen.backends.remote_server import install

            install(model_servers)
        self.outbox: queue.Queue[Item] = queue.Queue()
        self.ctx = RemoteContext(run_id, self.outbox)
        self.outbox.put(("placed", ray.get_runtime_context().get_node_id()))
        hosted = tuple(
            Peer(a.name, a.incarnation, _OutboxRef(self.outbox, str(a))) if isinstance(a, Peer) and a.ref is None
            else a
            for a in args
        )
        self.ref = cls.start(self.ctx, *hosted)
        threading.Thread(target=self._report_stop, name="host-watch", daemon=True).start()

    def _report_stop(self) -> None:
        self.ref.actor_stopped.wait()
        self.outbox.put(("stopped",))

    def receive(self, message: Message) -> bool:
        """A message for the hosted actor; False when it has stopped (a dead letter)."""
        if self.ref.actor_stopped.is_set():
            return False
        try:
            self.ref.tell(message)
        except Exception:
            return False
        return True

    @ray.method(concurrency_group="asks")
    def ask(self, message: Message, timeout: float | None) -> Any:
        """An ask from the driver (a worker thread there, never a handler); Pykka's errors travel back."""
        return self.ref.ask(message, timeout=timeout)

    def reply(self, msg_id: str, reply: Message | None) -> None:
        self.ctx.resolve(msg_id, reply)

    def stop(self, timeout: float) -> None:
        """Stop the hosted actor (its on_stop closes backends and processes), bounded."""
        try:
            self.ref.stop(block=True, timeout=timeout)
        except Exception:
            pass

    @ray.method(concurrency_group="outbox")
    def pull(self, wait_s: float) -> list[Item]:
        """What the hosted actor produced since the last pull, waiting up to ``wait_s`` for the first."""
        try:
            items = [self.outbox.get(timeout=wait_s)]
        except queue.Empty:
            return []
        while True:
            try:
                items.append(self.outbox.get_nowait())
            except queue.Empty:
                return items
