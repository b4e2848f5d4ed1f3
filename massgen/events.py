"""Typed events of a run, as ``massgen.stream`` yields them.

Each event is derived from one trace record, after that record is on disk, so what a
caller sees is exactly what the log says happened. Events carry agent ids and the
anonymised labels (``agent2``, ``agent2.3``) the agents themselves saw.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from massgen.messages.trace import TraceRecord

if TYPE_CHECKING:
    from massgen.logs import LogProjection
    from massgen.result import RunResult


@dataclass(frozen=True)
class _Event:
    type: ClassVar[str] = "event"

    def as_dict(self) -> dict[str, Any]:
        """Plain data with a ``type`` tag, ready for JSON."""
        data = {k: str(v) if isinstance(v, Path) else v for k, v in asdict(self).items()}
        return {"type": self.type, **data}


@dataclass(frozen=True)
class RunStartedEvent(_Event):
    type: ClassVar[str] = "run_started"
    run_id: str
    question: str
    log_dir: Path
    agents: dict[str, str] = field(default_factory=dict)  # agent id -> label


@dataclass(frozen=True)
class ChunkEvent(_Event):
    """Text an agent streamed; ``kind`` is "text" or "reasoning"."""

    type: ClassVar[str] = "chunk"
    agent: str
    label: str
    text: str
    kind: str = "text"


@dataclass(frozen=True)
class AnswerEvent(_Event):
    type: ClassVar[str] = "answer"
    agent: str
    label: str  # agentN.M: the M-th answer of the N-th agent
    content: str
    round: int


@dataclass(frozen=True)
class VoteEvent(_Event):
    type: ClassVar[str] = "vote"
    voter: str
    voter_label: str
    target: str
    target_label: str
    reason: str
    round: int


@dataclass(frozen=True)
class VotesInvalidatedEvent(_Event):
    """A new answer arrived, so every vote cast so far no longer counts."""

    type: ClassVar[str] = "votes_invalidated"
    reason: str
    round: int


@dataclass(frozen=True)
class RestartEvent(_Event):
    type: ClassVar[str] = "restart"
    agent: str
    label: str
    incarnation: int
    delay_s: float
    reason: str


@dataclass(frozen=True)
class FailureEvent(_Event):
    """An agent failed; ``permanent`` when the team goes on without it."""

    type: ClassVar[str] = "failure"
    agent: str
    label: str
    incarnation: int
    reason: str
    permanent: bool


@dataclass(frozen=True)
class ExcludedEvent(_Event):
    """A straggler is left out of ``round``: the team goes on without waiting; its turn goes on."""

    type: ClassVar[str] = "excluded"
    agent: str
    label: str
    round: int
    reason: str


@dataclass(frozen=True)
class RejoinedEvent(_Event):
    """A straggler answered or voted after all: it counts again from ``round``."""

    type: ClassVar[str] = "rejoined"
    agent: str
    label: str
    excluded_round: int
    round: int


@dataclass(frozen=True)
class DeadlineEvent(_Event):
    type: ClassVar[str] = "deadline"
    scope: str  # run | start | turn | idle | present | straggler
    agent: str
    detail: str


@dataclass(frozen=True)
class FinalAnswerEvent(_Event):
    """The last event of every stream: the whole result, logs complete."""

    type: ClassVar[str] = "final_answer"
    result: RunResult

    @property
    def final_answer(self) -> str | None:
        return self.result.final_answer

    @property
    def winner(self) -> str | None:
        return self.result.winner

    def as_dict(self) -> dict[str, Any]:
        return {"type": self.type, **self.result.as_dict()}


Event = (RunStartedEvent | ChunkEvent | AnswerEvent | VoteEvent | VotesInvalidatedEvent | RestartEvent
         | FailureEvent | ExcludedEvent | RejoinedEvent | DeadlineEvent | FinalAnswerEvent)


def events_from_record(raw: Mapping[str, Any] | TraceRecord, projection: LogProjection, *,
                       chunks: bool = True) -> list[Event]:
    """The events one trace record stands for (usually none or one).

    ``FinalAnswerEvent`` is not made here: the caller builds it from the finished
    ``RunResult`` once the trace is closed.
    """
    record = TraceRecord.of(raw)
    kind, mtype, p = record.kind, record.type, record.payload
    labels = {agent_id: view.label for agent_id, view in projection.agents.items()}
    if mtype == "RunStarted":
        return [RunStartedEvent(run_id=record.run_id, question=p["question"], log_dir=Path(p["log_dir"]),
                                agents=dict(zip(p["agents"], p["labels"], strict=True)))]
    if mtype == "AgentChunk" and kind == "tell" and chunks:
        agent, incarnation = record.source.name, record.source.incarnation
        view = projection.agents.get(agent)
        if view is None or view.incarnation != incarnation:
            return []  # a late chunk of an abandoned incarnation
        return [ChunkEvent(agent=agent, label=view.label, text=p["text"], kind=p["kind"])]
    if mtype == "AnswerAccepted":
        return [AnswerEvent(agent=p["agent"], label=p["label"], content=p["content"], round=p["round"])]
    if mtype == "RecordVote" and kind == "tell":
        return [VoteEvent(voter=p["voter"], voter_label=labels.get(p["voter"], p["voter"]),
                          target=p["target"], target_label=p["target_label"], reason=p["reason"],
                          round=p["round"])]
    if mtype == "InvalidateVotes" and kind == "tell":
        return [VotesInvalidatedEvent(reason=p["reason"], round=p["round"])]
    if mtype == "AgentRestarting":
        return [RestartEvent(agent=p["name"], label=labels.get(p["name"], p["name"]),
                             incarnation=p["incarnation"], delay_s=p["delay_s"], reason=p["reason"])]
    if mtype == "AgentMarkedFailed":
        return [FailureEvent(agent=p["name"], label=labels.get(p["name"], p["name"]),
                             incarnation=p["incarnation"], reason=p["reason"], permanent=True)]
    if mtype == "ChildFailed":
        return [FailureEvent(agent=p["name"], label=labels.get(p["name"], p["name"]),
                             incarnation=p["incarnation"], reason=p["error"], permanent=False)]
    if mtype == "AgentExcluded":
        return [ExcludedEvent(agent=p["name"], label=labels.get(p["name"], p["name"]), round=p["round"],
                              reason=p["reason"])]
    if mtype == "AgentRejoined":
        return [RejoinedEvent(agent=p["name"], label=labels.get(p["name"], p["name"]),
                              excluded_round=p["excluded_round"], round=p["round"])]
    if mtype == "DeadlineExpired":
        return [DeadlineEvent(scope=p["scope"], agent=p.get("name", ""), detail=p.get("detail", ""))]
    return []
