"""Each actor's protocol: the closed union of the messages it accepts.

An actor dispatches with ``match`` over its union and ends in ``assert_never``, so the
type checker proves that every message of the protocol has a handler, and a message
added here without one is a type error. At runtime, anything outside the union (or
from a sender the actor does not know) is recorded as a ``DeadLetter``, never dropped
without a trace. Who sends what is the table in docs/architecture.md ("One run").
"""

from __future__ import annotations

from typing import Any, TypeAlias, get_args

from massgen.messages.coordination import (
    AgentChunk,
    AnswerProposed,
    BackendEvent,
    CallPermitRequest,
    CancelTurn,
    FinalPresented,
    FinishRound,
    FirstAnswersIn,
    FirstAnswersJudged,
    InjectAnswers,
    InvalidateVotes,
    ModelCallFinished,
    ModelCallStarted,
    PresentFinal,
    RecordVote,
    SetLiveAgents,
    StartTurn,
    TallyUpdated,
    ToolCallRequested,
    ToolCallResult,
    TurnCorrection,
    TurnFailed,
    VoteProposed,
)
from massgen.messages.files import SnapshotReady, ToolDenied
from massgen.messages.mcp import (
    McpCallTool,
    McpCancelCall,
    McpServerFailed,
    McpToolResult,
    McpToolsListed,
    McpToolsWithdrawn,
)
from massgen.messages.notes import InjectNote, NoteDelivered, SendNote
from massgen.messages.placement import Down
from massgen.messages.supervision import (
    AnswerNow,
    CancelRun,
    ChildFailed,
    ChildStarted,
    KillAgent,
    RestartAgent,
    SetRunTimeout,
    Tick,
)
from massgen.messages.trace_writer_inbox import Flush, WriteRecord, WriteStatus

# --- the supervisor's: what its children, the judge, the runtime and the user tell it -----

# Reports about one turn: each carries the ``turn_id`` it belongs to, and one from a turn
# that already ended (cancelled, superseded) is stale.
TurnReport: TypeAlias = (
    AgentChunk | ModelCallStarted | ModelCallFinished | ToolCallRequested | ToolCallResult | TurnCorrection
    | AnswerProposed | VoteProposed | TurnFailed | FinalPresented | ToolDenied
)
# Everything an agent incarnation tells (or asks) the supervisor.
AgentReport: TypeAlias = (
    ChildStarted | ChildFailed | CallPermitRequest | BackendEvent | NoteDelivered | McpCallTool | McpCancelCall
    | TurnReport
)
# What an McpServer actor reports about its connection.
McpServerReport: TypeAlias = McpToolsListed | McpToolResult | McpServerFailed
# From the user, through the run handle (CLI, REPL, API, HTTP).
RunControl: TypeAlias = CancelRun | AnswerNow | SetRunTimeout | KillAgent | RestartAgent | SendNote

# What the judge tells it.
JudgeReport: TypeAlias = TallyUpdated | FirstAnswersJudged
SupervisorInbox: TypeAlias = Tick | Down | SnapshotReady | JudgeReport | RunControl | McpServerReport | AgentReport

# --- the other actors ----------------------------------------------------------------------

AgentInbox: TypeAlias = (
    StartTurn | PresentFinal | InjectAnswers | InjectNote | FinishRound | CancelTurn | McpToolsListed
    | McpToolsWithdrawn | McpToolResult
)
JudgeInbox: TypeAlias = RecordVote | InvalidateVotes | SetLiveAgents | FirstAnswersIn
McpServerInbox: TypeAlias = McpCallTool | McpCancelCall
TraceWriterInbox: TypeAlias = WriteRecord | Flush | WriteStatus


def members(protocol: Any) -> tuple[type, ...]:
    """The classes of a protocol union, flattened, for the runtime check ``isinstance(m, members(P))``."""
    out: list[type] = []
    for arg in get_args(protocol) or (protocol,):
        out.extend(members(arg) if get_args(arg) else [arg])
    return tuple(dict.fromkeys(out))
