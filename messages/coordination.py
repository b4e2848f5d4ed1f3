"""The coordination protocol: supervisor, agents and judge.

Agents are shown each other's answers anonymised by label (``agent2``) and version
(``agent2.3`` is the third answer of the second agent in config order).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

from massgen.messages.envelope import Message


class AnswerEntry(BaseModel):
    """One answer in view: ``label`` is ``agentN.M``; ``agent`` is ``agentN``."""

    model_config = ConfigDict(frozen=True)

    agent: str
    label: str
    content: str


class VoteEntry(BaseModel):
    model_config = ConfigDict(frozen=True)

    voter: str
    target: str
    target_label: str
    reason: str
    agreement: bool = False
    # The result the voter itself stated in the turn it voted in ("" when none): a vote whose own
    # result differs from its target's is not agreement (actors/coordination/judge.py).
    own_result: str = ""
    checked: bool = False  # own_result was computed by a check tool (actors/agent/check_tools.py)


class ExampleRun(BaseModel):
    """One of the task's own examples, run against a code answer (``actors/coordination/code_checks.py``)."""

    model_config = ConfigDict(frozen=True)

    call: str  # "add(2, 3)", as the task wrote it
    expected: str  # "5", as the task wrote it
    got: str  # the repr of what the call returned, or "raised ValueError" (both capped)
    passed: bool
    # A call made from an example's arguments, changed: no expected value, it tells behaviours apart.
    probe: bool = False


class CodeCheck(BaseModel):
    """A code answer run confined against the task's own examples: what ran and how it ended.

    ``behaviour`` digests the outputs on the examples' inputs and on probes made from them (the examples'
    arguments changed one at a time, with no expected value): two answers with one behaviour
    agree, however differently they are written (CodeT's dual execution agreement, Chen et al. 2022).
    ``error`` says why the examples did not all run ("does not parse", "killed at the deadline")."""

    model_config = ConfigDict(frozen=True)

    parsed: bool
    examples: tuple[ExampleRun, ...] = ()
    behaviour: str = ""
    error: str = ""

    @property
    def passed(self) -> bool:
        """Every example ran and gave what the task says it gives."""
        shown = [e for e in self.examples if not e.probe]
        return self.parsed and bool(shown) and not self.error and all(e.passed for e in shown)


class AnswerResult(BaseModel):
    """What the judge knows of one accepted answer: its final result and whether it was independent.

    ``independent``: written with no other answer in view (a first answer), so agreement
    between independent answers is evidence. ``latest``: the agent's newest answer. ``stated``:
    the answer states its result (an ``Answer:`` line, a boxed or concluding number); when it does
    not, ``result`` is only its last line, which is no conclusion to change one's mind to.
    """

    model_config = ConfigDict(frozen=True)

    agent: str
    label: str
    result: str
    independent: bool = False
    latest: bool = True
    stated: bool = True
    # A code answer run against the task's own examples: whether it passed them all (None: not run).
    passed: bool | None = None
    # Its result was printed by a program its agent ran (``first_answer: program``), not written by the model.
    computed: bool = False
    # Its agent was asked for a program (printed or not): not a written answer.
    program: bool = False
    # A written answer's last lines outside code (``evidence.conclusion_of``): whether it states a value a
    # program computed is read there (``evidence.states``); "" for a program's answer.
    conclusion: str = ""


class AnswerView(BaseModel):
    """The newest answer of every agent that has one, as one agent is shown them."""

    model_config = ConfigDict(frozen=True)

    version: int = 0
    answers: tuple[AnswerEntry, ...] = ()

    def labels(self) -> tuple[str, ...]:
        return tuple(a.agent for a in self.answers)


# --- supervisor -> agent -------------------------------------------------------------


class StartTurn(Message):
    turn_id: int
    task: str
    history: tuple[tuple[str, str], ...] = ()
    view: AnswerView
    vote_only: bool = False
    own_label: str
    # Never set now: how a first answer is asked is the agent's own setting (TurnSettings.first_answer). Kept
    # so that traces written when the supervisor said it (prior_first_answer "bare") still parse and resume.
    bare: bool = False


class InjectAnswers(Message):
    """New answers arrived while the agent is mid-turn: use them at the next safe point."""

    turn_id: int
    view: AnswerView


