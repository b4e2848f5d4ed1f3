"""Many zero-latency scripted agents in one run: does the run finish, and how fast it grows with the team.

Each agent answers once, then votes for the first answer it sees (``on_exhausted:
vote_first``), so the team converges after one answer per agent. Prints agents, status,
``RunFinished`` records in the trace (must be 1), wall time, CPU time, trace records and peak RSS.

Peak RSS is the process's, so run one size per process to compare sizes.
``--answer-cap K`` sets ``max_new_answers_global`` (the first K answers, then everyone votes).

    .venv/bin/python -m bench.scale [--agents 256 1000] [--answer-cap 16]

``--sweep`` runs each size in its own process (``--repeat`` times; the median is kept) and prints
the growth: each point's time over the previous point's, and the exponent k of time ~ agents^k
(least squares over the points), for wall and CPU together. CPU is also split, from the process's
own resource usage, into user time (the interpreter running our code) and system time (the kernel:
thread hand-offs, file creation), with its context switches: the two grow differently. ``--baseline DIR`` runs another
checkout's ``bench.scale`` (``DIR/.venv/bin/python``, in DIR) beside it, point by point, so both
are measured in the same sitting. ``--out DIR`` keeps the table (``table.md``), the points
(``points.json``) and a plot of time against agents (``scale.png``, with matplotlib):

    .venv/bin/python -m bench.scale --sweep 125 250 500 1000 [--answer-cap 16] [--repeat 2]
        [--baseline ../wt-ef4] [--out bench/results/scale-sweep]
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TypeVar

from bench.actor_floor import run_floor
from massgen.actors.run.team import Team
from massgen.configs import TeamConfig, validate_data

_T = TypeVar("_T")


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


Row = tuple[str, int, float, float, int, float, float, float, float, int]


def _measured(run: Callable[[], _T]) -> tuple[_T, float, float, float, float, int, float]:
    """``run()``'s result, wall and CPU seconds, user and system CPU, context switches, and peak RSS (MB)."""
    before = resource.getrusage(resource.RUSAGE_SELF)
    started, cpu = time.monotonic(), time.process_time()
    result = run()
    wall, cpu = time.monotonic() - started, time.process_time() - cpu
    after = resource.getrusage(resource.RUSAGE_SELF)  # every thread's: user and system CPU, context switches
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    switches = after.ru_nvcsw + after.ru_nivcsw - before.ru_nvcsw - before.ru_nivcsw
    return result, wall, cpu, user, system, switches, after.ru_maxrss / 1024


def one(agents: int, cap: int | None, base: Path, deadline_s: float = 600) -> Row:
    config = team(agents, cap, deadline_s)
    result, wall, cpu, user, system, switches, peak = _measured(
        lambda: Team(config, "What is 2+2?", log_dir=base / f"run_{agents}").run())  # peak: before the trace's read
    path = Path(result.log_dir) / "trace.jsonl"
    records = finished = 0
    with path.open("rb") as lines:  # one record at a time: reading it whole would be the peak
        for line in lines:
            records += 1
            finished += json.loads(line)["type"] == "RunFinished"
    return result.status, finished, wall, cpu, records, path.stat().st_size / 2**20, peak, user, system, switches


def one_floor(agents: int, deadline_s: float = 600) -> Row:
    """The same row for ``bench.actor_floor``: the actor runtime alone, in the run's shape (no trace file)."""
    (status, records), wall, cpu, user, system, switches, peak = _measured(lambda: run_floor(agents, deadline_s))
    return status, int(status == "completed"), wall, cpu, records, 0.0, peak, user, system, switches


@dataclass(frozen=True)
class Point:
    """One run of one size, as its own process printed it."""

    checkout: str
    agents: int
    cap: int | None
    status: str
    wall_s: float
    cpu_s: float
    records: int
    trace_mb: float
    peak_rss_mb: float
    load: float  # the 1-minute load average when the run began (others share the cores)
    # The run's own (``Team.run``), from its process's resource usage; a checkout whose bench does not print
    # them (an older one) gets its whole process's, start-up and the trace's read-back included.
    user_s: float = 0.0  # user CPU: the interpreter
    sys_s: float = 0.0  # system CPU: the kernel's work for it
    switches: int = 0  # voluntary and involuntary context switches
    split: str = "run"  # "run" or "process": what user_s, sys_s and switches cover


