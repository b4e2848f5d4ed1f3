"""Whole-process time of the command line, start-up included, as a user feels it.

Rows: ``python -c pass`` (the floor), ``massgen --help``, ``--validate``, a scripted three-agent
run with no scripted delays, the shipped scripted example (which sleeps about 0.3 s in its
script), and three agents on a zero-latency OpenAI-compatible server
(``bench/zero_latency_openai.py``: real sockets, real SSE, no model time).
Wall time is what a user waits; CPU time (user + system of the child process) is what the
process itself spent, which holds still when the machine is busy with other work, so compare
CPU time across changes and wall time only on a quiet machine. Bytecode is cached as an
installed package's would be (``PYTHONDONTWRITEBYTECODE`` is dropped for the children and
each command runs once unmeasured first).
Run: python -m bench.cli_startup [--repeats N]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.zero_latency_openai import ZeroLatencyServer

SCRIPTED_NO_DELAY = """\
agents:
""" + "".join(f"""  - id: agent_{i}
    backend:
      type: scripted
      script:
        - - {{new_answer: "answer {i}"}}
        - - {{when_answers: [agent1, agent2, agent3]}}
          - {{vote: agent1, reason: "first"}}
""" for i in (1, 2, 3))


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str], repeats: int, cwd: str, env: dict[str, str]) -> tuple[float, float, float]:
    """(median wall, best wall, median CPU) of ``repeats`` runs after one unmeasured run."""
    subprocess.run(command, check=True, capture_output=True, cwd=cwd, env=env)
    walls, cpus = [], []
    for _ in range(repeats):
        cpu, start = _children_cpu(), time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, cwd=cwd, env=env)
        walls.append(time.perf_counter() - start)
        cpus.append(_children_cpu() - cpu)
    return statistics.median(walls), min(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    massgen = [sys.executable, "-m", "massgen.cli.main"]
    question = "Which is larger, 9.11 or 9.9?"
    with tempfile.TemporaryDirectory() as tmp, ZeroLatencyServer() as server:
        env = {**os.environ, "MASSGEN_LOG_BASE_DIR": str(Path(tmp) / "logs")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        (Path(tmp) / "scripted3.yaml").write_text(SCRIPTED_NO_DELAY)
        zero = "agents:\n" + "".join(
            f"  - id: zero_{i}\n    backend: {{type: chatcompletion, model: zero, base_url: '{server.base_url}'}}\n"
            for i in (1, 2, 3))
        (Path(tmp) / "zero3.yaml").write_text(zero)
        rows = [
            ("python -c pass", [sys.executable, "-c", "pass"]),
            ("massgen --help", [*massgen, "--help"]),
            ("massgen --validate @examples/...", [*massgen, "--validate", "@examples/basic/scripted_three_agents"]),
            ("scripted 3 agents, no delays", [*massgen, "--config", "scripted3.yaml", question]),
            ("@examples/basic/scripted_three_agents", [*massgen, "--config", "@examples/basic/scripted_three_agents",
                                                       question]),
            ("3 agents, zero-latency OpenAI server", [*massgen, "--config", "zero3.yaml", question]),
        ]
        print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs, {args.repeats} runs each")
        print(f"{'command':<40} {'median s':>9} {'min s':>7} {'CPU s':>7}")
        for name, command in rows:
            median, best, cpu = timed(command, args.repeats, tmp, env)
            print(f"{name:<40} {median:>9.3f} {best:>7.3f} {cpu:>7.3f}")
    print("(the shipped scripted example sleeps about 0.3 s in its own script)")


if __name__ == "__main__":
    main()
