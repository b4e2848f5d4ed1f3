"""The Ray runtime: agents as Ray actors on a cluster, supervised by our supervisor in the driver.

Ray runs the processes and moves the messages; supervision stays ours. Each agent
incarnation is one ``ActorHost`` (actors/runtime/ray_host.py) with Ray's restarts and retries off
(``max_restarts=0``, ``max_task_retries=0``), fate-sharing with the driver (no detached
actors). A pump thread per incarnation pulls its outbox and replays it in order: trace
records to the one writer, then the deliveries, so a delivery is never written before its
send. The pull is also the watch: when it fails (node death, killed worker, a node that
stops answering) the watcher gets ``Down``, and the supervisor fences that incarnation
(``ray.kill``) and respawns it on a live node. Anything a fenced incarnation still sends
is a dead letter by incarnation, as on Pykka.

Only runs whose config says ``runtime: {type: ray}`` import this module (and Ray).
"""

from __future__ import annotations

import os
import socket
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

import pykka
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from massgen.actors.runtime.port import (
    RUNTIME,
    ActorDead,
    DownReason,
    Peer,
    RunContext,
    TracedActor,
)
from massgen.actors.runtime.ray_failures import down_reason, normalised
from massgen.actors.runtime.ray_host import ActorHost, Item
from massgen.actors.runtime.ray_model_server import ModelServers
from massgen.backends.remote_server import RemoteServer, model_key
from massgen.configs.schema import LocalBackendConfig, RuntimeConfig
from massgen.messages import Down, Message, Placed

_ray: Any = ray  # Ray's API is untyped: one Any at the boundary, not an ignore per call

_PULL_WAIT_S = 0.5  # how long one pull waits for output before it returns empty
_PULL_DEADLINE_S = 30.0  # a pull unanswered this long means the node stopped answering
# A worker can take longer than that to start on a busy machine (seen: over 30 s at load 14 on 2 cores),
# and a slow start is no lost node; the supervisor's own start deadline fences one that never starts.
_START_DEADLINE_S = 600.0
_STOP_GRACE_S = 2.0
_CONNECT_TIMEOUT_S = 5.0


# Runs of this process using a connection we made (serve and the REPL run several Teams): the last
# one to close leaves the cluster. A connection someone else made (a test, a user's driver) is theirs.
_joined = {"runs": 0, "ours": False}
_joined_lock = threading.Lock()


def connect(config: RuntimeConfig) -> None:
    """Join the cluster unless this process already has, and count this run as a user of it."""
    with _joined_lock:
        if not ray.is_initialized():
            _reachable(config.address)
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            ray.init(address=config.address, log_to_driver=False, configure_logging=False)
            _joined["ours"] = True
        _joined["runs"] += 1


def disconnect() -> None:
    with _joined_lock:
        _joined["runs"] -= 1
        if _joined["runs"] == 0 and _joined["ours"]:
            _joined["ours"] = False
            ray.shutdown()


def _reachable(address: str) -> None:
    """Fail in seconds, not minutes: ``ray.init`` waits about two minutes for a head that is not there."""
    if address == "auto":  # RAY_ADDRESS, else the head this machine started last (if any)
        current = Path(tempfile.gettempdir()) / "ray" / "ray_current_cluster"
        address = os.environ.get("RAY_ADDRESS") or (current.read_text().strip() if current.exists() else "")
        if not address:
            raise ConnectionError("no Ray cluster is running here (start one with `ray start --head`)")
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=_CONNECT_TIMEOUT_S).close()
    except (OSError, ValueError) as exc:
        raise ConnectionError(f"nothing answers at {address} ({exc})") from exc


