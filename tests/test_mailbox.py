"""Our actors' mailbox (``actors/runtime/mailbox.py``): Pykka's semantics on a C queue. Messages from many
threads are all handled, each sender's in the order it sent them, and a stop handles what came before it."""

from __future__ import annotations

import queue
import threading
from typing import Any

from massgen.actors.runtime.mailbox import ThreadingActor


class Collector(ThreadingActor):
    def __init__(self, seen: list[tuple[int, int]] | None = None) -> None:
        super().__init__()
        self.seen: list[tuple[int, int]] = [] if seen is None else seen

    def on_receive(self, message: Any) -> Any:
        if message == "count":
            return list(self.seen)
        self.seen.append(message)
        return None


def test_the_mailbox_is_a_simple_queue() -> None:
    ref = Collector.start()
    try:
        assert isinstance(ref.actor_inbox, queue.SimpleQueue)
    finally:
        ref.stop()


def test_every_sender_is_heard_in_its_own_order() -> None:
    ref = Collector.start()
    senders, each = 8, 500

    def send(sender: int) -> None:
        for i in range(each):
            ref.tell((sender, i))

    threads = [threading.Thread(target=send, args=(s,)) for s in range(senders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seen = ref.ask("count", timeout=30)
    ref.stop()
    assert len(seen) == senders * each
    for sender in range(senders):
        assert [i for s, i in seen if s == sender] == list(range(each))


def test_a_stop_comes_after_what_was_sent_before_it() -> None:
    seen: list[tuple[int, int]] = []
    ref = Collector.start(seen)
    for i in range(100):
        ref.tell((0, i))
    ref.stop(block=True, timeout=30)
    assert seen == [(0, i) for i in range(100)]
