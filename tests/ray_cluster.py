"""A two-node Ray cluster on this machine, for the Ray runtime tests and bench.ray_throughput.

Run as a script inside a private network namespace with only loopback
(``in_private_network``), so Ray binds and reaches nothing but 127.0.0.1:
``python tests/ray_cluster.py SCENARIO OUT_JSON`` starts a head (no agent resources)
and a worker node (``agents: 8``), plays the scenario and writes what it saw as JSON.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

# Health checks every 500 ms, 3 misses: a lost node is noticed in about 2 s, not 15 (RAY.md).
SYSTEM_CONFIG = {"health_check_period_ms": 500, "health_check_failure_threshold": 3,
                 "health_check_initial_delay_ms": 0}
TAG_VARIABLE = "MASSGEN_RAY_TEST_TAG"


def in_private_network(args: list[str], tag: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """Run ``python tests/ray_cluster.py ARGS`` in a new network namespace with only loopback up."""
    unshare, ip = shutil.which("unshare"), shutil.which("ip")
    if unshare is None or ip is None:
        raise RuntimeError("the Ray cluster tests need unshare and ip (util-linux, iproute2)")
    script = Path(__file__).resolve()
    # Ray's memory monitor kills workers when the (shared) machine is busy: faults here are ours to inject.
    env = {**os.environ, TAG_VARIABLE: tag, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled",
           "RAY_memory_monitor_refresh_ms": "0"}
    command = f"{ip} link set lo up && exec {sys.executable} {script} " + " ".join(args)
    return subprocess.run([unshare, "-n", "sh", "-c", command], env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def tagged_processes(tag: str) -> list[int]:
    """Live processes started with ``tag`` in their environment (everything a scenario spawned)."""
    needle = f"{TAG_VARIABLE}={tag}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


class MemoryPeak(threading.Thread):
    """The largest total RSS of the tagged processes, sampled every 0.5 s."""

    def __init__(self, tag: str) -> None:
        super().__init__(daemon=True)
        self.tag, self.peak, self.stopped = tag, 0, threading.Event()

    def run(self) -> None:
        import psutil

        while not self.stopped.wait(0.5):
            total = 0
            for pid in [*tagged_processes(self.tag), os.getpid()]:
                try:
                    total += psutil.Process(pid).memory_info().rss
                except psutil.Error:
                    continue
            self.peak = max(self.peak, total)


def start_cluster() -> tuple[Any, Any]:
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "include_dashboard": False, "object_store_memory": 80 << 20, "_system_config": SYSTEM_CONFIG,
    })
    worker = cluster.add_node(num_cpus=1, resources={"agents": 8}, object_store_memory=80 << 20)
    cluster.wait_for_nodes()
    return cluster, worker


def ray_config(config: Any) -> Any:
    from massgen.configs.schema import RuntimeConfig

    return config.model_copy(update={"runtime": RuntimeConfig(type="ray", address="auto", resources={"agents": 1})})


def node_loss(out: dict[str, Any], workdir: Path) -> None:
    """An uninterrupted run, then the same run with the worker node removed after the first answer."""
    import ray
    from ray_team import slow_team

    from massgen.actors.run.team import Team

    cluster, worker = start_cluster()
    ray.init(address=cluster.address, log_to_driver=False)
    out["head"], out["worker"] = cluster.head_node.node_id, worker.node_id
    config = ray_config(slow_team())
    try:
        started = time.monotonic()
        result = Team(config, "Which is larger, 9.11 or 9.9?", log_dir=workdir / "uninterrupted",
                      tick_interval_s=0.02).run()
        out["uninterrupted"] = {"status": result.status, "final_answer": result.final_answer,
                                "log_dir": str(result.log_dir), "wall_s": round(time.monotonic() - started, 2)}

        first_answer = threading.Event()
        seen: set[str] = set()

        def watch(record: dict[str, Any], _projection: Any) -> None:
            # After the first answer, once every agent is up on the worker (a slow start is another test).
            if record["type"] in ("AnswerAccepted", "Placed"):
                seen.add(record["payload"].get("name", record["type"]))
            if seen >= {"AnswerAccepted", "agent_a", "agent_b", "agent_c"}:
                first_answer.set()

        started = time.monotonic()
        team = Team(config, "Which is larger, 9.11 or 9.9?", log_dir=workdir / "node_loss",
                    subscribers=[watch], tick_interval_s=0.02).start()
        if not first_answer.wait(60):
            raise RuntimeError("no first answer within 60 s")
        out["removed_at"] = time.time()
        cluster.remove_node(worker, allow_graceful=False)
        result = team.wait()
        out["node_loss"] = {"status": result.status, "final_answer": result.final_answer,
                            "log_dir": str(result.log_dir), "wall_s": round(time.monotonic() - started, 2),
                            "deadline_s": config.timeout_settings.orchestrator_timeout_seconds}
    finally:
        ray.shutdown()
        cluster.shutdown()


def mcp(out: dict[str, Any], workdir: Path) -> None:
    """An agent on the worker node calls a tool of a real MCP stdio server, whose connection runs beside it."""
    import ray
    from mcp_support import stdio
    from support import FACTOR, scripted, step, team_config

    from massgen.actors.run.team import Team

    cluster, worker = start_cluster()
    ray.init(address=cluster.address, log_to_driver=False)
    out["head"], out["worker"] = cluster.head_node.node_id, worker.node_id
    config = ray_config(team_config(scripted(
        "a", [step(tool="mcp__weather__forecast", args={"city": "Paris"})],
        [step(new_answer="Tomorrow: {last_tool_result}")],
        # The tag, so the process check after the scenario sees the server too (its environment is clean).
        mcp_servers=[stdio(env={TAG_VARIABLE: os.environ.get(TAG_VARIABLE, "")}, start_timeout_seconds=120 * FACTOR)],
        exclude_tools=["mcp__weather__admin_reset"],
        # Not a test of deadlines: on a loaded machine the server's start on the worker took past 10 s,
        # and its connection actor was placed 30 s after the run started (2 cores, a model bench beside it).
    ), run_timeout=180.0, turn_timeout=150.0, idle_timeout=120.0))
    try:
        result = Team(config, "Weather tomorrow?", log_dir=workdir / "mcp", tick_interval_s=0.02).run()
        out["mcp"] = {"status": result.status, "final_answer": result.final_answer, "log_dir": str(result.log_dir)}
    finally:
        ray.shutdown()
        cluster.shutdown()


def builds(out: dict[str, Any], workdir: Path) -> None:
    """The slow team on the worker node, each scripted build counted where it happens (tests/counted_backend.py):
    on the driver and in every Ray worker process, which inherit the environment set here."""
    import ray
    from counted_backend import BUILDS_FILE, install
    from ray_team import slow_team

    from massgen.actors.run.team import Team

    tests = str(Path(__file__).resolve().parent)
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (tests, os.environ.get("PYTHONPATH", "")) if p)
    os.environ[BUILDS_FILE] = str(workdir / "builds.txt")
    install()  # the driver's builds count too
    cluster, _worker = start_cluster()
    ray.init(address=cluster.address, log_to_driver=False,
             runtime_env={"worker_process_setup_hook": "counted_backend.install"})
    try:
        result = Team(ray_config(slow_team()), "Which is larger, 9.11 or 9.9?", log_dir=workdir / "builds",
                      tick_interval_s=0.02).run()
        out["builds"] = {"status": result.status, "log_dir": str(result.log_dir),
                         "file": os.environ[BUILDS_FILE]}
    finally:
        ray.shutdown()
        cluster.shutdown()


def cli(out: dict[str, Any], workdir: Path) -> None:
    """`massgen --ray ADDRESS` joins a running cluster, runs the team there and leaves it."""
    cluster, _worker = start_cluster()
    try:
        done = subprocess.run([sys.executable, "-m", "massgen.cli.main", "--ray", cluster.address, "--automation",
                               "--config", "@examples/basic/scripted_three_agents", "Which is larger, 9.11 or 9.9?"],
                              cwd=workdir, capture_output=True, text=True, timeout=120, check=False)
        out["cli"] = {"exit": done.returncode, "stdout": done.stdout, "stderr": done.stderr[-3000:]}
    finally:
        cluster.shutdown()


def errors(out: dict[str, Any]) -> None:
    """The runtime's verbs and errors against a hosted probe on a one-node cluster."""
    import queue

    import pykka
    import ray

    from massgen.actors.runtime.port import Peer, RunContext, TracedActor
    from massgen.actors.runtime.ray_runtime import RayRuntime
    from massgen.configs.schema import RuntimeConfig
    from massgen.messages import Message, Tick

    class Probe(TracedActor):  # defined in __main__, so Ray ships it by value
        def handle(self, message: Message) -> Any:
            assert isinstance(message, Tick)
            if message.now == 1:
                time.sleep(2)
            if message.now == 2:
                raise ValueError("the probe fails on purpose")
            return self.make(Tick, now=message.now)

    class Inbox:
        def __init__(self) -> None:
            self.got: queue.Queue[Message] = queue.Queue()
            self.actor_stopped = threading.Event()

        def tell(self, message: Message) -> None:
            self.got.put(message)

    def outcome(call: Any) -> str:
        try:
            return f"ok {type(call()).__name__}"
        except Exception as exc:
            kinds = [k for k, t in (("dead", pykka.ActorDeadError), ("timeout", pykka.Timeout)) if isinstance(exc, t)]
            return f"{type(exc).__name__} {' '.join(kinds)} {exc}".strip()

    ray.init(address="local", num_cpus=1, include_dashboard=False, object_store_memory=80 << 20, log_to_driver=False,
             _system_config=SYSTEM_CONFIG)
    try:
        ctx = RunContext("errors", None)
        runtime = RayRuntime(RuntimeConfig(type="ray"))
        inbox = Inbox()
        ref = runtime.spawn(ctx, Probe, ("probe",), name="probe", incarnation=1)
        runtime.watch(ref, Peer("watcher", 1, inbox))
        out["reply"] = outcome(lambda: ref.ask(Tick(now=0.0), timeout=60))
        out["timeout"] = outcome(lambda: ref.ask(Tick(now=1.0), timeout=0.5))
        out["remote_error"] = outcome(lambda: ref.ask(Tick(now=2.0), timeout=30))
        out["after_remote_error"] = outcome(lambda: ref.ask(Tick(now=0.0), timeout=30))
        ray.kill(ref.handle, no_restart=True)  # not stopped by us: a killed worker
        down = inbox.got.get(timeout=30)
        out["down"] = [type(down).__name__, getattr(down, "reason", ""), getattr(down, "incarnation", 0)]
        out["tell_after_down"] = outcome(lambda: ref.tell(Tick(now=0.0)))
        out["ask_after_down"] = outcome(lambda: ref.ask(Tick(now=0.0), timeout=5))
        out["more_downs"] = inbox.got.qsize()
        runtime.close()
    finally:
        ray.shutdown()


