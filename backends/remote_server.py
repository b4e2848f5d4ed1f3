"""A local model server that runs elsewhere: how an agent's ``local`` backend reaches it.

On Ray, a run can place each local model's llama.cpp server as a Ray actor of its own, on
a node with the resource the config names (actors/runtime/ray_model_server.py). The runtime hands
each agent incarnation a handle to the server it should use when it starts the agent's
Ray worker (``install``); the backend finds it here by model name (``lookup``) and asks
the handle for the server's base URL, then speaks HTTP to it as to any local server.

Why a table in the worker process: a Ray worker hosts exactly one agent incarnation, so
this table is scoped to that incarnation, and the agent code stays the same on every
runtime. Without Ray nothing is installed and the backend starts its own server.
Nothing here imports Ray: a handle's methods are called, and their results awaited, as is.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from massgen.backends.base import PermanentBackendError
from massgen.backends.llama_server import ServerStartError
from massgen.messages.stream import StreamError

# How long a call whose server is gone waits for the runtime to fence its agent: longer than the
# runtime's watch takes to notice a lost node (actors/runtime/ray_model_server.py, 30 s at most).
FENCE_WAIT_S = 40.0

_lock = threading.Lock()
_servers: dict[str, RemoteServer] = {}


class NoModelServer(ServerStartError, PermanentBackendError):
    """No server can be had for this run (no node has the resources, or it could not start): no restart helps."""


class RemoteServer:
    """One model's server as an agent sees it: a Ray handle, or why no server could be placed."""

    def __init__(self, name: str, handle: Any = None, error: str = "") -> None:
        self.name = name  # e.g. "model:tiny#1", as the trace names it
        self.handle = handle
        self.error = error

    async def base_url(self, timeout: float) -> str:
        """The server's ``http://NODE:PORT/v1`` once it is ready; ``ServerStartError`` saying why not."""
        if self.handle is None:
            raise NoModelServer(self.error)
        try:
            url: str = await asyncio.wait_for(self.handle.base_url.remote(timeout), timeout + 5.0)
        except TimeoutError:
            raise ServerStartError(f"the local model server {self.name} was not ready within {timeout:g} s "
                                   "(is a node with its resource busy or gone?)") from None
        except Exception as exc:  # the server's own start error, or its node is gone (a Ray error)
            cause = getattr(exc, "cause", None) or exc
            lines = str(cause).strip().splitlines()
            text = lines[-1].strip() if lines else type(cause).__name__
            raise ServerStartError(f"the local model server {self.name} is not available: {text}") from None
        return url


    async def call_failed(self, base_url: str, exc: Exception) -> StreamError:
        """A call to the server broke off. A glitch is retried; a lost server is not: its runtime tells the
        supervisor (``Down``, ``model_server_lost``), which fences this agent incarnation while it waits here
        and restarts it beside the server's next incarnation. The error is for when no fence comes."""
        message = f"local model server {self.name} at {base_url} failed mid-call ({type(exc).__name__}: {exc})"
        if not await self.lost():
            return StreamError(message=message, retryable=True)
        await asyncio.sleep(FENCE_WAIT_S)
        return StreamError(message=message + "; it is gone", retryable=False)

    async def lost(self, timeout: float = 5.0) -> bool:
        """Whether the server is gone (its actor or node, or its process exited), as one probe tells."""
        if self.handle is None:
            return True
        try:
            status, _detail, _node = await asyncio.wait_for(self.handle.watch.remote("", 0.0), timeout)
        except Exception:
            return True
        return bool(status != "ready")


def model_key(model: str | None) -> str:
    """One server per model: aliases name the same model (``tiny`` is ``gemma3-270m``)."""
    from massgen.backends.local_model import ALIASES

    name = (model or "default").strip()
    return ALIASES.get(name, name)


def install(servers: dict[str, RemoteServer]) -> None:
    """The servers this process's agent uses, by ``model_key`` (called once, as its Ray worker starts)."""
    with _lock:
        _servers.clear()
        _servers.update(servers)


def lookup(model: str | None) -> RemoteServer | None:
    """The remote server for ``model``; None when the backend should start its own."""
    with _lock:
        return _servers.get(model_key(model))


__all__ = ["NoModelServer", "RemoteServer", "install", "lookup", "model_key"]
