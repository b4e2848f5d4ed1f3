"""``massgen serve`` under load: time to first SSE byte, and requests per second.

Starts a real server process on loopback with a zero-latency scripted team (N agents
that each answer once, then vote), so the numbers are the server's and the actor
system's overhead, not a model's. Prints a table; nothing is asserted.

    .venv/bin/python bench/serve_bench.py [--agents 3] [--requests 200] [--concurrency 1 4 16]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import yaml

LISTENING = "massgen serve: listening on "


def team(agents: int) -> dict[str, object]:
    return {
        "agents": [{"id": f"agent_{i}", "backend": {"type": "scripted", "present": f"answer {i}",
                                                    "script": [[{"text": "ok"}, {"new_answer": f"answer {i}"}]]}}
                   for i in range(1, agents + 1)],
        "timeout_settings": {"orchestrator_timeout_seconds": 120, "turn_timeout_seconds": 60,
                             "idle_stream_timeout_seconds": 60},
    }


def start(workdir: Path, max_runs: int) -> tuple[subprocess.Popen[str], str]:
    cmd = [sys.executable, "-m", "massgen.cli.main", "serve", "--port", "0", "--config", "bench.yaml",
           "--log-dir", str(workdir / "logs"), "--log-level", "warning", "--max-concurrent-runs", str(max_runs)]
    proc = subprocess.Popen(cmd, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith(LISTENING):
            threading.Thread(target=lambda: [None for _ in proc.stderr or ()], daemon=True).start()
            return proc, line[len(LISTENING):].strip()
    raise SystemExit("the server did not start")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def first_byte(http: httpx.AsyncClient, url: str) -> tuple[float, float]:
    body = {"model": "bench", "stream": True, "messages": [{"role": "user", "content": "go"}]}
    started = time.perf_counter()
    async with http.stream("POST", f"{url}/v1/chat/completions", json=body) as response:
        chunks = response.aiter_raw()
        await chunks.__anext__()
        ttfb = time.perf_counter() - started
        async for _ in chunks:
            pass
    return ttfb, time.perf_counter() - started


async def throughput(http: httpx.AsyncClient, url: str, total: int, concurrency: int) -> tuple[float, float]:
    body = {"model": "bench", "messages": [{"role": "user", "content": "go"}]}
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(total):
        queue.put_nowait(i)
    latencies: list[float] = []

    async def worker() -> None:
        while not queue.empty():
            queue.get_nowait()
            started = time.perf_counter()
            response = await http.post(f"{url}/v1/chat/completions", json=body)
            response.raise_for_status()
            latencies.append(time.perf_counter() - started)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return total / (time.perf_counter() - started), statistics.median(latencies)


async def main_async(url: str, args: argparse.Namespace) -> None:
    limits = httpx.Limits(max_connections=max(args.concurrency) + 4)
    async with httpx.AsyncClient(timeout=120.0, limits=limits) as http:
        await throughput(http, url, 5, 1)  # warm up
        ttfbs, totals = [], []
        for _ in range(args.stream_requests):
            ttfb, total = await first_byte(http, url)
            ttfbs.append(ttfb * 1000)
            totals.append(total * 1000)
        print(f"\nstreaming, sequential, {args.agents} scripted agents, {args.stream_requests} requests")
        print(f"{'measure':<28}{'p50 ms':>10}{'p95 ms':>10}{'max ms':>10}")
        for name, values in (("time to first SSE byte", ttfbs), ("time to [DONE]", totals)):
            print(f"{name:<28}{pct(values, 0.5):>10.1f}{pct(values, 0.95):>10.1f}{max(values):>10.1f}")
        print(f"\nnon-streaming, {args.requests} requests per row")
        print(f"{'concurrency':<14}{'req/s':>10}{'median ms':>12}")
        for concurrency in args.concurrency:
            rps, median = await throughput(http, url, args.requests, concurrency)
            print(f"{concurrency:<14}{rps:>10.1f}{median * 1000:>12.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--stream-requests", type=int, default=50)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        (workdir / "bench.yaml").write_text(yaml.safe_dump(team(args.agents)), encoding="utf-8")
        proc, url = start(workdir, max(args.concurrency))
        try:
            print(f"massgen serve at {url} (pid {proc.pid}), {os.cpu_count()} CPUs")
            asyncio.run(main_async(url, args))
        finally:
            proc.terminate()
            proc.wait(30)


if __name__ == "__main__":
    main()
