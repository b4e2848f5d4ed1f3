"""Development data for a next candidate: the program request that asks for the result computed, a yes/no by
checking every case (``first_answers_decide_pal_pilot``'s ``PROGRAM_REQUEST_CASES``, method ``cases0``, T 0), against
the program request the team uses (p0, the third candidate's local_1), on seed 4000's reasoning problems.

Per family: each alone, how often the printed result is typed into the program as a constant (not computed:
``literal``), and the third candidate's rule with ``cases0`` in place of p0. Run from the repository root:
``python -m bench.replays.first_answers_three_programs_cases``.
"""

from __future__ import annotations

import ast
import collections
import json
import re
from pathlib import Path

from bench.first_answer_rules import BEFORE_TWO_VALUED, ProgramRuns, decided, print_counts, scored
from bench.tasks import Task, select_tasks
from massgen.actors.coordination.code_checks import program_code

RESULTS = Path(__file__).resolve().parent.parent / "results"
HERE = RESULTS / "first-answers-three-programs-pilot-s4000"
COUNTED = RESULTS / "quality-computed-s4000" / "answers.jsonl"
AGENT_CALLS = {"local_1": "p0", "local_2": "p4", "local_3": "b0"}


def literal(text: str) -> bool:
    """Whether the result a program printed is written in it as a constant, not computed by it."""
    found = re.search(r"\nAnswer: (.*)\s*$", text)
    if not found:
        return False
    value = found.group(1).strip().lower()
    try:
        tree = ast.parse(program_code(text))
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.search(
                r"(?<![\w.])" + re.escape(value) + r"(?!\w)", node.value.lower()):
            return True
    return False


def main() -> None:
    counted = [json.loads(line) for line in COUNTED.read_text().splitlines()]
    pilot = {row["task"]: row for row in map(json.loads, (HERE / "cases0.jsonl").read_text().splitlines())}
    _, tasks = select_tasks("rg:gsm_symbolic,rg:letter_counting,rg:syllogism", 40, "4000")
    task_of: dict[str, Task] = {t.task_id: t for t in tasks}
    run = ProgramRuns(HERE / "cases_runs.json", task_of)

    table: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for row in counted:
        if row["method"] != "team" or row["task_id"] not in pilot:
            continue
        task = task_of[row["task_id"]]
        by = {AGENT_CALLS[first["agent"]]: first["text"] for first in row["first_answers"]}
        by["c0"] = run(row["task_id"], pilot[row["task_id"]]["text"])
        right = {m: task.grade(t).correct for m, t in by.items()}
        keys = {m: None if m != "b0" and "\nAnswer:" not in t else task.grade(t).key for m, t in by.items()}

        counts = table[task.family]
        counts["n"] += 1
        for method in ("p0", "p4", "b0", "c0"):
            counts[method] += right[method]
        for method in ("p0", "c0"):
            counts[f"{method} literal"] += literal(by[method])
        counts["B (p0, p4; b0)"] += \
            scored(decided([keys["p0"], keys["p4"]], [keys["b0"]], BEFORE_TWO_VALUED), right, keys)
        counts["B with c0 for p0"] += \
            scored(decided([keys["c0"], keys["p4"]], [keys["b0"]], BEFORE_TWO_VALUED), right, keys)
    run.save()
    print_counts(table)


if __name__ == "__main__":
    main()
