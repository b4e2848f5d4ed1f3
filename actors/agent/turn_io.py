"""What a turn needs from its agent and what it reports back: the turn worker's port.

``TurnRunner`` (``actors/agent/turn.py``) talks to nothing but a ``TurnIO``; the agent actor
(``actors/agent/actor.py``) and MCP tool routing (``actors/agent/mcp_tools.py``) build one. The
settings and the two errors a turn raises to its agent live here with it, so the agent
can read them without the turn's model-calling code.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from massgen.actors.agent.stream_guard import StreamLimits
from massgen.backends.retry import CallRetry
from massgen.messages import CallPermit, CodeCheck, Message, ToolCall, ToolSpec
from massgen.messages.stream import Attachment

if TYPE_CHECKING:
    from massgen.actors.coordination.code_checks import Ranked

ToolExecutor = Callable[[str, dict[str, Any]], Awaitable[tuple[str, bool]]]


class ModelCallError(Exception):
    """The backend gave up on a call; the agent reports it as a failure of this incarnation."""

    def __init__(self, message: str, status: int | None = None, retryable: bool = False,
                 output_chars: int = 0, tool_calls: int = 0, permanent: bool = False) -> None:
        super().__init__(message)
        self.status = status  # the provider's HTTP status, when it gave one
        self.retryable = retryable
        self.permanent = permanent  # no retry can help in this run (StreamError.permanent)
        self.output_chars = output_chars  # text and reasoning streamed before the error
        self.tool_calls = tool_calls


class BudgetDenied(Exception):
    """The supervisor refused a model call; the run is ending."""


@dataclass
class TurnIO:
    """How a turn reaches the outside world; all three are thread-safe."""

    emit: Callable[[Message], None]  # a report built with its cause; the agent signs and sends it
    permit: Callable[[int, str], CallPermit | None]
    call_tool: ToolExecutor | None = None
    extra_tools: tuple[ToolSpec, ...] = ()
    check_tools: tuple[ToolSpec, ...] = ()  # offered only with answers in view (actors/agent/check_tools.py)
    tools_in_present: bool = False  # file tools: the presenter writes the context paths
    # (task, answer) -> the answer run against the task's examples, None when the task shows none
    # (actors/coordination/code_checks.py; check_tools: [code_examples]). Awaited on the turn's loop.
    # A check's program runs go through the turn's runner (``run=``), which traces each as work.
    check_code: Callable[..., Awaitable[CodeCheck | None]] | None = None
    # (task, view) -> the answer to vote for after running every answer in view on the same inputs, None
    # when that cannot decide (check_tools: [code_ranking]). Awaited on the turn's loop, before any model call.
    rank_code: Callable[..., Awaitable[Ranked | None]] | None = None


@dataclass
class TurnSettings:
    system_message: str | None = None
    # The agent's own system message alone, without the team's voting guidance: a bare first answer's
    # (first_answer "bare") only system message.
    own_system_message: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    max_attempts: int = 3
    max_tool_rounds: int = 8
    # Tool calls handled from one model reply: the first this many; the model is told the rest were not run
    # (one trace record, ``turn.tool_calls_capped``), so a reply of 10,000 calls costs 64, not 10,000.
    max_tool_calls_per_reply: int = 64
    # Tools of an outside caller: offered to the model, never run here; calling one is an answer
    # (see actors/agent/client_tools.py). Empty for ordinary runs.
    client_tools: tuple[ToolSpec, ...] = ()
    stream_limits: StreamLimits = field(default_factory=StreamLimits)  # see actors/agent/stream_guard.py
    call_retry: CallRetry = field(default_factory=CallRetry)  # see backends/retry.py
    # Files shown with the task (the backend's upload_files), recorded in the trace with each request.
    attachments: tuple[Attachment, ...] = ()
    # "program": the first answer is a Python program's output, the program run confined (turn.py,
    # ``backend.first_answer``); "team" where no sandbox can be had (the run says so).
    first_answer: str = "team"  # "team", "bare" or "program"


@dataclass
class CallResult:
    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    preamble: str = ""  # the text streamed before the first tool call: the model's reasoning
    not_run: list[ToolCall] = field(default_factory=list)  # past TurnSettings.max_tool_calls_per_reply
