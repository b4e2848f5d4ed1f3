"""The supervisor: runs the coordination state machine and keeps the team alive.

It starts the judge and one agent per config entry, hands out turns, accepts answers
and votes, restarts failed agents (backoff, intensity), enforces every deadline and
budget, and ends the run with the best answer available. Time comes from ``Tick``
messages sent by one scheduler thread, read through the run's clock.
"""

from __future__ import annotations

import itertools
from typing import Any, assert_never

import pykka

from massgen.actors.agent import AgentActor, AgentSpec
from massgen.actors.budget import Spending
from massgen.actors.children import Child, Ticker
from massgen.actors.coordination import Coordination
from massgen.actors.deadlines import effective
from massgen.actors.failures import FailureHandling
from massgen.actors.judge import Judge
from massgen.actors.mcp.supervision import ActorPort, McpSupervision
from massgen.actors.notes import NoteBoard
from massgen.actors.restarts import RestartHistory
from massgen.actors.restore import restore
from massgen.actors.run_spec import RunSpec as RunSpec  # imported from here by the run handle
from massgen.actors.runtime import Peer, RunContext
from massgen.actors.stragglers import StragglerWatch
from massgen.actors.turn_handout import TurnHandout
from massgen.configs.schema import TeamConfig
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
    ContextChanged,
    DeadLetter,
    Down,
    FinalPresented,
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
    RunFinished,
    RunStarted,
    RunStatus,
    SendNote,
    SetRunTimeout,
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

_STOP_GRACE_S = 3.0


