"""Handing out turns: the supervisor's coordination rules, one agent report at a time.

Who takes a turn and with which answers in view; when an answer invalidates the round;
when an agent waits for the others' first (independent) answers; when a vote is cast or
the agent must look again; when the team has converged and who presents. The rules on
answers themselves (labels, caps, views) are ``actors/coordination/answers.py``; the winner is
the judge's (``actors/coordination/judge.py``, deciding by ``actors/coordination/decision.py``), the first
answers' included: once they are all in, the turns wait for its ruling (``FirstAnswersIn``,
``FirstAnswersJudged``). A straggler that answers or votes counts again here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from massgen.actors.coordination.decision import MAX_PENDING
from massgen.actors.coordination.presentation import presentation_change
from massgen.actors.coordination.results import explicit_result, stated_result
from massgen.actors.runtime.port import Clock
from massgen.actors.supervisor.children import Child
from massgen.actors.supervisor.ending import RunEnding
from massgen.actors.supervisor.snapshotting import Snapshotting
from massgen.actors.supervisor.state import Emitter, SupervisorState
from massgen.files import RunFiles
from massgen.messages import (
    AgentRejoined,
    AnswerAccepted,
    AnswerProposed,
    AnswerView,
    CancelTurn,
    FirstAnswersIn,
    FirstAnswersJudged,
    InjectAnswers,
    InjectNote,
    InvalidateVotes,
    PresentFinal,
    RecordVote,
    SetLiveAgents,
    SnapshotReady,
    SnapshotTaken,
    StartTurn,
    TallyUpdated,
    TurnStarted,
    VoteProposed,
)


class TurnHandout:
    def __init__(self, state: SupervisorState, out: Emitter, clock: Clock, ending: RunEnding,
                 snapshots: Snapshotting, spawn: Callable[[Child], None]) -> None:
        """``snapshots``: an answer's workspace is copied there, off this thread, before it is accepted;
        ``spawn`` starts an agent's incarnation (a reserve agent, when the judge asks for it)."""
        self.state, self.out, self.clock, self.ending = state, out, clock, ending
        self.snapshots, self.spawn = snapshots, spawn

    def start_turn(self, child: Child) -> None:
        state = self.state
        assert child.peer is not None
        turn_id = state.take_turn_id()
        vote_only = state.coord.vote_only(child.spec.agent_id)
        redo, child.resume_turn = child.resume_turn, None
        if redo is not None:  # resumed mid-turn: that turn again, as it was, then what came since
            view, vote_only = redo
        else:
            # A first turn shows no answers, however late the agent starts: first answers are independent
            # samples, and the judge counts their agreement as evidence (actors/coordination/judge.py).
            first = child.spec.agent_id not in state.first_done and not vote_only
            view = AnswerView() if first else state.coord.view_for(child.spec.agent_id)
        child.status, child.turn_id = "in_turn", turn_id
        child.commands.clear()
        child.since = child.last_activity = self.clock()
        state.schedule(child)
        state.stop_waiting(child.spec.agent_id)
        self.out.record(TurnStarted(
            agent=child.spec.agent_id, incarnation=child.incarnation, turn_id=turn_id,
            vote_only=vote_only, view_labels=tuple(a.label for a in view.answers),
        ))
        for note_id, text in state.notes.pending(child.spec.agent_id):  # before the turn: its first call has them
            self.out.tell(child.peer, InjectNote(turn_id=turn_id, note_id=note_id, text=text))
        self.out.tell(child.peer, StartTurn(turn_id=turn_id, task=state.run.question, history=state.run.history,
                                            view=view, vote_only=vote_only, own_label=child.spec.label))
        if view.version != state.coord.version and state.coord.count(child.spec.agent_id) > 0:
            self.out.tell(child.peer, InjectAnswers(turn_id=turn_id, view=state.coord.view_for(child.spec.agent_id)))

    def on_answer(self, child: Child, message: AnswerProposed) -> None:
        state = self.state
        agent_id = child.spec.agent_id
        child.status = "idle"
        if state.phase != "coordinating":
            return
        self._rejoin(child)
        if state.coord.vote_only(agent_id):
            self.start_turn(child)  # a cap was reached while this turn ran
            return
        if self.snapshots.needed(agent_id):  # its files are copied first, off this thread
            child.status = "answering"
            self.snapshots.start(agent_id, message)
            self._watch_stragglers()  # it has done its part: no straggler grace runs for it
            return
        self._accept(child, message, None)

    def snapshot_ready(self, ready: SnapshotReady) -> None:
        """The workspace of an answer is copied: accept the answer now, or drop the copy."""
        state = self.state
        answer = self.snapshots.ready(ready)
        child = state.children.get(ready.agent)
        if answer is None or child is None or child.status != "answering" or state.finished:
            RunFiles.discard_snapshot(ready.staged)  # the agent failed, or the run ended, meanwhile
            return
        child.status = "idle"
        if state.phase != "coordinating" or state.coord.vote_only(ready.agent):
            RunFiles.discard_snapshot(ready.staged)
            if state.phase == "coordinating":
                self.start_turn(child)  # a cap was reached while the copy ran
            return
        self._accept(child, answer, ready.staged)

    def _accept(self, child: Child, message: AnswerProposed, staged: dict[str, Any] | None) -> None:
        state = self.state
        agent_id = child.spec.agent_id
        answer = state.coord.add_answer(agent_id, message.content, independent=message.view_version == 0,
                                        code=message.code_check, computed=message.computed,
                                        program=message.program)
        state.first_turn_ended(agent_id)
        self.out.record(AnswerAccepted(agent=agent_id, label=answer.label, content=answer.content,
                                       round=state.coord.version, result=answer.result,
                                       independent=answer.independent, code_check=answer.code,
                                       computed=answer.computed, program=answer.program))
        if staged is not None and state.run.files is not None:  # in place before anyone is shown the answer
            self.out.record(SnapshotTaken(**state.run.files.place_snapshot(staged, answer.label)))
        assert state.judge is not None
        self.out.tell(state.judge, InvalidateVotes(reason=f"new answer {answer.label}", round=state.coord.version,
                                                   answers=state.coord.results()))
        awaiting = state.awaiting_first_turns()  # one scan per answer, not one per agent (1,000 agents)
        if not awaiting and self._first_answers_in(child, on_answer=True):
            return
        if awaiting and answer.independent:
            self._first_answers_so_far()
        self._hand_out(child, awaiting)

    def _first_answers_so_far(self) -> None:
        """Under ``after_first_answers: decide``, with at most ``MAX_PENDING`` first turns still going: the judge is
        told the first answers so far and who is still to answer (``FirstAnswersIn.pending``), and ends the run if
        none of those answers could change the result. Nothing is held for it: if it says nothing, the turns go
        on as they would have. O(1) while more are pending (a large team)."""
        state = self.state
        if state.rules.after_first_answers != "decide" or state.judging is not None or state.finished \
                or not 0 < len(state.unstarted) <= MAX_PENDING:
            return
        assert state.judge is not None
        pending = {agent: state.children[agent].spec.settings.first_answer == "program"
                   for agent in sorted(state.unstarted, key=state.place.__getitem__)}
        ended = tuple(agent for agent in state.counted() if agent not in pending)
        self.out.tell(state.judge, FirstAnswersIn(round=state.coord.version, agents=ended, on_answer=False,
                                                  pending=pending))

    def _hand_out(self, child: Child | None, awaiting: bool) -> None:
        """After an answer (``child``'s, or the held one's): a new turn for the idle agents, the new answers
        to those mid-turn that already answered, then ``child``'s next turn."""
        state = self.state
        for other in state.children.values():
            if other is child or other.peer is None:
                continue
            if other.status == "idle":
                if awaiting and other.spec.agent_id in state.waiting:
                    continue  # still waiting for the first answers: nothing changes for it
                self.next_turn(other)
            elif other.status == "in_turn" and other.turn_id is not None \
                    and state.coord.count(other.spec.agent_id) > 0:
                view = state.coord.view_for(other.spec.agent_id)
                self.out.tell(other.peer, InjectAnswers(turn_id=other.turn_id, view=view))
        if child is not None:
            self.next_turn(child)

    def _first_answers_in(self, child: Child | None, on_answer: bool) -> bool:
        """Every counted agent has ended its first turn: when the first answers may end the run (under
        ``after_first_answers: decide``, or under ``prior`` while every turn so far gave one answer), tell the
        judge and hold the turns until it rules (``first_answers_judged``). ``child``: the agent whose answer
        completed them, whose next turn is held too."""
        state = self.state
        if state.judging is not None:
            if state.judging[0] == state.coord.version:
                return True  # asked already: the turns wait for that ruling
            state.judging = None  # a newer answer supersedes the ruling still to come
        if state.finished:
            return False
        unanimity = on_answer and state.rules.winner_rule == "prior" and state.coord.version == len(state.first_done)
        if not unanimity and state.rules.after_first_answers != "decide":
            return False
        assert state.judge is not None
        state.judging = (state.coord.version, child.spec.agent_id if child is not None else None)
        self.out.tell(state.judge, FirstAnswersIn(round=state.coord.version, agents=state.counted(),
                                                  on_answer=unanimity))
        return True

    def first_answers_judged(self, ruling: FirstAnswersJudged) -> None:
        """The judge ruled on the first answers: its winner presents, or the held turns are handed out."""
        state = self.state
        if ruling.early:  # on the first answers so far, nothing held for it; no answer since can change its result
            if ruling.winner is not None and state.phase == "coordinating":
                state.judging = None
                self._conclude(ruling.winner)
            return
        if state.judging is None or state.judging[0] != ruling.round:
            return  # a ruling on answers a newer answer has superseded: that answer's turns went out
        _round, held = state.judging
        state.judging = None
        if state.phase != "coordinating":
            return
        if ruling.winner is not None:
            self._conclude(ruling.winner)
            return
        child = state.children.get(held) if held is not None else None
        reserve = state.children.get(ruling.ask) if ruling.ask is not None else None
        if reserve is not None and reserve.status == "reserve":
            # The first answers disagree: the reserve agent gives its first answer, and the turns wait for it
            # (it is counted now); the judge rules again once it is in.
            reserve.status = "starting"
            self.spawn(reserve)
            if child is not None:
                self.next_turn(child)
            return
        if child is not None:
            self._hand_out(child, state.awaiting_first_turns())
        else:
            self._start_waiting()
        if state.tally is not None:
            self.on_tally(state.tally)  # a round that converged while the ruling was awaited ends now

    def next_turn(self, child: Child) -> None:
        """A new turn now, or once every live agent has ended its first (independent) turn."""
        state = self.state
        if child.spec.agent_id in state.first_done and state.awaiting_first_turns():
            child.status = "idle"
            state.wait(child.spec.agent_id)
            self._watch_stragglers()
        else:
            self.start_turn(child)

    def _watch_stragglers(self, converged: bool = False) -> None:
        """Done: voted this round, or answered and waiting for the others' first answers, or answering (its answer
        waits for its snapshot: the copy is bounded, not late), or held (its next turn waits for the judge's
        ruling on the first answers). The state keeps who is missing as it changes: O(1) a call (issue 51)."""
        state = self.state
        state.sync_votes()  # an answer since the last tally: that tally's votes are of an earlier round
        state.stragglers.observe(len(state.live), state.missing, state.coord.version, self.clock(), converged)

    def release_waiting(self) -> None:
        """Start the turns of the agents that waited, once no live agent's first turn is still to end."""
        state = self.state
        if state.phase != "coordinating" or state.awaiting_first_turns():
            return
        if self._first_answers_in(None, on_answer=False):  # an agent's first turn ended in failure: the judge rules
            return
        self._start_waiting()

    def _start_waiting(self) -> None:
        state = self.state
        for agent in sorted(state.waiting, key=state.place.__getitem__):  # in config order
            child = state.children[agent]
            if child.status == "idle" and child.peer is not None:
                self.start_turn(child)
            state.stop_waiting(agent)

    def on_vote(self, child: Child, message: VoteProposed) -> None:
        state = self.state
        child.status = "idle"
        if state.phase != "coordinating":
            return
        self._rejoin(child)
        target = state.coord.agent_of_label(message.target)
        answer = state.coord.latest(target) if target else None
        if message.view_version != state.coord.version or answer is None or target is None:
            self.start_turn(child)  # voted on an outdated view: look again
            return
        assert state.judge is not None
        state.first_turn_ended(child.spec.agent_id)
        # The voter's own result is comparable only with a target that states one: a vote on an essay
        # whose reasoning happens to end in a number is a plain vote.
        # A code answer's result is its behaviour on the task's examples, which no vote's text states; a voter
        # that ran the answers (checked) computed it.
        own = message.own_result if (stated_result(answer.content) if answer.code is None else message.checked) else ""
        self.out.tell(state.judge, RecordVote(voter=child.spec.agent_id, target=target, target_label=answer.label,
                                              reason=message.reason, round=state.coord.version,
                                              target_result=answer.result,
                                              agreement=message.agreement is not None, own_result=own,
                                              checked=message.checked and bool(own)))
        self.release_waiting()

    def _rejoin(self, child: Child) -> None:
        """A straggler that answers or votes counts again, from the round it answers in."""
        state = self.state
        excluded_round = state.rejoin(child.spec.agent_id)
        if excluded_round is None:
            return
        self.out.record(AgentRejoined(name=child.spec.agent_id, incarnation=child.incarnation,
                                      excluded_round=excluded_round, round=state.coord.version))
        assert state.judge is not None
        self.out.tell(state.judge, SetLiveAgents(agents=state.counted()))

    def on_tally(self, tally: TallyUpdated) -> None:
        state = self.state
        state.tally = tally
        state.count_votes(tally)
        self._watch_stragglers(tally.converged)
        if tally.converged and tally.round == state.coord.version and tally.winner and state.phase == "coordinating" \
                and state.judging is None:  # a ruling on the first answers comes first
            self._conclude(tally.winner)

    def answer_now(self) -> None:
        state = self.state
        state.coord.answer_now = True
        state.first_turn_ended(*state.children)
        self.release_waiting()
        for child in state.children.values():
            if child.status == "in_turn" and child.peer is not None and child.turn_id is not None \
                    and state.coord.answers:
                self.out.tell(child.peer, CancelTurn(turn_id=child.turn_id, reason="answer now"))
                self.start_turn(child)

    def _conclude(self, winner: str) -> None:
        state = self.state
        state.winner = winner
        child = state.children[winner]
        strategy = state.rules.final_answer_strategy
        if strategy == "winner_reuse" or child.status == "failed" or child.peer is None:
            self.ending.finish("completed", "the team converged")
            return
        state.phase, state.presenter = "presenting", winner
        for other in state.children.values():
            if other.status == "in_turn" and other.peer is not None:
                if other.turn_id is not None:  # always, in a turn
                    self.out.tell(other.peer, CancelTurn(turn_id=other.turn_id, reason="the team converged"))
                other.status = "idle"
        turn_id = state.take_turn_id()
        child.status, child.turn_id = "presenting", turn_id
        child.since = child.last_activity = self.clock()
        state.schedule(child)
        # The judge's votes (none when the first answers decided): its live agents' are those the round counts.
        votes = state.votes.of(set(state.counted()), list(state.children))
        self.out.tell(child.peer, PresentFinal(turn_id=turn_id, task=state.run.question, history=state.run.history,
                                               view=state.coord.view(), votes=votes, strategy=strategy,
                                               own_label=child.spec.label))

    def presented(self, text: str) -> None:
        """A presentation may reword the winning answer, never change the result the team agreed on
        (``presentation_change``); a presentation that does is not used, and the run says so."""
        state = self.state
        chosen = state.coord.latest(state.winner) if state.winner else None
        agreed = explicit_result(chosen.content) if chosen else ""
        changed = presentation_change(agreed, text) if state.rules.final_answer_strategy == "winner_present" else None
        if changed is not None:
            why = ("the presentation was empty" if not text.strip()
                   else f"the presentation changed the final answer ({agreed!r} to {changed!r})")
            self.ending.finish("completed", f"the team converged; {why}, so the winning answer is used as written",
                               presentation_not_used=why)
            return
        self.ending.finish("completed", "the team converged", final=text or None)
