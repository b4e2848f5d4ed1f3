"""Many zero-latency scripted agents in one run: does the run finish, and how fast.

Each agent answers once, then votes for the first answer it sees (``on_exhausted:
vote_first``), so the team converges after one answer per agent. Prints agents, status,
``RunFinished`` records in the trace (must be 1), wall time, trace records and peak RSS.

Peak RSS is the process's, so run one size per process to compare sizes.
``--answer-cap K`` sets ``max_new_answers_global`` (the first K answers, then everyone votes).

    .venv/bin/python -m bench.scale [--agents 256 1000] [--answer-cap 16]
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import tempfile
import time
from pathlib import Path

from massgen.actors.run.team import Team
from massgen.configs import TeamConfig, validate_data


def team(agents: int, cap: int | None, deadline_s: float = 600) -> TeamConfig:
    orchestrator: dict[str, object] = {"final_answer_strategy": "winner_reuse"}
    if cap:
        orchestrator["max_new_answers_global"] = cap
    return validate_data({
        "agents": [{"id": f"agent_{i}", "backend": {
            "type": "scripted", "present": f"answer {i}", "on_exhausted": "vote_first",
            "script": [[{"new_answer": f"answer {i}"}]]}} for i in range(1, agents + 1)],
        "orchestrator": orchestrator,
        "timeout_settings": {"orchestrator_timeout_seconds": deadline_s},
    }, "scale bench")


def one(agents: int, cap: int | None, base: Path, deadline_s: float = 600
        ) -> tuple[str, int, float, float, int, float, float]:
    started, cpu = time.monotonic(), time.process_time()
    result = Team(team(agents, cap, deadline_s), "What is 2+2?", log_dir=base / f"run_{agents}").run()
    wall, cpu = time.monotonic() - started, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # the run's, before the trace is read
    path = Path(result.log_dir) / "trace.jsonl"
    records = finished = 0
    with path.open("rb") as lines:  # one record at a time: reading it whole would be the peak
        for line in lines:
            records += 1
            finished += json.loads(line)["type"] == "RunFinished"
    return result.status, finished, wall, cpu, records, path.stat().st_size / 2**20, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--agents", type=int, nargs="*", default=[256, 1000])
    parser.add_argument("--answer-cap", type=int, default=None)
    parser.add_argument("--deadline", type=float, default=600, help="the run deadline, s (a loaded machine needs more)")
    args = parser.parse_args()
    logging.getLogger("pykka").setLevel(logging.CRITICAL)
    print("| agents | answer cap | status | RunFinished records | wall s | CPU s | trace records | trace MB "
          "| peak RSS MB |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for agents in args.agents:
            status, finished, wall, cpu, records, size_mb, peak = one(agents, args.answer_cap, Path(tmp), args.deadline)
            print(f"| {agents} | {args.answer_cap or 'none'} | {status} | {finished} | {wall:.1f} | {cpu:.1f} "
                  f"| {records} | {size_mb:.1f} | {peak:.0f} |", flush=True)


if __name__ == "__main__":
    main()