class RayRef:
    """A hosted actor as the driver holds it: the verbs of a Pykka ref, over Ray."""

    def __init__(self, runtime: RayRuntime, ctx: RunContext, handle: Any, name: str, incarnation: int,
                 node: str | None, fallback: bool, targets: dict[str, Any], beside: str | None = None) -> None:
        self.runtime, self.ctx, self.handle = runtime, ctx, handle
        self.name, self.incarnation, self.node = name, incarnation, node
        self.fallback = fallback  # placed without the resources it asks for: no live node had them
        self.beside = beside  # placed on the node of this actor (its agent)
        self.targets = targets  # peers in the driver the hosted actor may tell, by str(Peer)
        self.actor_stopped = threading.Event()
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._watcher: Peer | None = None
        self._down: tuple[DownReason, str] | None = None
        self._dependency_down: tuple[DownReason, str] | None = None
        self._pump = threading.Thread(target=self._run_pump, name=f"ray-pump-{name}#{incarnation}", daemon=True)
        self._pump.start()

    def __str__(self) -> str:
        return f"{self.name}#{self.incarnation}"

    # -- the verbs ------------------------------------------------------------------------------

    def tell(self, message: Message) -> None:
        if self.actor_stopped.is_set():
            raise ActorDead(f"{self} is gone")
        pending = self.handle.receive.remote(message)

        def delivered(done: Any) -> None:
            try:
                accepted = done.result()
            except Exception as exc:
                self.ctx._dead_letter(message, str(self), f"recipient lost: {down_reason(exc)[0]}")
                return
            if not accepted:
                self.ctx._dead_letter(message, str(self), "recipient stopped")

        pending.future().add_done_callback(delivered)

    def ask(self, message: Message, timeout: float | None = None) -> Any:
        """Ask from a thread that may wait (never from a handler); errors are the runtime's own."""
        if self.actor_stopped.is_set():
            raise ActorDead(f"{self} is gone")
        try:
            return ray.get(self.handle.ask.remote(message, timeout),
                           timeout=None if timeout is None else timeout + _PULL_WAIT_S)
        except Exception as exc:
            raise normalised(exc) from exc

    def stop(self, block: bool = True, timeout: float | None = None) -> pykka.Future[None]:
        """Stop the hosted actor (its on_stop closes what it owns), then kill the Ray actor."""
        stopped: pykka.Future[None] = pykka.ThreadingFuture()
        first = not self._stopping.is_set()
        self._stopping.set()

        def finish() -> None:
            if first and self._down is None:
                try:
                    ray.get(self.handle.stop.remote(_STOP_GRACE_S), timeout=_STOP_GRACE_S + 1)
                except Exception:
                    pass
            self._kill()
            stopped.set(None)

        if self._down is not None:
            finish()  # lost already: fence it now, nothing to close politely
        else:
            threading.Thread(target=finish, name=f"ray-stop-{self}", daemon=True).start()
        if block:
            stopped.get(timeout=timeout)
        return stopped

    def watch(self, watcher: Peer) -> None:
        with self._lock:
            self._watcher = watcher
            down = self._down or self._dependency_down
        if down is not None and not self._stopping.is_set():
            self._tell_down(*down)

    def down_cause(self) -> tuple[DownReason, str] | None:
        """Why the hosted actor is gone, if it was lost (not stopped by us): its ``Down``'s cause."""
        with self._lock:
            return None if self._stopping.is_set() else self._down

    def dependency_lost(self, detail: str) -> None:
        """Something this incarnation cannot work without (its model server) is gone: Down, unless stopped."""
        if self._stopping.is_set() or self.actor_stopped.is_set():
            return
        with self._lock:
            self._dependency_down = ("model_server_lost", detail)  # for a watcher that comes later
        self._tell_down("model_server_lost", detail)

    def _kill(self) -> None:
        try:
            ray.kill(self.handle, no_restart=True)
        except Exception:
            pass
        self.actor_stopped.set()

    # -- the pump: the hosted actor's output, replayed in order -----------------------------------

    def _run_pump(self) -> None:
        deadline = _START_DEADLINE_S  # the first pull waits for the worker to start: slow is not lost there
        while True:
            try:
                items = ray.get(self.handle.pull.remote(_PULL_WAIT_S), timeout=deadline)
                deadline = _PULL_DEADLINE_S
            except Exception as exc:
                self._lost(*down_reason(exc))
                return
            for item in items:
                if item[0] == "stopped":  # it stopped itself; the supervisor sees actor_stopped, as on Pykka
                    self.actor_stopped.set()
                    self._stopping.set()
                    self._kill()
                    return
                self._replay(item)

    def _replay(self, item: Item) -> None:
        what = item[0]
        if what == "trace":
            _, kind, to, message, extra = item
            self.ctx.trace(kind, message, to=to, **extra)
        elif what == "tell":
            _, to, message = item
            target = self.targets.get(to)
            try:
                if target is None:
                    raise ActorDead(to)
                target.tell(message)
            except pykka.ActorDeadError:
                self.ctx._dead_letter(message, to, "recipient stopped")
        elif what == "ask":
            _, to, message, timeout = item
            self.runtime.asks.submit(self._answer, to, message, timeout)
        elif what == "placed":
            self.node = item[1]
            resources = {} if self.fallback or self.beside else self.runtime.config.resources_for(self.name)
            self.ctx.record(Placed(run_id=self.ctx.run_id, sender=RUNTIME, name=self.name,
                                   incarnation=self.incarnation, node=item[1], resources=resources,
                                   fallback=self.fallback, beside=self.beside or ""))

    def _answer(self, to: str, message: Message, timeout: float) -> None:
        target = self.targets.get(to)
        reply: Message | None = None
        try:
            if target is None:
                raise ActorDead(to)
            reply = target.ask(message, timeout=timeout)  # traced by the replier, as on Pykka
        except pykka.Timeout:
            reply = None  # the asker times out on its own and traces it
        except pykka.ActorDeadError:
            self.ctx._dead_letter(message, to, "recipient stopped before replying")
        try:
            self.handle.reply.remote(message.msg_id, reply)
        except Exception:
            pass

    def _lost(self, reason: DownReason, detail: str) -> None:
        # The cause and the suspect node are known before ``actor_stopped`` is set: a supervisor
        # that sees the stopped ref first (its Tick ahead of our Down) reads the cause
        # (``down_cause``) and restarts away from the node.
        with self._lock:
            self._down = (reason, detail)
            watcher = self._watcher
        stopping = self._stopping.is_set()
        if not stopping and reason in ("node_lost", "unavailable") and self.node is not None:
            self.runtime.suspect(self.node)
        self.actor_stopped.set()
        if stopping:
            return  # we stopped or fenced it: not news
        if watcher is not None:
            self._tell_down(reason, detail)

    def _tell_down(self, reason: DownReason, detail: str) -> None:
        with self._lock:
            watcher, self._watcher = self._watcher, None  # one Down per incarnation
        if watcher is not None:
            self.ctx.tell(watcher, Down(run_id=self.ctx.run_id, sender=RUNTIME, name=self.name,
                                        incarnation=self.incarnation, reason=reason, detail=detail))


