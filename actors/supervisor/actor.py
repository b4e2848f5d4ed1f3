"""The supervisor: runs the coordination state machine and keeps the team alive.

It starts the judge and one agent per config entry, hands out turns, accepts answers
and votes, restarts failed agents (backoff, intensity), enforces every deadline and
budget, and ends the run with the best answer available. Time comes from ``Tick``
messages sent by one scheduler thread, read through the run's clock.

This module is the actor: its life cycle and its protocol, routed in ``handle`` by type.
What it does about each message is a behaviour of its own module, composed here and sharing
one ``SupervisorState``: ``turn_handout.py`` (who takes a turn with which view),
``failures.py`` (failures, restarts, deadlines on ``Tick``), ``ending.py`` (budgets and the end
of the run) and ``restore.py`` (the starting state of a resumed run).
"""

from __future__ import annotations

from typing import Any, assert_never

import pykka

from massgen.actors.agent import check_tools
from massgen.actors.agent.actor import AgentActor, AgentSpec
from massgen.actors.coordination.judge import Judge
from massgen.actors.runtime.port import Peer, RunContext, TracedActor
from massgen.actors.supervisor.children import Child, Ticker, note_attempt
from massgen.actors.supervisor.ending import RunEnding
from massgen.actors.supervisor.failures import FailureHandling
from massgen.actors.supervisor.mcp_servers import ActorPort, McpSupervision
from massgen.actors.supervisor.restore import restore
from massgen.actors.supervisor.run_spec import RunSpec as RunSpec  # imported from here by the run handle
from massgen.actors.supervisor.snapshotting import Snapshotting
from massgen.actors.supervisor.state import SupervisorState
from massgen.actors.supervisor.turn_handout import TurnHandout
from massgen.configs.schema import TeamConfig
from massgen.files.sandbox import SPEC as COMMAND_SPEC
from massgen.logs.calls import REPLAYED
from massgen.messages import (
    AgentChunk,
    AnswerNow,
    AnswerProposed,
    BackendEvent,
    CallPermit,
    CallPermitRequest,
    CancelRun,
    ChildFailed,
    ChildStarted,
    DeadLetter,
    Down,
    FinalPresented,
    FirstAnswersJudged,
    InjectNote,
    KillAgent,
    McpCallTool,
    McpCancelCall,
    McpServerFailed,
    McpToolResult,
    McpToolsListed,
    ModelCallFinished,
    ModelCallStarted,
    NoteDelivered,
    RestartAgent,
    RunStarted,
    SendNote,
    SetRunTimeout,
    SnapshotReady,
    TallyUpdated,
    Tick,
    ToolCallRequested,
    ToolCallResult,
    TurnCorrection,
    TurnFailed,
    VoteProposed,
)
from massgen.messages.files import ToolDenied
from massgen.messages.protocols import AgentReport, RunControl, SupervisorInbox, TurnReport, members

# Stopping waits at most this, and this much more per child: a stop costs a couple of milliseconds
# of the process's time, so two thousand take seconds. Past it the rest are told and left (daemons).
_STOP_GRACE_S = 3.0
_STOP_GRACE_PER_CHILD_S = 0.005
# Children are stopped this many at a time. Each stop wakes an agent's two threads; waking a thousand
# at once left two thousand threads queued on the GIL, each waking every switch interval to ask for it:
# the context switches grew with the square of the team (issue 51).
_STOP_WAVE = 32
COMMAND_TOOL = COMMAND_SPEC.name
# Tools that print nothing while they run, each under a deadline of its own (the command timeout; a
# program's wall clock, files/confined.py; a code check's run, actors/coordination/code_checks.py): the idle
# deadline waits for them (actors/supervisor/children.py). A check is work, traced as these calls.
SILENT_TOOLS = frozenset({COMMAND_TOOL, check_tools.RUN_PYTHON, "code_examples", "code_ranking"})


