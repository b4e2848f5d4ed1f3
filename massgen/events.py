"""Typed events of a run, as ``massgen.stream`` yields them.

Each event is derived from one trace record, after that record is on disk, so what a
caller sees is exactly what the log says happened. Events carry agent ids and the
anonymised labels (``agent2``, ``agent2.3``) the agents themselves saw.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias, assert_never

from massgen.messages import (
    AgentChunk,
    AgentExcluded,
    AgentMarkedFailed,
    AgentRejoined,
    AgentRestarting,
    AnswerAccepted,
    ChildFailed,
    DeadlineExpired,
    InvalidateVotes,
    RecordVote,
    RunStarted,
)
from massgen.messages.trace import RecordSubset, TraceRecord

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
class _AgentEvent(_Event):
    """An event of one agent: its id, then the label the other agents know it by (``agent2``)."""

    agent: str
    label: str


@dataclass(frozen=True)
class RunStartedEvent(_Event):
    type: ClassVar[str] = "run_started"
    run_id: str
    question: str
    log_dir: Path
    agents: dict[str, str] = field(default_factory=dict)  # agent id -> label


@dataclass(frozen=True)
class ChunkEvent(_AgentEvent):
    """Text an agent streamed; ``kind`` is "text" or "reasoning"."""

    type: ClassVar[str] = "chunk"
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
class RestartEvent(_AgentEvent):
    type: ClassVar[str] = "restart"
    incarnation: int
    delay_s: float
    reason: str


@dataclass(frozen=True)
class FailureEvent(_AgentEvent):
    """An agent failed; ``permanent`` when the team goes on without it."""

    type: ClassVar[str] = "failure"
    incarnation: int
    reason: str
    permanent: bool


@dataclass(frozen=True)
class ExcludedEvent(_AgentEvent):
    """A straggler is left out of ``round``: the team goes on without waiting; its turn goes on."""

    type: ClassVar[str] = "excluded"
    round: int
    reason: str


@dataclass(frozen=True)
class RejoinedEvent(_AgentEvent):
    """A straggler answered or voted after all: it counts again from ``round``."""

    type: ClassVar[str] = "rejoined"
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


# The records ``massgen.stream`` shows; every other type stands for no event. Adding one here without
# a case in ``_events`` is a type error.
EventSource: TypeAlias = (
    RunStarted | AgentChunk | AnswerAccepted | RecordVote | InvalidateVotes | AgentRestarting | AgentMarkedFailed
    | ChildFailed | AgentExcluded | AgentRejoined | DeadlineExpired
)
_SOURCES = RecordSubset[EventSource](EventSource)


def events_from_record(raw: Mapping[str, Any] | TraceRecord, projection: LogProjection, *,
                       chunks: bool = True) -> list[Event]:
    """The events one trace record stands for (usually none or one).

    ``FinalAnswerEvent`` is not made here: the caller builds it from the finished
    ``RunResult`` once the trace is closed. A record is parsed into its message only
    when its type is one of ``EventSource``.
    """
    record = TraceRecord.of(raw)
    message = _SOURCES.message(record)
    return [] if message is None else _events(record, message, projection, chunks)


def _events(record: TraceRecord, message: EventSource, projection: LogProjection, chunks: bool) -> list[Event]:
    told = record.kind == "tell"

    def label(agent: str) -> str:
        view = projection.agents.get(agent)
        return view.label if view is not None else agent

    match message:
        case RunStarted():
            return [RunStartedEvent(run_id=record.run_id, question=message.question, log_dir=Path(message.log_dir),
                                    agents=dict(zip(message.agents, message.labels, strict=True)))]
        case AgentChunk():
            view = projection.agents.get(record.source.name)
            if not told or not chunks or view is None or view.incarnation != record.source.incarnation:
                return []  # not a stream of chunks, or a late chunk of an abandoned incarnation
            return [ChunkEvent(agent=record.source.name, label=view.label, text=message.text, kind=message.kind)]
        case AnswerAccepted():
            return [AnswerEvent(agent=message.agent, label=message.label, content=message.content,
                                round=message.round)]
        case RecordVote():
            return [VoteEvent(voter=message.voter, voter_label=label(message.voter), target=message.target,
                              target_label=message.target_label, reason=message.reason,
                              round=message.round)] if told else []
        case InvalidateVotes():
            return [VotesInvalidatedEvent(reason=message.reason, round=message.round)] if told else []
        case AgentRestarting():
            return [RestartEvent(agent=message.name, label=label(message.name), incarnation=message.incarnation,
                                 delay_s=message.delay_s, reason=message.reason)]
        case AgentMarkedFailed():
            return [FailureEvent(agent=message.name, label=label(message.name), incarnation=message.incarnation,
                                 reason=message.reason, permanent=True)]
        case ChildFailed():
            return [FailureEvent(agent=message.name, label=label(message.name), incarnation=message.incarnation,
                                 reason=message.error, permanent=False)]
        case AgentExcluded():
            return [ExcludedEvent(agent=message.name, label=label(message.name), round=message.round,
                                  reason=message.reason)]
        case AgentRejoined():
            return [RejoinedEvent(agent=message.name, label=label(message.name),
                                  excluded_round=message.excluded_round, round=message.round)]
        case DeadlineExpired():
            return [DeadlineEvent(scope=message.scope, agent=message.name, detail=message.detail)]
        case _ as unreachable:
            assert_never(unreachable)
