"""Typed events of a run: what happened, as ``massgen.stream`` yields it and a screen draws it.

Each event is derived from one trace record, after that record is on disk, so what a caller
sees is exactly what the log says happened, and a live view and a replay of the trace see the
same events. Events carry agent ids and the anonymised labels (``agent2``, ``agent2.3``) the
agents themselves saw. One set of event classes and one ``match`` over the records they come
from (``EventSource``): ``events_from_record`` is the stream ``--stream-events``,
``massgen.stream`` and serve promise (``Event``); ``view_events_from_record`` is that stream plus
the finer events a screen draws (``ViewEvent``: turns, model calls and their usage, tool calls,
notes, steering, the tally, MCP servers, snapshots and the end of the run).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias, TypeGuard, assert_never

from massgen.messages import (
    AgentChunk,
    AgentExcluded,
    AgentMarkedFailed,
    AgentRejoined,
    AgentRestarting,
    AnswerAccepted,
    AnswerNow,
    CancelRun,
    ChildFailed,
    DeadlineExpired,
    InvalidateVotes,
    KillAgent,
    McpServerFailed,
    McpToolsListed,
    McpToolsWithdrawn,
    ModelCallFinished,
    ModelCallStarted,
    NoteDelivered,
    PresentFinal,
    RecordVote,
    RestartAgent,
    RunFinished,
    RunOutcome,
    RunStarted,
    SendNote,
    SetRunTimeout,
    SnapshotTaken,
    TallyUpdated,
    ToolCallRequested,
    ToolCallResult,
    TurnStarted,
)
from massgen.messages.protocols import members
from massgen.messages.trace import RecordSubset, TraceRecord

if TYPE_CHECKING:
    from massgen.logs import LogProjection
    from massgen.outcome.result import RunResult


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



@dataclass(frozen=True)
class TurnStartedEvent(_AgentEvent):
    type: ClassVar[str] = "turn_started"
    incarnation: int
    vote_only: bool
    view_labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelCallStartedEvent(_AgentEvent):
    """A model call went out: until its ``ModelCallEvent`` the agent waits on its model (a screen
    shows that it works, also when the reply will hold only tool calls and streams no text)."""

    type: ClassVar[str] = "model_call_started"
    call_index: int


@dataclass(frozen=True)
class ModelCallEvent(_AgentEvent):
    """A model call ended (``error`` set when it failed); usage as the provider reported it."""

    type: ClassVar[str] = "model_call"
    input_tokens: int
    output_tokens: int
    cost_usd: float
    error: str | None = None


@dataclass(frozen=True)
class ToolCallStartedEvent(_AgentEvent):
    type: ClassVar[str] = "tool_call"
    call_id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolCallFinishedEvent(_AgentEvent):
    type: ClassVar[str] = "tool_result"
    call_id: str
    name: str
    content: str
    is_error: bool = False


@dataclass(frozen=True)
class NoteSentEvent(_Event):
    """A person's note to every agent (``to`` None) or one; ``note_id`` is the SendNote's id."""

    type: ClassVar[str] = "note"
    note_id: str
    text: str
    to: str | None = None


@dataclass(frozen=True)
class NoteDeliveredEvent(_AgentEvent):
    type: ClassVar[str] = "note_delivered"
    note_id: str


@dataclass(frozen=True)
class SteeringEvent(_Event):
    """The user steered the run: ``action`` is cancel, answer_now, timeout, kill or restart."""

    type: ClassVar[str] = "steering"
    action: str
    agent: str = ""
    detail: str = ""


@dataclass(frozen=True)
class TallyEvent(_Event):
    """The judge's count for ``round``: votes per agent id, and the winner once converged."""

    type: ClassVar[str] = "tally"
    round: int
    counts: dict[str, int]
    converged: bool
    winner: str | None


@dataclass(frozen=True)
class PresentingEvent(_AgentEvent):
    type: ClassVar[str] = "presenting"


@dataclass(frozen=True)
class McpEvent(_Event):
    """An MCP server of an agent: ``state`` is tools_listed, failed, restarting or withdrawn."""

    type: ClassVar[str] = "mcp"
    agent: str
    server: str
    state: str
    detail: str = ""
    tools: tuple[str, ...] = ()


