"""How stale ``status.json`` gets: for each trace record, the time until status.json is rewritten.

The writer rewrites it at most every 0.25 s and, when a record comes sooner, by a trailing write;
so the lag should stay under 0.25 s plus scheduling. A poller thread notes each rewrite (new
inode, mtime or size) every millisecond. Run: python -m bench.status_lag
"""

from __future__ import annotations

import os
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from massgen.actors.run.team import Team
from massgen.configs import load_config, validate_data


def _slowed(factor: float) -> Any:
    config, _ = load_config("@examples/basic/scripted_three_agents")
    data = config.model_dump(mode="json", serialize_as_any=True)
    for agent in data["agents"]:
        for call in agent["backend"]["script"]:
            for step in call:
                if step.get("delay") is not None:
                    step["delay"] *= factor
    return validate_data(data, "slowed example")


def one_run(log_dir: Path) -> list[float]:
    arrivals: list[float] = []
    writes: list[float] = []
    stop = threading.Event()
    status = log_dir / "status.json"

    def poll() -> None:
        last = None
        while not stop.is_set():
            try:
                st = os.stat(status)
                key = (st.st_ino, st.st_mtime_ns, st.st_size)
                if key != last:
                    writes.append(time.time())
                    last = key
            except FileNotFoundError:
                pass
            time.sleep(0.001)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    team = Team(_slowed(10.0), "Which is larger, 9.11 or 9.9?", log_dir=log_dir, tick_interval_s=0.02,
                subscribers=[lambda record, _: arrivals.append(time.time())])
    team.run()
    time.sleep(0.05)
    stop.set()
    poller.join()
    # A subscriber is called after the record's own status write, if any: allow 3 ms for that.
    return [next((w - a for w in writes if w >= a - 0.003), float("nan")) for a in arrivals]


def main() -> None:
    print(f"{'run':>3} {'records':>7} {'p50 ms':>7} {'max ms':>7} {'unseen':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(3):
            lags = one_run(Path(tmp) / f"run{run}")
            seen = [lag for lag in lags if lag == lag]
            print(f"{run:>3} {len(lags):>7} {statistics.median(seen) * 1000:>7.0f} {max(seen) * 1000:>7.0f} "
                  f"{len(lags) - len(seen):>6}")
    print("(unseen: records after the poller's last observed rewrite; a rewrite within its 1 ms poll is missed)")


if __name__ == "__main__":
    main()
