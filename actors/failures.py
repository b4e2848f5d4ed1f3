"""Failures, restarts and deadlines: what the supervisor does when a child fails or time runs out.

One failure path for every cause (a report, a crash, a deadline, a lost node, the user):
stop the incarnation, record why, then restart it with backoff or, past the restart
intensity, mark the agent failed and tell the judge the new live set. Deadlines are
checked on every ``Tick``; a hung incarnation is abandoned, never waited for.
"""

from __future__ import annotations

from typing import Literal

from massgen.actors.children import Child, overdue
from massgen.actors.supervisor_state import SupervisorState
from massgen.messages import (
    AgentExcluded,
    AgentMarkedFailed,
    AgentRejoined,
    AgentRestarting,
    CancelTurn,
    ChildFailed,
    DeadlineExpired,
    FinishRound,
    SetLiveAgents,
)
from massgen.messages.supervision import FailureWhere


class FailureHandling(SupervisorState):
    def _agent_failed(self, child: Child, reason: str, where: FailureWhere, reported: bool = False,
                      permanent: bool = False, exhausted: bool = False) -> None:
        """``exhausted``: the incarnation already tried, and failed, as often as a turn may (a
        ``TurnFailed``: every attempt at a valid workflow call failed). A restart would send the
        same prompt again, so while other agents can go on the agent is given up on at once."""
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
        others_go_on = self._others_go_on(child)
        given_up = exhausted and others_go_on
        delay = None if permanent or given_up else child.history.record_failure(now)
        if delay is not None:
            delay = max(delay, child.not_before - now)  # restarting into an open breaker only fails again
        if delay is None:
            child.status = "failed"
            why = (f"permanent error: {reason}" if permanent
                   else f"the same fault on every attempt of its turn, so not restarted: {reason}" if given_up
                   else f"too many failures; last: {reason}")
            self.record(AgentMarkedFailed(name=child.spec.agent_id, incarnation=child.incarnation, reason=why))
            live = tuple(a for a, c in self.children.items() if c.status != "failed")
            assert self.judge is not None
            self.tell(self.judge, SetLiveAgents(agents=self._counted()))
            if not live:
                self._all_failed()
            else:
                self._release_waiting()
            return
        child.status, child.restart_at = "restarting", now + delay
        self.record(AgentRestarting(name=child.spec.agent_id, incarnation=child.incarnation,
                                    delay_s=round(delay, 3), reason=reason))
        circuit_wait = child.not_before - now  # the restart waits this long for an open breaker
        if others_go_on and circuit_wait >= max(delay - 0.001, min(1.0, self.timeouts.straggler_grace_seconds)):
            self._leave_out(child, f"restarting only in {delay:.1f} s (its endpoint's circuit is open): "
                                   "the others go on without it")

    def _others_go_on(self, child: Child) -> bool:
        """Whether another agent is live and counted: the team can converge without ``child``."""
        return any(c.status not in ("failed", "restarting") and self.stragglers.counted(a)
                   for a, c in self.children.items() if c is not child)

    def _leave_out(self, child: Child, reason: str) -> None:
        """Leave ``child`` out of the round now, as a straggler (it rejoins when it answers or votes):
        waiting the straggler grace for an agent that cannot even start before it is only lost time."""
        if self.phase != "coordinating" or not self.stragglers.counted(child.spec.agent_id):
            return
        self.stragglers.exclude(child.spec.agent_id, self.coord.version)
        self.record(AgentExcluded(name=child.spec.agent_id, incarnation=child.incarnation,
                                  round=self.coord.version, reason=reason))
        assert self.judge is not None
        self.tell(self.judge, SetLiveAgents(agents=self._counted()))
        self._release_waiting()

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
            due = overdue(child, now, self.timeouts, answered=self.coord.count(child.spec.agent_id) > 0)
            if self._over() or due is None:  # a deadline of an earlier child may have ended the run
                continue
            what, detail = due
            if what == "restart":
                self._spawn(child)
            elif what == "stopped":
                self._agent_failed(child, detail, "stopped")
            elif what == "finish":
                self._ask_to_finish(child, now)
            elif what == "present":
                self.record(DeadlineExpired(scope="present", name=child.spec.agent_id, detail=detail))
                self._finish("completed", "the team converged; presentation timed out")
            else:
                self._expire(child, what, detail)

    def _drop_straggler(self, child: Child, now: float) -> None:
        """Every other agent voted and the grace ran out: this agent is left out of the round
        (actors/stragglers.py); its turn goes on, and an answer or vote from it rejoins it."""
        if child.status == "failed" or self.phase != "coordinating":
            return
        doing = {"in_turn": "still in its turn", "restarting": "restarting", "starting": "starting"}
        detail = (f"no vote {self.timeouts.straggler_grace_seconds:g} s after every other agent was done; "
                  f"{doing.get(child.status, child.status)} for {now - child.since:.1f} s, "
                  f"last output {now - child.last_activity:.1f} s ago")
        if child.last_error:
            detail += f"; last error: {child.last_error}"
        self.record(DeadlineExpired(scope="straggler", name=child.spec.agent_id, detail=detail))
        self.stragglers.exclude(child.spec.agent_id, self.coord.version)
        self.record(AgentExcluded(name=child.spec.agent_id, incarnation=child.incarnation,
                                  round=self.coord.version, reason=f"straggler: {detail}"))
        assert self.judge is not None
        self.tell(self.judge, SetLiveAgents(agents=self._counted()))
        self._release_waiting()  # the others may have been waiting for this agent's first answer

    def _rejoin(self, child: Child) -> None:
        """A straggler that answers or votes counts again, from the round it answers in."""
        excluded_round = self.stragglers.rejoin(child.spec.agent_id)
        if excluded_round is None:
            return
        self.record(AgentRejoined(name=child.spec.agent_id, incarnation=child.incarnation,
                                  excluded_round=excluded_round, round=self.coord.version))
        assert self.judge is not None
        self.tell(self.judge, SetLiveAgents(agents=self._counted()))

    def _ask_to_finish(self, child: Child, now: float) -> None:
        """Past its round's soft timeout: the agent is told to submit what it has; its turn goes on
        until the grace has passed (then ``overdue`` says "turn" and it is cut like any late turn)."""
        if child.peer is None or child.turn_id is None:
            return
        answered = self.coord.count(child.spec.agent_id) > 0
        soft = self.timeouts.round_timeout(answered)
        if soft is None:
            return
        child.finish_sent = (child.turn_id, now)
        self.tell(child.peer, FinishRound(turn_id=child.turn_id, first_round=not answered,
                                          elapsed_s=round(now - child.since, 3), timeout_s=soft,
                                          grace_s=self.timeouts.round_timeout_grace_seconds))

    def _expire(self, child: Child, scope: Literal["start", "turn", "idle"], detail: str) -> None:
        self.record(DeadlineExpired(scope=scope, name=child.spec.agent_id, detail=detail))
        if child.peer is not None and child.turn_id is not None and scope != "start":
            self.tell(child.peer, CancelTurn(turn_id=child.turn_id, reason=detail))
        self._agent_failed(child, detail, "deadline")

    def _over(self) -> bool:
        return self.phase == "finished"