@dataclass(frozen=True)
class SnapshotEvent(_Event):
    """An answer's workspace was frozen at ``path`` (``files`` files, ``bytes`` bytes)."""

    type: ClassVar[str] = "snapshot"
    agent: str
    label: str  # the answer's (agentN.M)
    path: str
    files: int
    bytes: int


class RunFinishedEvent(RunOutcome):
    """How the run ended, from its ``RunFinished`` record (``FinalAnswerEvent`` needs the result): the
    outcome's fields, declared once (``messages/run.py``)."""

    type: ClassVar[str] = "run_finished"

    def as_dict(self) -> dict[str, Any]:
        return {"type": self.type, **self.model_dump()}


@dataclass(frozen=True)
class RunSettingsEvent(_Event):
    """What the run was started with that a header shows: its deadline and final-answer strategy."""

    type: ClassVar[str] = "run_settings"
    deadline_s: float
    strategy: str
    turn: int = 1
    winner_rule: str = "support"  # how the judge picks among answers without a majority


ViewEvent = (Event | RunSettingsEvent | TurnStartedEvent | ModelCallStartedEvent | ModelCallEvent
             | ToolCallStartedEvent | ToolCallFinishedEvent | NoteSentEvent | NoteDeliveredEvent | SteeringEvent
             | TallyEvent | PresentingEvent | McpEvent | SnapshotEvent | RunFinishedEvent)



# The records events are made from, one case each in ``_events``: adding one here without a case is
# a type error, and a record of another type stands for no event and is never parsed.
EventSource: TypeAlias = (
    RunStarted | AgentChunk | AnswerAccepted | RecordVote | InvalidateVotes | AgentRestarting | AgentMarkedFailed
    | ChildFailed | AgentExcluded | AgentRejoined | DeadlineExpired | TurnStarted | ModelCallStarted
    | ModelCallFinished | ToolCallRequested | ToolCallResult | SendNote | NoteDelivered | CancelRun | AnswerNow
    | SetRunTimeout | KillAgent | RestartAgent | TallyUpdated | PresentFinal | McpToolsListed | McpServerFailed
    | McpToolsWithdrawn | SnapshotTaken | RunFinished
)
_SOURCES = RecordSubset[EventSource](EventSource)
# The records the stream's events (``Event``) come from; ``events_from_record`` parses no other.
StreamSource: TypeAlias = (
    RunStarted | AgentChunk | AnswerAccepted | RecordVote | InvalidateVotes | AgentRestarting | AgentMarkedFailed
    | ChildFailed | AgentExcluded | AgentRejoined | DeadlineExpired
)
_STREAMED = RecordSubset[StreamSource](StreamSource)
_STREAM_EVENTS: tuple[type, ...] = members(Event)
# Shown however they were recorded; the others only when told (a reply or a dead letter's copy is not news).
_ANY_KIND = (RunStarted, AnswerAccepted, AgentRestarting, AgentMarkedFailed, ChildFailed, AgentExcluded,
             AgentRejoined, DeadlineExpired, TurnStarted, RunFinished, McpToolsListed, McpServerFailed,
             McpToolsWithdrawn, SnapshotTaken)


def events_from_record(raw: Mapping[str, Any] | TraceRecord, projection: LogProjection, *,
                       chunks: bool = True) -> list[Event]:
    """The stream's events one trace record stands for (usually none or one).

    ``FinalAnswerEvent`` is not made here: the caller builds it from the finished
    ``RunResult`` once the trace is closed. A record is parsed into its message only
    when its type is one of ``StreamSource``.
    """
    record = TraceRecord.of(raw)
    message = _STREAMED.message(record)
    return [] if message is None else [e for e in _events(record, message, projection, chunks) if _streamed(e)]


def view_events_from_record(raw: Mapping[str, Any] | TraceRecord, projection: LogProjection) -> list[ViewEvent]:
    """``events_from_record`` and the finer events a screen draws, for one trace record."""
    record = TraceRecord.of(raw)
    message = _SOURCES.message(record)
    return [] if message is None else _events(record, message, projection, True)


def _streamed(event: ViewEvent) -> TypeGuard[Event]:
    return isinstance(event, _STREAM_EVENTS)


