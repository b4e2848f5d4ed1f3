"""A resumed supervisor's starting state, applied before any agent starts.

Kept out of the supervisor's behaviours so they stay as they are: this only fills in the state
a fresh supervisor would otherwise start from nothing (``actors/record/resume.py`` says where each piece
comes from), and records all of it in the new trace so the attempt's trace is complete on its own
and can itself be resumed.
"""

from __future__ import annotations

from collections import deque

from massgen.actors.record.resume import ResumeState, wall_to_clock
from massgen.actors.runtime.port import Clock
from massgen.actors.supervisor.state import Emitter, SupervisorState
from massgen.messages import AnswerAccepted, AnswerView, InvalidateVotes, RecordVote, RunResumed, SetLiveAgents


def restore(state: SupervisorState, out: Emitter, clock: Clock, resumed: ResumeState) -> None:
    """Answers, current votes, incarnations, restart history, budget and turn counter of ``resumed``."""
    judge = state.judge
    assert judge is not None
    children = state.children
    agents = {name: carried for name, carried in resumed.agents.items() if name in children}
    answers = [(agent, content) for agent, content in resumed.answers if agent in children]
    out.record(RunResumed(
        resumed_from=resumed.resumed_from, previous_run_id=resumed.previous_run_id,
        answers=len(answers), votes=tuple(v.voter for v in resumed.votes), agents=tuple(agents.values()),
        model_calls=resumed.model_calls, input_tokens=resumed.input_tokens, output_tokens=resumed.output_tokens,
        cost_usd=resumed.cost_usd, answer_now=resumed.answer_now, next_turn_id=resumed.next_turn_id,
        skipped=resumed.skipped, first_done=tuple(sorted(resumed.first_done)),
    ))
    for index, (agent, content) in enumerate(resumed.answers):
        if agent not in children:
            continue
        answer = state.coord.add_answer(agent, content, independent=index in resumed.independent,
                                        code=resumed.code_checks.get(index), computed=index in resumed.computed,
                                        program=index in resumed.programs)
        out.record(AnswerAccepted(agent=agent, label=answer.label, content=answer.content, round=state.coord.version,
                                  result=answer.result, independent=answer.independent, code_check=answer.code,
                                  computed=answer.computed, program=answer.program))
    state.first_turn_ended(*(a for a in resumed.first_done if a in children))
    state.coord.answer_now = resumed.answer_now
    state.spent.calls = resumed.model_calls
    state.spent.add_usage(resumed.input_tokens, resumed.output_tokens, resumed.cost_usd)
    state.next_turn_id = resumed.next_turn_id
    now = clock()
    for name, carried in agents.items():
        child = children[name]
        child.incarnation = carried.incarnation - 1  # spawning starts the incarnation it names
        child.history.failures = deque(wall_to_clock(carried.failures, now))
        if carried.voted and carried.status == "live":
            child.voted_round = len(answers)
        if carried.turn_view is not None:
            child.resume_turn = (AnswerView.model_validate(carried.turn_view), carried.turn_vote_only)
        if carried.status == "failed":
            child.status = "failed"
        elif child.status == "reserve" and (name in state.first_done or carried.turn_view is not None):
            child.status = "starting"  # the attempt it continues had asked this reserve agent
        elif carried.excluded_round is not None:
            state.exclude(name, carried.excluded_round)
    if answers:
        out.tell(judge, InvalidateVotes(reason="resumed: the answers of the attempt it continues",
                                        round=state.coord.version, answers=state.coord.results()))
    live = tuple(name for name, child in children.items() if child.status != "failed")
    if len(state.counted()) < len(children):
        out.tell(judge, SetLiveAgents(agents=state.counted()))
    for vote in resumed.votes:
        latest = state.coord.latest(vote.target)
        if vote.voter in live and latest is not None and latest.label == vote.target_label:
            out.tell(judge, RecordVote(voter=vote.voter, target=vote.target, target_label=vote.target_label,
                                       reason=vote.reason, round=state.coord.version, target_result=latest.result,
                                       own_result=vote.own_result, checked=vote.checked))