def run_point(checkout: Path, python: Path, agents: int, cap: int | None, deadline: float,
              floor: bool = False) -> Point:
    """``python -m bench.scale --agents N [--floor]`` in ``checkout``, in its own process; its table row, parsed."""
    load = os.getloadavg()[0]
    command = [str(python), "-m", "bench.scale", "--agents", str(agents), "--deadline", str(deadline)]
    command += ["--floor"] if floor else []
    started, cpu = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    cap = None if floor else cap  # the floor has no answers to cap
    done = subprocess.run(command + (["--answer-cap", str(cap)] if cap else []), cwd=checkout, capture_output=True,
                          text=True)
    used = resource.getrusage(resource.RUSAGE_CHILDREN)  # before any other child: only this run's
    user, system = round(used.ru_utime - cpu.ru_utime, 2), round(used.ru_stime - cpu.ru_stime, 2)
    switches = used.ru_nvcsw + used.ru_nivcsw - cpu.ru_nvcsw - cpu.ru_nivcsw
    commit = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    label = f"{'actor floor: ' if floor else ''}{checkout.name} ({commit})"
    row = next((line for line in done.stdout.splitlines() if line.startswith(f"| {agents} |")), None)
    if done.returncode != 0 or row is None:  # a crashed run is a point too: kept, with the process's times
        print(f"{checkout.name}: {agents} agents: exit {done.returncode}: {done.stderr[-2000:]}", flush=True)
        return Point(label, agents, cap, f"exit {done.returncode}",
                     round(time.monotonic() - started, 2), round(user + system, 2), 0, 0.0, 0.0, round(load, 2),
                     user, system, switches, "process")
    cells = [c.strip() for c in row.strip("|").split("|")]
    if len(cells) >= 12:  # the run's own split, printed by the child
        user, system, switches = float(cells[9]), float(cells[10]), int(cells[11])
    return Point(label, agents, cap, cells[2], float(cells[4]), float(cells[5]), int(cells[6]),
                 float(cells[7]), float(cells[8]), round(load, 2), user, system, switches,
                 "run" if len(cells) >= 12 else "process")


def exponent(points: list[tuple[int, float]]) -> float:
    """k in time ~ agents^k: the least-squares slope of log time against log agents."""
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(max(t, 1e-3)) for _, t in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)


def _median(runs: list[Point], key: str) -> float:
    return float(statistics.median(float(getattr(p, key)) for p in runs))


