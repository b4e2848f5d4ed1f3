"""Coordination overhead with zero-latency scripted agents, for 2 to 64 agents.

Every agent answers once, then votes for agent1; the winner's answer is reused, so
no time is spent in any model. What remains is the cost of the actors, the messages,
the trace and the derived logs. Prints a table; run: python -m bench.coordination_overhead
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import time
from pathlib import Path

from massgen.actors.run.team import Team
from massgen.configs import validate_data
from massgen.logs import read_trace


def config_for(n_agents: int) -> dict[str, object]:
    agents = [
        {"id": f"a{i}", "backend": {"type": "scripted", "script": [
            [{"new_answer": f"answer from agent {i}"}],
            [{"when_answers": [f"agent{j}" for j in range(1, n_agents + 1)]}, {"vote": "agent1", "reason": "first"}],
        ]}}
        for i in range(1, n_agents + 1)
    ]
    return {"agents": agents, "orchestrator": {"final_answer_strategy": "winner_reuse"},
            "timeout_settings": {"orchestrator_timeout_seconds": 300}}


def measure(n_agents: int, repeats: int) -> dict[str, float]:
    config = validate_data(config_for(n_agents), f"bench config ({n_agents} agents)")
    walls, messages, calls = [], [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            result = Team(config, "What is 2+2?", log_dir=Path(tmp) / "run", tick_interval_s=0.01).run()
            walls.append(time.perf_counter() - start)
            assert result.status == "completed", result.reason
            trace = read_trace(result.log_dir)
            messages.append(sum(1 for r in trace if r["kind"] in ("tell", "ask", "reply")))
            calls.append(result.usage["model_calls"])
    wall = statistics.median(walls)
    return {"agents": n_agents, "wall_s": wall, "messages": statistics.median(messages),
            "msgs_per_s": statistics.median(messages) / wall, "model_calls": statistics.median(calls)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--agents", type=int, nargs="*", default=[2, 4, 8, 16, 32, 64])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    logging.getLogger("pykka").setLevel(logging.CRITICAL)
    print(f"{'agents':>6} {'wall s':>8} {'messages':>9} {'msgs/s':>9} {'calls':>6}")
    for n in args.agents:
        row = measure(n, args.repeats)
        print(f"{row['agents']:>6} {row['wall_s']:>8.3f} {row['messages']:>9.0f} {row['msgs_per_s']:>9.0f} "
              f"{row['model_calls']:>6.0f}")


if __name__ == "__main__":
    main()
