"""A run's actors share a few threads, as Akka's dispatchers share theirs: no thread an actor.

With a thread an actor, a team of N agents was N runnable threads under one GIL each time the
supervisor turned to all of them, and the kernel's and the GIL's hand-offs grew faster than the
team (issue 51: the actor runtime alone, in a run's shape, doubled at 2.7x and 4.3x from 500 to
2,000 agents). Here a mailbox with messages waiting is put on a ready queue once, and one of a
few worker threads runs up to ``THROUGHPUT`` of its messages, so an actor is never on two
threads at once and its messages keep their order.

A handler that waits (for a reply, a thread, a loop's drain) holds its worker: ``blocking()``
around such a wait lets another worker take its place meanwhile, and a watch adds one when no
mailbox has finished running for ``STUCK_S`` while others wait, so a handler stuck in a call no
hint covers costs its own actor, not the run's. Workers not needed end after ``IDLE_S``.
"""

from __future__ import annotations

import collections
import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Protocol

__all__ = ["IDLE_S", "STUCK_S", "THROUGHPUT", "WORKERS", "Dispatcher", "Runnable", "blocking"]

WORKERS = 4  # threads that run mailboxes at once; more only add GIL hand-offs on a few cores
THROUGHPUT = 16  # messages one mailbox handles before it yields its worker to the next
IDLE_S = 2.0  # a worker with nothing to run for this long ends (a context nobody closes leaves none)
STUCK_S = 0.2  # no mailbox finished for this long while others wait: a worker is stuck, add one
MAX_WORKERS = 1024  # the watch's bound: past it a stuck run waits (each stuck handler holds one)


class Runnable(Protocol):
    """A mailbox with messages waiting: ``run`` handles some on the calling worker."""

    def run(self) -> None: ...


_worker = threading.local()  # .dispatcher: the Dispatcher whose worker this thread is


@contextlib.contextmanager
def blocking() -> Iterator[None]:
    """Around a wait on a dispatcher's worker: another worker runs mailboxes until it returns.
    Off a worker (a loop thread, the caller's thread) it does nothing."""
    dispatcher: Dispatcher | None = getattr(_worker, "dispatcher", None)
    if dispatcher is None:
        yield
        return
    dispatcher._begin_blocking()
    try:
        yield
    finally:
        dispatcher._end_blocking()


class Dispatcher:
    """The worker threads of one run's actors (``name`` names them); ``close`` when the run ends."""

    def __init__(self, name: str, workers: int = WORKERS, idle_s: float = IDLE_S) -> None:
        self.name = name
        self._size = workers
        self._idle_s = idle_s
        # One condition guards the ready queue and the counts, so a worker's decision to end and a
        # schedule's decision to start one never miss each other.
        self._changed = threading.Condition(threading.Lock())
        self._ready: collections.deque[Runnable] = collections.deque()
        self._workers: set[threading.Thread] = set()
        self._idle = 0  # workers waiting for a mailbox
        self._blocked = 0  # workers inside ``blocking()``
        self._finished = 0  # mailbox runs finished: the watch's sign of progress
        self._closing = False
        self._watch_thread: threading.Thread | None = None
        self._look = threading.Event()  # set by close: the watch looks now, and ends with no worker left
        self._spawned = 0

    def schedule(self, mailbox: Runnable) -> None:
        """Run ``mailbox`` on a worker soon (its caller guarantees it is not scheduled already)."""
        with self._changed:
            self._ready.append(mailbox)
            if self._idle > len(self._ready) - 1:
                self._changed.notify()
            elif len(self._workers) - self._blocked < self._size:
                self._spawn()

    def close(self, timeout_s: float = 2.0) -> None:
        """End the idle workers now and wait for them (bounded); a worker stuck in a hung handler
        is a daemon thread left behind. A mailbox scheduled later still runs, on a new worker that
        ends once idle."""
        with self._changed:
            self._closing = True
            self._changed.notify_all()
            workers = list(self._workers)
        give_up = time.monotonic() + timeout_s
        for thread in workers:
            if thread is not threading.current_thread():
                thread.join(max(0.0, give_up - time.monotonic()))
        with self._changed:
            watch = self._watch_thread
        self._look.set()
        if watch is not None and watch is not threading.current_thread():
            watch.join(max(0.0, give_up - time.monotonic()))

    @property
    def threads(self) -> int:
        """Workers alive now (for tests and benchmarks)."""
        with self._changed:
            return len(self._workers)

    # -- workers -------------------------------------------------------------------------------

    def _spawn(self) -> None:  # with the condition held
        self._spawned += 1
        thread = threading.Thread(target=self._work, name=f"{self.name}-actors-{self._spawned}", daemon=True)
        self._workers.add(thread)
        thread.start()
        if self._watch_thread is None:
            self._watch_thread = threading.Thread(target=self._watch, name=f"{self.name}-actors-watch", daemon=True)
            self._watch_thread.start()

    def _next(self, me: threading.Thread) -> Runnable | None:
        """The next mailbox to run, waiting for one; None when this worker should end (closed, or
        idle for ``IDLE_S``), decided under the condition with nothing ready."""
        with self._changed:
            idle_until = time.monotonic() + self._idle_s
            while not self._ready:
                left = idle_until - time.monotonic()
                if self._closing or left <= 0:
                    self._workers.discard(me)
                    return None
                self._idle += 1
                self._changed.wait(left)
                self._idle -= 1
            return self._ready.popleft()

    def _work(self) -> None:
        _worker.dispatcher = self
        me = threading.current_thread()
        while (mailbox := self._next(me)) is not None:
            mailbox.run()
            self._finished += 1

    def _watch(self) -> None:
        """While workers exist: add one when mailboxes wait and none finished for ``STUCK_S``."""
        seen = -1
        while True:
            self._look.wait(STUCK_S)  # a look every STUCK_S (progress is the absence of an event), or at close
            with self._changed:
                self._look.clear()
                if not self._workers:
                    self._watch_thread = None
                    return
                stuck = self._finished == seen and self._idle == 0 and bool(self._ready)
                if stuck and len(self._workers) < MAX_WORKERS:
                    self._spawn()
                seen = self._finished

    def _begin_blocking(self) -> None:
        with self._changed:
            self._blocked += 1
            if self._idle == 0 and self._ready and len(self._workers) - self._blocked < self._size:
                self._spawn()

    def _end_blocking(self) -> None:
        with self._changed:
            self._blocked -= 1