class RayRuntime:
    """Places agents on a Ray cluster by the resources the config names; everything else stays here."""

    def __init__(self, config: RuntimeConfig) -> None:
        self.config = config
        connect(config)
        self.asks = ThreadPoolExecutor(max_workers=4, thread_name_prefix="ray-asks")
        self._refs: list[RayRef] = []
        self._closed = False
        self._suspects: set[str] = set()
        self._lock = threading.Lock()
        self.model_servers: ModelServers | None = None
        if config.model_server_resources:
            self.model_servers = ModelServers(config.model_server_resources, self._suspected, self.suspect)

    def _suspected(self) -> set[str]:
        with self._lock:
            return set(self._suspects)

    def suspect(self, node: str) -> None:
        """A node that lost an actor gets no new ones from this run (fence, don't wait it out)."""
        with self._lock:
            self._suspects.add(node)

    def _place(self, resources: dict[str, float]) -> tuple[dict[str, Any], str | None, bool]:
        """Ray options for an actor asking for ``resources``: on a live node that has them, else on
        any live node without them (a fallback), never on a suspect node."""
        with self._lock:
            suspects = set(self._suspects)
        alive = [n for n in _ray.nodes() if n.get("Alive") and n["NodeID"] not in suspects]
        fits = [n for n in alive if all(n["Resources"].get(k, 0.0) >= v for k, v in resources.items())]
        if fits:
            node = fits[0]["NodeID"]
            return {"resources": resources, "scheduling_strategy": NodeAffinitySchedulingStrategy(node, soft=True)}, \
                node, False
        if alive:
            node = alive[0]["NodeID"]
            return {"scheduling_strategy": NodeAffinitySchedulingStrategy(node, soft=True)}, node, bool(resources)
        return {}, None, bool(resources)

    def _beside(self, name: str) -> tuple[dict[str, Any], str | None, bool] | None:
        """On the node of ``name``'s newest incarnation, while that node is neither lost nor suspect."""
        with self._lock:
            newest = next((r for r in reversed(self._refs) if r.name == name), None)
            suspects = set(self._suspects)
        if newest is None or newest.node is None or newest.node in suspects or newest.actor_stopped.is_set():
            return None
        return {"scheduling_strategy": NodeAffinitySchedulingStrategy(newest.node, soft=True)}, newest.node, False

    def spawn(self, ctx: RunContext, cls: type[TracedActor[Any]], args: tuple[Any, ...], *, name: str,
              incarnation: int, beside: str | None = None) -> RayRef:
        targets = {str(a): a.ref for a in args if isinstance(a, Peer)}
        remote_args = tuple(Peer(a.name, a.incarnation, None) if isinstance(a, Peer) else a for a in args)
        placed = self._beside(beside) if beside is not None else None
        options, node, fallback = placed or self._place(self.config.resources_for(beside or name))
        server = self._model_server(ctx, args)
        handle = cast(Any, ActorHost).options(
            num_cpus=0, max_restarts=0, max_task_retries=0, lifetime=None,
            name=f"{ctx.run_id}:{name}#{incarnation}", namespace="massgen", **options,
        ).remote(ctx.run_id, cls, remote_args, *([{server[0]: server[1]}] if server else []))
        ref = RayRef(self, ctx, handle, name, incarnation, node, fallback, targets, beside)
        with self._lock:
            self._refs.append(ref)
        if server is not None and self.model_servers is not None:
            self.model_servers.used_by(server[1], ref)
        return ref

    def _model_server(self, ctx: RunContext, args: tuple[Any, ...]) -> tuple[str, RemoteServer] | None:
        """The model server a local agent uses, when the config places those servers (``model_server_resources``)."""
        backend = getattr(getattr(args[0], "config", None), "backend", None) if args else None
        if self.model_servers is None or not isinstance(backend, LocalBackendConfig):
            return None
        return model_key(backend.model), self.model_servers.for_agent(ctx, backend)

    def watch(self, ref: Any, watcher: Peer) -> None:
        if isinstance(ref, RayRef):
            ref.watch(watcher)

    def down_cause(self, ref: Any) -> tuple[DownReason, str] | None:
        return ref.down_cause() if isinstance(ref, RayRef) else None

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            refs = list(self._refs)
        for ref in refs:
            if not ref.actor_stopped.is_set():
                ref.stop(block=False)
        for ref in refs:
            ref._pump.join(timeout=_PULL_DEADLINE_S)
        if self.model_servers is not None:
            self.model_servers.close()  # after the agents: nobody calls them any more
        self.asks.shutdown(wait=False, cancel_futures=True)
        disconnect()
