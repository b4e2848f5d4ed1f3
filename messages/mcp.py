"""The MCP protocol: agents, the supervisor and the McpServer actors.

One McpServer actor owns one connection (agent x configured server). The supervisor
routes every message between an agent and its MCP actors, because only the supervisor
knows which incarnation of each is alive: a result for a dead agent incarnation, or a
message from a dead server incarnation, becomes a dead letter instead of a surprise.

Tools reach the model as ``mcp__<server>__<tool>``; the messages carry the server name
and the tool's own name separately so nobody has to split strings.
"""

from __future__ import annotations

from typing import Any, Literal

from massgen.messages.envelope import Message
from massgen.messages.stream import ToolSpec

McpFailureKind = Literal["start", "config", "exited", "lost", "hung", "stopped", "handler"]


# --- McpServer actor -> supervisor -> agent ------------------------------------------


class McpToolsListed(Message):
    """The server (re)started and these tools, already filtered, are offered to the model.

    ``hidden`` names the tools the server has that ``allowed_tools``/``exclude_tools`` hide.
    ``notes`` says what else was not offered as the server sent it, one line each, naming the
    server and the tool: a listing the client refused, a name providers would refuse, a
    description cut, tools past the per-server limit (``actors/mcp/spec.select_tools``).
    """

    agent: str
    server: str
    tools: tuple[ToolSpec, ...]
    hidden: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


class McpToolResult(Message):
    """The outcome of one call; ``is_error`` results are shown to the model as tool errors."""

    call_id: str
    agent: str
    server: str
    tool: str
    content: str
    is_error: bool = False


# --- McpServer actor -> supervisor (and supervisor decisions, recorded) ------------------


class McpServerFailed(Message):
    """A server connection failed; ``permanent`` failures (bad config) are never retried.

    Sent by the McpServer actor about itself, or recorded by the supervisor when it found
    the failure (a stopped actor, a start deadline).
    """

    agent: str
    server: str
    name: str
    incarnation: int
    error: str
    where: McpFailureKind
    permanent: bool = False


class McpServerRestarting(Message):
    name: str
    incarnation: int
    delay_s: float
    reason: str


# --- supervisor -> agent ---------------------------------------------------------------


class McpToolsWithdrawn(Message):
    """The server is given up on: the agent stops offering its tools for the rest of the run."""

    agent: str
    server: str
    reason: str


# --- agent -> supervisor -> McpServer actor ----------------------------------------------


class McpCallTool(Message):
    call_id: str
    agent: str
    server: str
    tool: str
    arguments: dict[str, Any]


class McpCancelCall(Message):
    """The caller no longer waits (turn cancelled, its own backstop expired): cancel the request."""

    call_id: str
    agent: str
    server: str
    reason: str
