"""The actor runtime alone, in a run's shape: what a team of N costs before any of our work.

N agent actors (our ``DispatchedActor``, run by one ``Dispatcher`` as a run's are, each with its own
asyncio loop on a thread beside it, as an agent has), one supervisor and one trace writer, and nothing
else of ours: the supervisor tells every agent to take a turn, each agent starts one coroutine on its
loop, which sends the writer ``RECORDS_A_TURN`` records and tells the supervisor it is done (an agent's
turn worker reports from its loop, never from the handler); after the last agent, the next round. Two rounds (an
answer and a vote), about the messages a ``bench.scale`` agent handles and the records it writes.

How this grows with N is the floor under ``bench.scale``'s growth (issue 51): thread hand-offs under
one GIL, on this machine's cores and kernel. ``bench.scale --floor`` runs it in the sweep's place.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from massgen.actors.runtime.dispatcher import Dispatcher
from massgen.actors.runtime.loop_thread import close_loop, run_loop
from massgen.actors.runtime.mailbox import DispatchedActor

__all__ = ["RECORDS_A_TURN", "ROUNDS", "run_floor"]

RECORDS_A_TURN = 10  # a bench.scale agent's trace records a turn (21,050 records at 1,000 agents, two turns each)
ROUNDS = 2  # an answer, then a vote


class _Actor(DispatchedActor):
    threads: Dispatcher  # the floor's run: set by run_floor before any actor starts

    def _dispatcher(self) -> Dispatcher:
        return self.threads


class _Writer(_Actor):
    def __init__(self) -> None:
        super().__init__()
        self.records = 0

    def on_receive(self, message: Any) -> None:
        self.records += 1

    def count(self) -> int:
        return self.records


class _Agent(_Actor):
    def __init__(self, supervisor: Any, writer: Any) -> None:
        super().__init__()
        self.supervisor, self.writer = supervisor, writer
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=run_loop, args=(self.loop,), daemon=True)

    def on_start(self) -> None:
        self.thread.start()

    async def _turn(self, round_number: int) -> None:
        await asyncio.sleep(0)  # one hand-off through the loop, as a model call's stream has at least one
        for record in range(RECORDS_A_TURN):
            self.writer.tell(record)
        self.supervisor.tell(round_number)

    def on_receive(self, message: Any) -> None:
        asyncio.run_coroutine_threadsafe(self._turn(message), self.loop)

    def on_stop(self) -> None:
        close_loop(self.loop, self.thread)


class _Supervisor(_Actor):
    def __init__(self, agents: int, finished: threading.Event) -> None:
        super().__init__()
        self.size, self.finished = agents, finished
        self.agents: list[Any] = []
        self.done = self.round = 0

    def on_receive(self, message: Any) -> None:
        if isinstance(message, list):  # the team: the first round begins
            self.agents = message
        else:
            self.done += 1
            if self.done < self.size:
                return
            self.done, self.round = 0, self.round + 1
            if self.round == ROUNDS:
                self.finished.set()
                return
        for agent in self.agents:
            agent.tell(self.round)


def run_floor(agents: int, deadline_s: float) -> tuple[str, int]:
    """One run of ``agents`` agents: its status ("completed" or "timeout") and the records the writer took."""
    finished = threading.Event()
    _Actor.threads = dispatcher = Dispatcher("floor")
    writer = _Writer.start()
    supervisor = _Supervisor.start(agents, finished)
    team = [_Agent.start(supervisor, writer) for _ in range(agents)]
    supervisor.tell(team)
    status = "completed" if finished.wait(deadline_s) else "timeout"
    for agent in team:
        agent.stop()
    supervisor.stop()
    records: int = writer.proxy().count().get()
    writer.stop()
    dispatcher.close()
    return status, records
