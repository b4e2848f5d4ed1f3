"""Where a run's time goes: waiting on models versus everything else (the orchestration).

Model time is the union of the intervals in which at least one model call was in
flight (``ModelCallStarted`` to ``ModelCallFinished`` in the trace), so parallel calls
are not double counted; orchestration time is the rest of the wall time. Default:
the local model team. Run: python -m bench.model_vs_orchestration [--config X] [--runs N]
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path
from typing import Any

from massgen.actors.run.team import Team
from massgen.configs import TeamConfig, load_config
from massgen.configs.defaults import default_team
from massgen.logs import read_trace


def model_busy_seconds(trace: list[dict[str, Any]]) -> tuple[float, int]:
    """Length of the union of model-call intervals, and the number of calls."""
    open_calls: dict[tuple[str, int], float] = {}
    intervals: list[tuple[float, float]] = []
    for record in trace:
        if record["type"] == "ModelCallStarted":
            open_calls[(record["sender"], record["payload"]["call_index"])] = record["ts"]
        elif record["type"] == "ModelCallFinished":
            start = open_calls.pop((record["sender"], record["payload"]["call_index"]), None)
            if start is not None:
                intervals.append((start, record["ts"]))
    intervals.sort()
    busy, end = 0.0, float("-inf")
    for start, stop in intervals:
        if stop <= end:
            continue
        busy += stop - max(start, end)
        end = stop
    return busy, len(intervals)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--config", help="config path or @examples/NAME (default: the local team)")
    parser.add_argument("--question", default="Which is larger, 9.11 or 9.9? Answer in one sentence.")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    logging.getLogger("pykka").setLevel(logging.CRITICAL)
    config: TeamConfig = load_config(args.config)[0] if args.config else default_team({})
    print(f"{'run':>3} {'status':>10} {'wall s':>8} {'model s':>8} {'orch s':>7} {'orch %':>7} {'calls':>6}")
    for run in range(1, args.runs + 1):
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            result = Team(config, args.question, log_dir=Path(tmp) / "run").run()
            wall = time.perf_counter() - start
            busy, calls = model_busy_seconds(read_trace(result.log_dir))
        orchestration = wall - busy
        print(f"{run:>3} {result.status:>10} {wall:>8.2f} {busy:>8.2f} {orchestration:>7.2f} "
              f"{orchestration / wall:>7.1%} {calls:>6}")


if __name__ == "__main__":
    main()
