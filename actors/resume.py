"""Resuming a run from its trace: it continues where it stopped, and finished work is not paid for again.

``resume_point`` reads ``trace.jsonl`` alone (torn last line and bad lines tolerated,
and named) and rebuilds what the supervisor had: the accepted answers, the current
round's votes, each agent's incarnation, failures and restarts, the budget spent, the
turn counter, and each agent's model calls. The resumed run is a new attempt
(``attempt_N+1`` beside the old one) in the same lineage: it records the state it
started from as ``RunResumed``, agents keep their incarnation numbers, an agent that
had voted in the current round waits, and an agent that was mid-turn starts that turn
again, its finished calls answered from the trace (``actors/replay.py``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from massgen.configs.schema import TeamConfig, redact_backend
from massgen.errors import ResumeError as ResumeError  # re-exported: the one class, also importable here
from massgen.logs.calls import model_calls
from massgen.logs.layout import next_attempt_dir
from massgen.logs.reading import TraceReadError, read_trace_file, trace_path
from massgen.messages import AgentResumeState, Sender
from massgen.messages.trace import TraceRecord


@dataclass(frozen=True)
class ResumedVote:
    voter: str
    target: str
    target_label: str
    reason: str


@dataclass(frozen=True)
class ResumeState:
    """What the supervisor starts from instead of nothing (applied by ``actors/restore.py``)."""

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
    turn: dict[str, Any] | None = None  # the StartTurn payload of its last turn
    excluded_round: int | None = None  # left out of that round as a straggler, not back yet


def _fold(records: list[dict[str, Any]], agents: list[str], log_dir: Path, skipped: tuple[str, ...]) -> ResumeState:
    state = {agent: _Agent() for agent in agents}
    answers: list[tuple[str, str]] = []
    independent: set[int] = set()
    first_done: set[str] = set()
    votes: dict[str, ResumedVote] = {}
    spent = {"model_calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}
    answer_now = False
    next_turn = 1
    run_id = ""
    for raw in records:
        record = TraceRecord.of(raw)
        kind, p = record.type, record.payload
        to = record.target or Sender(name="", incarnation=0)
        if kind == "RunStarted":
            run_id = record.run_id
        elif kind == "RunResumed":  # this attempt continued an earlier one: start from what it carried
            for carried in p["agents"]:
                if carried["agent"] in state:
                    state[carried["agent"]] = _Agent(
                        incarnation=carried["incarnation"], status=carried["status"],
                        failures=list(carried["failures"]), restarts=carried["restarts"],
                        played=list(carried["played"]))
            for key in spent:
                spent[key] += p[key]
            answer_now = answer_now or p["answer_now"]
            next_turn = max(next_turn, p["next_turn_id"])
            first_done.update(p.get("first_done", ()))
        elif kind == "AnswerAccepted" and p["agent"] in state:
            if p.get("independent"):
                independent.add(len(answers))
            first_done.add(p["agent"])
            answers.append((p["agent"], p["content"]))
            state[p["agent"]].turn = state[p["agent"]].last_cause = None  # that turn is over
            votes.clear()  # a new answer opens a new round (the InvalidateVotes may not be written yet)
        elif kind == "InvalidateVotes":
            votes.clear()
        elif kind == "RecordVote" and record.kind == "tell" and p["round"] == len(answers):
            votes[p["voter"]] = ResumedVote(p["voter"], p["target"], p["target_label"], p["reason"])
            first_done.add(p["voter"])
        elif kind == "AnswerNow":
            answer_now = True
        elif kind in ("StartTurn", "PresentFinal") and record.kind == "tell" and to.name in state:
            next_turn = max(next_turn, int(p["turn_id"]) + 1)
            agent = state[to.name]
            agent.incarnation, agent.status = to.incarnation or agent.incarnation, "live"
            agent.last_cause = record.msg_id
            agent.turn = p if kind == "StartTurn" else None
        elif kind == "AgentRestarting" and p["name"] in state:
            agent = state[p["name"]]
            agent.failures.append(record.ts)
            agent.restarts += 1
            agent.status, agent.incarnation = "restarting", int(p["incarnation"]) + 1
            agent.played, agent.last_cause, agent.turn = [], None, None
        elif kind == "AgentMarkedFailed" and p["name"] in state:
            state[p["name"]].failures.append(record.ts)
            state[p["name"]].status = "failed"
        elif kind == "AgentExcluded" and p["name"] in state:
            state[p["name"]].excluded_round = int(p["round"])
        elif kind == "AgentRejoined" and p["name"] in state:
            state[p["name"]].excluded_round = None
        elif kind == "ChildStarted" and p["name"] in state and state[p["name"]].status == "restarting":
            state[p["name"]].status = "live"
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
    resumed: dict[str, AgentResumeState] = {}
    for name, agent in state.items():
        replay = tuple(
            {"request": c.request.model_dump(mode="json"), "reply": c.reply, "seq": c.reply_seq}
            for c in calls
            if c.agent == name and c.incarnation == agent.incarnation and c.reply is not None
            and c.reply.get("error") is None and agent.last_cause is not None and c.cause == agent.last_cause
        ) if agent.status == "live" else ()
        resumed[name] = AgentResumeState(
            agent=name, incarnation=agent.incarnation, status=agent.status,
            failures=tuple(agent.failures), restarts=agent.restarts, voted=name in votes,
            played=tuple(agent.played) if agent.status == "live" else (), replay=replay,
            turn_view=agent.turn["view"] if agent.turn and agent.status == "live" and name not in votes else None,
            turn_vote_only=bool(agent.turn and agent.turn["vote_only"]), excluded_round=agent.excluded_round,
        )
    return ResumeState(
        answers=tuple(answers), votes=tuple(votes.values()), agents=resumed,
        model_calls=int(spent["model_calls"]), input_tokens=int(spent["input_tokens"]),
        output_tokens=int(spent["output_tokens"]), cost_usd=float(spent["cost_usd"]), answer_now=answer_now,
        next_turn_id=next_turn, previous_run_id=run_id, resumed_from=str(log_dir), skipped=skipped,
        independent=frozenset(independent), first_done=frozenset(first_done),
    )


def resume_point(log_dir: str | Path) -> ResumePoint:
    """Everything a resumed run needs, from ``log_dir/trace.jsonl`` alone."""
    log_dir = Path(log_dir)
    if not trace_path(log_dir).is_file():
        raise ResumeError(f"{log_dir}: no trace.jsonl here; give the run's attempt directory")
    if log_dir.is_file():
        log_dir = log_dir.parent
    try:
        read = read_trace_file(log_dir)
    except TraceReadError as exc:
        raise ResumeError(str(exc)) from exc
    records = read.records
    started = next((r for r in records if r["type"] == "RunStarted"), None)
    if started is None:
        raise ResumeError(f"{log_dir}: the trace has no RunStarted record, so there is no run to continue")
    payload = started["payload"]
    finished = next((r for r in records if r["type"] == "RunFinished"), None)
    config = payload["config"]
    return ResumePoint(
        question=payload["question"],
        history=tuple((q, a) for q, a in payload.get("history", [])),
        config=config,
        turn=int(payload.get("turn", 1)),
        attempt=int(payload.get("attempt", 1)),
        finished_status=finished["payload"]["status"] if finished else None,
        log_dir=log_dir,
        state=_fold(records, list(payload["agents"]), log_dir, tuple(read.skipped)),
        redacted=_redacted_fields(config),
        notes=tuple(read.notes()),
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
