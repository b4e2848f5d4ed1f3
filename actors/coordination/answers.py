"""The coordination state the supervisor keeps: answers, versions, caps, best answer.

Pure data and rules, no actors or threads, so each rule is tested directly.

A team of N agents asks for the view N times per new answer, so the view of a version is
built once and shared (it is immutable: every message that carries it holds the same
object), and each agent's latest answer and answer count are kept, not searched for.

Each viewer sees the answers in its own order (``view_for``): the config order rotated so
that the viewer's own answer comes last and each other answer heads some viewer's view. A
model favours the answer it reads first; rotating spreads that bias over the answers instead
of handing it to the agent listed first. Labels do not change, and the order each agent saw
is traced (``TurnStarted.view_labels``, and the view in ``StartTurn``/``InjectAnswers``).
At most ``VIEW_ORDERS`` orders are built per version, so a 1,000-agent team does not
build 1,000 views of 1,000 answers per answer.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from functools import cached_property

from massgen.actors.coordination.evidence import conclusion_of
from massgen.actors.coordination.results import final_result, stated_result
from massgen.configs.schema import OrchestratorConfig
from massgen.messages import AnswerEntry, AnswerResult, AnswerView, CodeCheck, TallyUpdated

VIEW_ORDERS = 8


@dataclass
class Answer:
    agent: str
    label: str
    content: str
    order: int
    independent: bool = False  # written with no answer in view: agreement between such answers is evidence
    # A code answer run against the task's examples (actors/coordination/code_checks.py): its result is its
    # behaviour there, so answers written differently agree when they behave alike.
    code: CodeCheck | None = None
    # Its result was printed by a program its agent ran (``first_answer: program``), not written by the model.
    computed: bool = False
    # Its agent was asked for a program (printed or not): not a written answer (``decision.first_answers_evidence``).
    program: bool = False

    # Read by every view, tally and decision: parsed once (an answer's content and check never change).
    @cached_property
    def result(self) -> str:
        if self.code is not None and self.code.behaviour:
            return self.code.behaviour
        return final_result(self.content)

    @cached_property
    def stated(self) -> bool:
        """Whether the answer states its result, rather than its result being its last line (a code answer:
        whether it passed the task's examples)."""
        if self.code is not None:
            return self.code.passed
        return bool(stated_result(self.content))


@dataclass
class Coordination:
    """Answers in submission order; ``version`` counts them and names the vote round."""

    agents: list[str]
    labels: dict[str, str]
    rules: OrchestratorConfig
    answers: list[Answer] = field(default_factory=list)
    answer_now: bool = False
    _latest: dict[str, Answer] = field(default_factory=dict, repr=False)
    _counts: dict[str, int] = field(default_factory=dict, repr=False)
    _view: AnswerView | None = field(default=None, repr=False)  # of the current version
    _view_places: list[int] = field(default_factory=list, repr=False)  # config places of the view's answers
    _place: dict[str, int] = field(default_factory=dict, repr=False)
    _rotated: dict[int, AnswerView] = field(default_factory=dict, repr=False)  # of the current version, by shift
    _results: tuple[AnswerResult, ...] | None = field(default=None, repr=False)
    _previous_results: tuple[AnswerResult, ...] = field(default=(), repr=False)
    _entries: dict[str, AnswerEntry] = field(default_factory=dict, repr=False)

    @property
    def version(self) -> int:
        return len(self.answers)

    def agent_of_label(self, label: str) -> str | None:
        return next((agent for agent, lab in self.labels.items() if lab == label), None)

    def latest(self, agent: str) -> Answer | None:
        return self._latest.get(agent)

    def count(self, agent: str) -> int:
        return self._counts.get(agent, 0)

    def add_answer(self, agent: str, content: str, independent: bool = False, code: CodeCheck | None = None,
                   computed: bool = False, program: bool = False) -> Answer:
        label = f"{self.labels[agent]}.{self.count(agent) + 1}"
        answer = Answer(agent=agent, label=label, content=content, order=len(self.answers), independent=independent,
                        code=code, computed=computed, program=program)
        self.answers.append(answer)
        self._latest[agent] = answer
        self._counts[agent] = self.count(agent) + 1
        self._view = self._results = None
        self._rotated = {}
        return answer

    def results(self) -> tuple[AnswerResult, ...]:
        """Every accepted answer as the judge weighs it (``actors/coordination/decision.py``)."""
        if self._results is not None:
            return self._results
        newest = {a.agent: a.label for a in self.answers}
        # Each version's tuple reuses the entries that did not change (every one but the new answer and the
        # one it superseded): N versions of N answers are N objects, not N^2, however many messages hold them.
        known = {(r.label, r.latest): r for r in self._previous_results}
        self._results = tuple(
            known.get((a.label, newest[a.agent] == a.label))
            or AnswerResult(agent=a.agent, label=a.label, result=a.result, independent=a.independent, stated=a.stated,
                            latest=newest[a.agent] == a.label, passed=a.code.passed if a.code is not None else None,
                            computed=a.computed, program=a.program,
                            conclusion="" if a.program or a.code is not None else conclusion_of(a.content))
            for a in self.answers
        )
        self._previous_results = self._results
        return self._results

    def view(self) -> AnswerView:
        if self._view is not None:
            return self._view
        entries = []
        self._view_places = []
        for place, agent in enumerate(self.agents):
            latest = self.latest(agent)
            if latest is not None:  # one entry per answer, shared by every version's view that shows it
                entry = self._entries.get(latest.label)
                if entry is None:
                    entry = self._entries[latest.label] = AnswerEntry(
                        agent=self.labels[agent], label=latest.label, content=latest.content)
                entries.append(entry)
                self._view_places.append(place)
        self._view = AnswerView(version=self.version, answers=tuple(entries))
        return self._view

    def view_for(self, agent: str) -> AnswerView:
        """The view as ``agent`` is shown it: the answers after its own place in the config first, its own last."""
        view = self.view()
        count = len(view.answers)
        if count < 2 or agent not in self.labels:
            return view
        if not self._place:
            self._place = {a: i for i, a in enumerate(self.agents)}
        # The first answer of an agent listed after the viewer; wraps round to the start of the config.
        shift = bisect.bisect_right(self._view_places, self._place[agent]) % count
        if count > VIEW_ORDERS:
            shift %= VIEW_ORDERS
        if shift == 0:
            return view
        rotated = self._rotated.get(shift)
        if rotated is None:
            rotated = AnswerView(version=view.version, answers=view.answers[shift:] + view.answers[:shift])
            self._rotated[shift] = rotated
        return rotated

    def vote_only(self, agent: str) -> bool:
        """An agent may only vote once a cap is reached, or when the user asked to wrap up."""
        if not self.answers:
            return False
        if self.answer_now:
            return True
        per_agent = self.rules.max_new_answers_per_agent
        if per_agent is not None and self.count(agent) >= per_agent:
            return True
        total = self.rules.max_new_answers_global
        return total is not None and len(self.answers) >= total

    def best_so_far(self, tally: TallyUpdated | None) -> Answer | None:
        """Most votes in the current round, else the newest answer (the newest that passed the task's examples,
        when one did: a failing code answer never beats a passing one, not even when time runs out)."""
        if tally is not None and tally.round == self.version and tally.winner:
            winner = self.latest(tally.winner)
            if winner is not None:
                return winner
        passing = [a for a in self.answers if a.code is not None and a.code.passed]
        return passing[-1] if passing else self.answers[-1] if self.answers else None
