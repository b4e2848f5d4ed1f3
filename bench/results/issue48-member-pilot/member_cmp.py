"""The member pilot's table: its answers beside the recorded plain4 run's local_1 and greedy call, by kind.

Run from the repository root: PYTHONPATH=. python bench/results/issue48-member-pilot/member_cmp.py ANSWERS.jsonl
"""

import collections
import sys
from pathlib import Path

from bench.quality import load_rows
from bench.tasks import select_tasks

pilot = {row["task_id"]: row for row in load_rows(Path(sys.argv[1]))}
recorded = {row["task_id"]: row for row in load_rows(Path("bench/results/issue48-plain4/team/answers.jsonl"))
            if row["method"] == "team"}
tasks = {t.task_id: t for t in select_tasks("plain4", 126, "0")[1]}
by: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
for task_id, answer in pilot.items():
    task, run = tasks[task_id], recorded[task_id]
    first = {a["agent"]: task.grade(a["text"]).correct for a in run["first_answers"]}
    for key in (task.family, "overall"):
        c = by[key]
        c["n"] += 1
        c["pilot"] += answer["correct"]
        c["local_1"] += bool(first.get("local_1"))
        c["greedy"] += bool(first.get("local_3"))
        c["program"] += answer["program"]
        c["pilot_only"] += answer["correct"] and not first.get("local_1")
        c["l1_only"] += bool(first.get("local_1")) and not answer["correct"]
computing: collections.Counter[str] = collections.Counter()
for kind in ("numbers", "letters", "dates", "sequences"):
    for key in ("pilot", "local_1", "n"):
        computing[key] += by[kind][key]
print("| kind | n | pilot member alone | local_1 alone (recorded) | greedy (recorded) | replies that were programs "
      "| right only in pilot / only local_1 |")
print("|---|---|---|---|---|---|---|")
for kind in sorted(by, key=lambda k: (k == "overall", k)):
    c = by[kind]
    print(f"| {kind} | {c['n']} | {c['pilot']} | {c['local_1']} | {c['greedy']} | {c['program']} "
          f"| {c['pilot_only']} / {c['l1_only']} |")
print(f"\nnumbers, letters, dates and sequences together: pilot {computing['pilot']} against local_1 "
      f"{computing['local_1']} (n {computing['n']})")
