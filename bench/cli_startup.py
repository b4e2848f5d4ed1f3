"""Whole-process time of the command line: ``massgen --help`` and a scripted run.

Start-up included, as a user feels it. Run: python -m bench.cli_startup
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time


def timed(args: list[str], repeats: int, cwd: str) -> tuple[float, float]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "massgen.cli.main", *args], check=True, capture_output=True, cwd=cwd)
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rows = [
            ("massgen --help", ["--help"]),
            ("massgen --validate @examples/...", ["--validate", "@examples/basic/scripted_three_agents"]),
            ("massgen --config @examples/... 'q'", ["--config", "@examples/basic/scripted_three_agents",
                                                    "Which is larger, 9.11 or 9.9?"]),
        ]
        print(f"{'command':<40} {'median s':>9} {'min s':>7}")
        for name, args in rows:
            median, best = timed(args, 5, tmp)
            print(f"{name:<40} {median:>9.3f} {best:>7.3f}")
    print("(the scripted run includes the example's own scripted delays, about 0.3 s)")


if __name__ == "__main__":
    main()