def sweep_table(points: list[Point]) -> str:
    """Per checkout and size: the median wall and CPU, each over the previous size's; then the exponents."""
    lines = ["| checkout | agents | answer cap | runs | status | wall s | CPU s | wall x prev | CPU x prev "
             "| user s | sys s | user x prev | sys x prev | context switches | trace records | peak RSS MB "
             "| load at start |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    growth: list[str] = []
    for checkout in dict.fromkeys(p.checkout for p in points):
        mine = [p for p in points if p.checkout == checkout]
        sizes = sorted({p.agents for p in mine})
        medians: list[tuple[int, float, float, float, float]] = []
        for agents in sizes:
            runs = [p for p in mine if p.agents == agents and not p.status.startswith("exit")] or [
                p for p in mine if p.agents == agents]
            now = (agents, *(_median(runs, key) for key in ("wall_s", "cpu_s", "user_s", "sys_s")))
            previous = medians[-1] if medians else None
            ratios = [f"{a / b:.2f}x" if previous and b else "" for a, b in zip(now[1:], (previous or now)[1:],
                                                                               strict=True)]
            medians.append(now)
            statuses = sorted({p.status for p in mine if p.agents == agents})
            lines.append(f"| {checkout} | {agents} | {runs[0].cap or 'none'} | {len(runs)} "
                         f"| {', '.join(statuses)} | {now[1]:.1f} | {now[2]:.1f} | {ratios[0]} | {ratios[1]} "
                         f"| {now[3]:.1f} | {now[4]:.1f} | {ratios[2]} | {ratios[3]} | {_median(runs, 'switches'):.0f} "
                         f"| {runs[0].records} | {_median(runs, 'peak_rss_mb'):.0f} "
                         f"| {', '.join(f'{p.load:.1f}' for p in runs)} |")
        if len(medians) > 1:
            k = [exponent([(m[0], m[column]) for m in medians]) for column in (1, 2, 3, 4)]
            growth.append(f"{checkout}: time ~ agents^k with k = {k[0]:.2f} (wall), {k[1]:.2f} (CPU: user "
                          f"{k[2]:.2f}, system {k[3]:.2f}), {medians[0][0]} to {medians[-1][0]} agents; user and "
                          f"system CPU: {'the run' if mine[0].split == 'run' else 'the whole process'}'s")
    return "\n".join([*lines, "", *growth]) + "\n"


def plot(points: list[Point], path: Path) -> bool:
    """Median wall and CPU seconds against agents, log-log, one line per checkout; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for checkout in dict.fromkeys(p.checkout for p in points):
        mine = [p for p in points if p.checkout == checkout]
        sizes = sorted({p.agents for p in mine})
        for key, style in (("wall_s", "o-"), ("cpu_s", "s--")):
            ax.plot(sizes, [_median([p for p in mine if p.agents == n], key) for n in sizes], style,
                    label=f"{checkout}: {key.removesuffix('_s')}")
    cap = points[0].cap
    ax.set(xscale="log", yscale="log", xlabel="agents", ylabel="seconds",
           title=f"bench.scale, answer cap {cap or 'none'}: time against agents")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def sweep(args: argparse.Namespace) -> None:
    here = Path(__file__).resolve().parent.parent
    series = [(here, Path(sys.executable), False)]
    if args.baseline:
        baseline = Path(args.baseline).resolve()
        series.insert(0, (baseline, baseline / ".venv" / "bin" / "python", False))
    if args.floor:
        series.append((here, Path(sys.executable), True))
    points: list[Point] = []
    for agents in args.sweep:
        for _ in range(args.repeat):
            for checkout, python, floor in series:  # side by side: a change in the machine's load hits each
                point = run_point(checkout, python, agents, args.answer_cap, args.deadline, floor)
                points.append(point)
                print(f"{point.checkout}: {agents} agents: {point.status}, {point.wall_s:.1f} s wall, "
                      f"{point.cpu_s:.1f} s CPU (load {point.load:.1f})", flush=True)
    table = sweep_table(points)
    print(table)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "table.md").write_text(table, encoding="utf-8")
        (out / "points.json").write_text(json.dumps([asdict(p) for p in points], indent=2) + "\n", encoding="utf-8")
        plot(points, out / "scale.png")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--agents", type=int, nargs="*", default=[256, 1000])
    parser.add_argument("--answer-cap", type=int, default=None)
    parser.add_argument("--deadline", type=float, default=600, help="the run deadline, s (a loaded machine needs more)")
    parser.add_argument("--sweep", type=int, nargs="*", help="sizes, each run in its own process; prints the growth")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each size (--sweep); the median is kept")
    parser.add_argument("--baseline", help="another checkout (with its .venv) to run beside this one (--sweep)")
    parser.add_argument("--out", help="folder for table.md, points.json and scale.png (--sweep)")
    parser.add_argument("--floor", action="store_true",
                        help="the actor runtime alone in the run's shape (bench.actor_floor); with --sweep, beside "
                             "the team's runs, point by point")
    args = parser.parse_args()
    if args.sweep:
        sweep(args)
        return
    logging.getLogger("pykka").setLevel(logging.CRITICAL)
    print("| agents | answer cap | status | RunFinished records | wall s | CPU s | trace records | trace MB "
          "| peak RSS MB | user s | sys s | context switches |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for agents in args.agents:
            status, finished, wall, cpu, records, size_mb, peak, user, system, switches = (
                one_floor(agents, args.deadline) if args.floor else one(agents, args.answer_cap, Path(tmp),
                                                                          args.deadline))
            print(f"| {agents} | {args.answer_cap or 'none'} | {status} | {finished} | {wall:.2f} | {cpu:.2f} "
                  f"| {records} | {size_mb:.1f} | {peak:.0f} | {user:.2f} | {system:.2f} | {switches} |", flush=True)


if __name__ == "__main__":
    main()
