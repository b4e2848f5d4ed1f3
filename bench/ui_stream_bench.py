"""The Web UI's event stream under fan-out: how many SSE events tabs get, and how far they lag.

Starts a real ``massgen serve --ui`` process with a scripted team whose agents stream many
small text deltas, starts one run through the UI, and attaches K subscribers to its
``/ui/api/runs/{id}/events`` stream at once. Per K it prints: trace records, SSE events
per subscriber (deltas are coalesced every 75 ms), and the lag from the run's last record
being written (its ``ts``) to each subscriber's ``end`` event. Nothing is asserted.

    .venv/bin/python -m bench.ui_stream_bench [--agents 3] [--deltas 300] [--subscribers 1 8 32]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import yaml

from bench.streaming_team import streaming_team

UI_AT = "massgen serve: web UI at "


def start(workdir: Path) -> tuple[subprocess.Popen[str], str]:
    cmd = [sys.executable, "-m", "massgen.cli.main", "serve", "--ui", "--port", "0", "--config", "bench.yaml",
           "--log-dir", str(workdir / "logs"), "--log-level", "warning", "--max-concurrent-runs", "64"]
    proc = subprocess.Popen(cmd, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith(UI_AT):
            threading.Thread(target=lambda: [None for _ in proc.stderr or ()], daemon=True).start()
            return proc, line[len(UI_AT):].strip()
    raise SystemExit("the server did not start")


async def subscribe(http: httpx.AsyncClient, url: str) -> tuple[int, int, float]:
    """(events, records) received, and the wall time the end event arrived."""
    events = records = 0
    async with http.stream("GET", url) as response:
        name = ""
        async for line in response.aiter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: ") and name == "records":
                events += 1
                records += sum(len(r.get("parts", [1])) for r in json.loads(line[6:])["records"])
            elif line.startswith("data: ") and name == "end":
                return events, records, time.time()
    raise RuntimeError("the stream ended without an end event")


async def one(base: str, token: str, log_root: Path, subscribers: int) -> dict[str, float]:
    port = base.rsplit(":", 1)[1]
    cookies = {f"massgen_ui_{port}": token}
    async with httpx.AsyncClient(base_url=base, cookies=cookies, timeout=300) as http:
        started = await http.post("/ui/api/runs", json={"question": "go", "config": "bench"},
                                  headers={"origin": base})
        run_id = started.json()["id"]
        url = f"{base}/ui/api/runs/{run_id}/events"
        results = await asyncio.gather(*(subscribe(http, url) for _ in range(subscribers)))
    trace = (log_root / Path(*run_id.split("~")) / "trace.jsonl").read_text().splitlines()
    last_ts = json.loads(trace[-1])["ts"]
    lags = [(end - last_ts) * 1000 for _, _, end in results]
    return {"records": len(trace), "events": statistics.mean(e for e, _, _ in results),
            "complete": sum(r == len(trace) for _, r, _ in results), "lag_p50": statistics.median(lags),
            "lag_max": max(lags)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--deltas", type=int, default=300)
    parser.add_argument("--subscribers", type=int, nargs="+", default=[1, 8, 32])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        team = streaming_team(args.agents, args.deltas, delay_s=0.005, deadline_s=300, idle_s=60)
        (workdir / "bench.yaml").write_text(yaml.safe_dump(team))
        proc, url = start(workdir)
        base, token = url.split("/ui?token=")
        try:
            print(f"{args.agents} agents x {args.deltas} text deltas (5 ms apart); lag = end event - last record")
            print(f"{'subscribers':>11} {'records':>8} {'events/sub':>10} {'complete':>8} {'lag p50 ms':>10} "
                  f"{'lag max ms':>10}")
            for k in args.subscribers:
                r = asyncio.run(one(base, token, workdir / "logs", k))
                print(f"{k:>11} {r['records']:>8} {r['events']:>10.1f} {int(r['complete']):>8} "
                      f"{r['lag_p50']:>10.1f} {r['lag_max']:>10.1f}")
        finally:
            proc.terminate()
            proc.wait(30)


if __name__ == "__main__":
    main()
