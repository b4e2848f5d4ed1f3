"""Replay for issue 36's sixth candidate (``bench/results/no-result-asked-preregistered.md``): the fifth
candidate's rule (``BEFORE_NO_RESULT_ASKED``) against the same with a program's output not weighed when no written
first answer states a result (the written answer presents), on every recorded run of the two-programs-and-greedy layout.

Whether the written (bare) answer states a result is the team's own reading (``results.stated_result``); a
program answer is computed when its program printed something. Where the rule does not apply the two rules
decide alike by construction, so only the problems where it applies are graded (HumanEval's code answers are
never computed: it applies to none of them).

Run from the repository root: ``python -m bench.replays.no_result_asked_replay``.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

from bench import first_answer_rules as rules
from bench.tasks import Task, select_tasks
from massgen.actors.coordination.results import stated_result

RESULTS = Path(__file__).resolve().parent.parent / "results"
LAYOUT = {"local_1": "p0", "local_2": "p4", "local_3": "b0"}
PRINTED = "\nThe program printed:\n"


def applies(by: dict[str, str]) -> bool:
    """The sixth's rule: some program printed, and the written answer states no result."""
    return any(PRINTED in by[m] for m in ("p0", "p4")) and not stated_result(by["b0"])


def replay(name: str, texts: dict[str, dict[str, str]], task_of: dict[str, Task]) -> None:
    print(name)
    table: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for task_id, by in sorted(texts.items()):
        if task_id not in task_of or not {"p0", "p4", "b0"} <= by.keys():
            continue
        task = task_of[task_id]
        counts = table[task.family]
        counts["n"] += 1
        if not applies(by):
            continue
        right, keys = rules.graded(task, {m: by[m] for m in ("p0", "p4", "b0")})
        fifth_rule = rules.decided([keys["p0"], keys["p4"]], [keys["b0"]], rules.BEFORE_NO_RESULT_ASKED)
        fifth = rules.scored(fifth_rule, right, keys)
        counts["applies"] += 1
        counts["fifth right"] += fifth
        counts["sixth right"] += right["b0"]
        print(f"  {task_id}: fifth {'right' if fifth else 'wrong'}, sixth {'right' if right['b0'] else 'wrong'};"
              f" written answer ends {by['b0'].strip()[-80:]!r}")
    rules.print_counts(table)


def recorded(folder: str, tasks: str, n: int, seeds: str) -> tuple[dict[str, dict[str, str]], dict[str, Task]]:
    _, selected = select_tasks(tasks, n, seeds)
    task_of = {t.task_id: t for t in selected}
    rows = [json.loads(line) for line in (RESULTS / folder / "answers.jsonl").read_text().splitlines()]
    return rules.recorded_calls(rows, LAYOUT, task_of), task_of


def main() -> None:
    every_kind = "rg:gsm_symbolic,rg:letter_counting,rg:syllogism,humaneval"
    replay("seed 5000 (the fifth candidate's counted run)",
           *recorded("quality-two-valued-s5000", every_kind, 40, "5000"))
    replay("seed 4000 (the third candidate's counted run)",
           *recorded("quality-computed-s4000", every_kind, 40, "4000"))

    reasoning = "rg:gsm_symbolic,rg:letter_counting,rg:syllogism"
    _, tasks = select_tasks(reasoning, 40, "3000")
    task_of = {t.task_id: t for t in tasks}
    pilot_dir = RESULTS / "first-answers-computed-pilot-s3000"
    pilot = {row["task"]: row for row in map(json.loads, (pilot_dir / "pal04.jsonl").read_text().splitlines())}
    rows = [json.loads(line) for line in (RESULTS / "quality-decide-s3000" / "answers.jsonl").read_text().splitlines()]
    texts = rules.recorded_calls(rows, {"local_1": "p0", "local_2": "b0", "local_3": "b4"}, pilot)
    run = rules.ProgramRuns(pilot_dir / "runs.json", task_of)
    for task_id, by in texts.items():
        by["p4"] = run(task_id, pilot[task_id]["text"])
    replay("seed 3000 (the second candidate's run and the T 0.4 program pilot)", texts, task_of)

    replay("arithmetic seed 9", *recorded("quality-two-valued-arithmetic-s9", "arithmetic", 15, "9"))
    replay("arithmetic seed 10", *recorded("quality-two-valued-arithmetic-s10", "arithmetic", 15, "10"))
    replay("chain_sum seeds 80 and 100",
           *recorded("quality-two-valued-chain_sum-s80-100", "rg:chain_sum", 20, "80,100"))


if __name__ == "__main__":
    main()
