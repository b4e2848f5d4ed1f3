"""The finer typed events a screen draws: ``massgen.events`` plus turns, model calls and their
usage, tool calls, notes, steering, the tally, MCP servers, snapshots and the end of the run.

``events_from_record`` is the stream ``--stream-events``, ``massgen.stream`` and serve promise;
``view_events_from_record`` is that stream and these, each still derived from one trace record
after it is on disk, so a live view and a replay of the trace see the same events.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from massgen.events import Event, _Event, events_from_record
from massgen.messages.trace import TraceRecord

if TYPE_CHECKING:
    from massgen.logs import LogProjection


@dataclass(frozen=True)
class TurnStartedEvent(_Event):
    type: ClassVar[str] = "turn_started"
    agent: str
    label: str
    incarnation: int
    vote_only: bool
    view_labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelCallEvent(_Event):
    """A model call ended (``error`` set when it failed); usage as the provider reported it."""

    type: ClassVar[str] = "model_call"
    agent: str
    label: str
    input_tokens: int
    output_tokens: int
    cost_usd: float
    error: str | None = None


@dataclass(frozen=True)
class ToolCallStartedEvent(_Event):
    type: ClassVar[str] = "tool_call"
    agent: str
    label: str
    call_id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolCallFinishedEvent(_Event):
    type: ClassVar[str] = "tool_result"
    agent: str
    label: str
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
class NoteDeliveredEvent(_Event):
    type: ClassVar[str] = "note_delivered"
    agent: str
    label: str
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
class PresentingEvent(_Event):
    type: ClassVar[str] = "presenting"
    agent: str
    label: str


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
    label: str
    path: str
    files: int
    bytes: int


@dataclass(frozen=True)
class RunFinishedEvent(_Event):
    """How the run ended, from its ``RunFinished`` record (``FinalAnswerEvent`` needs the result)."""

    type: ClassVar[str] = "run_finished"
    status: str
    reason: str
    winner: str | None
    winner_label: str | None
    final_answer: str | None
    partial: bool
    elapsed_s: float
    model_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float


@dataclass(frozen=True)
class RunSettingsEvent(_Event):
    """What the run was started with that a header shows: its deadline and final-answer strategy."""

    type: ClassVar[str] = "run_settings"
    deadline_s: float
    strategy: str
    turn: int = 1


ViewEvent = (Event | RunSettingsEvent | TurnStartedEvent | ModelCallEvent | ToolCallStartedEvent | ToolCallFinishedEvent
             | NoteSentEvent | NoteDeliveredEvent | SteeringEvent | TallyEvent | PresentingEvent | McpEvent
             | SnapshotEvent | RunFinishedEvent)


def view_events_from_record(raw: Mapping[str, Any] | TraceRecord, projection: LogProjection) -> list[ViewEvent]:
    """``events_from_record`` and the finer events a screen draws, for one trace record."""
    record = TraceRecord.of(raw)
    found: list[ViewEvent] = list(events_from_record(record, projection))
    extra = _view_event(record, projection)
    if extra is not None:
        found.append(extra)
    return found


def _view_event(record: TraceRecord, projection: LogProjection) -> ViewEvent | None:
    kind, mtype, p = record.kind, record.type, record.payload
    labels = {agent_id: view.label for agent_id, view in projection.agents.items()}
    sender = record.source.name
    if mtype == "RunStarted":
        config = p.get("config") or {}
        timeouts = config.get("timeout_settings") or {}
        orchestrator = config.get("orchestrator") or {}
        return RunSettingsEvent(deadline_s=float(timeouts.get("orchestrator_timeout_seconds", 0) or 0),
                                strategy=str(orchestrator.get("final_answer_strategy", "")),
                                turn=int(p.get("turn", 1)))
    if mtype == "TurnStarted":
        return TurnStartedEvent(agent=p["agent"], label=labels.get(p["agent"], p["agent"]),
                                incarnation=p["incarnation"], vote_only=p["vote_only"],
                                view_labels=tuple(p.get("view_labels", ())))
    if kind != "tell" and mtype not in ("RunFinished", "McpToolsListed", "McpServerFailed", "McpToolsWithdrawn",
                                        "SnapshotTaken", "McpServerRestarting"):
        return None
    if mtype == "ModelCallFinished":
        return ModelCallEvent(agent=sender, label=labels.get(sender, sender), input_tokens=p["input_tokens"],
                              output_tokens=p["output_tokens"], cost_usd=p["cost_usd"], error=p.get("error"))
    if mtype == "ToolCallRequested":
        return ToolCallStartedEvent(agent=sender, label=labels.get(sender, sender), call_id=p["call_id"],
                                    name=p["name"], arguments=dict(p["arguments"]))
    if mtype == "ToolCallResult":
        return ToolCallFinishedEvent(agent=sender, label=labels.get(sender, sender), call_id=p["call_id"],
                                     name=p["name"], content=p["content"], is_error=p["is_error"])
    if mtype == "SendNote":
        return NoteSentEvent(note_id=record.msg_id, text=p["text"], to=p.get("to"))
    if mtype == "NoteDelivered":
        return NoteDeliveredEvent(agent=sender, label=labels.get(sender, sender), note_id=p["note_id"])
    steering = _steering(mtype, p)
    if steering is not None:
        return steering
    if mtype == "TallyUpdated":
        return TallyEvent(round=p["round"], counts=dict(p["counts"]), converged=p["converged"], winner=p["winner"])
    if mtype == "PresentFinal":
        target = record.to_name
        return PresentingEvent(agent=target, label=labels.get(target, target))
    if mtype == "McpToolsListed":
        return McpEvent(agent=p["agent"], server=p["server"], state="tools_listed",
                        tools=tuple(str(t["name"]) for t in p["tools"]))
    if mtype == "McpServerFailed":
        return McpEvent(agent=p["agent"], server=p["server"], state="failed", detail=p["error"])
    if mtype == "McpToolsWithdrawn":
        return McpEvent(agent=p["agent"], server=p["server"], state="withdrawn", detail=p["reason"])
    if mtype == "SnapshotTaken":
        return SnapshotEvent(agent=p["agent"], label=p["label"], path=p["path"], files=p["files"], bytes=p["bytes"])
    if mtype == "RunFinished":
        return RunFinishedEvent(status=p["status"], reason=p["reason"], winner=p["winner"],
                                winner_label=p["winner_label"], final_answer=p["final_answer"],
                                partial=p["partial"], elapsed_s=p["elapsed_s"], model_calls=p["model_calls"],
                                input_tokens=p["input_tokens"], output_tokens=p["output_tokens"],
                                cost_usd=p["cost_usd"])
    return None


def _steering(mtype: str, p: Mapping[str, Any]) -> SteeringEvent | None:
    if mtype == "CancelRun":
        return SteeringEvent(action="cancel", detail=p["reason"])
    if mtype == "AnswerNow":
        return SteeringEvent(action="answer_now")
    if mtype == "SetRunTimeout":
        return SteeringEvent(action="timeout", detail=f"{p['seconds']:g}")
    if mtype == "KillAgent":
        return SteeringEvent(action="kill", agent=p["name"])
    if mtype == "RestartAgent":
        return SteeringEvent(action="restart", agent=p["name"])
    return None
