"""The supervisor's side of MCP: start the servers, route calls, restart, withdraw.

One behaviour of the supervisor, kept out of its actor (``actor.py``) so the coordination state machine
stays readable, and below the MCP server actor (``actors/mcp/``), which it starts: the
supervisor owns one ``McpSupervision`` and hands it the MCP messages, its ticks and
the agent (re)starts. Everything here runs on the supervisor's thread.

Why the supervisor routes every MCP message instead of agents and servers talking
directly: both sides restart independently, and only the supervisor knows which
incarnations are alive. A call reaches the server incarnation that is alive now; a
result reaches the agent incarnation that asked, or becomes a dead letter. No actor
ever needs another's mailbox reference in a message, which keeps messages plain data.

It reaches the world through a small port (``McpPort``: tell, record, spawn, clock), not
through its host actor, so it holds no reference to the supervisor and a test can drive it
with probes where the McpServer actors would be.

Calls made while a server is (re)starting wait here, up to the server's
``call_timeout_seconds``, so a model that retries right after a crash reaches the new
incarnation instead of an error. Calls in flight when a server fails get a clear tool
error from here at once; the dead incarnation's late replies become dead letters.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

import massgen.backends as backends
from massgen.actors.agent.actor import AgentSpec
from massgen.actors.mcp.spec import McpServerSpec, exposed_name
from massgen.actors.runtime.port import Peer, TracedActor
from massgen.actors.supervisor.restarts import RestartHistory
from massgen.configs.schema import RestartPolicy
from massgen.messages import (
    DeadLetter,
    McpCallTool,
    McpCancelCall,
    McpServerFailed,
    McpServerRestarting,
    McpToolResult,
    McpToolsListed,
    McpToolsWithdrawn,
    Message,
    new_msg_id,
)
from massgen.messages.mcp import McpFailureKind

M = TypeVar("M", bound=Message)

# Past its own start deadline, an actor that has said nothing is presumed hung.
_START_GRACE_S = 5.0
# A call's reply may come this long after its deadline (the actor pings the server first).
_REPLY_GRACE_S = 10.0


@dataclass
class _Server:
    spec: McpServerSpec
    history: RestartHistory
    peer: Peer | None = None
    incarnation: int = 0
    status: Literal["starting", "ready", "restarting", "withdrawn"] = "starting"
    since: float = 0.0
    restart_at: float = 0.0
    listed: McpToolsListed | None = None
    withdrawn: str | None = None
    queued: list[str] = field(default_factory=list)  # call ids waiting for a (re)start, oldest first


@dataclass(frozen=True)
class _Pending:
    """A call routed here; ``server_incarnation`` 0 while it waits for the server to (re)start."""

    call: McpCallTool
    agent_incarnation: int
    server_incarnation: int
    deadline: float


class McpPort(Protocol):
    """What MCP supervision needs of the actor it runs in, and nothing else of it."""

    @property
    def name(self) -> str:
        """The host's name, as dead letters name the recipient."""

    def clock(self) -> float:
        """The run's clock."""

    def tell(self, to: Peer, message: Message) -> bool:
        """Send ``message`` from the host (its envelope; traced); False if ``to`` is gone."""

    def record(self, message: Message) -> None:
        """Trace a decision sent to nobody, as the host's."""

    def spawn(self, spec: McpServerSpec, incarnation: int, supervisor: Peer) -> Any:
        """Start an McpServer actor for ``spec`` that reports to ``supervisor``; returns its ref."""


class ActorPort:
    """``McpPort`` as one of our actors offers it (the supervisor)."""

    def __init__(self, actor: TracedActor[Any]) -> None:
        self._actor = actor

    @property
    def name(self) -> str:
        return self._actor.name

    def clock(self) -> float:
        return self._actor.ctx.clock()

    def tell(self, to: Peer, message: Message) -> bool:
        return self._actor.tell(to, message)

    def record(self, message: Message) -> None:
        self._actor.record(message)

    def spawn(self, spec: McpServerSpec, incarnation: int, supervisor: Peer) -> Any:
        from massgen.actors.mcp.server import McpServerActor  # the SDK, only for runs that use it

        ctx = self._actor.ctx
        if spec.config.type == "stdio":  # the connection and its process live beside the agent
            return ctx.spawn(McpServerActor, spec, incarnation, supervisor, name=spec.name,
                             incarnation=incarnation, beside=spec.agent_id)
        return McpServerActor.start(ctx, spec, incarnation, supervisor)  # a URL: reached from here


