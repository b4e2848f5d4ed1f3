"""A resumed supervisor's starting state, applied before any agent starts.

Kept out of the supervisor so its state machine stays as it is: this only fills in
what a fresh supervisor would otherwise start from nothing (``actors/resume.py`` says
where each piece comes from), and records all of it in the new trace so the attempt's
trace is complete on its own and can itself be resumed.
"""

from __future__ import annotations

import itertools
from collections import deque
from typing import TYPE_CHECKING

from massgen.actors.resume import ResumeState, wall_to_clock
from massgen.messages import AnswerAccepted, AnswerView, InvalidateVotes, RecordVote, RunResumed, SetLiveAgents

if TYPE_CHECKING:
    from massgen.actors.supervisor import Supervisor


def restore(sup: Supervisor, state: ResumeState) -> None:
    """Answers, current votes, incarnations, restart history, budget and turn counter of ``state``."""
    assert sup.judge is not None
    agents = {name: carried for name, carried in state.agents.items() if name in sup.children}
    answers = [(agent, content) for agent, content in state.answers if agent in sup.children]
    sup.ctx.record(sup.make(
        RunResumed, resumed_from=state.resumed_from, previous_run_id=state.previous_run_id,
        answers=len(answers), votes=tuple(v.voter for v in state.votes), agents=tuple(agents.values()),
        model_calls=state.model_calls, input_tokens=state.input_tokens, output_tokens=state.output_tokens,
        cost_usd=state.cost_usd, answer_now=state.answer_now, next_turn_id=state.next_turn_id,
        skipped=state.skipped, first_done=tuple(sorted(state.first_done)),
    ))
    for index, (agent, content) in enumerate(state.answers):
        if agent not in sup.children:
            continue
        answer = sup.coord.add_answer(agent, content, independent=index in state.independent)
        sup.ctx.record(sup.make(AnswerAccepted, agent=agent, label=answer.label, content=answer.content,
                                round=sup.coord.version, result=answer.result, independent=answer.independent))
    sup.first_done.update(a for a in state.first_done if a in sup.children)
    sup.coord.answer_now = state.answer_now
    sup.spent.calls = state.model_calls
    sup.spent.add_usage(state.input_tokens, state.output_tokens, state.cost_usd)
    sup._turn_ids = itertools.count(state.next_turn_id)
    now = sup.ctx.clock()
    for name, carried in agents.items():
        child = sup.children[name]
        child.incarnation = carried.incarnation - 1  # _spawn starts the incarnation it names
        child.history.failures = deque(wall_to_clock(carried.failures, now))
        if carried.voted and carried.status == "live":
            child.voted_round = len(answers)
        if carried.turn_view is not None:
            child.resume_turn = (AnswerView.model_validate(carried.turn_view), carried.turn_vote_only)
        if carried.status == "failed":
            child.status = "failed"
        elif carried.excluded_round is not None:
            sup.stragglers.exclude(name, carried.excluded_round)
    if answers:
        sup.send(sup.judge, InvalidateVotes, reason="resumed: the answers of the attempt it continues",
                 round=sup.coord.version, answers=sup.coord.results())
    live = tuple(name for name, child in sup.children.items() if child.status != "failed")
    if len(sup._counted()) < len(sup.children):
        sup.send(sup.judge, SetLiveAgents, agents=sup._counted())
    for vote in state.votes:
        latest = sup.coord.latest(vote.target)
        if vote.voter in live and latest is not None and latest.label == vote.target_label:
            sup.send(sup.judge, RecordVote, voter=vote.voter, target=vote.target, target_label=vote.target_label,
                     reason=vote.reason, round=sup.coord.version, target_result=latest.result)
