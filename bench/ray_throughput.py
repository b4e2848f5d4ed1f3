"""Messages per second between the driver and an actor on another Ray node, through our runtime.

A two-node cluster on this machine (tests/ray_cluster.py, in a private network namespace
with only loopback): an echo actor hosted on the worker node (``RayRuntime.spawn``, as an
agent is) answers every ``Tick`` with a ``Tick`` to a sink actor in the driver. Pipelined:
N messages sent at once, time until the N-th echo arrives. Round trip: one at a time.
Traced: the echoes are also trace records replayed into a real trace writer, as in a run.

Run (root, for the network namespace): python -m bench.ray_throughput [--n 3000] [--rounds 200]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pykka

from massgen.actors.runtime.port import Peer, RunContext, TracedActor
from massgen.messages import Message, Tick


class Echo(TracedActor):
    """Answers each Tick with a Tick to ``back`` (traced when ``traced``)."""

    def __init__(self, ctx: RunContext, name: str, back: Peer, traced: bool) -> None:
        super().__init__(ctx, name)
        self.back, self.traced = back, traced

    def handle(self, message: Message) -> Any:
        assert isinstance(message, Tick)
        self.ctx.tell(self.back, self.make(Tick, now=message.now), traced=self.traced)


class Sink(pykka.ThreadingActor):
    use_daemon_thread = True

    def __init__(self) -> None:
        super().__init__()
        self.count, self.want, self.reached = 0, 0, threading.Event()

    def on_receive(self, message: Any) -> Any:
        if isinstance(message, tuple):  # ("expect", n)
            self.count, self.want = 0, message[1]
            self.reached.clear()
            return None
        self.count += 1
        if self.count >= self.want:
            self.reached.set()
        return None


def _one(worker_id: str, n: int, rounds: int, traced: bool) -> dict[str, Any]:
    from ray import cloudpickle

    from massgen.actors.record.trace_writer import TraceWriter
    from massgen.actors.runtime.ray_runtime import RayRuntime
    from massgen.configs.schema import RuntimeConfig

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # bench/ is not installed on the workers
    log_dir = Path(tempfile.mkdtemp(prefix="ray-bench-"))
    trace = TraceWriter.start(log_dir) if traced else None
    ctx = RunContext(uuid.uuid4().hex[:12], trace)
    runtime = RayRuntime(RuntimeConfig(type="ray", resources={"agents": 1}))
    sink_ref = Sink.start()
    sink = sink_ref.proxy()
    back = Peer("sink", 1, sink_ref)
    ref = runtime.spawn(ctx, Echo, ("echo", back, traced), name="echo", incarnation=1)
    try:
        # Warm up (actor start, first pull), and check where it runs.
        sink_ref.tell(("expect", 1))
        ctx.tell(Peer("echo", 1, ref), Tick(run_id=ctx.run_id, now=0.0), traced=traced)
        if not sink.reached.get().wait(60):
            raise RuntimeError("the echo actor did not answer within 60 s")
        placed_on_worker = ref.node == worker_id

        sink_ref.tell(("expect", n))
        started = time.perf_counter()
        for i in range(n):
            ctx.tell(Peer("echo", 1, ref), Tick(run_id=ctx.run_id, now=float(i)), traced=traced)
        if not sink.reached.get().wait(300):
            raise RuntimeError(f"only {sink.count.get()} of {n} echoes within 300 s")
        pipelined = time.perf_counter() - started

        started = time.perf_counter()
        for i in range(rounds):
            sink_ref.tell(("expect", 1))
            ctx.tell(Peer("echo", 1, ref), Tick(run_id=ctx.run_id, now=float(i)), traced=traced)
            if not sink.reached.get().wait(30):
                raise RuntimeError("an echo did not come back within 30 s")
        round_trip = (time.perf_counter() - started) / rounds
    finally:
        ref.stop(block=True, timeout=10)
        runtime.close()
        sink_ref.stop()
        if trace is not None:
            trace.stop()
    return {"traced": traced, "on_worker_node": placed_on_worker, "n": n,
            "pipelined_msgs_per_s": round(2 * n / pipelined), "echoes_per_s": round(n / pipelined),
            "round_trip_ms": round(round_trip * 1000, 2), "rounds": rounds}


def measure(cluster: Any, worker: Any, argv: list[str]) -> list[dict[str, Any]]:
    """Called inside the namespace by tests/ray_cluster.py once the cluster is up."""
    import ray

    parsed = _parser().parse_args(argv)
    ray.init(address=cluster.address, log_to_driver=False)
    return [_one(worker.node_id, parsed.n, parsed.rounds, traced) for traced in (False, True)]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.ray_throughput", description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=3000, help="messages sent at once (pipelined)")
    parser.add_argument("--rounds", type=int, default=200, help="one-at-a-time round trips")
    return parser


def main() -> None:
    args = sys.argv[1:]
    _parser().parse_args(args)  # --help, and errors before the cluster starts
    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "tests"))
    from ray_cluster import in_private_network, tagged_processes

    tag = uuid.uuid4().hex
    with tempfile.TemporaryDirectory() as tmp:
        out_file = Path(tmp) / "out.json"
        done = in_private_network(["throughput", str(out_file), *args], tag, timeout=600)
        if not out_file.exists() or "results" not in json.loads(out_file.read_text()):
            sys.exit(f"the benchmark failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
        out = json.loads(out_file.read_text())
    print("| trace | echo on worker node | messages | msgs/s (both ways, pipelined) | round trip (ms) |")
    print("|---|---|---|---|---|")
    for row in out["results"]:
        print(f"| {'on' if row['traced'] else 'off'} | {row['on_worker_node']} | {2 * row['n']} "
              f"| {row['pipelined_msgs_per_s']} | {row['round_trip_ms']} |")
    print(f"\ncluster wall time {out['wall_s']} s, peak RSS of all its processes {out['peak_rss_mb']} MB; "
          f"processes left: {len(tagged_processes(tag))}")


if __name__ == "__main__":
    main()
