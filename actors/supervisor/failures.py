"""Failures, restarts and deadlines: what the supervisor does when a child fails or time runs out.

One failure path for every cause (a report, a crash, a deadline, a lost node, the user):
stop the incarnation, record why, then restart it with backoff or, past the restart
intensity, mark the agent failed and tell the judge the new live set. Deadlines are
checked on every ``Tick``; a hung incarnation is abandoned, never waited for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from massgen.actors.runtime.port import Clock, DownReason, Runtime
from massgen.actors.supervisor.children import CIRCUIT_FAILURES_TO_GIVE_UP, Child, overdue
from massgen.actors.supervisor.ending import RunEnding
from massgen.actors.supervisor.mcp_servers import McpSupervision
from massgen.actors.supervisor.state import Emitter, SupervisorState
from massgen.actors.supervisor.turn_handout import TurnHandout
from massgen.messages import (
    AgentExcluded,
    AgentMarkedFailed,
    AgentRestarting,
    CancelTurn,
    ChildFailed,
    DeadlineExpired,
    FinishRound,
    SetLiveAgents,
)
from massgen.messages.supervision import FailureWhere


class FailureHandling:
    def __init__(self, state: SupervisorState, out: Emitter, clock: Clock, *, handout: TurnHandout,
                 ending: RunEnding, spawn: Callable[[Child], None], mcp: McpSupervision,
                 runtime: Runtime) -> None:
        """``spawn``: start the child's next incarnation (a restart that is due); ``mcp``: its
        deadlines are checked on the same ``Tick``; ``runtime``: why a stopped child went away."""
        self.state, self.out, self.clock = state, out, clock
        self.handout, self.ending, self.spawn, self.mcp = handout, ending, spawn, mcp
        self.runtime = runtime

    def agent_failed(self, child: Child, reason: str, where: FailureWhere, reported: bool = False,
                     permanent: bool = False, exhausted: bool = False) -> None:
        """``exhausted``: the incarnation already tried, and failed, as often as a turn may (a
        ``TurnFailed``: every attempt at a valid workflow call failed). A restart would send the
        same prompt again, so while other agents can go on the agent is given up on at once."""
        state = self.state
        if child.status in ("failed", "restarting") or state.finished:
            return
        now = self.clock()
        if child.peer is not None:
            child.peer.ref.stop(block=False)  # a hung incarnation never reads it: it is abandoned
        if state.phase == "presenting" and child.spec.agent_id == state.presenter:
            self.ending.finish("completed", f"the team converged; presentation failed ({reason})",
                               presentation_not_used=f"the presentation failed ({reason})")
            return
        child.last_error = reason
        if not reported:
            self.out.record(ChildFailed(name=child.spec.agent_id, incarnation=child.incarnation,
                                        error=reason, where=where))
        others_go_on = self._others_go_on(child)
        given_up = exhausted and others_go_on
        # An open circuit at this failure: the endpoint failed every attempt of a call (or a probe).
        child.circuit_failures = child.circuit_failures + 1 if child.not_before > now else 0
        unreachable = child.circuit_failures >= CIRCUIT_FAILURES_TO_GIVE_UP
        child.silent_failures += 1
        silent = child.silent_failures > child.history.policy.max_restarts
        delay = (None if permanent or given_up or unreachable or silent
                 else child.history.record_failure(now))
        if delay is not None:
            delay = max(delay, child.not_before - now)  # restarting into an open breaker only fails again
        if delay is None:
            child.status = "failed"
            why = (f"permanent error: {reason}" if permanent
                   else f"the same fault on every attempt of its turn, so not restarted: {reason}" if given_up
                   else self._unreachable(child, reason) if unreachable
                   else self._silent(child, reason) if silent
                   else f"too many failures; last: {reason}")
            if unreachable or silent:  # the run's end names the endpoint and why, not only the last cut
                child.last_error = why
            self.out.record(AgentMarkedFailed(name=child.spec.agent_id, incarnation=child.incarnation, reason=why))
            live = tuple(a for a, c in state.children.items() if c.status != "failed")
            assert state.judge is not None
            self.out.tell(state.judge, SetLiveAgents(agents=state.counted()))
            if not live:
                self.ending.all_failed()
            else:
                self.handout.release_waiting()
            return
        child.status, child.restart_at = "restarting", now + delay
        state.schedule(child)
        self.out.record(AgentRestarting(name=child.spec.agent_id, incarnation=child.incarnation,
                                        delay_s=round(delay, 3), reason=reason))
        circuit_wait = child.not_before - now  # the restart waits this long for an open breaker
        if others_go_on and circuit_wait >= max(delay - 0.001, min(1.0, state.timeouts.straggler_grace_seconds)):
            self._leave_out(child, f"restarting only in {delay:.1f} s (its endpoint's circuit is open): "
                                   "the others go on without it")

    @staticmethod
    def _unreachable(child: Child, reason: str) -> str:
        """Why an agent whose circuit stayed open is failed: its endpoint and that endpoint's own error."""
        endpoint = child.endpoint or "its endpoint"
        cause = child.endpoint_error or reason
        return (f"endpoint {endpoint} unreachable: still failing after its circuit breaker's cool-down "
                f"(last error: {cause})")

    @staticmethod
    def _silent(child: Child, reason: str) -> str:
        """Why an agent whose model said nothing in every incarnation is failed, however far apart."""
        url = child.spec.config.backend.base_url
        at = f" at {url}" if url else ""
        return (f"no output from its model{at} in {child.silent_failures} incarnations in a row, "
                f"so not restarted again; last: {reason}")

    def _others_go_on(self, child: Child) -> bool:
        """Whether another agent is live and counted: the team can converge without ``child``."""
        state = self.state
        return any(c.status not in ("failed", "restarting", "reserve") and state.stragglers.counted(a)
                   for a, c in state.children.items() if c is not child)

    def _leave_out(self, child: Child, reason: str) -> None:
        """Leave ``child`` out of the round now, as a straggler (it rejoins when it answers or votes):
        waiting the straggler grace for an agent that cannot even start before it is only lost time."""
        state = self.state
        if state.phase != "coordinating" or not state.stragglers.counted(child.spec.agent_id):
            return
        state.exclude(child.spec.agent_id, state.coord.version)
        self.out.record(AgentExcluded(name=child.spec.agent_id, incarnation=child.incarnation,
                                      round=state.coord.version, reason=reason))
        assert state.judge is not None
        self.out.tell(state.judge, SetLiveAgents(agents=state.counted()))
        self.handout.release_waiting()

    # -- time -----------------------------------------------------------------------------------

    def on_tick(self, now: float) -> None:
        state = self.state
        if state.finished:
            return
        if now >= state.deadline:
            limit = state.deadline - state.started
            self.out.record(DeadlineExpired(scope="run", detail=f"{limit:g} s"))
            self.ending.finish("timeout", f"the run deadline of {limit:g} s passed")
            return
        for agent_id in state.stragglers.due(now, state.coord.version):
            self._drop_straggler(state.children[agent_id], now)
        for agent_id in self.mcp.on_tick(now):  # a tool call in flight is activity; it has its own deadline
            state.children[agent_id].last_activity = now
        # The agents whose earliest deadline has come, and this tick's share of the sweep for a stop nobody
        # reported (every agent, over one or more ticks, once a second at most), in config order.
        agents = set(state.deadlines.due(now)).union(state.deadlines.sweep(now, state.order))
        for agent_id in sorted(agents, key=state.place.__getitem__):
            child = state.children[agent_id]
            due = overdue(child, now, state.timeouts, answered=state.coord.count(agent_id) > 0,
                          command_s=state.command_seconds())
            if state.finished:  # a deadline of an earlier child may have ended the run
                return
            if due is None:
                state.schedule(child)  # not yet: its next check
                continue
            what, detail = due
            if what == "restart":
                self.spawn(child)
            elif what == "stopped":
                self._stopped(child, detail)
            elif what == "finish":
                self._ask_to_finish(child, now)
            elif what == "present":
                self.out.record(DeadlineExpired(scope="present", name=child.spec.agent_id, detail=detail))
                self.ending.finish("completed", "the team converged; presentation timed out",
                                   presentation_not_used=f"the presentation timed out ({detail})")
            else:
                self._expire(child, what, detail)
            state.schedule(child)  # after acting: a restart begun, a turn told to finish, ...

    def _stopped(self, child: Child, detail: str) -> None:
        """The child's ref is stopped and no failure was reported. If the runtime lost it, its
        ``Down`` may still sit behind this ``Tick``: record the cause the ``Down`` carries (the
        ``Down`` then finds the incarnation failed already and changes nothing)."""
        assert child.peer is not None
        cause = self.runtime.down_cause(child.peer.ref)
        if cause is None:
            self.agent_failed(child, detail, "stopped")
        else:
            self.agent_lost(child, *cause)

    def agent_lost(self, child: Child, reason: DownReason, detail: str) -> None:
        """The runtime lost the child's current incarnation (its ``Down``, or its cause seen first)."""
        self.agent_failed(child, f"{reason}: {detail}", "down")

    def _drop_straggler(self, child: Child, now: float) -> None:
        """Every other agent voted and the grace ran out: this agent is left out of the round
        (actors/supervisor/stragglers.py); its turn goes on, and an answer or vote from it rejoins it."""
        state = self.state
        if child.status == "failed" or state.phase != "coordinating":
            return
        doing = {"in_turn": "still in its turn", "restarting": "restarting", "starting": "starting"}
        detail = (f"no vote {state.timeouts.straggler_grace_seconds:g} s after every other agent was done; "
                  f"{doing.get(child.status, child.status)} for {now - child.since:.1f} s, "
                  f"last output {now - child.last_activity:.1f} s ago")
        if child.last_error:
            detail += f"; last error: {child.last_error}"
        self.out.record(DeadlineExpired(scope="straggler", name=child.spec.agent_id, detail=detail))
        state.exclude(child.spec.agent_id, state.coord.version)
        self.out.record(AgentExcluded(name=child.spec.agent_id, incarnation=child.incarnation,
                                      round=state.coord.version, reason=f"straggler: {detail}"))
        assert state.judge is not None
        self.out.tell(state.judge, SetLiveAgents(agents=state.counted()))
        self.handout.release_waiting()  # the others may have been waiting for this agent's first answer

    def _ask_to_finish(self, child: Child, now: float) -> None:
        """Past its round's soft timeout: the agent is told to submit what it has; its turn goes on
        until the grace has passed (then ``overdue`` says "turn" and it is cut like any late turn)."""
        state = self.state
        if child.peer is None or child.turn_id is None:
            return
        answered = state.coord.count(child.spec.agent_id) > 0
        soft = state.timeouts.round_timeout(answered)
        if soft is None:
            return
        child.finish_sent = (child.turn_id, now)
        self.out.tell(child.peer, FinishRound(turn_id=child.turn_id, first_round=not answered,
                                              elapsed_s=round(now - child.since, 3), timeout_s=soft,
                                              grace_s=state.timeouts.round_timeout_grace_seconds))

    def _expire(self, child: Child, scope: Literal["start", "turn", "idle"], detail: str) -> None:
        self.out.record(DeadlineExpired(scope=scope, name=child.spec.agent_id, detail=detail))
        if child.peer is not None and child.turn_id is not None and scope != "start":
            self.out.tell(child.peer, CancelTurn(turn_id=child.turn_id, reason=detail))
        self.agent_failed(child, detail, "deadline")
