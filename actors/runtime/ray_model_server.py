"""Local model servers as Ray actors of their own, placed by a resource and reached over HTTP.

With ``runtime.model_server_resources`` (e.g. ``{llama: 1}``), each local model a run uses
gets one llama.cpp server, hosted by a ``ModelServerHost`` Ray actor on a node that has
those resources (the GPU node, say) and bound to that node's address. Agents stay where
their own placement puts them; their ``local`` backend gets a handle to the server
(backends/remote_server.py), asks it for the base URL and speaks HTTP to it.

Supervision stays ours, as for agents: a driver thread per server incarnation watches it
(its node lost, its worker killed, its process exited). A lost server's node gets no new
actors from this run, and every agent incarnation using that server is told ``Down``
(``model_server_lost``): the supervisor restarts those agents with the usual policy, and
the first restart starts the server's next incarnation on a live node with the resources.
When no live node has them, the agents' starts fail with a message that says so. At the end
of the run each server is stopped (its process group gets SIGTERM) and its actor killed.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from massgen.actors.runtime.port import RUNTIME, DownReason, RunContext
from massgen.actors.runtime.ray_failures import down_reason
from massgen.backends.remote_server import RemoteServer, model_key
from massgen.configs.schema import LocalBackendConfig
from massgen.messages import Down, Placed
from massgen.messages.placement import ModelServerReady

_ray: Any = ray  # Ray's API is untyped: one Any at the boundary, not an ignore per call

_WATCH_WAIT_S = 1.0  # one watch call waits this long for a change
_WATCH_DEADLINE_S = 30.0  # a watch unanswered this long: the node stopped answering
_STOP_TIMEOUT_S = 10.0


@ray.remote(concurrency_groups={"ask": 8, "watch": 1})  # type: ignore[call-overload]
class ModelServerHost:
    """Starts one llama.cpp server on this node's address, in the background; ``base_url`` waits for it."""

    def __init__(self, config: LocalBackendConfig) -> None:
        self.config = config
        self.url: str | None = None
        self.error = ""
        self.server: Any = None
        self.ready = threading.Event()
        self.stopping = threading.Event()
        threading.Thread(target=self._start, name="model-server-start", daemon=True).start()

    def _start(self) -> None:
        from massgen.backends.llama_server import LlamaServer
        from massgen.backends.local_model import resolve_model

        try:
            path = resolve_model(self.config.model)
            self.server = LlamaServer(path, n_ctx=self.config.n_ctx, n_threads=self.config.n_threads,
                                      start_timeout=self.config.server_start_timeout_seconds,
                                      host=_ray.util.get_node_ip_address())
            if not self.stopping.is_set():
                self.url = self.server.ensure_running()
        except Exception as exc:
            self.error = str(exc) or type(exc).__name__
        finally:
            self.ready.set()

    def _status(self) -> tuple[str, str]:
        if self.stopping.is_set():
            return "stopped", ""
        if not self.ready.is_set():
            return "starting", ""
        if self.url is None:
            return "failed", self.error
        if not self.server.is_alive():
            return "exited", f"the server process exited ({self.server.pid})"
        return "ready", self.url

    @ray.method(concurrency_group="ask")
    def base_url(self, timeout: float) -> str:
        from massgen.backends.llama_server import ServerStartError

        if not self.ready.wait(timeout):
            raise ServerStartError(f"the server did not become ready within {timeout:g} s")
        if self.url is None:
            raise ServerStartError(self.error)
        return self.url

    @ray.method(concurrency_group="watch")
    def watch(self, known: str, wait_s: float) -> tuple[str, str, str]:
        """(status, detail, node) once the status differs from ``known``, or after ``wait_s``."""
        waited = 0.0
        status = self._status()
        while status[0] == known and waited < wait_s:
            self.stopping.wait(0.1)
            waited += 0.1
            status = self._status()
        return status[0], status[1], ray.get_runtime_context().get_node_id()

    @ray.method(concurrency_group="ask")
    def stop(self) -> None:
        """SIGTERM to the server's process group (SIGKILL after 5 s); the port closes with it."""
        self.stopping.set()
        self.ready.wait(_STOP_TIMEOUT_S)
        if self.server is not None:
            self.server.stop()


@dataclass
class _Incarnation:
    name: str  # model:MODEL
    number: int
    handle: Any
    node: str | None = None
    lost: bool = False
    stopping: bool = False
    users: list[Any] = field(default_factory=list)  # RayRefs of the agent incarnations using it
    watcher: threading.Thread | None = None