class Supervisor(TurnHandout, FailureHandling):
    """Routes its protocol (below), hands out turns (``TurnHandout``), handles failures and deadlines
    (``FailureHandling``) and ends the run; the state they share is declared in ``SupervisorState``."""

    accepts = members(SupervisorInbox)

    def __init__(self, ctx: RunContext, config: TeamConfig, run: RunSpec, specs: list[AgentSpec]) -> None:
        super().__init__(ctx, "supervisor")
        self.config, self.run = config, run
        self.timeouts = effective(config.timeout_settings)  # unset deadlines scale with the run's
        self.stragglers = StragglerWatch(self.timeouts.straggler_grace_seconds)
        self.rules = config.orchestrator
        self.children = {s.agent_id: Child(spec=s, history=RestartHistory(self.rules.restart)) for s in specs}
        order = [s.agent_id for s in specs]
        self.coord = Coordination(order, {s.agent_id: s.label for s in specs}, self.rules)
        self.spent = Spending(self.rules.budget)
        self.tally = None
        self.phase = "coordinating"
        self.presenter: str | None = None
        self.winner: str | None = None
        self.started = ctx.clock()
        self.deadline = self.started + self.timeouts.orchestrator_timeout_seconds
        self._turn_ids = itertools.count(1)
        self.first_done = set[str]()
        self.waiting = set[str]()
        self.judge = None
        self._ticker: Ticker | None = None
        self.mcp = McpSupervision(ActorPort(self), specs, self.rules.restart, self._live_agent)
        self.notes = NoteBoard(order)

    # -- life cycle ---------------------------------------------------------------------------

    def on_start(self) -> None:
        self.record(RunStarted(
            question=self.run.question, history=self.run.history,
            agents=tuple(self.children), labels=tuple(c.spec.label for c in self.children.values()),
            config=self.config.redacted(), versions=self.run.versions, log_dir=self.run.log_dir,
            turn=self.run.turn, attempt=self.run.attempt, resumed_from=self.run.resumed_from,
        ))
        me = Peer("supervisor", 1, self.actor_ref)
        self.self_peer = me
        judge_ref = Judge.start(self.ctx, me, list(self.children), self.rules.winner_rule)
        self.judge = Peer("judge", 1, judge_ref)
        self.mcp.start(me)
        if self.run.resume is not None:
            restore(self, self.run.resume)
        for child in self.children.values():
            if child.status != "failed":
                self._spawn(child)
        if all(child.status == "failed" for child in self.children.values()):
            self._all_failed()  # a resumed run whose agents had all failed
        self._ticker = Ticker(self.ctx, me, self.run.tick_interval_s)
        self._ticker.start()

    def on_stop(self) -> None:
        self._stop_everything()

    def on_failure(self, *args: Any) -> None:
        self._stop_everything()

    def _stop_everything(self) -> None:
        """Stop every child and wait a bounded time, so their processes and clients are closed."""
        if self._ticker is not None:
            self._ticker.stopped.set()
        peers = [c.peer for c in self.children.values() if c.peer is not None and c.status != "failed"]
        peers += [self.judge] if self.judge is not None else []
        peers += self.mcp.peers()  # each kills its server process group on stop
        futures = [p.ref.stop(block=False) for p in peers]
        deadline = self.ctx.clock() + _STOP_GRACE_S
        for future in futures:
            try:
                future.get(timeout=max(0.0, deadline - self.ctx.clock()))
            except (pykka.Timeout, pykka.ActorDeadError):
                pass  # a hung incarnation: abandoned, its thread is a daemon
        self.run.children_stopped.set()

    def _spawn(self, child: Child) -> None:
        child.incarnation += 1
        ref = self.ctx.spawn(AgentActor, child.spec, child.incarnation, self.self_peer,
                             name=child.spec.agent_id, incarnation=child.incarnation)
        child.peer = Peer(child.spec.agent_id, child.incarnation, ref)
        self.ctx.runtime.watch(ref, self.self_peer)  # Ray: Down when its node or worker is lost
        child.status, child.since = "starting", self.ctx.clock()
        self.mcp.agent_spawned(child.spec.agent_id, child.peer)

    def _live_agent(self, agent_id: str) -> Peer | None:
        child = self.children.get(agent_id)
        return child.peer if child is not None and child.status not in ("failed", "restarting") else None

    # -- dispatch -----------------------------------------------------------------------------

    def handle(self, message: SupervisorInbox) -> CallPermit | None:
        """Route by type: time, the runtime, the judge, the user, MCP servers, then agents."""
        if isinstance(message, Tick):
            self._on_tick(message.now)
            return None
        if self.phase == "finished":
            # The run is over and its children are being stopped: what they still say was traced
            # when sent, and nothing can change the outcome. An ask is settled by its (traced) reply.
            if isinstance(message, CallPermitRequest):
                return self.stamp(CallPermit(granted=False, reason="run finished"))
            return None
        match message:
            case Down():  # the runtime lost an agent; an older incarnation's Down is stale
                child = self.children.get(message.name)
                if child is not None and message.incarnation == child.incarnation:
                    self._agent_failed(child, f"{message.reason}: {message.detail}", "down")
            case TallyUpdated():
                self._on_tally(message)
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
        match message:
            case CancelRun():
                self._finish("interrupted", message.reason)
            case AnswerNow():
                self._answer_now()
            case SetRunTimeout():
                self.deadline = self.started + message.seconds
            case KillAgent() | RestartAgent():
                if message.name not in self.children:
                    self.dead_letter(message, f"no agent named {message.name!r}")
                    return
                verb = "killed" if isinstance(message, KillAgent) else "restart requested"
                self._agent_failed(self.children[message.name], f"{verb} by user", "user")
            case SendNote():
                for agent_id in self.notes.post(message):
                    child = self.children[agent_id]
                    if child.status == "in_turn" and child.peer is not None and child.turn_id is not None:
                        self.tell(child.peer, InjectNote(turn_id=child.turn_id, note_id=message.msg_id,
                                                         text=message.text))
            case _ as unreachable:
                assert_never(unreachable)

    def _from_agent(self, message: AgentReport) -> CallPermit | None:
        child = self.children.get(message.sender.name)
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
                return self._permit()
            case McpCallTool() | McpCancelCall():
                if child.peer is not None:
                    self.mcp.from_agent(child.peer, message)
            case ChildStarted():
                if child.status == "starting":  # not "presenting": a resumed run may conclude before it
                    child.status, child.since = "idle", self.ctx.clock()
                    if self.phase == "coordinating" and child.voted_round != self.coord.version:
                        self._next_turn(child)  # a restarted agent that has answered waits like the others
                child.voted_round = None
            case ChildFailed():
                self._agent_failed(child, message.error, message.where, reported=True,
                                   permanent=message.permanent)
            case NoteDelivered():  # whichever turn heard it, this incarnation has it
                self.notes.delivered(child.spec.agent_id, message.note_id)
            case BackendEvent():
                child.last_activity = self.ctx.clock()
                if message.info.get("outcome") == "circuit_open" or message.info.get("circuit_opened"):
                    child.not_before = child.last_activity + float(str(message.info.get("retry_in_s") or 0))
            case _:
                self._from_turn(child, message)
        return None

    def _from_turn(self, child: Child, message: TurnReport) -> None:
        if message.turn_id != child.turn_id:
            return  # a late report of a turn already ended (cancelled, superseded): traced when sent
        match message:
            case ModelCallFinished():
                child.last_activity = self.ctx.clock()
                self.spent.add_usage(message.input_tokens, message.output_tokens, message.cost_usd)
                if message.finish_reason == REPLAYED:
                    self.spent.calls -= 1  # answered from the trace this run resumes: no call was made
            case AgentChunk() | ModelCallStarted() | ToolCallRequested() | ToolCallResult() | TurnCorrection():
                child.last_activity = self.ctx.clock()
            case AnswerProposed():
                self._on_answer(child, message)
            case VoteProposed():
                self._on_vote(child, message)
            case TurnFailed():
                self._agent_failed(child, message.reason, "worker", exhausted=True)
            case FinalPresented():
                if child.spec.agent_id == self.presenter:
                    self._presented(message.content)
                else:
                    self.dead_letter(message, f"{child.spec.agent_id} is not presenting")
            case ToolDenied():
                pass  # the model got a tool error; the denial is in the trace for the logs
            case _ as unreachable:
                assert_never(unreachable)

    # -- budgets --------------------------------------------------------------------------------

    def _permit(self) -> CallPermit:
        reason = self.spent.exhausted()
        if reason is None:
            self.spent.charge_call()
            return self.stamp(CallPermit(granted=True))
        if self.phase == "presenting":
            self._finish("completed", f"the team converged; {reason}, so the winning answer is used as written")
        else:
            self._finish("budget", reason)
        return self.stamp(CallPermit(granted=False, reason=reason))

    # -- the end ----------------------------------------------------------------------------------

    def _finish(self, status: RunStatus, reason: str, final: str | None = None) -> None:
        if self.phase == "finished":
            return
        self.phase = "finished"
        converged = status == "completed"
        if converged and self.winner is not None:
            chosen = self.coord.latest(self.winner)
        else:
            chosen = self.coord.best_so_far(self.tally)
        if chosen is None:
            # Stopped by the user before any answer is still "interrupted" (exit 4), not a failure.
            status = "interrupted" if status == "interrupted" else "failed"
            if "no agent produced an answer" not in reason:
                reason = f"{reason}; no agent produced an answer"
        answer = final if final is not None else (chosen.content if chosen else None)
        changed = self.run.files.changed() if self.run.files else None
        if changed is not None:  # what the presenter wrote in context paths, listed with the answer
            self.record(ContextChanged(**changed))
            answer = self.run.files.with_changes(answer, changed) if self.run.files else answer
        self.record(RunFinished(
            status=status, reason=reason,
            winner=chosen.agent if chosen else None, winner_label=chosen.label if chosen else None,
            final_answer=answer,
            partial=not converged, elapsed_s=round(self.ctx.clock() - self.started, 3),
            model_calls=self.spent.calls, input_tokens=self.spent.input_tokens,
            output_tokens=self.spent.output_tokens, cost_usd=round(self.spent.cost_usd, 6),
        ))
        self.run.finish_recorded.set()
        self.actor_ref.stop(block=False)  # on_stop stops the children
