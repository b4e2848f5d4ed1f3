"""Handing out turns: the supervisor's coordination rules, one agent report at a time.

Who takes a turn and with which answers in view; when an answer invalidates the round;
when an agent waits for the others' first (independent) answers; when a vote is cast or
the agent must look again; when the team has converged and who presents. The rules on
answers themselves (labels, caps, views) are ``actors/coordination.py``; the winner is
the judge's (``actors/judge.py``).
"""

from __future__ import annotations

from massgen.actors.children import Child
from massgen.actors.results import explicit_result, final_result, stated_result
from massgen.actors.supervisor_state import SupervisorState
from massgen.messages import (
    AnswerAccepted,
    AnswerProposed,
    AnswerView,
    CancelTurn,
    InjectAnswers,
    InjectNote,
    InvalidateVotes,
    PresentFinal,
    RecordVote,
    SnapshotTaken,
    StartTurn,
    TallyUpdated,
    TurnStarted,
    UnanimousFirstAnswers,
    VoteProposed,
)


class TurnHandout(SupervisorState):
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
            view = AnswerView() if first else self.coord.view_for(child.spec.agent_id)
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
            self.tell(child.peer, InjectAnswers(turn_id=turn_id, view=self.coord.view_for(child.spec.agent_id)))

    def _on_answer(self, child: Child, message: AnswerProposed) -> None:
        agent_id = child.spec.agent_id
        child.status = "idle"
        if self.phase != "coordinating":
            return
        self._rejoin(child)
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
        awaiting = self._awaiting_first_turns()  # one scan per answer, not one per agent (1,000 agents)
        if not awaiting and self._unanimous_first_answers():
            return
        for other in self.children.values():
            if other is child or other.peer is None:
                continue
            if other.status == "idle":
                if awaiting and other.spec.agent_id in self.waiting:
                    continue  # still waiting for the first answers: nothing changes for it
                self._next_turn(other)
            elif other.status == "in_turn" and other.turn_id is not None and self.coord.count(other.spec.agent_id) > 0:
                view = self.coord.view_for(other.spec.agent_id)
                self.tell(other.peer, InjectAnswers(turn_id=other.turn_id, view=view))
        self._next_turn(child)

    def _unanimous_first_answers(self) -> bool:
        """Under the "prior" rule, independent first answers that all state one result end the run.

        Every agent reached the result on its own; a vote round would only restate it, at one or
        two calls per agent. The prior agent (listed first) presents, as it would have won.
        """
        if self.rules.winner_rule != "prior" or self.coord.version != len(self.first_done):
            return False
        answers = self.coord.answers
        first = stated_result(answers[0].content) if answers else ""
        if not first or len(answers) < 2 or not all(a.independent and a.result == first for a in answers):
            return False
        counted = self._counted()
        if len(counted) < 2 or any(self.coord.latest(agent) is None for agent in counted):
            return False
        self.record(UnanimousFirstAnswers(result=first, labels=tuple(a.label for a in answers)))
        self._conclude(next(a for a in self.coord.agents if a in counted))
        return True

    def _awaiting_first_turns(self) -> bool:
        return any(agent not in self.first_done and c.status != "failed" and self.stragglers.counted(agent)
                   for agent, c in self.children.items())

    def _counted(self) -> tuple[str, ...]:
        """The agents the round waits for: live, and not left out of it as stragglers."""
        return tuple(a for a, c in self.children.items() if c.status != "failed" and self.stragglers.counted(a))

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
        self.stragglers.observe(voters | self.waiting, self._counted(), self.coord.version, self.ctx.clock(), converged)

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
        self._rejoin(child)
        target = self.coord.agent_of_label(message.target)
        answer = self.coord.latest(target) if target else None
        if message.view_version != self.coord.version or answer is None or target is None:
            self._start_turn(child)  # voted on an outdated view: look again
            return
        assert self.judge is not None
        self.first_done.add(child.spec.agent_id)
        # The voter's own result is comparable only with a target that states one: a vote on an essay
        # whose reasoning happens to end in a number is a plain vote.
        own = message.own_result if stated_result(answer.content) else ""
        self.tell(self.judge, RecordVote(voter=child.spec.agent_id, target=target, target_label=answer.label,
                                         reason=message.reason, round=self.coord.version, target_result=answer.result,
                                         agreement=message.agreement is not None, own_result=own))
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
        votes = self.tally.votes if self.tally is not None else ()  # none when unanimous first answers decided
        self.tell(child.peer, PresentFinal(turn_id=turn_id, task=self.run.question, history=self.run.history,
                                           view=self.coord.view(), votes=votes, strategy=strategy,
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