TINY_PAIR: dict[str, Any] = {
    "agents": [{"id": f"tiny_{i}", "backend": {"type": "local", "model": "tiny", "seed": i, "temperature": 0.3,
                                               "max_tokens": 48, "n_threads": 1}} for i in (1, 2)],
    "orchestrator": {"max_new_answers_per_agent": 1, "final_answer_strategy": "winner_reuse",
                     "restart": {"backoff_base_seconds": 0.2, "max_restarts": 4}},
    "timeout_settings": {"orchestrator_timeout_seconds": 400, "idle_stream_timeout_seconds": 200,
                         "turn_timeout_seconds": 300, "straggler_grace_seconds": 300},
    "runtime": {"type": "ray", "address": "auto", "resources": {"agents": 1},
                "model_server_resources": {"llama": 1}},
}


def _port_open(base_url: str) -> bool:
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(base_url)
    try:
        socket.create_connection((parts.hostname or "", parts.port or 0), timeout=2).close()
        return True
    except OSError:
        return False


def model_server(out: dict[str, Any], workdir: Path) -> None:
    """Local agents on the head reach one model server on a `llama` node over HTTP; that node is then
    removed without grace mid-run; a third run asks for a resource no node has."""
    import ray

    from massgen.actors.run.team import Team
    from massgen.configs import validate_data

    cluster = llama_cluster()
    ray.init(address=cluster.address, log_to_driver=False)
    out["head"] = cluster.head_node.node_id
    out["llama_nodes"] = [n.node_id for n in cluster.worker_nodes]
    factor = float(os.environ.get("MASSGEN_TEST_TIMEOUT_FACTOR", "1"))  # a busy machine: the model is slower
    limits = {k: v * factor for k, v in TINY_PAIR["timeout_settings"].items()}
    config = validate_data({**TINY_PAIR, "timeout_settings": limits}, "tiny pair on ray")
    question = "What is 2+3? Answer with the number."
    try:
        started = time.monotonic()
        result = Team(config, question, log_dir=workdir / "uninterrupted", tick_interval_s=0.05).run()
        urls = [r["payload"]["base_url"] for r in _records(result.log_dir) if r["type"] == "ModelServerReady"]
        out["uninterrupted"] = {"status": result.status, "reason": result.reason, "final_answer": result.final_answer,
                                "log_dir": str(result.log_dir), "wall_s": round(time.monotonic() - started, 2),
                                "open_after": [u for u in urls if _port_open(u)]}

        ready = threading.Event()
        answered = threading.Event()
        server_node: list[str] = []

        def watch(record: dict[str, Any], _projection: Any) -> None:
            if record["type"] == "ModelServerReady" and not server_node:
                server_node.append(record["payload"]["node"])
                ready.set()
            if record["type"] == "AnswerAccepted":
                answered.set()

        started = time.monotonic()
        team = Team(config, question, log_dir=workdir / "node_loss", subscribers=[watch], tick_interval_s=0.05).start()
        if not ready.wait(180 * factor) or not answered.wait(240 * factor):
            raise RuntimeError("no model server or no first answer in time")
        node = next(n for n in cluster.worker_nodes if n.node_id == server_node[0])
        out["removed"], out["removed_at"] = node.node_id, time.time()
        cluster.remove_node(node, allow_graceful=False)
        result = team.wait()
        urls = [r["payload"]["base_url"] for r in _records(result.log_dir) if r["type"] == "ModelServerReady"]
        out["node_loss"] = {"status": result.status, "reason": result.reason, "final_answer": result.final_answer,
                            "log_dir": str(result.log_dir), "wall_s": round(time.monotonic() - started, 2),
                            "open_after": [u for u in urls if _port_open(u)]}

        # The server's process is SIGKILLed mid-run (its actor and node live on): the same restart, on a live node.
        answered.clear()
        started = time.monotonic()
        team = Team(config, question, log_dir=workdir / "process_killed", subscribers=[watch],
                    tick_interval_s=0.05).start()
        if not answered.wait(240 * factor):
            raise RuntimeError("no first answer in time")
        servers = [pid for pid in tagged_processes(os.environ.get(TAG_VARIABLE, "")) if _is_llama_server(pid)]
        out["killed_pids"] = servers
        for pid in servers:
            os.kill(pid, signal.SIGKILL)
        result = team.wait()
        urls = [r["payload"]["base_url"] for r in _records(result.log_dir) if r["type"] == "ModelServerReady"]
        out["process_killed"] = {"status": result.status, "reason": result.reason,
                                 "final_answer": result.final_answer, "log_dir": str(result.log_dir),
                                 "wall_s": round(time.monotonic() - started, 2),
                                 "open_after": [u for u in urls if _port_open(u)]}

        nowhere = validate_data({**TINY_PAIR, "timeout_settings": limits, "runtime": {**TINY_PAIR["runtime"],
                                                          "model_server_resources": {"big_gpu": 1}}}, "nowhere")
        result = Team(nowhere, question, log_dir=workdir / "nowhere", tick_interval_s=0.05).run()
        out["nowhere"] = {"status": result.status, "reason": result.reason, "final_answer": result.final_answer,
                          "log_dir": str(result.log_dir)}
    finally:
        ray.shutdown()
        cluster.shutdown()


