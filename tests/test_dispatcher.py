"""A run's actors share a few threads (actors/runtime/dispatcher.py, mailbox.py): what that must keep.

Each actor still handles its messages one at a time and in order; a handler that waits for another
actor never starves it; a handler stuck for good costs its own actor, not the others; and the threads
end with the run. Real threads and real Pykka refs throughout: nothing here is mocked.
"""

from __future__ import annotations

import threading
from typing import Any

import pykka
import pytest

from massgen.actors.runtime.dispatcher import WORKERS, Dispatcher
from massgen.actors.runtime.mailbox import DispatchedActor

LIMIT_S = 30.0  # a bound for a wait that should end at once: a broken dispatcher fails, never hangs


class _Recorder(DispatchedActor):
    """Keeps what it was told, and fails loudly if two threads ever run it at once."""

    def __init__(self, threads: Dispatcher) -> None:
        super().__init__()
        self.threads = threads
        self.seen: list[Any] = []
        self.inside = False
        self.overlapped = False
        self.started_first = False

    def _dispatcher(self) -> Dispatcher:
        return self.threads

    def on_start(self) -> None:
        self.started_first = not self.seen

    def on_receive(self, message: Any) -> Any:
        if self.inside:
            self.overlapped = True
        self.inside = True
        try:
            if isinstance(message, dict) and "wait_for" in message:
                message["wait_for"].wait(LIMIT_S)  # a handler stuck in a call no hint covers
            elif isinstance(message, dict) and "ask" in message:
                return message["ask"].ask("ping", timeout=LIMIT_S)  # a handler that waits for another actor
            elif message == "fail":
                raise ValueError("this handler fails")
            self.seen.append(message)
            return message
        finally:
            self.inside = False

    def report(self) -> tuple[list[Any], bool, bool]:
        return list(self.seen), self.overlapped, self.started_first


@pytest.fixture
def threads() -> Any:
    dispatcher = Dispatcher("test")
    yield dispatcher
    pykka.ActorRegistry.stop_all()
    dispatcher.close()


def test_each_actor_handles_its_messages_in_order_one_at_a_time_on_a_few_shared_threads(threads: Dispatcher) -> None:
    actors = [_Recorder.start(threads) for _ in range(300)]
    senders = [threading.Thread(target=lambda i=i: [a.tell((i, n)) for n in range(50) for a in actors])
               for i in range(3)]
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join(LIMIT_S)
    for actor in actors:
        seen, overlapped, started_first = actor.proxy().report().get(timeout=LIMIT_S)
        assert not overlapped and started_first
        for sender in range(3):
            assert [n for i, n in seen if i == sender] == list(range(50))  # each sender's order kept
    # 300 actors, and the threads that ran them are the dispatcher's few (a blocked ask adds one meanwhile)
    assert threads.threads <= 2 * WORKERS


def test_a_handler_that_asks_another_actor_and_waits_never_starves_it(threads: Dispatcher) -> None:
    one = Dispatcher("one-thread", workers=1)
    try:
        asked = _Recorder.start(one)
        asker = _Recorder.start(one)
        # The only worker runs the asker, which waits for the asked: the wait lets another worker run it.
        assert asker.ask({"ask": asked}, timeout=LIMIT_S) == "ping"
    finally:
        pykka.ActorRegistry.stop_all()
        one.close()


def test_handlers_stuck_for_good_cost_their_own_actors_not_the_others() -> None:
    one = Dispatcher("one-thread", workers=1)
    release = threading.Event()
    try:
        stuck = [_Recorder.start(one) for _ in range(2)]  # the first holds the only worker, the second waits
        for actor in stuck:
            actor.tell({"wait_for": release})
        healthy = _Recorder.start(one)
        assert healthy.ask("still answered", timeout=LIMIT_S) == "still answered"  # the watch added workers
    finally:
        release.set()
        pykka.ActorRegistry.stop_all()
        one.close()


def test_a_failing_handler_stops_its_actor_and_an_asker_gets_the_error(threads: Dispatcher) -> None:
    asked = _Recorder.start(threads)
    with pytest.raises(ValueError, match="this handler fails"):
        asked.ask("fail", timeout=LIMIT_S)
    assert asked.ask("alive", timeout=LIMIT_S) == "alive"  # an ask's failure is the asker's, as in Pykka
    told = _Recorder.start(threads)
    told.tell("fail")  # a tell's failure is the actor's: it stops (on_failure), as in Pykka
    assert told.actor_stopped.wait(LIMIT_S)
    with pytest.raises(pykka.ActorDeadError):
        told.ask("anyone there?", timeout=LIMIT_S)


def test_closing_ends_the_threads_and_a_later_message_still_runs_on_a_new_one() -> None:
    threads = Dispatcher("closing", idle_s=0.2)
    actor = _Recorder.start(threads)
    assert actor.ask("before", timeout=LIMIT_S) == "before"
    threads.close(timeout_s=LIMIT_S)
    assert threads.threads == 0
    assert not [t for t in threading.enumerate() if t.name.startswith("closing-actors-")]
    assert actor.ask("after", timeout=LIMIT_S) == "after"  # never lost: a worker is started for it
    actor.stop(timeout=LIMIT_S)
    for thread in [t for t in threading.enumerate() if t.name.startswith("closing-actors-")]:
        thread.join(LIMIT_S)  # the new worker ends once idle (idle_s), and the watch with it
    assert threads.threads == 0
    assert not [t for t in threading.enumerate() if t.name.startswith("closing-actors-") and t.is_alive()]


def test_a_stop_comes_after_what_was_sent_before_it(threads: Dispatcher) -> None:
    actor = _Recorder.start(threads)
    for n in range(100):
        actor.tell(n)
    recorder = actor.proxy()._actor  # read once stopped: the actor no longer answers
    actor.stop(block=True, timeout=LIMIT_S)
    assert recorder.seen == list(range(100))
