"""The agent actor: one per configured agent, one incarnation per (re)start.

The actor owns the backend and an event loop on a thread of its own; each model turn
runs there as a task, so the mailbox stays free for ``CancelTurn``, ``InjectAnswers``
and stop while the model streams. Failures of start, handler or worker are reported to
the supervisor, which decides about restarts; the agent never retries itself.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, assert_never

import massgen.backends as backends
from massgen.actors.agent import check_tools
from massgen.actors.agent.check_tools import CheckTools
from massgen.actors.agent.custom_tools import CustomTools
from massgen.actors.agent.mcp_tools import AgentTools
from massgen.actors.agent.turn import TurnRunner
from massgen.actors.agent.turn_io import BudgetDenied, ModelCallError, TurnIO, TurnSettings
from massgen.actors.coordination import code_checks
from massgen.actors.record.replay import CallRecorder
from massgen.actors.runtime.dispatcher import blocking
from massgen.actors.runtime.loop_thread import close_loop, run_loop
from massgen.actors.runtime.port import Peer, RunContext, TracedActor
from massgen.configs.schema import AgentConfig
from massgen.messages import (
    AgentResumeState,
    AnswerView,
    BackendEvent,
    CallPermit,
    CallPermitRequest,
    CancelTurn,
    ChildFailed,
    ChildStarted,
    FinishRound,
    InjectAnswers,
    InjectNote,
    McpToolResult,
    McpToolsListed,
    McpToolsWithdrawn,
    Message,
    PresentFinal,
    StartTurn,
)
from massgen.messages.protocols import AgentInbox, members

if TYPE_CHECKING:
    from massgen.files import AgentFiles, RunFiles

_PERMIT_TIMEOUT_S = 30.0
BackendEventSink = Callable[[str, dict[str, Any]], None]


class FirstBackend:
    """An agent's backend built before its actor, by the run's preflight check (``actors/run/team.py``), so
    the backend that passed the check is the one the agent uses and none is built twice.

    Taken once, by the incarnation it was built for: a restart builds a fresh backend, as it always
    did. The backend's events go to whichever actor took it. It never leaves this process: a spec
    sent to another (an agent on Ray) carries an empty holder, and that agent builds its own."""

    def __init__(self, incarnation: int) -> None:
        self.incarnation = incarnation
        self._backend: backends.Backend | None = None
        self._lock = threading.Lock()
        self._sink: BackendEventSink | None = None

    def on_event(self, event: str, info: dict[str, Any]) -> None:
        """The built backend's ``on_event``: relayed to the actor that took it (none before)."""
        sink = self._sink
        if sink is not None:
            sink(event, info)

    def hold(self, backend: backends.Backend) -> None:
        """Keep ``backend`` (built with this holder's ``on_event``) for the incarnation to take."""
        self._backend = backend

    def take(self, incarnation: int, sink: BackendEventSink) -> backends.Backend | None:
        """The backend, once, for the incarnation it was built for; else None (build a fresh one)."""
        with self._lock:
            if incarnation != self.incarnation or self._backend is None:
                return None
            backend, self._backend = self._backend, None
            self._sink = sink
        return backend

    def __reduce__(self) -> tuple[type[FirstBackend], tuple[int]]:
        return FirstBackend, (self.incarnation,)  # pickled (sent to another process): empty