def llama_cluster() -> Any:
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "resources": {"agents": 8}, "include_dashboard": False, "object_store_memory": 80 << 20,
        "_system_config": SYSTEM_CONFIG,
    })
    for _ in range(2):
        cluster.add_node(num_cpus=1, resources={"llama": 1}, object_store_memory=80 << 20)
    cluster.wait_for_nodes()
    return cluster


def _is_llama_server(pid: int) -> bool:
    try:
        return b"llama_cpp.server" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _records(log_dir: Path) -> list[dict[str, Any]]:
    from massgen.logs import read_trace

    return read_trace(Path(log_dir))


def main() -> None:
    scenario, out_path = sys.argv[1], Path(sys.argv[2])
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    out: dict[str, Any] = {"scenario": scenario}
    peak = MemoryPeak(os.environ.get(TAG_VARIABLE, ""))
    peak.start()
    started = time.monotonic()
    try:
        if scenario == "node_loss":
            node_loss(out, out_path.parent)
        elif scenario == "errors":
            errors(out)
        elif scenario == "cli":
            cli(out, out_path.parent)
        elif scenario == "mcp":
            mcp(out, out_path.parent)
        elif scenario == "builds":
            builds(out, out_path.parent)
        elif scenario == "model_server":
            model_server(out, out_path.parent)
        elif scenario == "throughput":
            sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
            from bench.ray_throughput import measure

            cluster, worker = start_cluster()
            try:
                out["results"] = measure(cluster, worker, sys.argv[3:])
            finally:
                import ray

                ray.shutdown()
                cluster.shutdown()
        else:
            raise SystemExit(f"unknown scenario {scenario!r}")
    finally:
        peak.stopped.set()
        out["wall_s"] = round(time.monotonic() - started, 2)
        out["peak_rss_mb"] = round(peak.peak / 2**20)
        out_path.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
