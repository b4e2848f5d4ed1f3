"""The supervisor: runs the coordination state machine and keeps the team alive.

It starts the judge and one agent per config entry, hands out turns, accepts answers
and votes, restarts failed agents (backoff, intensity), enforces every deadline and
budget, and ends the run with the best answer available. Time comes from ``Tick``
messages sent by one scheduler thread, read through the run's clock.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, assert_never

import pykka

from massgen.actors.agent import AgentActor, AgentSpec
from massgen.actors.budget import Spending
from massgen.actors.children import Child, Ticker, overdue
from massgen.actors.coordination import Coordination
from massgen.actors.deadlines import effective
from massgen.actors.judge import Judge
from massgen.actors.mcp.supervision import ActorPort, McpSupervision
from massgen.actors.notes import NoteBoard
from massgen.actors.restarts import RestartHistory
from massgen.actors.restore import restore
from massgen.actors.results import explicit_result, final_result
from massgen.actors.resume import ResumeState
from massgen.actors.runtime import Peer, RunContext, TracedActor
from massgen.actors.stragglers import StragglerWatch
from massgen.configs.schema import TeamConfig
from massgen.logs.calls import REPLAYED
from massgen.messages import (
    AgentChunk,
    AgentMarkedFailed,
    AgentRestarting,
    AnswerAccepted,
    AnswerNow,
    AnswerProposed,
    AnswerView,
    BackendEvent,
    CallPermit,
    CallPermitRequest,
    CancelRun,
    CancelTurn,
    ChildFailed,
    ChildStarted,
    ContextChanged,
    DeadLetter,
    DeadlineExpired,
    Down,
    FinalPresented,
    InjectAnswers,
    InjectNote,
    InvalidateVotes,
    KillAgent,
    McpCallTool,
    McpCancelCall,
    McpServerFailed,
    McpToolResult,
    McpToolsListed,
    ModelCallFinished,
    ModelCallStarted,
    NoteDelivered,
    PresentFinal,
    RecordVote,
    RestartAgent,
    RunFinished,
    RunStarted,
    RunStatus,
    SendNote,
    SetLiveAgents,
    SetRunTimeout,
    SnapshotTaken,
    StartTurn,
    TallyUpdated,
    Tick,
    ToolCallRequested,
    ToolCallResult,
    TurnCorrection,
    TurnFailed,
    TurnStarted,
    VoteProposed,
)
from massgen.messages.files import ToolDenied
from massgen.messages.protocols import AgentReport, RunControl, SupervisorInbox, TurnReport, members
from massgen.messages.supervision import FailureWhere

if TYPE_CHECKING:
    from massgen.files import RunFiles

_STOP_GRACE_S = 3.0


@dataclass(frozen=True)
class RunSpec:
    """Everything a run needs that is not the config: the question and where logs go."""

    run_id: str
    question: str
    log_dir: str
    versions: dict[str, str]
    history: tuple[tuple[str, str], ...] = ()
    tick_interval_s: float = 0.05
    turn: int = 1
    attempt: int = 1
    # Resuming: the state rebuilt from the trace of the attempt it continues, and where that logged.
    resume: ResumeState | None = None
    resumed_from: str | None = None
    # Workspaces, snapshots and context paths (massgen/files); None when no agent works with files.
    files: RunFiles | None = None
    # Set once the supervisor has stopped its children (agents, MCP servers and their processes).
    # Pykka sets ``actor_stopped`` *before* on_stop runs, so waiting for that is not enough.
    children_stopped: threading.Event = field(default_factory=threading.Event, compare=False, repr=False)
    # Set once RunFinished is handed to the trace writer (which may still have a backlog to write).
    finish_recorded: threading.Event = field(default_factory=threading.Event, compare=False, repr=False)


class Supervisor(TracedActor[SupervisorInbox]):
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
        self.tally: TallyUpdated | None = None
        self.phase: Literal["coordinating", "presenting", "finished"] = "coordinating"
        self.presenter: str | None = None
        self.winner: str | None = None
        self.started = ctx.clock()
        self.deadline = self.started + self.timeouts.orchestrator_timeout_seconds
        self._turn_ids = itertools.count(1)
        # Agents whose first turn ended (an answer or a vote). Until every live agent's has, an agent
        # that already answered waits: a turn that shows it only its own answer is a wasted call.
        self.first_done: set[str] = set()
        self.waiting: set[str] = set()
        self.judge: Peer | None = None
        self._ticker: Ticker | None = None
        # MCP tool servers: started, routed, restarted and withdrawn by actors/mcp/supervision.py.
        self.mcp = McpSupervision(ActorPort(self), specs, self.rules.restart, self._live_agent)
        self.notes = NoteBoard(order)  # notes from the user, until each agent has them

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
        judge_ref = Judge.start(self.ctx, me, list(self.children))
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
                if message.info.get("outcome") == "circuit_open":
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
                self._agent_failed(child, message.reason, "worker")
            case FinalPresented():
                if child.spec.agent_id == self.presenter:
                    self._presented(message.content)
                else:
                    self.dead_letter(message, f"{child.spec.agent_id} is not presenting")
            case ToolDenied():
                pass  # the model got a tool error; the denial is in the trace for the logs
            case _ as unreachable:
                assert_never(unreachable)

    # -- coordination ---------------------------------------------------------------------------

    def _start_turn(self, child: Child) -> None:
        assert child.peer is not None
        turn_id = next(self._turn_ids)
        vote_only = self.coord.vote_only(child.spec.agent_id)
        redo, child.resume_turn = child.resume_turn, None
        if redo is not None:  # resumed mid-turn: that turn again, as it was, then what came since
            view, vote_only = redo
        else:
            # A first turn shows no answers, however late the agent starts: first answers are independent
            # samples, and the judge counts their agreement as evidence (actors/judge.py).
            first = child.spec.agent_id not in self.first_done and not vote_only
            view = AnswerView() if first else self.coord.view()
        child.status, child.turn_id = "in_turn", turn_id
        child.since = child.last_activity = self.ctx.clock()
        self.waiting.discard(child.spec.agent_id)
        self.record(TurnStarted(
            agent=child.spec.agent_id, incarnation=child.incarnation, turn_id=turn_id,
            vote_only=vote_only, view_labels=tuple(a.label for a in view.answers),
        ))
        for note_id, text in self.notes.pending(child.spec.agent_id):  # before the turn: its first call has them
            self.tell(child.peer, InjectNote(turn_id=turn_id, note_id=note_id, text=text))
        self.tell(child.peer, StartTurn(turn_id=turn_id, task=self.run.question, history=self.run.history,
                                        view=view, vote_only=vote_only, own_label=child.spec.label))
        if view.version != self.coord.version and self.coord.count(child.spec.agent_id) > 0:
            self.tell(child.peer, InjectAnswers(turn_id=turn_id, view=self.coord.view()))

    def _on_answer(self, child: Child, message: AnswerProposed) -> None:
        agent_id = child.spec.agent_id
        child.status = "idle"
        if self.phase != "coordinating":
            return
        if self.coord.vote_only(agent_id):
            self._start_turn(child)  # a cap was reached while this turn ran
            return
        answer = self.coord.add_answer(agent_id, message.content, independent=message.view_version == 0)
        self.first_done.add(agent_id)
        self.record(AnswerAccepted(agent=agent_id, label=answer.label, content=answer.content,
                                   round=self.coord.version, result=answer.result, independent=answer.independent))
        taken = self.run.files.snapshot(agent_id, answer.label) if self.run.files else None
        if taken is not None:  # before anyone is shown the answer, so its files are there to read
            self.record(SnapshotTaken(**taken))
        assert self.judge is not None
        self.tell(self.judge, InvalidateVotes(reason=f"new answer {answer.label}", round=self.coord.version,
                                              answers=self.coord.results()))
        view = self.coord.view()
        for other in self.children.values():
            if other is child or other.peer is None:
                continue
            if other.status == "idle":
                self._next_turn(other)
            elif other.status == "in_turn" and other.turn_id is not None and self.coord.count(other.spec.agent_id) > 0:
                self.tell(other.peer, InjectAnswers(turn_id=other.turn_id, view=view))
        self._next_turn(child)

    def _awaiting_first_turns(self) -> bool:
        return any(agent not in self.first_done and c.status != "failed" for agent, c in self.children.items())

    def _next_turn(self, child: Child) -> None:
        """A new turn now, or once every live agent has ended its first (independent) turn."""
        if child.spec.agent_id in self.first_done and self._awaiting_first_turns():
            child.status = "idle"
            self.waiting.add(child.spec.agent_id)
            self._watch_stragglers()
        else:
            self._start_turn(child)

    def _watch_stragglers(self, converged: bool = False) -> None:
        """Done: voted this round, or answered and waiting for the others' first answers."""
        tally = self.tally
        voters = {v.voter for v in tally.votes} if tally is not None and tally.round == self.coord.version else set()
        live = [a for a, c in self.children.items() if c.status != "failed"]
        self.stragglers.observe(voters | self.waiting, live, self.coord.version, self.ctx.clock(), converged)

    def _release_waiting(self) -> None:
        if self.phase != "coordinating" or self._awaiting_first_turns():
            return
        for agent in [a for a in self.children if a in self.waiting]:
            child = self.children[agent]
            if child.status == "idle" and child.peer is not None:
                self._start_turn(child)
        self.waiting.clear()

    def _on_vote(self, child: Child, message: VoteProposed) -> None:
        child.status = "idle"
        if self.phase != "coordinating":
            return
        target = self.coord.agent_of_label(message.target)
        answer = self.coord.latest(target) if target else None
        if message.view_version != self.coord.version or answer is None or target is None:
            self._start_turn(child)  # voted on an outdated view: look again
            return
        assert self.judge is not None
        self.first_done.add(child.spec.agent_id)
        self.tell(self.judge, RecordVote(voter=child.spec.agent_id, target=target, target_label=answer.label,
                                         reason=message.reason, round=self.coord.version, target_result=answer.result,
                                         agreement=message.agreement is not None))
        self._release_waiting()

    def _on_tally(self, tally: TallyUpdated) -> None:
        self.tally = tally
        self._watch_stragglers(tally.converged)
        if tally.converged and tally.round == self.coord.version and tally.winner and self.phase == "coordinating":
            self._conclude(tally.winner)

    def _answer_now(self) -> None:
        self.coord.answer_now = True
        self.first_done.update(self.children)
        self._release_waiting()
        for child in self.children.values():
            if child.status == "in_turn" and child.peer is not None and child.turn_id is not None \
                    and self.coord.answers:
                self.tell(child.peer, CancelTurn(turn_id=child.turn_id, reason="answer now"))
                self._start_turn(child)

    def _conclude(self, winner: str) -> None:
        self.winner = winner
        child = self.children[winner]
        strategy = self.rules.final_answer_strategy
        if strategy == "winner_reuse" or child.status == "failed" or child.peer is None:
            self._finish("completed", "the team converged")
            return
        self.phase, self.presenter = "presenting", winner
        for other in self.children.values():
            if other.status == "in_turn" and other.peer is not None:
                if other.turn_id is not None:  # always, in a turn
                    self.tell(other.peer, CancelTurn(turn_id=other.turn_id, reason="the team converged"))
                other.status = "idle"
        turn_id = next(self._turn_ids)
        child.status, child.turn_id = "presenting", turn_id
        child.since = child.last_activity = self.ctx.clock()
        assert self.tally is not None
        self.tell(child.peer, PresentFinal(turn_id=turn_id, task=self.run.question, history=self.run.history,
                                           view=self.coord.view(), votes=self.tally.votes, strategy=strategy,
                                           own_label=child.spec.label))

    def _presented(self, text: str) -> None:
        """A presentation may reword the winning answer, never change the result the team agreed on."""
        chosen = self.coord.latest(self.winner) if self.winner else None
        agreed = explicit_result(chosen.content) if chosen else ""
        if self.rules.final_answer_strategy == "winner_present" and agreed and final_result(text) != agreed:
            self._finish("completed", f"the team converged; the presentation changed the final answer"
                         f" ({agreed!r} to {final_result(text)!r}), so the winning answer is used as written")
            return
        self._finish("completed", "the team converged", final=text or None)

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

    # -- failures and restarts ------------------------------------------------------------------

    def _agent_failed(self, child: Child, reason: str, where: FailureWhere, reported: bool = False,
                      permanent: bool = False) -> None:
        if child.status in ("failed", "restarting") or self.phase == "finished":
            return
        now = self.ctx.clock()
        if child.peer is not None:
            child.peer.ref.stop(block=False)  # a hung incarnation never reads it: it is abandoned
        if self.phase == "presenting" and child.spec.agent_id == self.presenter:
            self._finish("completed", f"the team converged; presentation failed ({reason})")
            return
        child.last_error = reason
        if not reported:
            self.record(ChildFailed(name=child.spec.agent_id, incarnation=child.incarnation,
                                    error=reason, where=where))
        delay = None if permanent else child.history.record_failure(now)
        if delay is not None:
            delay = max(delay, child.not_before - now)  # restarting into an open breaker only fails again
        if delay is None:
            child.status = "failed"
            self.record(AgentMarkedFailed(name=child.spec.agent_id, incarnation=child.incarnation,
                                          reason=f"permanent error: {reason}" if permanent
                                          else f"too many failures; last: {reason}"))
            live = tuple(a for a, c in self.children.items() if c.status != "failed")
            assert self.judge is not None
            self.tell(self.judge, SetLiveAgents(agents=live))
            if not live:
                self._all_failed()
            else:
                self._release_waiting()
            return
        child.status, child.restart_at = "restarting", now + delay
        self.record(AgentRestarting(name=child.spec.agent_id, incarnation=child.incarnation,
                                    delay_s=round(delay, 3), reason=reason))

    def _all_failed(self) -> None:
        causes = "; ".join(f"{a}: {c.last_error}" for a, c in self.children.items() if c.last_error)
        if self.coord.answers:
            self._finish("partial", f"every agent failed before the team converged ({causes})")
        else:
            self._finish("failed", f"every agent failed and no agent produced an answer ({causes})")

    # -- time -----------------------------------------------------------------------------------

    def _on_tick(self, now: float) -> None:
        if self.phase == "finished":
            return
        if now >= self.deadline:
            limit = self.deadline - self.started
            self.record(DeadlineExpired(scope="run", detail=f"{limit:g} s"))
            self._finish("timeout", f"the run deadline of {limit:g} s passed")
            return
        for agent_id in self.stragglers.due(now, self.coord.version):
            self._drop_straggler(self.children[agent_id], now)
        for agent_id in self.mcp.on_tick(now):  # a tool call in flight is activity; it has its own deadline
            self.children[agent_id].last_activity = now
        for child in list(self.children.values()):
            due = overdue(child, now, self.timeouts)
            if self._over() or due is None:  # a deadline of an earlier child may have ended the run
                continue
            what, detail = due
            if what == "restart":
                self._spawn(child)
            elif what == "stopped":
                self._agent_failed(child, detail, "stopped")
            elif what == "present":
                self.record(DeadlineExpired(scope="present", name=child.spec.agent_id, detail=detail))
                self._finish("completed", "the team converged; presentation timed out")
            else:
                self._expire(child, what, detail)

    def _drop_straggler(self, child: Child, now: float) -> None:
        """Every other agent voted and the grace ran out: this agent is failed for the round."""
        if child.status == "failed" or self.phase != "coordinating":
            return
        doing = {"in_turn": "still in its turn", "restarting": "restarting", "starting": "starting"}
        detail = (f"no vote {self.timeouts.straggler_grace_seconds:g} s after every other agent was done; "
                  f"{doing.get(child.status, child.status)} for {now - child.since:.1f} s, "
                  f"last output {now - child.last_activity:.1f} s ago")
        if child.last_error:
            detail += f"; last error: {child.last_error}"
        self.record(DeadlineExpired(scope="straggler", name=child.spec.agent_id, detail=detail))
        if child.peer is not None:
            child.peer.ref.stop(block=False)
        child.status = "failed"
        self.record(AgentMarkedFailed(name=child.spec.agent_id, incarnation=child.incarnation,
                                      reason=f"straggler: {detail}"))
        assert self.judge is not None
        self.tell(self.judge, SetLiveAgents(agents=tuple(a for a, c in self.children.items() if c.status != "failed")))
        self._release_waiting()  # the others may have been waiting for this agent's first answer

    def _expire(self, child: Child, scope: Literal["start", "turn", "idle"], detail: str) -> None:
        self.record(DeadlineExpired(scope=scope, name=child.spec.agent_id, detail=detail))
        if child.peer is not None and child.turn_id is not None and scope != "start":
            self.tell(child.peer, CancelTurn(turn_id=child.turn_id, reason=detail))
        self._agent_failed(child, detail, "deadline")

    def _over(self) -> bool:
        return self.phase == "finished"

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
            status = "failed"
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
