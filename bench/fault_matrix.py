"""The fault matrix of issue 10: one faulty agent of three, exit code and wall time per fault.

Three ``chatcompletion`` agents share one loopback server that speaks Chat Completions
(``tests/wire/team_chat.py``); two are healthy, the third has the fault of the row. Each
row runs the real ``massgen --automation`` command in a subprocess with a 120 s run
deadline, as a user would. Prints a Markdown table; nothing is asserted. "wall s" is the
command's (process start included); "run s" is the run's own (``RunFinished.elapsed_s``), which
a loaded machine's slow imports do not blur.

    .venv/bin/python -m bench.fault_matrix [--runs 1] [--faults none hang loop ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from wire.team_chat import TeamChatServer

FAULTS = {
    "none": "healthy#3",
    "hang": "hang",
    "loop": "loop",
    "drip": "drip",
    "drop": "drop",
    "drop_text": "drop_text",
    "malformed": "malformed",
    "429x3": "429",
    "drop_always": "drop",
    "malformed_always": "malformed",
}
# How many of the faulty agent's requests get the fault (then it is healthy); "always": every one.
TIMES = {"429x3": 3, "drop_always": 10**9, "malformed_always": 10**9}
DESCRIPTIONS = {
    "none": "none",
    "hang": "hang (no bytes ever)",
    "loop": "text loop, never a tool call",
    "drip": "slow drip, 1 byte / 2 s",
    "drop": "drop mid-stream (once)",
    "drop_text": "drop mid-stream after text, before the tool call (once)",
    "malformed": "malformed tool JSON (once)",
    "429x3": "429 x3 (Retry-After 0.2 s)",
    "drop_always": "drop mid-stream (every call)",
    "malformed_always": "malformed tool JSON (every call)",
}


def config(url: str, faulty_model: str) -> dict[str, object]:
    def agent(agent_id: str, model: str) -> dict[str, object]:
        return {"id": agent_id, "backend": {"type": "chatcompletion", "base_url": f"{url}/v1",
                                            "api_key": "sk-bench", "model": model}}

    return {"agents": [agent("a", "healthy#1"), agent("b", "healthy#2"), agent("c", faulty_model)],
            "timeout_settings": {"orchestrator_timeout_seconds": 120}}


def one_run(fault: str, workdir: Path) -> tuple[int, float, str, float, int]:
    with TeamChatServer(times=TIMES.get(fault, 1)) as server:
        path = workdir / f"{fault}.yaml"
        path.write_text(yaml.safe_dump(config(server.url, FAULTS[fault])))
        env = {**os.environ, "MASSGEN_LOG_BASE_DIR": str(workdir / "logs")}
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "massgen.cli.main", "--automation", "--config", str(path),
                               "What is 2+2?"], capture_output=True, text=True, env=env, timeout=300)
        wall = time.monotonic() - started
        calls = len(server.requests)
    fields = dict(ln.split(": ", 1) for ln in done.stdout.splitlines() if ": " in ln)
    run_s = float("nan")
    if "ATTEMPT_DIR" in fields:  # LOG_DIR is the run's root; the trace is in the attempt
        trace = [json.loads(ln) for ln in (Path(fields["ATTEMPT_DIR"]) / "trace.jsonl").read_text().splitlines()]
        run_s = next((float(r["payload"]["elapsed_s"]) for r in trace if r["type"] == "RunFinished"), run_s)
    return done.returncode, wall, fields.get("RUN_STATUS", "?"), run_s, calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--faults", nargs="*", default=list(FAULTS))
    args = parser.parse_args()
    print("| fault on one agent | exit | status | wall s (median of runs) | run s (median) | model calls (median) |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for fault in args.faults:
            results = [one_run(fault, Path(tmp)) for _ in range(args.runs)]
            codes = sorted({r[0] for r in results})
            statuses = sorted({r[2] for r in results})
            wall = statistics.median(r[1] for r in results)
            run_s = statistics.median(r[3] for r in results)
            calls = statistics.median(r[4] for r in results)
            print(f"| {DESCRIPTIONS[fault]} | {','.join(map(str, codes))} | {','.join(statuses)} | {wall:.1f} "
                  f"| {run_s:.2f} | {calls:g} |", flush=True)


if __name__ == "__main__":
    main()
