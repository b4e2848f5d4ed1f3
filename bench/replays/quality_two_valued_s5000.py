"""Two readings of the fifth candidate's counted run (seed 5000), explanatory, not part of its rule.

1. One request, one reply: the team's ``local_3`` and the greedy row are the same request (the bare question,
   T 0, the same model file); since the server evaluates every prompt whole (c8593d0) their texts should be
   identical. Before, on seed 4000, 72 of 160 were.
2. What the two-valued rule did: on the problems whose stated results were all yes/no, the decision the rule
   made against the one the third candidate's rule (agreement, computed first) would have made on the same
   recorded first answers (``bench.first_answer_rules``; graded keys).

Run from the repository root: ``python -m bench.replays.quality_two_valued_s5000``.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

from bench.first_answer_rules import BEFORE_NO_RESULT_ASKED, BEFORE_TWO_VALUED, decided, graded, recorded_calls, scored
from bench.tasks import Task, select_tasks
from massgen.actors.coordination.results import TWO_VALUED_RESULTS

RESULTS = Path(__file__).resolve().parent.parent / "results"
HERE = RESULTS / "quality-two-valued-s5000"
AGENT_CALLS = {"local_1": "p0", "local_2": "p4", "local_3": "b0"}


def main() -> None:
    rows = [json.loads(line) for line in (HERE / "answers.jsonl").read_text().splitlines()]
    _, tasks = select_tasks("rg:gsm_symbolic,rg:letter_counting,rg:syllogism,humaneval", 40, "5000")
    task_of: dict[str, Task] = {t.task_id: t for t in tasks}
    texts = recorded_calls(rows, AGENT_CALLS, task_of)

    same: collections.Counter[str] = collections.Counter()
    rule: collections.Counter[str] = collections.Counter()
    for task_id, by in texts.items():
        if not {"greedy", "p0", "p4", "b0"} <= by.keys():
            continue
        family = task_of[task_id].family
        same[f"{family} n"] += 1
        same[f"{family} identical"] += by["greedy"] == by["b0"]
        if family == "humaneval":
            continue
        right, keys = graded(task_of[task_id], by)
        stated = [k for k in (keys["p0"], keys["p4"], keys["b0"]) if k is not None]
        if not stated or not all(str(k).lower() in TWO_VALUED_RESULTS for k in stated):
            continue
        computed, written = [keys["p0"], keys["p4"]], [keys["b0"]]
        now = scored(decided(computed, written, BEFORE_NO_RESULT_ASKED), right, keys)
        before = scored(decided(computed, written, BEFORE_TWO_VALUED), right, keys)
        rule[f"{family} two-valued"] += 1
        rule[f"{family} decided otherwise"] += \
            decided(computed, written, BEFORE_NO_RESULT_ASKED) != decided(computed, written, BEFORE_TWO_VALUED)
        rule[f"{family} right now"] += now
        rule[f"{family} right by agreement"] += before
    print("local_3 and the greedy row, the same request:", dict(same))
    print("the two-valued rule:", dict(rule))


if __name__ == "__main__":
    main()
