"""The finer typed events a screen draws: ``massgen.events`` plus turns, model calls and their
usage, tool calls, notes, steering, the tally, MCP servers, snapshots and the end of the run.

``events_from_record`` is the stream ``--stream-events``, ``massgen.stream`` and serve promise;
``view_events_from_record`` is that stream and these, each still derived from one trace record
after it is on disk, so a live view and a replay of the trace see the same events.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias, assert_never

from massgen.events import Event, _AgentEvent, _Event, events_from_record
from massgen.messages import (
    AnswerNow,
    CancelRun,
    KillAgent,
    McpServerFailed,
    McpToolsListed,
    McpToolsWithdrawn,
    ModelCallFinished,
    ModelCallStarted,
    NoteDelivered,
    PresentFinal,
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
from massgen.messages.trace import RecordSubset, TraceRecord

if TYPE_CHECKING:
    from massgen.logs import LogProjection


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


# The records a screen draws beyond ``EventSource``; every other type stands for no finer event.
ViewSource: TypeAlias = (
    RunStarted | TurnStarted | ModelCallStarted | ModelCallFinished | ToolCallRequested | ToolCallResult | SendNote
    | NoteDelivered | CancelRun | AnswerNow | SetRunTimeout | KillAgent | RestartAgent | TallyUpdated | PresentFinal
    | McpToolsListed | McpServerFailed | McpToolsWithdrawn | SnapshotTaken | RunFinished
)
_VIEWED = RecordSubset[ViewSource](ViewSource)
# Shown however they were recorded; the others only when told (a reply or a dead letter's copy is not news).
_ANY_KIND = (RunStarted, TurnStarted, RunFinished, McpToolsListed, McpServerFailed, McpToolsWithdrawn, SnapshotTaken)


def view_events_from_record(raw: Mapping[str, Any] | TraceRecord, projection: LogProjection) -> list[ViewEvent]:
    """``events_from_record`` and the finer events a screen draws, for one trace record."""
    record = TraceRecord.of(raw)
    found: list[ViewEvent] = list(events_from_record(record, projection))
    message = _VIEWED.message(record)
    if message is not None and (record.kind == "tell" or isinstance(message, _ANY_KIND)):
        found.append(_view_event(record, message, projection))
    return found


def _view_event(record: TraceRecord, message: ViewSource, projection: LogProjection) -> ViewEvent:
    def label(agent: str) -> str:
        view = projection.agents.get(agent)
        return view.label if view is not None else agent

    sender = record.source.name
    match message:
        case RunStarted():
            timeouts = message.config.get("timeout_settings") or {}
            orchestrator = message.config.get("orchestrator") or {}
            return RunSettingsEvent(deadline_s=float(timeouts.get("orchestrator_timeout_seconds", 0) or 0),
                                    strategy=str(orchestrator.get("final_answer_strategy", "")), turn=message.turn,
                                    winner_rule=str(orchestrator.get("winner_rule") or "support"))
        case TurnStarted():
            return TurnStartedEvent(agent=message.agent, label=label(message.agent), incarnation=message.incarnation,
                                    vote_only=message.vote_only, view_labels=message.view_labels)
        case ModelCallStarted():
            return ModelCallStartedEvent(agent=sender, label=label(sender), call_index=message.call_index)
        case ModelCallFinished():
            return ModelCallEvent(agent=sender, label=label(sender), input_tokens=message.input_tokens,
                                  output_tokens=message.output_tokens, cost_usd=message.cost_usd, error=message.error)
        case ToolCallRequested():
            return ToolCallStartedEvent(agent=sender, label=label(sender), call_id=message.call_id, name=message.name,
                                        arguments=dict(message.arguments))
        case ToolCallResult():
            return ToolCallFinishedEvent(agent=sender, label=label(sender), call_id=message.call_id,
                                         name=message.name, content=message.content, is_error=message.is_error)
        case SendNote():
            return NoteSentEvent(note_id=record.msg_id, text=message.text, to=message.to)
        case NoteDelivered():
            return NoteDeliveredEvent(agent=sender, label=label(sender), note_id=message.note_id)
        case CancelRun():
            return SteeringEvent(action="cancel", detail=message.reason)
        case AnswerNow():
            return SteeringEvent(action="answer_now")
        case SetRunTimeout():
            return SteeringEvent(action="timeout", detail=f"{message.seconds:g}")
        case KillAgent():
            return SteeringEvent(action="kill", agent=message.name)
        case RestartAgent():
            return SteeringEvent(action="restart", agent=message.name)
        case TallyUpdated():
            return TallyEvent(round=message.round, counts=dict(message.counts), converged=message.converged,
                              winner=message.winner)
        case PresentFinal():
            return PresentingEvent(agent=record.to_name, label=label(record.to_name))
        case McpToolsListed():
            return McpEvent(agent=message.agent, server=message.server, state="tools_listed",
                            tools=tuple(tool.name for tool in message.tools))
        case McpServerFailed():
            return McpEvent(agent=message.agent, server=message.server, state="failed", detail=message.error)
        case McpToolsWithdrawn():
            return McpEvent(agent=message.agent, server=message.server, state="withdrawn", detail=message.reason)
        case SnapshotTaken():
            return SnapshotEvent(agent=message.agent, label=message.label, path=message.path, files=message.files,
                                 bytes=message.bytes)
        case RunFinished():
            return RunFinishedEvent.model_validate(message, from_attributes=True)
        case _ as unreachable:
            assert_never(unreachable)
