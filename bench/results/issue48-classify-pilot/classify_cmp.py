"""The classifier pilot's estimate: the greedy call's recorded answer where the model said no, the recorded team's
where it said yes; by set and kind, beside both.

Run from the repository root: PYTHONPATH=. python bench/results/issue48-classify-pilot/classify_cmp.py CLASSIFIED.jsonl
"""

import collections
import sys
from pathlib import Path

from bench.quality import load_rows
from bench.tasks import select_tasks

classified = {row["task_id"]: row for row in load_rows(Path(sys.argv[1]))}
runs = {"plain": "bench/results/plain-127/team", "plain2": "bench/results/issue48-fresh/plain2",
        "plain3": "bench/results/issue48-plain3/team", "plain4": "bench/results/issue48-plain4/team"}
print("| set | kind | n | said yes (computing) | first word neither yes nor no | greedy | recorded team | estimate |")
print("|---|---|---|---|---|---|---|---|")
fresh: collections.Counter[str] = collections.Counter()
for name, folder in runs.items():
    recorded = {row["task_id"]: row for row in load_rows(Path(f"{folder}/answers.jsonl")) if row["method"] == "team"}
    tasks = select_tasks(name, 127 if name == "plain" else 126, "0")[1]
    by: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for task in tasks:
        if task.task_id not in classified or task.task_id not in recorded:
            continue
        run, said = recorded[task.task_id], classified[task.task_id]
        greedy_text = next(a["text"] for a in run["first_answers"] if a["agent"] == "local_3")
        greedy = task.grade(greedy_text).correct
        team = task.grade(run["text"]).correct
        estimate = team if said["compute"] else greedy
        for key in (task.family, "all"):
            c = by[key]
            c["n"] += 1
            c["yes"] += said["compute"]
            c["unread"] += not said["read"]
            c["greedy"] += greedy
            c["team"] += team
            c["est"] += estimate
            if name != "plain" and key != "all":
                fresh["n"] += 1
                fresh["greedy"] += greedy
                fresh["team"] += team
                fresh["est"] += estimate
    for key in sorted(by, key=lambda k: (k == "all", k)):
        c = by[key]
        print(f"| {name} | {key} | {c['n']} | {c['yes']} | {c['unread']} | {c['greedy']} | {c['team']} | {c['est']} |")
n = max(fresh["n"], 1)
print(f"\nplain2-4 together: n {fresh['n']}, greedy {fresh['greedy']} ({100 * fresh['greedy'] / n:.1f} %), recorded "
      f"team {fresh['team']}, estimate {fresh['est']} ({100 * (fresh['est'] - fresh['greedy']) / n:+.1f} points "
      "over greedy)")