def server_specs(agent: AgentSpec) -> list[McpServerSpec]:
    """One spec per configured server; none for an agent CLI, which runs its MCP servers itself."""
    backend = agent.config.backend
    if not backend.mcp_servers or backends.handles_mcp_servers(backend.type):
        return []
    allowed = tuple(backend.allowed_tools) if backend.allowed_tools is not None else None
    return [McpServerSpec(agent.agent_id, server, allowed, tuple(backend.exclude_tools))
            for server in backend.mcp_servers]


class McpSupervision:
    def __init__(self, port: McpPort, agents: Sequence[AgentSpec], policy: RestartPolicy,
                 live_agent: Callable[[str], Peer | None]) -> None:
        self.port = port
        self.live_agent = live_agent
        self.agents = list(agents)
        self.servers = {s.name: _Server(s, RestartHistory(policy)) for a in agents for s in server_specs(a)}
        self.pending: dict[str, _Pending] = {}
        self.me: Peer | None = None

    # -- life cycle -----------------------------------------------------------------------------

    def start(self, me: Peer) -> None:
        self.me = me
        for agent in self.agents:
            self._check_allowed_names(agent)
        for server in self.servers.values():
            self._spawn(server)

    def _check_allowed_names(self, agent: AgentSpec) -> None:
        """An ``allowed_tools``/``exclude_tools`` entry for a server that is not configured can never
        match: say so (one rule for both lists; see ``actors/mcp/spec.select_tools``)."""
        backend = agent.config.backend
        names = [s.name for s in backend.mcp_servers]
        entries = [e for e in [*(backend.allowed_tools or []), *backend.exclude_tools] if e.startswith("mcp__")]
        if not entries or backends.handles_mcp_servers(backend.type):  # a CLI may know servers we don't
            return
        for entry in entries:
            if not any(entry.startswith(exposed_name(n, "")) for n in names):
                server = entry.split("__")[1] if entry.count("__") >= 2 else entry
                self.port.record(McpServerFailed(
                    agent=agent.agent_id, server=server, name=f"mcp:{agent.agent_id}:{server}",
                    incarnation=0, where="config", permanent=True,
                    error=f"allowed_tools/exclude_tools names {entry!r} but no MCP server {server!r} is configured "
                          f"(configured: {', '.join(names) or 'none'})",
                ))

    def _spawn(self, server: _Server) -> None:
        assert self.me is not None
        server.incarnation += 1
        ref = self.port.spawn(server.spec, server.incarnation, self.me)
        server.peer = Peer(server.spec.name, server.incarnation, ref)
        server.status, server.since = "starting", self.port.clock()

    def peers(self) -> list[Peer]:
        """The incarnations to stop at the end of the run (each kills its server process)."""
        return [s.peer for s in self.servers.values() if s.peer is not None and s.status in ("starting", "ready")]

    def owns(self, name: str) -> bool:
        return name in self.servers

    def agent_spawned(self, agent_id: str, peer: Peer) -> None:
        """A new agent incarnation learns the current tools before its first turn."""
        for server in self.servers.values():
            if server.spec.agent_id != agent_id:
                continue
            if server.status == "withdrawn":
                self.port.tell(peer, McpToolsWithdrawn(agent=agent_id, server=server.spec.server,
                                                       reason=server.withdrawn or "withdrawn"))
            elif server.listed is not None:
                self.port.tell(peer, _relayed(server.listed))
        for pending in list(self.pending.values()):  # nobody waits for these any more
            if pending.call.agent == agent_id and pending.agent_incarnation != peer.incarnation:
                self._cancel(pending, "the calling agent incarnation is gone")

    # -- messages ---------------------------------------------------------------------------------

    def from_agent(self, agent: Peer, message: McpCallTool | McpCancelCall) -> None:
        if isinstance(message, McpCallTool):
            self._route_call(agent, message)
        elif message.call_id in self.pending:  # else it was settled already: the result is on its way
            self._cancel(self.pending[message.call_id], message.reason)

    def _cancel(self, pending: _Pending, reason: str) -> None:
        """A queued call is dropped; one in flight is cancelled at the server, whose reply settles it."""
        call = pending.call
        server = self.servers.get(f"mcp:{call.agent}:{call.server}")
        if pending.server_incarnation == 0:
            del self.pending[call.call_id]
            if server is not None and call.call_id in server.queued:
                server.queued.remove(call.call_id)
        elif server is not None and server.peer is not None and server.incarnation == pending.server_incarnation:
            self.port.tell(server.peer, McpCancelCall(call_id=call.call_id, agent=call.agent, server=call.server,
                                                      reason=reason))

    def _route_call(self, agent: Peer, call: McpCallTool) -> None:
        server = self.servers.get(f"mcp:{call.agent}:{call.server}")
        if server is None or server.status == "withdrawn":
            why = server.withdrawn if server is not None else "no such server is configured for this agent"
            self.port.tell(agent, McpToolResult(
                call_id=call.call_id, agent=call.agent, server=call.server, tool=call.tool, is_error=True,
                content=f"{exposed_name(call.server, call.tool)} is unavailable: {why}",
            ))
        elif server.status == "ready" and server.peer is not None:
            self._forward(server, _Pending(call, agent.incarnation, 0, 0.0))
        else:
            deadline = self.port.clock() + server.spec.config.call_timeout_seconds
            self.pending[call.call_id] = _Pending(call, agent.incarnation, 0, deadline)
            server.queued.append(call.call_id)

    def _forward(self, server: _Server, pending: _Pending) -> None:
        assert server.peer is not None
        deadline = self.port.clock() + server.spec.config.call_timeout_seconds + _REPLY_GRACE_S
        self.pending[pending.call.call_id] = _Pending(pending.call, pending.agent_incarnation, server.incarnation,
                                                      deadline)
        self.port.tell(server.peer, _relayed(pending.call))

    def from_server(self, message: McpToolsListed | McpToolResult | McpServerFailed) -> None:
        server = self.servers[message.sender.name]
        if message.sender.incarnation != server.incarnation or server.status in ("restarting", "withdrawn"):
            self._dead_letter(message, f"sender is not the live incarnation ({server.incarnation})")
            return
        if isinstance(message, McpToolsListed):
            server.status, server.listed = "ready", message
            agent = self.live_agent(server.spec.agent_id)
            if agent is not None:
                self.port.tell(agent, _relayed(message))
            queued, server.queued = server.queued, []
            for call_id in queued:
                if call_id in self.pending:
                    self._forward(server, self.pending[call_id])
        elif isinstance(message, McpToolResult):
            pending = self.pending.pop(message.call_id, None)
            if pending is None or pending.server_incarnation != server.incarnation:
                self._dead_letter(message, "no call of this incarnation is waiting for it")
                return
            self._answer(pending, message.content, message.is_error)
        else:
            self._failed(server, message.error, message.where, message.permanent, reported=True)

    def _answer(self, pending: _Pending, content: str, is_error: bool) -> None:
        call = pending.call
        agent = self.live_agent(call.agent)
        if agent is None or agent.incarnation != pending.agent_incarnation:
            self.port.record(DeadLetter(
                original_type=McpToolResult.__name__, original_sender=self.port.name,
                to=f"{call.agent}#{pending.agent_incarnation}", why="the calling agent incarnation is gone",
            ))
            return
        self.port.tell(agent, McpToolResult(call_id=call.call_id, agent=call.agent, server=call.server,
                                            tool=call.tool, content=content, is_error=is_error))

    # -- failures -----------------------------------------------------------------------------------

    def _failed(self, server: _Server, error: str, where: McpFailureKind, permanent: bool = False,
                reported: bool = False) -> None:
        if server.status in ("restarting", "withdrawn"):
            return
        if server.peer is not None:
            server.peer.ref.stop(block=False)  # its on_stop kills the server process group
        spec = server.spec
        if not reported:
            self.port.record(McpServerFailed(
                agent=spec.agent_id, server=spec.server, name=spec.name,
                incarnation=server.incarnation, error=error, where=where, permanent=permanent,
            ))
        delay = None if permanent else server.history.record_failure(self.port.clock())
        if delay is None:
            reason = error if permanent else f"too many failures; last: {error}"
            self._withdraw(server, reason)
            outcome = "Its tools have been withdrawn."
        else:
            server.status, server.restart_at = "restarting", self.port.clock() + delay
            self.port.record(McpServerRestarting(name=spec.name, incarnation=server.incarnation,
                                                 delay_s=round(delay, 3), reason=error))
            outcome = "It is being restarted; the call may be retried."
        for call_id, pending in list(self.pending.items()):
            if pending.call.agent == spec.agent_id and pending.call.server == spec.server \
                    and pending.server_incarnation == server.incarnation:
                del self.pending[call_id]
                self._answer(pending, f"The call failed: {error}. {outcome}", True)

    def _withdraw(self, server: _Server, reason: str) -> None:
        server.status, server.withdrawn, server.listed = "withdrawn", reason, None
        agent = self.live_agent(server.spec.agent_id)
        if agent is not None:
            self.port.tell(agent, McpToolsWithdrawn(agent=server.spec.agent_id, server=server.spec.server,
                                                    reason=reason))
        else:
            self.port.record(McpToolsWithdrawn(agent=server.spec.agent_id, server=server.spec.server, reason=reason))
        queued, server.queued = server.queued, []
        for call_id in queued:
            pending = self.pending.pop(call_id, None)
            if pending is not None:
                name = exposed_name(pending.call.server, pending.call.tool)
                self._answer(pending, f"{name} is unavailable: {reason}", True)

    # -- time -----------------------------------------------------------------------------------------

    def on_tick(self, now: float) -> set[str]:
        """Restarts that are due, start deadlines, stopped actors, calls past their deadline.

        Returns the agents that wait for a tool: with a call in flight, or before their first
        model call while a server has not listed its tools yet (see ``AgentTools.ready_then``).
        Waiting for a tool is not an idle model stream, and those waits have deadlines of their own.
        """
        for server in self.servers.values():
            if server.status == "restarting" and now >= server.restart_at:
                self._spawn(server)
            elif server.status in ("starting", "ready") and server.peer is not None:
                if server.peer.ref.actor_stopped.is_set():
                    self._failed(server, f"MCP server {server.spec.server!r}: its actor stopped unexpectedly",
                                 "stopped")
                elif server.status == "starting" and \
                        now - server.since > server.spec.config.start_timeout_seconds + _START_GRACE_S:
                    self._failed(server, f"MCP server {server.spec.server!r}: no report within "
                                         f"{server.spec.config.start_timeout_seconds:g} s of starting", "start")
        for call_id, pending in list(self.pending.items()):
            if now >= pending.deadline and call_id in self.pending:
                self._expired(pending)
        waiting = {s.spec.agent_id for s in self.servers.values() if s.listed is None and s.status != "withdrawn"}
        return waiting | {p.call.agent for p in self.pending.values()
                          if (agent := self.live_agent(p.call.agent)) is not None
                          and agent.incarnation == p.agent_incarnation}

    def _expired(self, pending: _Pending) -> None:
        """A call past its deadline here: still queued, or no reply at all (a stuck actor: restart it)."""
        call = pending.call
        server = self.servers[f"mcp:{call.agent}:{call.server}"]
        timeout = server.spec.config.call_timeout_seconds
        if pending.server_incarnation == server.incarnation and server.status == "ready":
            self._failed(server, f"MCP server {call.server!r}: no reply to a call within {timeout:g} s", "hung")
            return  # that failed the call too
        del self.pending[call.call_id]
        if call.call_id in server.queued:
            server.queued.remove(call.call_id)
        self._answer(pending, f"MCP server {call.server!r} did not come back within {timeout:g} s", True)

    # -- helpers -----------------------------------------------------------------------------------------

    def _dead_letter(self, message: Message, why: str) -> None:
        self.port.record(DeadLetter(
            original_type=type(message).__name__, original_sender=str(message.sender), to=self.port.name, why=why,
        ))


def _relayed(message: M) -> M:
    """The copy the supervisor passes on: the same payload under an envelope of its own (the port signs it)."""
    return message.model_copy(update={"msg_id": new_msg_id(), "timestamp": time.time(), "causation_id": None})