class FinishRound(Message):
    """The agent's turn passed its round's soft timeout (``timeout_settings``): it is told, at its next
    model call, to submit ``new_answer`` or ``vote`` with what it has. The turn goes on; it is cut once
    ``grace_s`` has passed since this was sent."""

    turn_id: int
    first_round: bool  # before the agent's first answer (initial_round_timeout_seconds), else a later round
    elapsed_s: float
    timeout_s: float
    grace_s: float


class PresentFinal(Message):
    turn_id: int
    task: str
    history: tuple[tuple[str, str], ...] = ()
    view: AnswerView
    votes: tuple[VoteEntry, ...]
    strategy: Literal["winner_present", "synthesize"]
    own_label: str


class CancelTurn(Message):
    turn_id: int
    reason: str


# --- agent -> supervisor -------------------------------------------------------------


class AgentChunk(Message):
    turn_id: int
    kind: Literal["text", "reasoning"]
    text: str


class ModelCallStarted(Message):
    turn_id: int
    call_index: int
    prompt_chars: int
    messages: int
    tools: tuple[str, ...]


class ModelCallFinished(Message):
    turn_id: int
    call_index: int
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    finish_reason: str = "stop"
    error: str | None = None


class BackendEvent(Message):
    """Something a backend did on its own: an HTTP attempt, a retry, a tool-mode fallback."""

    event: str
    info: dict[str, object]


class CallPermitRequest(Message):
    """Asked by an agent's turn worker before every model call: budgets are checked here."""

    turn_id: int


class CallPermit(Message):
    granted: bool
    reason: str = ""


class AnswerProposed(Message):
    turn_id: int
    content: str
    view_version: int
    # A code answer, run by its agent against the task's own examples (None: not a code task, or not run).
    code_check: CodeCheck | None = None
    # The answer's result is what a program its agent ran printed (``backend.first_answer: program``), not
    # what the model wrote: under ``after_first_answers: decide`` computed results are weighed first.
    computed: bool = False
    # Its agent was asked for a program (``backend.first_answer: program``), whether or not one ran and printed:
    # not a written answer, so not the witness of whether the question asks for a result at all.
    program: bool = False


class VoteProposed(Message):
    """A vote. With ``agreement`` set it was not cast but found: the agent posted ``agreement`` as an
    answer, and its final result equals that of ``target_content``, the answer it agrees with."""

    turn_id: int
    target: str
    reason: str
    view_version: int
    agreement: str | None = None
    target_content: str | None = None
    # The result the voter's own work in this turn states (actors/coordination/results.py stated_result), "" for none.
    own_result: str = ""
    # ``own_result`` was computed by a check tool in this turn (actors/agent/check_tools.py), not read or re-derived.
    checked: bool = False


class TurnCorrection(Message):
    """The model ended a call without exactly one valid workflow call; it was told why."""

    turn_id: int
    attempt: int
    problem: str


class TurnFailed(Message):
    turn_id: int
    reason: str


class FinalPresented(Message):
    turn_id: int
    content: str


class ToolCallRequested(Message):
    turn_id: int
    call_id: str
    name: str
    arguments: dict[str, object]


class ToolCallResult(Message):
    turn_id: int
    call_id: str
    name: str
    content: str
    is_error: bool = False


# --- supervisor <-> judge ------------------------------------------------------------


class RecordVote(Message):
    voter: str
    target: str
    target_label: str
    reason: str
    round: int
    target_result: str = ""
    agreement: bool = False
    # The voter's own stated result, when it and the target's are comparable ("" otherwise).
    own_result: str = ""
    checked: bool = False  # own_result was computed by a check tool (VoteProposed.checked)


class InvalidateVotes(Message):
    """A new round: votes so far are void; ``answers`` is every accepted answer, for the winner rule."""

    reason: str
    round: int
    answers: tuple[AnswerResult, ...] = ()


class SetLiveAgents(Message):
    agents: tuple[str, ...]


class FirstAnswersIn(Message):
    """Every counted agent (``agents``) has ended its first turn: the judge rules on the first answers of
    ``round`` (``actors/coordination/decision.py``) before any vote turn is handed out. ``on_answer``: sent as
    an answer completed them (unanimity is judged only then, not when an agent's failure did).

    With ``pending`` (counted agents whose first turn has not ended, each with whether it is asked for a
    program), only ``agents`` have: the judge ends the run now if no first answer still to come could change the
    result (``decided_before_all_in``), and says nothing otherwise; nothing waits for it."""

    round: int
    agents: tuple[str, ...]
    on_answer: bool = True
    pending: dict[str, bool] = {}