class Supervisor(TracedActor[SupervisorInbox]):
    """Routes its protocol (``handle``) to its behaviours, which share one ``SupervisorState``."""

    accepts = members(SupervisorInbox)

    def __init__(self, ctx: RunContext, config: TeamConfig, run: RunSpec, specs: list[AgentSpec]) -> None:
        super().__init__(ctx, "supervisor")
        self.state = state = SupervisorState.new(config, run, specs, ctx.clock())
        self.self_peer: Peer | None = None  # this actor as its children know it; set in ``on_start``
        self._ticker: Ticker | None = None
        self.mcp = McpSupervision(ActorPort(self), specs, state.rules.restart, state.live_peer)
        self.ending = RunEnding(state, self, ctx.clock, lambda: self.actor_ref.stop(block=False))
        self.snapshots = Snapshotting(run.files, ctx.run_id, self._deliver_snapshot)
        self.handout = TurnHandout(state, self, ctx.clock, self.ending, self.snapshots, self._spawn)
        self.failures = FailureHandling(state, self, ctx.clock, handout=self.handout, ending=self.ending,
                                        spawn=self._spawn, mcp=self.mcp, runtime=ctx.runtime)

    # -- life cycle ---------------------------------------------------------------------------

    def on_start(self) -> None:
        state, run = self.state, self.state.run
        self.record(RunStarted(
            question=run.question, history=run.history,
            agents=tuple(state.children), labels=tuple(c.spec.label for c in state.children.values()),
            config=state.config.redacted(), versions=run.versions, log_dir=run.log_dir,
            turn=run.turn, attempt=run.attempt, resumed_from=run.resumed_from, escaped=run.escaped,
            warnings=run.warnings,
            workspaces={agent_id: str(child.spec.files.workspace(agent_id))
                        for agent_id, child in state.children.items()
                        if child.spec.files is not None and agent_id in child.spec.files.with_workspace},
        ))
        me = Peer("supervisor", 1, self.actor_ref)
        self.self_peer = me
        judge_ref = Judge.start(self.ctx, me, list(state.children), state.rules.winner_rule,
                                state.rules.after_first_answers,
                                tuple(a for a in state.children if state.children[a].status == "reserve"))
        state.judge = Peer("judge", 1, judge_ref)
        self.mcp.start(me)
        if run.resume is not None:
            restore(state, self, self.ctx.clock, run.resume)
        for child in state.children.values():
            if child.status not in ("failed", "reserve"):  # a reserve agent starts when the judge asks for it
                self._spawn(child)
        if all(child.status == "failed" for child in state.children.values()):
            self.ending.all_failed()  # a resumed run whose agents had all failed
        self._ticker = Ticker(self.ctx, me, run.tick_interval_s)
        self._ticker.start()

    def on_stop(self) -> None:
        self._stop_everything()

    def on_failure(self, *args: Any) -> None:
        self._stop_everything()

    def _deliver_snapshot(self, ready: SnapshotReady) -> None:
        """From a snapshot worker: into this actor's mailbox, untraced like ``Tick``."""
        self.actor_ref.tell(ready)

    def _stop_everything(self) -> None:
        """Stop every child and wait a bounded time, so their processes and clients are closed."""
        state = self.state
        if self._ticker is not None:
            self._ticker.stopped.set()
        self.snapshots.close()
        peers = [c.peer for c in state.children.values() if c.peer is not None and c.status != "failed"]
        peers += [state.judge] if state.judge is not None else []
        peers += self.mcp.peers()  # each kills its server process group on stop
        deadline = self.ctx.clock() + _STOP_GRACE_S + _STOP_GRACE_PER_CHILD_S * len(peers)
        for start in range(0, len(peers), _STOP_WAVE):
            futures = [p.ref.stop(block=False) for p in peers[start:start + _STOP_WAVE]]
            for future in futures:
                try:
                    future.get(timeout=max(0.0, deadline - self.ctx.clock()))
                except (pykka.Timeout, pykka.ActorDeadError):
                    pass  # a hung incarnation: abandoned, its thread is a daemon
        state.run.children_stopped.set()

    def _spawn(self, child: Child) -> None:
        """Start the child's next incarnation (at start, and for each restart)."""
        assert self.self_peer is not None
        child.incarnation += 1
        ref = self.ctx.spawn(AgentActor, child.spec, child.incarnation, self.self_peer,
                             name=child.spec.agent_id, incarnation=child.incarnation)
        child.peer = Peer(child.spec.agent_id, child.incarnation, ref)
        self.ctx.runtime.watch(ref, self.self_peer)  # Ray: Down when its node or worker is lost
        child.status, child.since = "starting", self.ctx.clock()
        self.state.schedule(child)
        self.mcp.agent_spawned(child.spec.agent_id, child.peer)

    # -- the protocol -----------------------------------------------------------------------------

    def handle(self, message: SupervisorInbox) -> CallPermit | None:
        """Route by type: time, the runtime, the judge, the user, MCP servers, then agents."""
        state = self.state
        if isinstance(message, Tick):
            self.failures.on_tick(message.now)
            return None
        if isinstance(message, SnapshotReady):  # also after the end: its copy is then discarded
            self.handout.snapshot_ready(message)
            return None
        if state.finished:
            # The run is over and its children are being stopped: what they still say was traced
            # when sent, and nothing can change the outcome. An ask is settled by its (traced) reply.
            if isinstance(message, CallPermitRequest):
                return self.stamp(CallPermit(granted=False, reason="run finished"))
            return None
        match message:
            case Down():  # the runtime lost an agent; an older incarnation's Down is stale
                child = state.children.get(message.name)
                if child is not None and message.incarnation == child.incarnation:
                    self.failures.agent_lost(child, message.reason, message.detail)
            case TallyUpdated():
                self.handout.on_tally(message)
            case FirstAnswersJudged():
                self.handout.first_answers_judged(message)
            case CancelRun() | AnswerNow() | SetRunTimeout() | KillAgent() | RestartAgent() | SendNote():
                self._on_control(message)
            case McpToolsListed() | McpToolResult() | McpServerFailed():
                if self.mcp.owns(message.sender.name):
                    self.mcp.from_server(message)
                else:
                    self.dead_letter(message, "no MCP server of this run has that name")
            case _:
                return self._from_agent(message)
        return None

    def _on_control(self, message: RunControl) -> None:
        state = self.state
        match message:
            case CancelRun():
                self.ending.finish("interrupted", message.reason)
            case AnswerNow():
                self.handout.answer_now()
            case SetRunTimeout():
                state.deadline = state.started + message.seconds
            case KillAgent() | RestartAgent():
                if message.name not in state.children:
                    self.dead_letter(message, f"no agent named {message.name!r}")
                    return
                verb = "killed" if isinstance(message, KillAgent) else "restart requested"
                self.failures.agent_failed(state.children[message.name], f"{verb} by user", "user")
            case SendNote():
                for agent_id in state.notes.post(message):
                    child = state.children[agent_id]
                    if child.status == "in_turn" and child.peer is not None and child.turn_id is not None:
                        self.tell(child.peer, InjectNote(turn_id=child.turn_id, note_id=message.msg_id,
                                                         text=message.text))
            case _ as unreachable:
                assert_never(unreachable)

    def _from_agent(self, message: AgentReport) -> CallPermit | None:
        state = self.state
        child = state.children.get(message.sender.name)
        if child is None or message.sender.incarnation != child.incarnation \
                or child.status in ("failed", "restarting"):
            if isinstance(message, CallPermitRequest):  # an ask is settled by its (traced) reply
                return self.stamp(CallPermit(granted=False, reason="stale incarnation"))
            why = ("no agent of this run has that name" if child is None
                   else f"sender is not the live incarnation ({child.incarnation})")
            self.record(DeadLetter(original_type=type(message).__name__, original_sender=str(message.sender),
                                   to="supervisor", why=why))
            return None
        match message:
            case CallPermitRequest():
                return self.stamp(self.ending.permit())  # budgets are checked before every model call
            case McpCallTool() | McpCancelCall():
                if child.peer is not None:
                    self.mcp.from_agent(child.peer, message)
            case ChildStarted():
                if child.status == "starting":  # not "presenting": a resumed run may conclude before it
                    child.status, child.since = "idle", self.ctx.clock()
                    if state.phase == "coordinating" and child.voted_round != state.coord.version:
                        self.handout.next_turn(child)  # a restarted agent that has answered waits like the others
                child.voted_round = None
            case ChildFailed():
                self.failures.agent_failed(child, message.error, message.where, reported=True,
                                           permanent=message.permanent)
            case NoteDelivered():  # whichever turn heard it, this incarnation has it
                state.notes.delivered(child.spec.agent_id, message.note_id)
            case BackendEvent():
                child.last_activity = self.ctx.clock()
                if message.event == "backend.attempt":
                    note_attempt(child, message.info, child.last_activity)
            case _:
                self._from_turn(child, message)
        return None

    def _from_turn(self, child: Child, message: TurnReport) -> None:
        if message.turn_id != child.turn_id:
            return  # a late report of a turn already ended (cancelled, superseded): traced when sent
        match message:
            case ModelCallFinished():
                child.last_activity = self.ctx.clock()
                child.silent_failures = 0  # its model answered: the failures before were not one fault
                spent = self.state.spent
                spent.add_usage(message.input_tokens, message.output_tokens, message.cost_usd)
                if message.finish_reason == REPLAYED:
                    spent.calls -= 1  # answered from the trace this run resumes: no call was made
            case ToolCallRequested() | ToolCallResult():
                child.last_activity = self.ctx.clock()
                if message.name in SILENT_TOOLS:  # silent while it runs, under its own deadline
                    running = isinstance(message, ToolCallRequested)
                    (child.commands.add if running else child.commands.discard)(message.call_id)
                    self.state.schedule(child)  # a command ended: the idle deadline is no longer its
            case AgentChunk():
                child.last_activity = self.ctx.clock()
                child.silent_failures = 0
            case ModelCallStarted() | TurnCorrection():
                child.last_activity = self.ctx.clock()
            case AnswerProposed():
                self.handout.on_answer(child, message)
            case VoteProposed():
                self.handout.on_vote(child, message)
            case TurnFailed():
                self.failures.agent_failed(child, message.reason, "worker", exhausted=True)
            case FinalPresented():
                if child.spec.agent_id == self.state.presenter:
                    self.handout.presented(message.content)
                else:
                    self.dead_letter(message, f"{child.spec.agent_id} is not presenting")
            case ToolDenied():
                pass  # the model got a tool error; the denial is in the trace for the logs
            case _ as unreachable:
                assert_never(unreachable)