@dataclass(frozen=True)
class AgentSpec:
    """What the supervisor needs to (re)start an agent."""

    agent_id: str
    label: str
    config: AgentConfig
    settings: TurnSettings
    files: RunFiles | None = None  # workspace, file tools, snapshots (massgen/files)
    # Resuming: where this agent's backend was, and the finished calls its redone turn may reuse.
    carried: AgentResumeState | None = None
    # The backend the run's preflight built for the first incarnation (None: every incarnation builds).
    first_backend: FirstBackend | None = None

    def backend_context(self, incarnation: int, run_id: str, breakers: Any,
                        on_event: BackendEventSink | None) -> backends.BackendContext:
        """Where this agent's backend runs: the same for the preflight's build and an actor's."""
        return backends.BackendContext(
            agent_id=self.agent_id, incarnation=incarnation, run_id=run_id, on_event=on_event, breakers=breakers,
            files=self.files.scope(self.agent_id) if self.files else None,
        )


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class AgentActor(TracedActor[AgentInbox]):
    accepts = members(AgentInbox)

    def __init__(self, ctx: RunContext, spec: AgentSpec, incarnation: int, supervisor: Peer) -> None:
        super().__init__(ctx, spec.agent_id, incarnation)
        self.spec = spec
        self.supervisor = supervisor
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: TurnRunner | None = None
        self._backend: backends.Backend | None = None
        self._turn: concurrent.futures.Future[None] | None = None
        self._turn_id: int | None = None
        self._cause: str | None = None  # the StartTurn/PresentFinal being worked on
        self._tools: AgentTools | None = None  # MCP tools; None when the backend has no mcp_servers
        self._files: AgentFiles | None = None  # file tools; None when the agent has no workspace
        self._loop_thread: threading.Thread | None = None
        # Answers injected before the turn's first model call: held until then, because a turn
        # clears its pending view when it begins (loop thread only).
        self._calling_turn: int | None = None
        self._early_view: tuple[int, AnswerView] | None = None

    # -- life cycle -------------------------------------------------------------------------

    def on_start(self) -> None:
        try:
            self._loop = asyncio.new_event_loop()
            self._loop_thread = threading.Thread(
                target=run_loop, args=(self._loop,), name=f"{self.me}-loop", daemon=True
            )
            self._loop_thread.start()
            first = self.spec.first_backend
            built = first.take(self.incarnation, self._backend_event) if first is not None else None
            if built is None:
                context = self.spec.backend_context(self.incarnation, self.ctx.run_id, self.ctx.breakers,
                                                    self._backend_event)
                built = backends.create(self.spec.config.backend, context)
            carried = self.spec.carried
            carried = carried if carried is not None and carried.incarnation == self.incarnation else None
            self._backend = CallRecorder(built, self._record, carried, before_call=self._call_begins)
            with blocking():  # a local model server may take a while to start: another worker runs the rest
                self._run(self._backend.start()).result()
            io = TurnIO(emit=self._emit, permit=self._permit)
            if self.spec.files is not None and not backends.native_file_tools(self.spec.config.backend.type):
                backend = self.spec.config.backend
                self._files = self.spec.files.agent(self.spec.agent_id, self._emit, backend.allowed_tools,
                                                    backend.exclude_tools)
                io.extra_tools = self._files.specs()
                io.tools_in_present = True
            custom = CustomTools(self.spec.config.backend.custom_tools)  # the user's Python functions
            io.extra_tools = (*io.extra_tools, *custom.specs())  # before the MCP tools, which keep them first
            if self.spec.config.backend.mcp_servers and not backends.handles_mcp_servers(self.spec.config.backend.type):
                self._tools = AgentTools(self.spec.agent_id, self.incarnation,
                                         self.spec.config.backend.mcp_servers, io, self._emit)
                io.call_tool = self._tools.call
            if custom.specs():
                io.call_tool = custom.chain(io.call_tool)
            checks = CheckTools(self.spec.config.backend.check_tools)  # built in: for checking answers in view
            if checks.specs():
                io.check_tools = checks.specs()
                io.call_tool = checks.chain(io.call_tool)
            if "code_examples" in self.spec.config.backend.check_tools and not check_tools.withheld(["code_examples"]):
                io.check_code = code_checks.check_answer
            if "code_ranking" in self.spec.config.backend.check_tools and not check_tools.withheld(["code_ranking"]):
                io.rank_code = code_checks.rank_answers
            if self._files is not None:
                io.call_tool = self._files.chain(io.call_tool)
            self._runner = TurnRunner(self._backend, io, self.spec.settings)
        except Exception as exc:
            self.tell(self.supervisor, ChildFailed(name=self.name, incarnation=self.incarnation, error=_describe(exc),
                                                   where="on_start",
                                                   permanent=isinstance(exc, backends.PermanentBackendError)))
            # Stop instead of raising: Pykka reports neither on_failure nor on_stop for on_start.
            self.actor_ref.stop(block=False)
            return
        self.tell(self.supervisor, ChildStarted(name=self.name, incarnation=self.incarnation))

    def on_failure(self, exception_type: Any, exception_value: Any, traceback: Any) -> None:
        self.tell(self.supervisor, ChildFailed(name=self.name, incarnation=self.incarnation,
                                               error=_describe(exception_value), where="handler"))
        self._shutdown()

    def on_stop(self) -> None:
        self._shutdown()

    def _shutdown(self) -> None:
        if self._turn is not None:
            self._turn.cancel()
        loop, self._loop = self._loop, None
        if loop is None:
            return
        close_loop(loop, self._loop_thread, first=self._backend.aclose if self._backend is not None else None)

    # -- messages -----------------------------------------------------------------------------

    def handle(self, message: AgentInbox) -> None:
        # Injections and cancels for a turn that already ended are stale: the turn's own reports
        # settled it, and the message itself is in the trace (every send is traced).
        match message:
            case StartTurn():
                self._begin(message.turn_id, "turn", message)
            case PresentFinal():
                self._begin(message.turn_id, "present", message)
            case InjectAnswers():
                if self._is_current(message.turn_id) and self._loop is not None and self._runner is not None:
                    view = self._files.rewrite(message.view) if self._files else message.view
                    self._loop.call_soon_threadsafe(self._inject, message.turn_id, view)
            case InjectNote():
                if self._loop is not None and self._runner is not None:  # kept for the next safe point
                    self._loop.call_soon_threadsafe(self._runner.add_note, message)
            case FinishRound():
                if self._is_current(message.turn_id) and self._loop is not None and self._runner is not None:
                    self._loop.call_soon_threadsafe(self._runner.finish_round, message)
            case CancelTurn():
                if self._is_current(message.turn_id):
                    assert self._turn is not None
                    self._turn.cancel()
            case McpToolsListed() | McpToolsWithdrawn() | McpToolResult():
                if self._tools is not None and self._loop is not None:
                    self._loop.call_soon_threadsafe(self._tools.on_message, message)
                else:
                    self.dead_letter(message, f"{self.me} offers no MCP tools")
            case _ as unreachable:
                assert_never(unreachable)

    def _is_current(self, turn_id: int) -> bool:
        """Messages about a turn that already ended are ignored."""
        return turn_id == self._turn_id and self._turn is not None and not self._turn.done()

    def _begin(self, turn_id: int, kind: Literal["turn", "present"], message: StartTurn | PresentFinal) -> None:
        if self._runner is None:
            return
        if self._turn is not None:
            self._turn.cancel()
        self._turn_id, self._cause = turn_id, message.msg_id
        if self._files is not None:  # this phase's rules; workspace paths in answers as this reader sees them
            view = self._files.begin(kind, message.msg_id, turn_id, message.view)
            message = message.model_copy(update={"view": view})
        if kind == "turn":
            assert isinstance(message, StartTurn)
            coro = self._runner.run_turn(message)
            if self._tools is not None:  # the first model call should already see the MCP tools
                coro = self._tools.ready_then(coro, message.msg_id)
        else:
            assert isinstance(message, PresentFinal)
            coro = self._runner.present(message)
        self._turn = self._run(self._guard(coro, message.msg_id))

    def _run(self, coro: Coroutine[Any, Any, Any]) -> concurrent.futures.Future[Any]:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    async def _guard(self, coro: Coroutine[Any, Any, None], cause: str) -> None:
        try:
            await coro
        except asyncio.CancelledError:
            raise
        except BudgetDenied:
            pass
        except ModelCallError as exc:
            self._emit(ChildFailed(causation_id=cause, name=self.name, incarnation=self.incarnation,
                                   error=f"model call failed: {exc}", where="worker",
                                   permanent=exc.permanent or exc.status in backends.PERMANENT_STATUSES))
        except Exception as exc:
            self._emit(ChildFailed(causation_id=cause, name=self.name, incarnation=self.incarnation,
                                   error=_describe(exc), where="worker"))

    # -- what the turn worker uses (any thread) --------------------------------------------------

    def _emit(self, message: Message) -> None:
        """A report of the turn worker (built with its cause) to the supervisor, signed by this incarnation."""
        self.ctx.tell(self.supervisor, self.sign(message))

    def _inject(self, turn_id: int, view: AnswerView) -> None:
        if self._runner is not None and self._calling_turn == turn_id:
            self._runner.inject(view)
        else:
            self._early_view = (turn_id, view)

    def _call_begins(self) -> None:
        self._calling_turn = self._turn_id
        early, self._early_view = self._early_view, None
        if early is not None and early[0] == self._turn_id and self._runner is not None:
            self._runner.inject(early[1])

    def _record(self, cls: type[Message], fields: dict[str, Any]) -> None:
        self.ctx.record(self.make(cls, causation_id=self._cause, **fields))

    def _backend_event(self, event: str, info: dict[str, Any]) -> None:
        self.ctx.tell(self.supervisor, self.sign(BackendEvent(causation_id=self._cause, event=event, info=info)))

    def _permit(self, turn_id: int, cause: str) -> CallPermit | None:
        request = self.sign(CallPermitRequest(causation_id=cause, turn_id=turn_id))
        return self.ctx.ask(self.supervisor, request, CallPermit, timeout=_PERMIT_TIMEOUT_S)
