"""Score the pilot's calls, and the candidate rules on them, with the code the team runs.

Programs are taken from the reply (``code_checks.program_code``), run confined, and read (``turn.program_answer``)
exactly as a ``first_answer: program`` agent does; runs are cached in ``runs.json`` beside its data
(``bench/results/first-answers-decide-pilot-s2000/``). Prints
one line per family and one overall: how many problems each call and each rule got right.
Run from the repository root: ``python -m bench.replays.first_answers_decide_pilot_s2000``.
"""

from __future__ import annotations

import asyncio
import collections
import json
from collections.abc import Hashable
from pathlib import Path

from bench.first_answer_rules import BEFORE_TWO_VALUED, decided, print_counts
from bench.tasks import Task, select_tasks
from massgen.actors.agent.turn import program_answer
from massgen.actors.coordination.code_checks import program_code
from massgen.files import confined

RESULTS = Path(__file__).resolve().parent.parent / "results"
HERE = RESULTS / "first-answers-decide-pilot-s2000"
METHODS = ("greedy", "cot04", "pal0", "pal04")


def majority(values: list[Hashable | None]) -> Hashable | None:
    """The value most of ``values`` hold, a tie to the one listed first; all None: None."""
    counts = collections.Counter(v for v in values if v is not None)
    if not counts:
        return None
    best = max(counts.values())
    return next(v for v in values if v is not None and counts[v] == best)


def main() -> None:
    rows = [json.loads(line) for line in (HERE / "pilot.jsonl").read_text().splitlines()]
    families = sorted({row["family"] for row in rows})
    n = max(int(row["task"].rsplit("-", 1)[1]) for row in rows) + 1
    _, tasks = select_tasks(",".join(f"rg:{f}" for f in families), n, "2000")
    task_of: dict[str, Task] = {t.task_id: t for t in tasks}
    cache_path = HERE / "runs.json"
    cache: dict[str, str] = json.loads(cache_path.read_text()) if cache_path.exists() else {}

    def answer(row: dict[str, str]) -> str:
        if not row["method"].startswith("pal"):
            return row["text"]
        key = row["task"] + row["method"]
        if key not in cache:
            code = program_code(row["text"])
            run = asyncio.run(confined.run_python(code)) if code.strip() else None
            cache[key] = program_answer(code, run, task_of[row["task"]].question) if run else "no program"
        return cache[key]

    texts: dict[str, dict[str, str]] = collections.defaultdict(dict)
    for row in rows:
        texts[row["task"]][row["method"]] = answer(row)
    table: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for task_id, by_method in texts.items():
        if len(by_method) < len(METHODS):
            continue
        task = task_of[task_id]
        right = {m: task.grade(by_method[m]).correct for m in METHODS}
        # A program that gave no answer states no result: in the team it supports nothing.
        keys = {m: None if m.startswith("pal") and "\nAnswer:" not in by_method[m] else task.grade(by_method[m]).key
                for m in METHODS}

        def scored(value: Hashable | None, *, task: Task = task, right: dict[str, bool] = right,
                   keys: dict[str, Hashable | None] = keys) -> bool:
            return value is not None and any(right[m] and keys[m] == value for m in METHODS)

        counts = table[task.family]
        counts["n"] += 1
        for method in METHODS:
            counts[method] += right[method]
        greedy, cot, program, program_hot = (keys[m] for m in METHODS)
        counts["maj(g,p0,c) tie g"] += scored(majority([greedy, program, cot]))
        counts["maj(g,p0,c) tie p0"] += scored(majority([program, greedy, cot]))
        counts["maj(g,p0,p4) tie g"] += scored(majority([greedy, program, program_hot]))
        counts["maj4(p0,g,c,p4) order"] += scored(majority([program, greedy, cot, program_hot]))
        counts["computed first (p0; g,c)"] += scored(decided([program], [greedy, cot], BEFORE_TWO_VALUED))
        counts["computed first (p0,p4; g)"] += scored(decided([program, program_hot], [greedy], BEFORE_TWO_VALUED))
        counts["ceiling"] += any(right.values())
    cache_path.write_text(json.dumps(cache))
    print_counts(table)


if __name__ == "__main__":
    main()