class FirstAnswersJudged(Message):
    """The judge's ruling on the first answers of ``round``: ``winner``, the agent whose answer ends the run
    with no vote round (the decision is recorded as ``UnanimousFirstAnswers`` or ``FirstAnswersDecided``), or
    None: the vote round goes on."""

    round: int
    winner: str | None = None
    # The first answers did not settle and a reserve agent is left: ``ask`` gives its first answer, and the judge
    # rules again once it has (``FirstAnswersDisagree`` records why).
    ask: str | None = None
    # A ruling before every first answer was in (``FirstAnswersIn.pending``): no turn was held for it.
    early: bool = False


class TallyUpdated(Message):
    """The judge's tally of ``round`` after one message. ``counts``: votes per agent; ``support``: votes plus
    independent agreement per final result; ``vote``: the vote this update records (the ``RecordVote`` it
    answers), None when the message was not a vote of this round.

    The round's earlier votes are not repeated: each travels once, in its own update, so a round of N votes
    carries N entries, not N^2/2 (issue 51). Whoever needs the round's votes keeps them from ``vote`` (the
    supervisor, ``actors/supervisor/state.py``: ``RoundVotes``) or from the ``RecordVote`` records (the trace's
    readers); ``counts`` counts only the votes of live agents."""

    round: int
    counts: dict[str, int]
    converged: bool
    winner: str | None
    support: dict[str, int] = {}
    vote: VoteEntry | None = None

    @model_validator(mode="before")
    @classmethod
    def _read_before_issue_51(cls, data: Any) -> Any:
        """A trace written before issue 51 carries the round's whole vote list (``votes``) in every update; it
        repeats the ``RecordVote`` records, so it is read without it."""
        if isinstance(data, dict) and "votes" in data:
            return {key: value for key, value in data.items() if key != "votes"}
        return data


# --- decisions recorded (trace events, not sent to anyone) -----------------------------


class AnswerAccepted(Message):
    agent: str
    label: str
    content: str
    round: int
    result: str = ""
    independent: bool = False
    code_check: CodeCheck | None = None  # what its agent ran of it, and how that ended (AnswerProposed)
    computed: bool = False  # its result was printed by a program its agent ran (AnswerProposed)
    program: bool = False  # its agent was asked for a program (AnswerProposed)


class UnanimousFirstAnswers(Message):
    """Every counted agent's independent first answer states ``result``: the run ends without a vote round."""

    result: str
    labels: tuple[str, ...]


class FirstAnswersDecided(Message):
    """Under ``orchestrator.after_first_answers: decide``, the first answers decided the run with no vote round:
    ``support`` counts the first answers supporting each result (a program printing it, a written answer stating
    it), ``computed`` the programs among them whose printout was a computed value (weighed first); ``winner`` is
    the answer that presents; ``result`` "" when no program computed one (the first written answer presents).
    ``two_valued`` and ``no_result_asked`` are read from traces of runs before issue 48's rule, and no longer
    written."""

    result: str
    winner: str
    support: dict[str, int] = {}
    labels: tuple[str, ...] = ()
    computed: dict[str, int] = {}
    two_valued: bool = False
    no_result_asked: bool = False
    # Computed results of a kind no written answer gives (``evidence.in_kind``): they answered another question,
    # so they were not weighed; recorded so that nothing a program computed is dropped without a word.
    set_aside: tuple[str, ...] = ()
    # Agents whose first answers were not waited for: none of them could have changed the result
    # (``decision.decided_before_all_in``); their turns end with the run.
    not_waited_for: tuple[str, ...] = ()


class FirstAnswersDisagree(Message):
    """The first answers did not settle (``actors/coordination/decision.py``): no computed result held by two
    answers and ahead of every other; the reserve agent ``ask`` is asked for its first answer. ``support``,
    ``computed`` and ``set_aside`` as in ``FirstAnswersDecided``."""

    ask: str
    support: dict[str, int] = {}
    computed: dict[str, int] = {}
    labels: tuple[str, ...] = ()
    set_aside: tuple[str, ...] = ()


class TurnStarted(Message):
    """A turn was handed to an agent; mirrors the StartTurn it was sent, without the task text."""

    agent: str
    incarnation: int
    turn_id: int
    vote_only: bool
    view_labels: tuple[str, ...]