class ModelServers:
    """The run's model servers, one per model, each incarnation watched by a driver thread."""

    def __init__(self, resources: dict[str, float], suspects: Any, suspect: Any) -> None:
        self.resources = resources
        self._suspects = suspects  # () -> set of node ids this run saw fail
        self._suspect = suspect  # (node id) -> None
        self._lock = threading.Lock()
        self._current: dict[str, _Incarnation] = {}
        self._failed: dict[str, str] = {}  # a server that could not start: its error, for every later agent
        self._all: list[_Incarnation] = []
        self._closed = False

    def for_agent(self, ctx: RunContext, config: LocalBackendConfig) -> RemoteServer:
        """The live server for ``config.model`` (starting its next incarnation if there is none)."""
        key = model_key(config.model)
        name = f"model:{key}"
        with self._lock:
            if key in self._failed:
                return RemoteServer(name, error=self._failed[key])
            current = self._current.get(key)
            if current is not None and not current.lost:
                return RemoteServer(f"{name}#{current.number}", current.handle)
            number = current.number + 1 if current is not None else 1
            node = self._node()
            if node is None:
                wanted = ", ".join(f"{k}: {v:g}" for k, v in self.resources.items())
                why = "lost" if current is not None else "in the cluster"
                return RemoteServer(name, error=f"no live Ray node {why} has the resources {{{wanted}}} that "
                                                f"runtime.model_server_resources asks for (model {key})")
            handle = ModelServerHost.options(  # type: ignore[attr-defined]
                num_cpus=0, max_restarts=0, max_task_retries=0, lifetime=None, resources=dict(self.resources),
                scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=True),
                name=f"{ctx.run_id}:{name}#{number}", namespace="massgen",
            ).remote(config)
            incarnation = _Incarnation(name, number, handle, node)
            incarnation.watcher = threading.Thread(target=self._watch,
                                                   args=(ctx, key, incarnation, config.server_start_timeout_seconds),
                                                   name=f"ray-watch-{name}#{number}", daemon=True)
            self._current[key] = incarnation
            self._all.append(incarnation)
        incarnation.watcher.start()
        return RemoteServer(f"{name}#{number}", handle)

    def used_by(self, server: RemoteServer, ref: Any) -> None:
        """``ref`` (an agent incarnation) depends on ``server``: it is told ``Down`` when the server is lost."""
        with self._lock:
            for incarnation in self._all:
                if server.handle is not None and incarnation.handle is server.handle:
                    incarnation.users.append(ref)
                    lost = incarnation.lost
                    break
            else:
                return
        if lost:  # lost between the lookup and now
            ref.dependency_lost(f"its model server {server.name} is gone")

    def _node(self) -> str | None:
        suspects = self._suspects()
        for node in _ray.nodes():
            if node.get("Alive") and node["NodeID"] not in suspects and \
                    all(node["Resources"].get(k, 0.0) >= v for k, v in self.resources.items()):
                return str(node["NodeID"])
        return None

    def _watch(self, ctx: RunContext, key: str, incarnation: _Incarnation, place_timeout: float) -> None:
        known = ""
        while True:
            try:  # the first answer comes once the actor is placed: its resources may all be held a while
                status, detail, node = ray.get(incarnation.handle.watch.remote(known, _WATCH_WAIT_S),
                                               timeout=place_timeout if known == "" else _WATCH_DEADLINE_S)
            except Exception as exc:
                if known != "" or not isinstance(exc, ray.exceptions.GetTimeoutError):
                    self._lost(ctx, key, incarnation, *down_reason(exc))
                    return
                wanted = ", ".join(f"{k}: {v:g}" for k, v in self.resources.items())
                why = (f"the local model server {incarnation.name} was not placed within {place_timeout:g} s: "
                       f"every node with {{{wanted}}} is busy (each server holds them while it runs)")
                with self._lock:
                    self._failed[key] = why
                self._lost(ctx, key, incarnation, "unavailable", why, tell_users=False, suspect=False)
                return
            if known == "":
                incarnation.node = node
                ctx.record(Placed(run_id=ctx.run_id, sender=RUNTIME, name=incarnation.name,
                                  incarnation=incarnation.number, node=node, resources=dict(self.resources)))
            if status == known:
                continue
            known = status
            if status == "ready":
                ctx.record(ModelServerReady(run_id=ctx.run_id, sender=RUNTIME, name=incarnation.name,
                                            incarnation=incarnation.number, node=node, base_url=detail))
            elif status == "failed":  # it could not start (a missing model, say): later agents get this error
                with self._lock:
                    self._failed[key] = f"the local model server {incarnation.name} could not start: {detail}"
                self._lost(ctx, key, incarnation, "remote_error", detail, tell_users=False)  # they got the error
                return
            elif status == "exited":
                self._lost(ctx, key, incarnation, "killed", detail)
                return
            elif status == "stopped":
                return

    def _lost(self, ctx: RunContext, key: str, incarnation: _Incarnation, reason: DownReason, detail: str,
              tell_users: bool = True, suspect: bool = True) -> None:
        with self._lock:
            if incarnation.stopping or self._closed:
                return  # we stopped it: not news
            incarnation.lost = True
            users = list(incarnation.users)
        if suspect and reason in ("node_lost", "unavailable") and incarnation.node is not None:
            self._suspect(incarnation.node)
        ctx.record(Down(run_id=ctx.run_id, sender=RUNTIME, name=incarnation.name, incarnation=incarnation.number,
                        reason=reason, detail=detail))
        try:
            ray.kill(incarnation.handle, no_restart=True)  # fenced: its process group dies with the worker
        except Exception:
            pass
        for ref in users if tell_users else ():
            ref.dependency_lost(f"its model server {incarnation.name}#{incarnation.number} was lost ({reason}: "
                                f"{detail})")

    def close(self) -> None:
        """Stop every server (SIGTERM to its process group, so its port closes), then kill its actor."""
        with self._lock:
            self._closed = True
            live = [i for i in self._all if not i.lost]
            for incarnation in live:
                incarnation.stopping = True
        pending = [(i, i.handle.stop.remote()) for i in live]
        for incarnation, done in pending:
            try:
                ray.get(done, timeout=_STOP_TIMEOUT_S + 5)
            except Exception:
                pass
            try:
                ray.kill(incarnation.handle, no_restart=True)
            except Exception:
                pass
        for incarnation in self._all:
            if incarnation.watcher is not None:
                incarnation.watcher.join(timeout=_WATCH_DEADLINE_S)
