"""Soak: hundreds of short runs back to back in one process, each with a random fault.

Three ``chatcompletion`` agents on one loopback Chat Completions server
(``tests/wire/team_chat.py``); in each run the third agent gets a fault drawn at random
(or none). Prints runs, faults by kind, runs completed, answers lost (a run in which an
agent answered but no answer came back: must be 0), resources leaked (threads, fds and
child processes against the baseline after a warm-up), and p50/p95 run time.

    .venv/bin/python -m bench.soak [--runs 300] [--seed 10]
"""

from __future__ import annotations

import argparse
import collections
import gc
import logging
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil

import massgen
from massgen.logs import read_trace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from wire.team_chat import TeamChatServer

FAULTS = ["none", "hang", "hang_mid", "loop", "drip", "drop", "reset", "truncated", "malformed", "429", "500",
          "502", "503"]


def config(url: str, fault: str) -> dict[str, Any]:
    def agent(agent_id: str, model: str) -> dict[str, Any]:
        return {"id": agent_id, "backend": {"type": "chatcompletion", "base_url": f"{url}/v1",
                                            "api_key": "sk-soak", "model": model, "timeout_seconds": 2.0}}

    faulty = "healthy#3" if fault == "none" else fault
    return {"agents": [agent("a", "healthy#1"), agent("b", "healthy#2"), agent("c", faulty)],
            "orchestrator": {"restart": {"backoff_base_seconds": 0.05}},
            "timeout_settings": {"orchestrator_timeout_seconds": 60, "straggler_grace_seconds": 1.0}}


def resources(server: TeamChatServer) -> tuple[int, int, int]:
    """Threads, fds and child processes of this process; the fault server's own sockets excluded."""
    me = psutil.Process()
    gc.collect()
    server_side = sum(1 for c in me.net_connections("tcp") if c.laddr and c.laddr.port == server.port)
    return threading.active_count(), me.num_fds() - server_side, len(me.children(recursive=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=10)
    args = parser.parse_args()
    logging.getLogger("pykka").setLevel(logging.CRITICAL)
    rng = random.Random(args.seed)
    faults: collections.Counter[str] = collections.Counter()
    statuses: collections.Counter[str] = collections.Counter()
    walls: list[float] = []
    lost = 0
    with TeamChatServer(drip_s=0.5) as server, tempfile.TemporaryDirectory() as tmp:
        massgen.run_sync("What is 2+2?", config(server.url, "none"), log_dir=Path(tmp) / "warm")
        baseline = resources(server)
        for index in range(args.runs):
            fault = rng.choice(FAULTS)
            faults[fault] += 1
            started = time.monotonic()
            result = massgen.run_sync("What is 2+2?", config(server.url, fault), log_dir=Path(tmp) / f"r{index}")
            walls.append(time.monotonic() - started)
            statuses[result.status] += 1
            answered = any(r["type"] == "AnswerAccepted" for r in read_trace(result.log_dir))
            lost += answered and result.final_answer is None
        time.sleep(1.0)  # stopped actors' threads end on their own
        after = resources(server)
    walls.sort()
    leaked = {name: a - b for name, a, b in zip(("threads", "fds", "processes"), after, baseline, strict=True)}
    print(f"runs: {args.runs}")
    print("faults by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(faults.items())))
    print(f"runs completed: {statuses['completed']} ({dict(statuses)})")
    print(f"answers lost: {lost}")
    print("leaked resources: " + ", ".join(f"{k} {v}" for k, v in leaked.items()))
    print(f"run time p50 {statistics.median(walls):.2f} s, p95 {walls[int(0.95 * (len(walls) - 1))]:.2f} s")


if __name__ == "__main__":
    main()
