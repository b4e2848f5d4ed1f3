"""Development replay for issue 36's fifth candidate (``bench/results/first-answers-two-valued-preregistered.md``): the
third candidate's rule (B: programs at T 0 and T 0.4 and the bare greedy call, computed results first) against
the same with a two-valued answer decided by the first listed answer (``BEFORE_NO_RESULT_ASKED``), on the recorded
first answers of seed 4000's counted run and seed 3000's pilot (both already read: development data).

Run from the repository root: ``python -m bench.replays.first_answers_two_valued_pilot``.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

from bench import first_answer_rules as rules
from bench.tasks import Task, select_tasks

RESULTS = Path(__file__).resolve().parent.parent / "results"
FAMILIES = "rg:gsm_symbolic,rg:letter_counting,rg:syllogism"


def replay(texts: dict[str, dict[str, str]], task_of: dict[str, Task]) -> None:
    table: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for task_id, by in texts.items():
        if task_id not in task_of or not {"greedy", "p0", "p4", "b0"} <= by.keys():
            continue
        task = task_of[task_id]
        right, keys = rules.graded(task, by)
        counts = table[task.family]
        counts["n"] += 1
        for method in ("greedy", "p0", "p4", "b0"):
            counts[method] += right[method]
        computed, written = [keys["p0"], keys["p4"]], [keys["b0"]]
        counts["B"] += rules.scored(rules.decided(computed, written, rules.BEFORE_TWO_VALUED), right, keys)
        counts["fifth"] += rules.scored(rules.decided(computed, written, rules.BEFORE_NO_RESULT_ASKED), right, keys)
    rules.print_counts(table)


def main() -> None:
    print("seed 4000 (the third candidate's counted run)")
    _, tasks = select_tasks(FAMILIES, 40, "4000")
    counted = RESULTS / "quality-computed-s4000" / "answers.jsonl"
    rows = [json.loads(line) for line in counted.read_text().splitlines()]
    task_of = {t.task_id: t for t in tasks}
    replay(rules.recorded_calls(rows, {"local_1": "p0", "local_2": "p4", "local_3": "b0"}, task_of), task_of)

    print("seed 3000 (the second candidate's counted run and the T 0.4 program pilot)")
    _, tasks = select_tasks(FAMILIES, 40, "3000")
    task_of = {t.task_id: t for t in tasks}
    pilot_dir = RESULTS / "first-answers-computed-pilot-s3000"
    pilot = {row["task"]: row for row in map(json.loads, (pilot_dir / "pal04.jsonl").read_text().splitlines())}
    counted = RESULTS / "quality-decide-s3000" / "answers.jsonl"
    rows = [json.loads(line) for line in counted.read_text().splitlines()]
    texts = rules.recorded_calls(rows, {"local_1": "p0", "local_2": "b0", "local_3": "b4"}, pilot)
    run = rules.ProgramRuns(pilot_dir / "runs.json", task_of)
    for task_id, by in texts.items():
        by["p4"] = run(task_id, pilot[task_id]["text"])
    run.save()
    replay(texts, task_of)


if __name__ == "__main__":
    main()
