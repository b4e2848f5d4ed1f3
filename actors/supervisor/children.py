"""The supervisor's bookkeeping for each agent, and the deadlines that apply to it.

Which deadline has passed is a pure function of a child's state and the clock, so it
is decided here and acted on by the supervisor.
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import pykka

from massgen.actors.agent.actor import AgentSpec
from massgen.actors.coordination import code_checks
from massgen.actors.runtime.port import Peer, RunContext
from massgen.actors.supervisor.restarts import RestartHistory
from massgen.configs.schema import TimeoutSettings
from massgen.files import confined
from massgen.messages import AnswerView, Tick

# "answering": its answer waits for its workspace snapshot (actors/supervisor/snapshotting.py); no turn meanwhile.
# "reserve": asked for a first answer only while the first answers disagree (``orchestrator.reserve_agents``);
# not started until then, and not counted.
ChildStatus = Literal["reserve", "starting", "idle", "in_turn", "answering", "presenting", "restarting", "failed"]
Overdue = Literal["restart", "stopped", "start", "finish", "turn", "idle", "present"]
# After a command's own deadline: time to kill it, read its output and report the result.
COMMAND_GRACE_S = 10.0
# How long a model's program may run (run_python, a program first answer): its wall clock in the sandbox.
# The longest a silent program may run: a program's wall clock or a code check's, plus its runtime's start.
PROGRAM_SECONDS = max(confined.Limits().wall_seconds, code_checks.LONGEST_CHECK_SECONDS) + 15.0


@dataclass
class Child:
    spec: AgentSpec
    history: RestartHistory
    peer: Peer | None = None
    incarnation: int = 0
    status: ChildStatus = "starting"
    since: float = 0.0
    last_activity: float = 0.0
    turn_id: int | None = None
    restart_at: float = 0.0
    last_error: str = ""
    not_before: float = 0.0  # an open circuit breaker's next probe: no restart before it
    # Failures in a row that ended with this agent's circuit open (see ``note_attempt``,
    # ``CIRCUIT_FAILURES_TO_GIVE_UP``); any call that got through sets it back to 0.
    circuit_failures: int = 0
    # Failures in a row with no output from its model between them (``silent_failures``): a window counts
    # failures close together, and an endpoint that accepts and never answers fails once every idle
    # deadline, too far apart for it; this count has no window, and any output sets it back to 0.
    silent_failures: int = 0
    # The endpoint of its last failed attempt, and that attempt's error: what a give-up names.
    endpoint: str = ""
    endpoint_error: str = ""
    # Resumed after voting in this round: no turn when it starts, unless a new answer came since.
    voted_round: int | None = None
    # Resumed mid-turn: the view and vote-only flag its redone turn starts with (see actors/supervisor/restore.py).
    resume_turn: tuple[AnswerView, bool] | None = None
    # Told to finish its turn (past the round's soft timeout): that turn's id, and when.
    finish_sent: tuple[int, float] | None = None
    # The run_command and run_python calls of its current turn still running (call ids): a command or a
    # program is silent while it runs, and has its own deadline, so the idle deadline waits for that one.
    commands: set[str] = field(default_factory=set)
    # Told of each change of ``status`` (the supervisor's state keeps who the round waits for by it: issue 51).
    on_status: Callable[[Child], None] | None = field(default=None, repr=False, compare=False)

    def __setattr__(self, name: str, value: Any) -> None:
        changed = name == "status" and getattr(self, "status", value) != value
        object.__setattr__(self, name, value)
        if changed and self.on_status is not None:
            self.on_status(self)


# The first failure opens the breaker; the second comes after its cool-down, when the probe
# failed too: the endpoint stayed down for a whole cool-down, so the agent is failed instead of
# being restarted into the open circuit until the run's deadline (bounded cost: one call's
# attempts, one cool-down, one probe).
CIRCUIT_FAILURES_TO_GIVE_UP = 2


def note_attempt(child: Child, info: Mapping[str, object], now: float) -> None:
    """Keep what a ``backend.attempt`` event says about the child's endpoint: when its open
    circuit lets a call out again, and the last real error (a refused call names no cause)."""
    outcome = info.get("outcome")
    if outcome == "ok":
        child.circuit_failures = 0
    if outcome == "circuit_open" or info.get("circuit_opened"):
        child.not_before = now + float(str(info.get("retry_in_s") or 0))
    if outcome in ("retry", "error") and info.get("error"):
        child.endpoint, child.endpoint_error = str(info.get("endpoint") or ""), str(info["error"])


def overdue(child: Child, now: float, limits: TimeoutSettings, answered: bool = False,
            command_s: float = 0.0) -> tuple[Overdue, str] | None:
    """What is due for ``child`` at ``now`` (a restart, or a passed deadline), with a reason.

    ``answered``: the agent has an answer already, so its turn is one of the later rounds.
    ``command_s``: how long a ``run_command`` may run (its own deadline); while one runs, the
    idle deadline is at least that plus a grace, since a command's silence is not the agent's.
    """
    if child.status == "restarting":
        return ("restart", "restart is due") if now >= child.restart_at else None
    if child.status == "failed" or child.peer is None:
        return None
    if child.peer.ref.actor_stopped.is_set():
        return "stopped", "the agent stopped unexpectedly"
    turn, idle, present = (limits.turn_timeout_seconds, limits.idle_stream_timeout_seconds,
                           limits.present_timeout_seconds)
    if child.status == "starting" and now - child.since > turn:
        return "start", f"did not start within {turn:g} s"
    if child.status == "in_turn":
        due = _turn_due(child, now, limits, answered)
        if due is not None:
            return due
    if child.status == "in_turn" and child.commands:
        idle = max(idle, command_s + COMMAND_GRACE_S)
    if child.status == "in_turn" and now - child.last_activity > idle:
        return "idle", f"no output for {idle:g} s"
    if child.status == "presenting" and now - child.since > present:
        return "present", f"presentation exceeded {present:g} s"
    return None


def _turn_due(child: Child, now: float, limits: TimeoutSettings, answered: bool) -> tuple[Overdue, str] | None:
    """A turn's own deadline. With a round timeout (upstream MassGen's), the turn is first told to
    finish ("finish"), and cut ("turn") only once the grace has passed since it was told; without
    one, it is cut at turn_timeout_seconds."""
    soft = limits.round_timeout(answered)
    if soft is None:
        turn = limits.turn_timeout_seconds
        return ("turn", f"turn exceeded {turn:g} s") if now - child.since > turn else None
    sent = child.finish_sent if child.finish_sent is not None and child.finish_sent[0] == child.turn_id else None
    if sent is None:
        return ("finish", f"round timeout of {soft:g} s passed") if now - child.since > soft else None
    grace = limits.round_timeout_grace_seconds
    if now - sent[1] > grace:
        return "turn", f"round timeout of {soft:g} s and its grace of {grace:g} s passed without an answer or vote"
    return None


def next_check(child: Child, limits: TimeoutSettings, answered: bool = False, command_s: float = 0.0) -> float | None:
    """The earliest time ``overdue`` can report a passed deadline or a due restart for ``child`` as it is now (None:
    none can pass). Output only moves ``last_activity`` later, so a check at this time is never late; one that
    finds nothing due yet is rescheduled."""
    if child.status == "restarting":
        return child.restart_at
    if child.status == "starting":
        return child.since + limits.turn_timeout_seconds
    if child.status == "presenting":
        return child.since + limits.present_timeout_seconds
    if child.status != "in_turn":
        return None
    idle = limits.idle_stream_timeout_seconds
    if child.commands:
        idle = max(idle, command_s + COMMAND_GRACE_S)
    soft = limits.round_timeout(answered)
    sent = child.finish_sent if child.finish_sent is not None and child.finish_sent[0] == child.turn_id else None
    turn = (child.since + limits.turn_timeout_seconds if soft is None
            else child.since + soft if sent is None else sent[1] + limits.round_timeout_grace_seconds)
    return min(turn, child.last_activity + idle)


class DeadlineSchedule:
    """When each agent's deadlines are next checked: a heap of (time, agent), so a ``Tick`` looks only at the
    agents whose time has come, not at the whole team (issue 51: the check scanned every agent every 50 ms).
    An agent's check is only ever moved earlier (``check_at``); a popped check finding nothing due is pushed
    again at the agent's next one. ``sweep``: the rarer check of every agent for a stop no ``ChildFailed`` or
    ``Down`` reported (none is known: a failing agent reports itself, a lost one comes as ``Down``)."""

    SWEEP_S = 1.0  # a sweep of the whole team begins at most this often
    # Agents one ``Tick``'s sweep checks at most: a pass over a large team is spread over ticks, so a tick's
    # cost does not grow with the team (a whole pass every second was agents x seconds: quadratic in a run
    # whose length grows with its team). Up to 20 x 64 agents a second are still swept within the second.
    SWEEP_AGENTS = 64

    def __init__(self) -> None:
        self._heap: list[tuple[float, str]] = []
        self._at: dict[str, float] = {}  # each agent's earliest scheduled check
        self._swept = float("-inf")  # when the current (or last) pass began
        self._cursor: int | None = None  # the next agent of the current pass (None: no pass under way)

    def check_at(self, agent: str, when: float | None) -> None:
        """Check ``agent`` at ``when`` at the latest (None: nothing to check)."""
        if when is not None and when < self._at.get(agent, float("inf")):
            self._at[agent] = when
            heapq.heappush(self._heap, (when, agent))

    def due(self, now: float) -> list[str]:
        """The agents whose check has come, each once, in the order of their times; their checks are spent."""
        due: list[str] = []
        while self._heap and self._heap[0][0] <= now:
            when, agent = heapq.heappop(self._heap)
            if self._at.get(agent) == when:
                del self._at[agent]
                due.append(agent)
        return due

    def sweep(self, now: float, agents: Sequence[str]) -> Sequence[str]:
        """The agents (of ``agents``, the team in config order) this tick's sweep checks for unreported stops:
        the next ``SWEEP_AGENTS`` of the pass under way, or the first of a new pass once ``SWEEP_S`` has passed
        since the last one began; none between passes."""
        if self._cursor is None:
            if now - self._swept < self.SWEEP_S:
                return ()
            self._swept, self._cursor = now, 0
        start = self._cursor
        end = min(start + self.SWEEP_AGENTS, len(agents))
        self._cursor = end if end < len(agents) else None
        return agents[start:end]


class Ticker(threading.Thread):
    """The run's only timer: a Tick to the supervisor every interval until stopped."""

    def __init__(self, ctx: RunContext, target: Peer, interval: float) -> None:
        super().__init__(name=f"ticker-{ctx.run_id}", daemon=True)
        self.ctx, self.target, self.interval = ctx, target, interval
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(self.interval):
            try:
                self.target.ref.tell(Tick(run_id=self.ctx.run_id, now=self.ctx.clock()))
            except pykka.ActorDeadError:
                return