def _events(record: TraceRecord, message: EventSource, projection: LogProjection, chunks: bool) -> list[ViewEvent]:
    if record.kind != "tell" and not isinstance(message, _ANY_KIND):
        return []

    def label(agent: str) -> str:
        view = projection.agents.get(agent)
        return view.label if view is not None else agent

    sender = record.source.name
    match message:
        case RunStarted():
            timeouts = message.config.get("timeout_settings") or {}
            orchestrator = message.config.get("orchestrator") or {}
            return [RunStartedEvent(run_id=record.run_id, question=message.question, log_dir=Path(message.log_dir),
                                    agents=dict(zip(message.agents, message.labels, strict=True))),
                    RunSettingsEvent(deadline_s=float(timeouts.get("orchestrator_timeout_seconds", 0) or 0),
                                     strategy=str(orchestrator.get("final_answer_strategy", "")), turn=message.turn,
                                     winner_rule=str(orchestrator.get("winner_rule") or "support"))]
        case AgentChunk():
            view = projection.agents.get(sender)
            if not chunks or view is None or view.incarnation != record.source.incarnation:
                return []  # chunks not wanted, or a late chunk of an abandoned incarnation
            return [ChunkEvent(agent=sender, label=view.label, text=message.text, kind=message.kind)]
        case AnswerAccepted():
            return [AnswerEvent(agent=message.agent, label=message.label, content=message.content,
                                round=message.round)]
        case RecordVote():
            return [VoteEvent(voter=message.voter, voter_label=label(message.voter), target=message.target,
                              target_label=message.target_label, reason=message.reason, round=message.round)]
        case InvalidateVotes():
            return [VotesInvalidatedEvent(reason=message.reason, round=message.round)]
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
        case TurnStarted():
            return [TurnStartedEvent(agent=message.agent, label=label(message.agent), incarnation=message.incarnation,
                                     vote_only=message.vote_only, view_labels=message.view_labels)]
        case ModelCallStarted():
            return [ModelCallStartedEvent(agent=sender, label=label(sender), call_index=message.call_index)]
        case ModelCallFinished():
            return [ModelCallEvent(agent=sender, label=label(sender), input_tokens=message.input_tokens,
                                   output_tokens=message.output_tokens, cost_usd=message.cost_usd,
                                   error=message.error)]
        case ToolCallRequested():
            return [ToolCallStartedEvent(agent=sender, label=label(sender), call_id=message.call_id,
                                         name=message.name, arguments=dict(message.arguments))]
        case ToolCallResult():
            return [ToolCallFinishedEvent(agent=sender, label=label(sender), call_id=message.call_id,
                                          name=message.name, content=message.content, is_error=message.is_error)]
        case SendNote():
            return [NoteSentEvent(note_id=record.msg_id, text=message.text, to=message.to)]
        case NoteDelivered():
            return [NoteDeliveredEvent(agent=sender, label=label(sender), note_id=message.note_id)]
        case CancelRun():
            return [SteeringEvent(action="cancel", detail=message.reason)]
        case AnswerNow():
            return [SteeringEvent(action="answer_now")]
        case SetRunTimeout():
            return [SteeringEvent(action="timeout", detail=f"{message.seconds:g}")]
        case KillAgent():
            return [SteeringEvent(action="kill", agent=message.name)]
        case RestartAgent():
            return [SteeringEvent(action="restart", agent=message.name)]
        case TallyUpdated():
            return [TallyEvent(round=message.round, counts=dict(message.counts), converged=message.converged,
                               winner=message.winner)]
        case PresentFinal():
            return [PresentingEvent(agent=record.to_name, label=label(record.to_name))]
        case McpToolsListed():
            return [McpEvent(agent=message.agent, server=message.server, state="tools_listed",
                             tools=tuple(tool.name for tool in message.tools))]
        case McpServerFailed():
            return [McpEvent(agent=message.agent, server=message.server, state="failed", detail=message.error)]
        case McpToolsWithdrawn():
            return [McpEvent(agent=message.agent, server=message.server, state="withdrawn", detail=message.reason)]
        case SnapshotTaken():
            return [SnapshotEvent(agent=message.agent, label=message.label, path=message.path, files=message.files,
                                  bytes=message.bytes)]
        case RunFinished():
            return [RunFinishedEvent.model_validate(message, from_attributes=True)]
        case _ as unreachable:
            assert_never(unreachable)
