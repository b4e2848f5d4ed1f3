"""The small runtime port every actor sends through: tell, ask, record, spawn.

Keeping Pykka behind this port does two jobs. Every message between actors is
traced on its way (the trace is the log), and the actors never touch Pykka refs
directly, so the same actors run on another runtime (Ray, ``actors/runtime/ray_runtime.py``) that offers
the same verbs: spawn, tell, ask, stop and watch. Pykka is the default; a run picks
its runtime once (``RunContext.runtime``) and every actor is unchanged.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Literal, Protocol, TypeVar, cast

import pykka

from massgen.actors.runtime.dispatcher import Dispatcher
from massgen.actors.runtime.mailbox import DispatchedActor
from massgen.backends.circuit import BreakerRegistry
from massgen.messages import DeadLetter, Message, Sender
from massgen.messages.trace_writer_inbox import WriteRecord

M = TypeVar("M", bound=Message)
Inbox = TypeVar("Inbox")  # an actor's inbox: the closed union of its protocol (messages/protocols.py)
Clock = Callable[[], float]

_SUMMARY_CHARS = 160  # a dead letter's repr of what arrived: enough to recognise it

# Why a watched actor went away, the same words on every runtime (``Down.reason``).
DownReason = Literal["killed", "node_lost", "unavailable", "remote_error", "model_server_lost"]
# The sender of what a runtime itself reports (``Down``, ``Placed``): no actor of the run.
RUNTIME = Sender(name="runtime", incarnation=0)


class ActorDead(pykka.ActorDeadError):
    """The recipient is gone. A Pykka ``ActorDeadError``, so callers catch one type on every runtime."""


class ActorUnavailable(ActorDead):
    """The recipient's node stopped answering: treated as gone (fenced), never waited for."""


class AskTimeout(pykka.Timeout):
    """No reply within the ask's deadline."""


class RemoteError(RuntimeError):
    """A call failed inside the recipient's process; the original error is its message."""


class Runtime(Protocol):
    """Where actors that may live elsewhere (agents) are started, and who hears when they go."""

    def spawn(self, ctx: RunContext, cls: type[TracedActor[Any]], args: tuple[Any, ...], *, name: str,
              incarnation: int, beside: str | None = None) -> Any:
        """Start ``cls(ctx, *args)`` and return its ref (``tell``, ``stop``, ``actor_stopped``);
        ``beside``: on the node of that actor (an MCP stdio connection beside its agent)."""

    def watch(self, ref: Any, watcher: Peer) -> None:
        """Tell ``watcher`` a ``Down`` when ``ref`` goes away without being stopped."""

    def down_cause(self, ref: Any) -> tuple[DownReason, str] | None:
        """Why ``ref`` went away, once its ``actor_stopped`` is set and the runtime knows (a lost
        node): the cause its ``Down`` carries. A watcher that sees the stopped ref before that
        ``Down`` arrives (a ``Tick`` ahead of it in the mailbox) records the cause, not "stopped"."""

    def close(self) -> None:
        """Release what the runtime holds once the run has stopped its actors."""


class PykkaRuntime:
    """Every actor in this process. Pykka has no monitors: a stopped actor is noticed by the
    supervisor's deadline check of ``actor_stopped`` on each ``Tick`` (actors/supervisor/children.py)."""

    def spawn(self, ctx: RunContext, cls: type[TracedActor[Any]], args: tuple[Any, ...], *, name: str,
              incarnation: int, beside: str | None = None) -> pykka.ActorRef[Any]:
        return cls.start(ctx, *args)

    def watch(self, ref: Any, watcher: Peer) -> None:
        return None

    def down_cause(self, ref: Any) -> tuple[DownReason, str] | None:
        return None  # an actor of this process stops only by its own failure or our stop

    def close(self) -> None:
        return None


@dataclass(frozen=True)
class Peer:
    """An actor as others know it: logical name, incarnation and its mailbox."""

    name: str
    incarnation: int
    ref: Any = field(compare=False, repr=False)  # a pykka.ActorRef, or a remote ref with the same verbs

    @property
    def sender(self) -> Sender:
        return Sender(name=self.name, incarnation=self.incarnation)

    def __str__(self) -> str:
        return f"{self.name}#{self.incarnation}"


