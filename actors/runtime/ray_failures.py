"""A Ray failure in the runtime's words, the same on every runtime (``actors/runtime/port.py``).

Read by the agents' runtime (``ray_runtime.py``) and the model servers' (``ray_model_server.py``),
which the former starts: so it lives below both.
"""

from __future__ import annotations

import pykka
import ray

from massgen.actors.runtime.port import ActorDead, ActorUnavailable, AskTimeout, DownReason, RemoteError


def down_reason(exc: BaseException) -> tuple[DownReason, str]:
    """A Ray failure, in the runtime's words (the same on every runtime)."""
    lines = str(exc).strip().splitlines()
    text = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    if isinstance(exc, ray.exceptions.ActorUnavailableError | ray.exceptions.GetTimeoutError):
        return "unavailable", text
    if isinstance(exc, ray.exceptions.OutOfMemoryError):
        return "killed", text
    if isinstance(exc, ray.exceptions.ActorDiedError):
        full = str(exc).lower()
        if "node" in full and ("died" in full or "dead" in full or "removed" in full):
            return "node_lost", text
        return "killed", text
    return "remote_error", text


def normalised(exc: BaseException) -> Exception:
    """A Ray or remote Pykka error as the runtime's own (actors/runtime/port.py), the same on both runtimes."""
    if isinstance(exc, ray.exceptions.ActorUnavailableError):
        return ActorUnavailable(down_reason(exc)[1])
    if isinstance(exc, ray.exceptions.ActorDiedError | pykka.ActorDeadError):
        return ActorDead(down_reason(exc)[1])
    if isinstance(exc, ray.exceptions.GetTimeoutError | pykka.Timeout):
        return AskTimeout("no reply in time")
    if isinstance(exc, ray.exceptions.RayTaskError):
        cause = exc.cause if isinstance(exc.cause, BaseException) else exc
        return RemoteError(f"{type(cause).__name__}: {cause}")
    return RemoteError(f"{type(exc).__name__}: {exc}")
