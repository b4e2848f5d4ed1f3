"""Resuming a run from its trace: it continues where it stopped, and finished work is not paid for again.

``resume_point`` reads ``trace.jsonl`` alone (torn last line and bad lines tolerated,
and named) and rebuilds what the supervisor had: the accepted answers, the current
round's votes, each agent's incarnation, failures and restarts, the budget spent, the
turn counter, and each agent's model calls. The resumed run is a new attempt
(``attempt_N+1`` beside the old one) in the same lineage: it records the state it
started from as ``RunResumed``, agents keep their incarnation numbers, an agent that
had voted in the current round waits, and an agent that was mid-turn starts that turn
again, its finished calls answered from the trace (``actors/record/replay.py``).
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias, assert_never

from pydantic import BaseModel, ValidationError

from massgen.configs.schema import TeamConfig, redact_backend
from massgen.logs.calls import RecordedCall, model_calls
from massgen.logs.layout import TRACE_FILE, next_attempt_dir, turn_dir_of
from massgen.logs.reading import TraceRead, TraceReadError, read_trace_file, trace_path
from massgen.messages import (
    AgentExcluded,
    AgentMarkedFailed,
    AgentRejoined,
    AgentRestarting,
    AgentResumeState,
    AnswerAccepted,
    AnswerNow,
    ChildStarted,
    CodeCheck,
    InvalidateVotes,
    PresentFinal,
    RecordVote,
    RunFinished,
    RunResumed,
    RunStarted,
    Sender,
    StartTurn,
)
from massgen.messages.trace import RecordError, RecordSubset, TraceRecord
from massgen.outcome.errors import ResumeError as ResumeError  # re-exported: the one class, also importable here


@dataclass(frozen=True)
class ResumedVote:
    voter: str
    target: str
    target_label: str
    reason: str
    own_result: str = ""
    checked: bool = False


@dataclass(frozen=True)
class ResumeState:
    """What the supervisor starts from instead of nothing (applied by ``actors/supervisor/restore.py``)."""

    answers: tuple[tuple[str, str], ...]  # (agent id, content), in the order they were accepted
    votes: tuple[ResumedVote, ...]
    agents: dict[str, AgentResumeState]
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    answer_now: bool = False
    next_turn_id: int = 1
    previous_run_id: str = ""
    resumed_from: str = ""
    skipped: tuple[str, ...] = ()
    independent: frozenset[int] = frozenset()  # indices into ``answers`` written with nothing in view
    computed: frozenset[int] = frozenset()  # indices into ``answers`` whose result a program printed
    programs: frozenset[int] = frozenset()  # indices into ``answers`` asked for as a program (printed or not)
    # Index into ``answers`` -> what its agent ran of it (a code answer against the task's examples).
    code_checks: dict[int, CodeCheck] = field(default_factory=dict)
    first_done: frozenset[str] = frozenset()  # agents whose first turn had ended (an answer or a vote)


@dataclass(frozen=True)
class ResumePoint:
    question: str
    history: tuple[tuple[str, str], ...]
    config: dict[str, Any]
    turn: int
    attempt: int
    finished_status: str | None
    log_dir: Path
    state: ResumeState
    # Config fields whose secrets the trace holds only as "***" (e.g. agents[0].backend.api_key).
    redacted: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())  # what was left out of the trace, in words
    # Later attempts passed over for this one, and why (one that stopped before it recorded its start).
    lineage: tuple[str, ...] = field(default=())

    @property
    def answers(self) -> tuple[tuple[str, str], ...]:
        return self.state.answers

    def next_log_dir(self) -> Path:
        return next_attempt_dir(self.log_dir, self.attempt)


def _redacted_fields(config: dict[str, Any]) -> tuple[str, ...]:
    found: list[str] = []
    for index, agent in enumerate(config.get("agents", [])):
        backend = agent.get("backend", {})
        if backend.get("api_key") == "***":
            found.append(f"agents[{index}].backend.api_key")
        for server in backend.get("mcp_servers", []):
            for part in ("env", "headers"):
                found += [f"agents[{index}].backend.mcp_servers.{server.get('name')}.{part}.{key}"
                          for key, value in server.get(part, {}).items() if value == "***"]
    return tuple(found)


@dataclass
class _Agent:
    incarnation: int = 1
    status: Literal["live", "restarting", "failed"] = "live"
    failures: list[float] = field(default_factory=list)
    restarts: int = 0
    played: list[dict[str, Any]] = field(default_factory=list)
    last_cause: str | None = None
    turn: StartTurn | None = None  # its last turn
    excluded_round: int | None = None  # left out of that round as a straggler, not back yet


# The records a resumed run is rebuilt from; the model calls are read apart (logs/calls.py).
Resumed: TypeAlias = (
    RunStarted | RunResumed | AnswerAccepted | InvalidateVotes | RecordVote | AnswerNow | StartTurn | PresentFinal
    | AgentRestarting | AgentMarkedFailed | AgentExcluded | AgentRejoined | ChildStarted
)
_RESUMED = RecordSubset[Resumed](Resumed)
_NOBODY = Sender(name="", incarnation=0)  # an event's recipient


def _fold(records: list[TraceRecord], agents: list[str], log_dir: Path, skipped: tuple[str, ...]) -> ResumeState:
    state = {agent: _Agent() for agent in agents}
    answers: list[tuple[str, str]] = []
    independent: set[int] = set()
    computed: set[int] = set()
    programs: set[int] = set()
    code_checks: dict[int, CodeCheck] = {}
    first_done: set[str] = set()
    votes: dict[str, ResumedVote] = {}
    spent = {"model_calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}
    answer_now = False
    next_turn = 1
    run_id = ""
    for record in records:
        told = record.kind == "tell"
        match _RESUMED.message(record):
            case None:
                pass
            case RunStarted():
                run_id = record.run_id
            case RunResumed() as carried_over:  # this attempt continued an earlier one: start from what it carried
                for carried in carried_over.agents:
                    if carried.agent in state:
                        state[carried.agent] = _Agent(
                            incarnation=carried.incarnation, status=carried.status, failures=list(carried.failures),
                            restarts=carried.restarts, played=list(carried.played))
                spent["model_calls"] += carried_over.model_calls
                spent["input_tokens"] += carried_over.input_tokens
                spent["output_tokens"] += carried_over.output_tokens
                spent["cost_usd"] += carried_over.cost_usd
                answer_now = answer_now or carried_over.answer_now
                next_turn = max(next_turn, carried_over.next_turn_id)
                first_done.update(carried_over.first_done)
            case AnswerAccepted() as answer if answer.agent in state:
                if answer.independent:
                    independent.add(len(answers))
                if answer.computed:
                    computed.add(len(answers))
                if answer.program:
                    programs.add(len(answers))
                if answer.code_check is not None:
                    code_checks[len(answers)] = answer.code_check
                first_done.add(answer.agent)
                answers.append((answer.agent, answer.content))
                state[answer.agent].turn = state[answer.agent].last_cause = None  # that turn is over
                votes.clear()  # a new answer opens a new round (the InvalidateVotes may not be written yet)
            case InvalidateVotes():
                votes.clear()
            case RecordVote() as vote if told and vote.round == len(answers):
                votes[vote.voter] = ResumedVote(vote.voter, vote.target, vote.target_label, vote.reason,
                                                vote.own_result, vote.checked)
                first_done.add(vote.voter)
            case AnswerNow():
                answer_now = True
            case StartTurn() | PresentFinal() as handed if told and (to := record.target or _NOBODY).name in state:
                next_turn = max(next_turn, handed.turn_id + 1)
                agent = state[to.name]
                agent.incarnation, agent.status = to.incarnation or agent.incarnation, "live"
                agent.last_cause = record.msg_id
                agent.turn = handed if isinstance(handed, StartTurn) else None
            case AgentRestarting() as restarting if restarting.name in state:
                agent = state[restarting.name]
                agent.failures.append(record.ts)
                agent.restarts += 1
                agent.status, agent.incarnation = "restarting", restarting.incarnation + 1
                agent.played, agent.last_cause, agent.turn = [], None, None
            case AgentMarkedFailed() as failed if failed.name in state:
                state[failed.name].failures.append(record.ts)
                state[failed.name].status = "failed"
            case AgentExcluded() as excluded if excluded.name in state:
                state[excluded.name].excluded_round = excluded.round
            case AgentRejoined() as rejoined if rejoined.name in state:
                state[rejoined.name].excluded_round = None
            case ChildStarted() as started if started.name in state and state[started.name].status == "restarting":
                state[started.name].status = "live"
            case (AnswerAccepted() | RecordVote() | StartTurn() | PresentFinal() | AgentRestarting()
                  | AgentMarkedFailed() | AgentExcluded() | AgentRejoined() | ChildStarted()):
                pass  # of an agent not in this config, not told (a reply, a copy), or of an earlier round
            case _ as unreachable:
                assert_never(unreachable)
    calls = model_calls(records)
    for call in calls:
        if call.reply is None or call.agent not in state:
            continue
        if not call.replayed:  # a replayed call was paid for (and played) by the attempt it came from
            for key in ("input_tokens", "output_tokens", "cost_usd"):
                spent[key] += call.reply.get(key, 0)
            spent["model_calls"] += 1
            agent = state[call.agent]
            if call.incarnation == agent.incarnation and call.cause != agent.last_cause:  # else: on replay
                agent.played.append({"kind": call.request.kind, "vote_targets": list(call.request.vote_targets),
                                     "tool_calls": len(call.reply.get("tool_calls", ()))})
    calls_of: dict[str, list[RecordedCall]] = {}  # each agent's calls, gathered once: not all calls per agent
    for call in calls:
        calls_of.setdefault(call.agent, []).append(call)
    resumed: dict[str, AgentResumeState] = {}
    for name, agent in state.items():
        replay = tuple(
            {"request": c.request.model_dump(mode="json"), "reply": c.reply, "seq": c.reply_seq}
            for c in calls_of.get(name, ())
            if c.agent == name and c.incarnation == agent.incarnation and c.reply is not None
            and c.reply.get("error") is None and agent.last_cause is not None and c.cause == agent.last_cause
        ) if agent.status == "live" else ()
        resumed[name] = AgentResumeState(
            agent=name, incarnation=agent.incarnation, status=agent.status,
            failures=tuple(agent.failures), restarts=agent.restarts, voted=name in votes,
            played=tuple(agent.played) if agent.status == "live" else (), replay=replay,
            turn_view=agent.turn.view.model_dump(mode="json")
            if agent.turn and agent.status == "live" and name not in votes else None,
            turn_vote_only=bool(agent.turn and agent.turn.vote_only), excluded_round=agent.excluded_round,
        )
    return ResumeState(
        answers=tuple(answers), votes=tuple(votes.values()), agents=resumed,
        model_calls=int(spent["model_calls"]), input_tokens=int(spent["input_tokens"]),
        output_tokens=int(spent["output_tokens"]), cost_usd=float(spent["cost_usd"]), answer_now=answer_now,
        next_turn_id=next_turn, previous_run_id=run_id, resumed_from=str(log_dir), skipped=skipped,
        independent=frozenset(independent), computed=frozenset(computed),
        programs=frozenset(programs), first_done=frozenset(first_done),
        code_checks=code_checks,
    )


def resume_point(log_dir: str | os.PathLike[str]) -> ResumePoint:
    """Everything a resumed run needs, from its trace alone. ``log_dir`` is any path ``trace_path`` takes: an
    attempt or its ``trace.jsonl``, or the run's ``log_<stamp>`` root (upstream's LOG_DIR) or a ``turn_N``
    folder, then its newest attempt; anything else is a ``ResumeError`` naming it.

    An attempt that stopped before it recorded where it started is not a run from nothing: one whose
    ``RunStarted`` names ``resumed_from`` but that has no ``RunResumed`` continues from the attempt it
    resumed, and one whose trace holds no ``RunStarted`` (empty: killed before its first write) from the
    newest earlier attempt of its turn. ``ResumePoint.lineage`` says which attempt was skipped, and why."""
    try:
        trace = trace_path(log_dir)  # the one definition of what names a trace (logs/reading.py)
    except TraceReadError as exc:
        raise ResumeError(str(exc)) from exc
    return _point_from(trace, [], set())


def _point_from(trace: Path, lineage: list[str], seen: set[Path]) -> ResumePoint:
    if trace.resolve() in seen:  # a hand-edited resumed_from that leads back: never a loop
        raise ResumeError(f"{trace.parent}: its resumed_from leads back to an attempt already read ({trace})")
    seen.add(trace.resolve())
    try:
        read = read_trace_file(trace)
    except TraceReadError as exc:  # a trace of a newer format among them: its reason, never "no RunStarted"
        raise ResumeError(str(exc)) from exc
    log_dir = trace.parent
    records, invalid = _typed(read.records)  # typed once, for every pass below
    started = next((r.message() for r in records if r.type == RunStarted.__name__), None)
    if not isinstance(started, RunStarted):
        older = _older_attempt(log_dir)
        if older is None:
            raise ResumeError(f"{log_dir}: the trace has no RunStarted record, so there is no run to continue")
        why = ("its trace has no RunStarted record" if read.records or read.skipped
               else "its trace holds only a line cut off mid-write" if read.torn_bytes else "its trace is empty")
        lineage.append(f"skipped {log_dir}: {why} (it stopped before it recorded its start); "
                       f"continuing from {older.parent}")
        return _point_from(older, lineage, seen)
    if started.resumed_from and not any(r.type == RunResumed.__name__ for r in records):
        earlier = _resumed_trace(log_dir, started.resumed_from)
        if earlier is None:
            raise ResumeError(f"{log_dir}: it resumed {started.resumed_from} but stopped before it recorded the "
                              "state it started from (no RunResumed), and that attempt's trace is not there; "
                              "resume the attempt that holds the run's work")
        lineage.append(f"skipped {log_dir}: it stopped before it recorded the state it started from (no "
                       f"RunResumed); continuing from {earlier.parent}, the attempt it resumed")
        return _point_from(earlier, lineage, seen)
    try:
        point = _point(log_dir, started, records, read, invalid)
    except RecordError as exc:
        raise ResumeError(f"{log_dir}: {exc}") from exc
    return dataclasses.replace(point, lineage=tuple(lineage))


def _older_attempt(log_dir: Path) -> Path | None:
    """The trace of the newest attempt before ``log_dir`` in its turn folder; None outside that layout."""
    turn = turn_dir_of(log_dir)
    if turn is None:
        return None
    number = int(log_dir.name.removeprefix("attempt_"))
    older = sorted((int(d.name.removeprefix("attempt_")), d) for d in turn.glob("attempt_*")
                   if d.name.removeprefix("attempt_").isdigit() and int(d.name.removeprefix("attempt_")) < number
                   and (d / TRACE_FILE).is_file())
    return older[-1][1] / TRACE_FILE if older else None


def _resumed_trace(log_dir: Path, resumed_from: str) -> Path | None:
    """The trace of the attempt ``resumed_from`` names: beside ``log_dir`` (where a resume puts its attempt,
    so a run folder that was moved still holds it), else where it was then."""
    for folder in (log_dir.parent / Path(resumed_from).name, Path(resumed_from)):
        if (folder / TRACE_FILE).is_file():
            return folder / TRACE_FILE
    return None


def _typed(raw_records: list[dict[str, Any]]) -> tuple[list[TraceRecord], list[str]]:
    """The records whose payload is their message, and "record N: why" for each that is not.

    A record that is valid JSON but not its message (a field of the wrong type, a type this
    version does not know) is skipped and named, as a line that is not JSON is: what comes
    after it is still resumed.
    """
    records: list[TraceRecord] = []
    invalid: list[str] = []
    for raw in raw_records:
        record = TraceRecord.of(raw)
        try:
            record.message()
        except RecordError as exc:
            invalid.append(str(exc))
            continue
        records.append(record)
    return records, invalid


def _point(log_dir: Path, started: RunStarted, records: list[TraceRecord], read: TraceRead,
           invalid: list[str]) -> ResumePoint:
    finished = next((r.message() for r in records if r.type == RunFinished.__name__), None)
    return ResumePoint(
        question=started.question,
        history=started.history,
        config=started.config,
        turn=started.turn,
        attempt=started.attempt,
        finished_status=finished.status if isinstance(finished, RunFinished) else None,
        log_dir=log_dir,
        state=_fold(records, list(started.agents), log_dir, (*read.skipped, *invalid)),
        redacted=_redacted_fields(started.config),
        notes=(*read.notes(), *(f"skipped {why}" for why in invalid)),
    )


def wall_to_clock(stamps: tuple[float, ...], clock_now: float) -> list[float]:
    """Wall-clock failure times as readings of the run's (monotonic) clock, so windows carry over."""
    now = time.time()
    return [clock_now - (now - stamp) for stamp in stamps]


def carried_calls(point: ResumePoint | None, config: TeamConfig, agent_id: str) -> AgentResumeState | None:
    """The calls an agent carries into the resumed run: only when its backend is configured as it was
    (a different script or model makes the old calls meaningless)."""
    if point is None:
        return None
    carried = point.state.agents.get(agent_id)
    recorded = next((a for a in point.config.get("agents", []) if a.get("id") == agent_id), None)
    agent = next((a for a in config.agents if a.id == agent_id), None)
    if carried is None or recorded is None or agent is None:
        return None
    # Both sides through today's schema: a trace written before a backend option existed holds no
    # key for it, and that is the option's default, not another configuration.
    try:
        then = type(agent).model_validate(recorded).backend
    except ValidationError:
        return None
    if _as_data(then) != _as_data(agent.backend):
        return None
    return carried


def _as_data(backend: BaseModel) -> dict[str, Any]:
    """A backend's settings as compared for resuming: its own type's fields, secrets masked as in traces."""
    return redact_backend(backend.model_dump(mode="json", serialize_as_any=True))
