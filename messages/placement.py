"""Where actors run and how they went away: what a runtime that places actors reports.

Pykka runs every actor in this process and never sends these. Ray (actors/runtime/ray_runtime.py)
records ``Placed`` for each agent incarnation and tells the watcher ``Down`` when one is
lost without being stopped (its node died, its worker was killed, it stopped answering).
A local model server placed as a Ray actor of its own is recorded the same way (``Placed``,
``ModelServerReady``, and ``Down`` as an event when it is lost).
"""

from __future__ import annotations

from typing import Literal

from massgen.messages.envelope import Message


class Placed(Message):
    """An agent incarnation is up on ``node`` (a Ray node id); ``fallback`` when its resources were not."""

    name: str
    incarnation: int
    node: str
    resources: dict[str, float] = {}
    fallback: bool = False
    beside: str = ""  # placed on the node of this actor (an MCP stdio connection beside its agent)


class Down(Message):
    """A watched actor is gone without being stopped; the watcher fences that incarnation."""

    name: str
    incarnation: int
    # model_server_lost: the agent's local model server (a Ray actor of its own) is gone.
    reason: Literal["killed", "node_lost", "unavailable", "remote_error", "model_server_lost"]
    detail: str = ""


class ModelServerReady(Message):
    """A local model server the runtime placed (``name`` ``model:MODEL``) answers at ``base_url``."""

    name: str
    incarnation: int
    node: str
    base_url: str
