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
from pathlib import Path

from bench import first_answer_rules as rules

RESULTS = Path(__file__).resolve().parent.parent / "results"
HERE = RESULTS / "first-answers-computed-pilot-s3000"
COUNTED = RESULTS / "quality-decide-s3000" / "answers.jsonl"
AGENT_CALLS = {"local_1": "p0", "local_2": "b0", "local_3": "b4"}  # the second candidate's agents


def main() -> None:
    counted, pilot, task_of, run = rules.pilot_inputs(COUNTED, HERE / "pal04.jsonl", "3000", HERE / "runs.json")

    table: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    rule = rules.BEFORE_TWO_VALUED  # the rule these candidates were chosen under
    for _task_id, task, right, keys in rules.pilot_problems(counted, AGENT_CALLS, pilot, run, "p4", task_of):
        counts = table[task.family]
        counts["n"] += 1
        for method in ("greedy", "p0", "b0", "b4", "p4"):
            counts[method] += right[method]
        computed_first = rules.decided([keys["p0"]], [keys["b0"], keys["b4"]], rule)
        counts["A: computed first (p0; b0, b4)"] += rules.scored(computed_first, right, keys)
        plain = rules.decided([], [keys["p0"], keys["b0"], keys["b4"]], rule)
        counts["A': plain majority (p0, b0, b4)"] += rules.scored(plain, right, keys)
        two_programs = rules.decided([keys["p0"], keys["p4"]], [keys["b0"]], rule)
        counts["B: computed first (p0, p4; b0)"] += rules.scored(two_programs, right, keys)
        programs_only = rules.decided([keys["p0"], keys["p4"]], [], rule)
        counts["C: programs only (p0, p4)"] += rules.scored(programs_only, right, keys)
        counts["ceiling"] += any(right.values())
    run.save()
    rules.print_counts(table)


if __name__ == "__main__":
    main()