class RunContext:
    """What every actor of one run shares: the run id, the trace writer, the clock and the threads
    its actors run on (``dispatcher``; the run closes it once its actors have stopped)."""

    def __init__(self, run_id: str, trace: pykka.ActorRef[Any] | None, clock: Clock = time.monotonic,
                 runtime: Runtime | None = None, breakers: BreakerRegistry | None = None,
                 dispatcher: Dispatcher | None = None) -> None:
        self.run_id = run_id
        self.dispatcher = dispatcher or Dispatcher(run_id)
        self.clock = clock
        # Per run: one run's faults never fail the next. Given when backends were built before the context.
        self.breakers = breakers or BreakerRegistry()
        self._trace = trace
        self._lock = threading.Lock()
        self.runtime: Runtime = runtime or PykkaRuntime()

    def spawn(self, cls: type[TracedActor[Any]], *args: Any, name: str, incarnation: int,
              beside: str | None = None) -> Any:
        """Start an actor the runtime may place elsewhere (an agent, or beside one); the caller watches it."""
        return self.runtime.spawn(self, cls, args, name=name, incarnation=incarnation, beside=beside)

    # -- tracing ------------------------------------------------------------------------

    def trace(self, kind: str, message: Message, to: str = "", **extra: Any) -> None:
        """Append one record to the trace; never raises (a closed trace is not our caller's fault)."""
        if self._trace is None:
            return
        try:
            self._trace.tell(WriteRecord(kind, message, to, extra))
        except pykka.ActorDeadError:
            pass

    def record(self, message: Message) -> None:
        """Trace a decision or happening that is not sent to anyone (restarts, deadlines)."""
        self.trace("event", message)

    def _dead_letter(self, message: Message, to: Peer | str, why: str) -> None:
        self.record(DeadLetter(run_id=self.run_id, original_type=type(message).__name__,
                               original_sender=str(message.sender), to=str(to), why=why,
                               causation_id=message.msg_id))

    def dead_letter(self, message: object, to: Sender, why: str) -> None:
        """Record what ``to`` cannot accept (outside its protocol, or not now), with a short repr of it."""
        sender, cause = (str(message.sender), message.msg_id) if isinstance(message, Message) else ("", None)
        text = repr(message)
        self.record(DeadLetter(
            run_id=self.run_id, sender=to, original_type=type(message).__name__, original_sender=sender,
            to=str(to), why=why, summary=text if len(text) <= _SUMMARY_CHARS else text[:_SUMMARY_CHARS] + "...",
            causation_id=cause,
        ))

    # -- messaging ----------------------------------------------------------------------

    def tell(self, to: Peer, message: Message, *, traced: bool = True) -> bool:
        """Send without waiting. Returns False (and records a dead letter) if ``to`` is gone."""
        if traced:
            self.trace("tell", message, to=str(to))
        try:
            to.ref.tell(message)
            return True
        except pykka.ActorDeadError:
            self._dead_letter(message, to, "recipient stopped")
            return False

    def ask(self, to: Peer, message: Message, reply_type: type[M], timeout: float) -> M | None:
        """Send and wait for a reply of ``reply_type``; None after a timeout or if ``to`` is gone.

        Only turn workers ask (never an actor's own mailbox thread), so no ask cycle can form.
        """
        self.trace("ask", message, to=str(to))
        try:
            reply = to.ref.ask(message, timeout=timeout)
        except pykka.Timeout:
            self.trace("ask_timeout", message, to=str(to))
            return None
        except pykka.ActorDeadError:
            self._dead_letter(message, to, "recipient stopped before replying")
            return None
        if not isinstance(reply, reply_type):
            raise TypeError(f"{to} answered {type(message).__name__} with {type(reply).__name__}")
        return reply  # the replier traced it (TracedActor.on_receive), before it could stop


class TracedActor(DispatchedActor, Generic[Inbox]):
    """Base of our actors: knows its name and incarnation, stamps envelopes, guards its inbox.

    ``TracedActor[P]`` accepts the messages of protocol ``P`` (a union, ``messages/protocols.py``)
    and declares them in ``accepts``; ``handle`` gets only those, anything else becomes a
    ``DeadLetter``. It runs on its run's dispatcher (``ctx.dispatcher``), whose threads are daemons,
    because a hung handler cannot be interrupted in Python; the supervisor abandons such an
    incarnation, the dispatcher's watch gives the others another thread, and the process can exit.
    """

    accepts: ClassVar[tuple[type, ...]] = (Message,)  # members(P), checked on every receive

    def __init__(self, ctx: RunContext, name: str, incarnation: int = 1) -> None:
        super().__init__()
        self.ctx = ctx
        self.name = name
        self.incarnation = incarnation
        self.me = Sender(name=name, incarnation=incarnation)
        self._handling: str | None = None

    def _dispatcher(self) -> Dispatcher:
        return self.ctx.dispatcher

    def make(self, cls: type[M], causation_id: str | None = None, **fields: Any) -> M:
        """Build a message from this actor, caused by the message being handled now.

        The keyword form, kept for the model call records (``actors/record/replay.py``); new code builds
        the message as a typed object and uses ``tell``/``record``, so the type checker sees its fields."""
        return cls(
            run_id=self.ctx.run_id,
            sender=self.me,
            causation_id=causation_id if causation_id is not None else self._handling,
            **fields,
        )

    def sign(self, message: M) -> M:
        """``message`` (built as a typed object) with this actor's envelope; its cause as built.

        For messages built off the actor's thread, where the message being handled is not theirs.
        """
        return message.model_copy(update={"run_id": self.ctx.run_id, "sender": self.me})

    def stamp(self, message: M) -> M:
        """Signed, and caused by the message being handled now unless it names its own cause."""
        cause = message.causation_id if message.causation_id is not None else self._handling
        return message.model_copy(update={"run_id": self.ctx.run_id, "sender": self.me, "causation_id": cause})

    def tell(self, to: Peer, message: Message) -> bool:
        """Send a typed message from this actor (stamped, traced); False if ``to`` is gone."""
        return self.ctx.tell(to, self.stamp(message))

    def record(self, message: Message) -> None:
        """Trace a decision of this actor that is sent to nobody."""
        self.ctx.record(self.stamp(message))

    def dead_letter(self, message: object, why: str) -> None:
        """What this actor cannot accept: traced, never dropped silently."""
        self.ctx.dead_letter(message, self.me, why)

    def on_receive(self, message: Any) -> Any:
        if not isinstance(message, Message) or not self._accepts(message):
            self.dead_letter(message, f"outside the protocol of {self.name}")
            return None
        self._handling = message.msg_id
        try:
            reply = self.handle(cast(Inbox, message))
        finally:
            self._handling = None
        if isinstance(reply, Message):
            # Traced here rather than by the asker: the asker may be a thread that outlives the trace.
            self.ctx.trace("reply", reply, to=str(message.sender))
        return reply

    def _accepts(self, message: Message) -> bool:
        return isinstance(message, self.accepts)

    def handle(self, message: Inbox) -> Any:  # pragma: no cover - every actor overrides it
        raise NotImplementedError
