"""Development replay for issue 36's third candidate, on seed 3000's reasoning problems (already read).

The second candidate's counted run (``bench/results/quality-decide-s3000/answers.jsonl``) recorded, per problem, the
bare greedy call and the team's three first answers: the program at T 0 (local_1), the bare question at
T 0 (local_2) and at T 0.4 (local_3). ``pal04.jsonl`` adds one call per problem: the program request at
T 0.4 (``first_answers_decide_pal_pilot ... 3000 pal04``). Programs run as the team runs them (``program_code``,
``confined.run_python``, ``program_answer``); runs are cached in ``runs.json``. Prints, per family and
overall, how many problems each call and each rule gets right. Development data: it chooses the candidate,
the fresh seed measures it. Run from the repository root:
``python -m bench.replays.first_answers_computed_pilot_s3000``.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

from bench.first_answer_rules import (
    BEFORE_TWO_VALUED,
    ProgramRuns,
    decided,
    graded,
    print_counts,
    recorded_calls,
    scored,
)
from bench.tasks import Task, select_tasks

RESULTS = Path(__file__).resolve().parent.parent / "results"
HERE = RESULTS / "first-answers-computed-pilot-s3000"
COUNTED = RESULTS / "quality-decide-s3000" / "answers.jsonl"
AGENT_CALLS = {"local_1": "p0", "local_2": "b0", "local_3": "b4"}  # the second candidate's agents


def main() -> None:
    counted = [json.loads(line) for line in COUNTED.read_text().splitlines()]
    pilot = {row["task"]: row for row in map(json.loads, (HERE / "pal04.jsonl").read_text().splitlines())}
    families = sorted({row["family"] for row in pilot.values()})
    _, tasks = select_tasks(",".join(f"rg:{f}" for f in families), 40, "3000")
    task_of: dict[str, Task] = {t.task_id: t for t in tasks}
    run = ProgramRuns(HERE / "runs.json", task_of)

    texts = recorded_calls(counted, AGENT_CALLS, pilot)
    table: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for task_id, by in texts.items():
        by["p4"] = run(task_id, pilot[task_id]["text"])
        if len(by) < 5:
            continue
        task = task_of[task_id]
        right, keys = graded(task, by)

        counts = table[task.family]
        counts["n"] += 1
        for method in ("greedy", "p0", "b0", "b4", "p4"):
            counts[method] += right[method]
        counts["A: computed first (p0; b0, b4)"] += \
            scored(decided([keys["p0"]], [keys["b0"], keys["b4"]], BEFORE_TWO_VALUED), right, keys)
        plain = decided([], [keys["p0"], keys["b0"], keys["b4"]], BEFORE_TWO_VALUED)
        counts["A': plain majority (p0, b0, b4)"] += scored(plain, right, keys)
        counts["B: computed first (p0, p4; b0)"] += \
            scored(decided([keys["p0"], keys["p4"]], [keys["b0"]], BEFORE_TWO_VALUED), right, keys)
        counts["C: programs only (p0, p4)"] += \
            scored(decided([keys["p0"], keys["p4"]], [], BEFORE_TWO_VALUED), right, keys)
        counts["ceiling"] += any(right.values())
    run.save()
    print_counts(table)


if __name__ == "__main__":
    main()
