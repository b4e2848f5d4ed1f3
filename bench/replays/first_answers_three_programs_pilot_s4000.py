"""Development replay for issue 36's fourth candidate, on seed 4000's reasoning problems (already read).

The third candidate's counted run (``bench/results/quality-computed-s4000/answers.jsonl``) recorded, per problem, the
bare greedy call and the team's three first answers: the program at T 0 (local_1, p0), the program at T 0.4
(local_2, p4) and the bare question at T 0 (local_3, b0). ``pal07.jsonl`` adds one call per problem: the
program request at T 0.7 (``first_answers_decide_pal_pilot ... 4000 pal07``). Programs run as the team runs them
(``program_code``, ``confined.run_python``, ``program_answer``); runs are cached in ``runs.json``. Prints,
per family and overall, how many problems each call and each candidate gets right, and each candidate's
margin over the best of its own agents alone. Development data: it chooses the candidate
(``bench/results/first-answers-three-programs-preregistered.md``), the fresh seed measures it. Run from the
repository root: ``python -m bench.replays.first_answers_three_programs_pilot_s4000``.
"""

from __future__ import annotations

import collections
from pathlib import Path

from bench import first_answer_rules as rules

RESULTS = Path(__file__).resolve().parent.parent / "results"
HERE = RESULTS / "first-answers-three-programs-pilot-s4000"
COUNTED = RESULTS / "quality-computed-s4000" / "answers.jsonl"
AGENT_CALLS = {"local_1": "p0", "local_2": "p4", "local_3": "b0"}  # the third candidate's agents
CANDIDATES = {  # name: (computed, written, calls)
    "B (p0, p4; b0)": (("p0", "p4"), ("b0",)),
    "C (p0, p4, p7)": (("p0", "p4", "p7"), ()),
    "D (p0, p4, p7; b0)": (("p0", "p4", "p7"), ("b0",)),
}


def main() -> None:
    counted, pilot, task_of, run = rules.pilot_inputs(COUNTED, HERE / "pal07.jsonl", "4000", HERE / "runs.json")

    recorded = {row["task_id"]: row["correct"] for row in counted if row["method"] == "team"}
    table: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for task_id, task, right, keys in rules.pilot_problems(counted, AGENT_CALLS, pilot, run, "p7", task_of):
        counts = table[task.family]
        counts["n"] += 1
        counts["team as recorded"] += recorded[task_id]
        for method in ("greedy", "p0", "p4", "b0", "p7"):
            counts[method] += right[method]
        for name, (computed, written) in CANDIDATES.items():
            chosen = rules.decided([keys[m] for m in computed], [keys[m] for m in written], rules.BEFORE_TWO_VALUED)
            counts[name] += rules.scored(chosen, right, keys)
        counts["ceiling (p0, p4, p7, b0)"] += any(right[m] for m in ("p0", "p4", "p7", "b0"))
    run.save()
    rules.print_counts(table)
    overall: collections.Counter[str] = collections.Counter()
    for counts in table.values():
        overall.update(counts)
    for name, (computed, written) in CANDIDATES.items():
        best = max(overall[m] for m in (*computed, *written))
        print(f"{name}: {overall[name]} of {overall['n']}, best agent alone {best}, margin {overall[name] - best:+d}")


if __name__ == "__main__":
    main()
