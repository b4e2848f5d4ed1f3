"""The streaming interface every model backend implements.

A backend turns one ``ModelRequest`` into an async stream of normalised events
(``massgen.messages.stream``). It knows nothing of actors: the agent's turn worker
drives it on its own event loop and cancels the task to stop it. Provider errors
that survive the retry policy are yielded as ``StreamError``, not raised, so one
code path reports them; bugs may still raise and are handled as agent failures.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from massgen.messages.stream import ModelRequest, StreamEvent
from massgen.outcome.errors import BackendError as BackendError  # re-exported: backends raise it from here
from massgen.outcome.errors import PermanentBackendError as PermanentBackendError


@dataclass(frozen=True)
class FileScope:
    """Where an agent CLI's own file tools may go: decided in ``massgen/files``, enforced by the CLI."""

    workspace: Path
    read: tuple[Path, ...] = ()  # context paths and snapshots: read-only
    write_presenting: tuple[Path, ...] = ()  # context paths the final presenter may write
    protected: tuple[Path, ...] = ()  # never written
    hidden: tuple[Path, ...] = ()  # run state: never read


@dataclass(frozen=True)
class BackendContext:
    """Facts about where a backend runs that are not part of its config."""

    agent_id: str
    incarnation: int = 1
    workspace: Path | None = None
    run_id: str = ""
    # Extra environment (for example keys read from ./.env), never logged.
    env: dict[str, str] = field(default_factory=dict)
    # Observer for backend events (one "backend.attempt" per HTTP attempt, "backend.tool_mode" on a
    # fallback) so the agent can put them in the trace. Called on the backend's event loop thread;
    # the info dict holds plain JSON values and never a key.
    on_event: Callable[[str, dict[str, Any]], None] | None = field(default=None, compare=False)
    # Set when the agent works with files (a workspace, context paths): agent CLIs confine their tools to it.
    files: FileScope | None = None
    # The run's circuit breakers (a ``backends.circuit.BreakerRegistry``); None outside a run.
    breakers: Any = field(default=None, compare=False)


@runtime_checkable
class Backend(Protocol):
    """One model endpoint. ``start`` may fail; the agent reports that as a start failure."""

    async def start(self) -> None: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]: ...

    async def aclose(self) -> None: ...

    # Capabilities the turn and the call recorder read; every backend says them (most say no).
    @property
    def decides_separately(self) -> bool:
        """True: workflow calls go through a grammar, so a turn lets the model reason first, then decide."""
        ...

    def replayed(self, request: ModelRequest, tool_calls: int) -> None:
        """A call of a resumed run answered from the trace; a backend with state of its own counts it played."""


# Provider answers that no retry or restart can change: bad credentials, no access, unknown model, and a
# server that does not do what was asked (501 Not Implemented, 505: a plain web server at the base URL
# answers every POST with 501; RFC 9110 15.6.2 and 15.6.6 are about the server, not a passing outage).
PERMANENT_STATUSES = frozenset({401, 403, 404, 501, 505})
