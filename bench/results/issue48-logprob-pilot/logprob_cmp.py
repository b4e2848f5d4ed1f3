"""The logprob pilot's estimate: the threshold learnt on plain, held out on plain2-4 (see PLAN.md).

Run from the repository root: PYTHONPATH=. python bench/results/issue48-logprob-pilot/logprob_cmp.py SCORED.jsonl
"""

import sys
from pathlib import Path

from bench.quality import load_rows
from bench.tasks import select_tasks

# (set, kind, score, greedy right, recorded team right)
Item = tuple[str, str, float, bool, bool]

scored = {row["task_id"]: row for row in load_rows(Path(sys.argv[1]))}
runs = {"plain": "bench/results/plain-127/team", "plain2": "bench/results/issue48-fresh/plain2",
        "plain3": "bench/results/issue48-plain3/team", "plain4": "bench/results/issue48-plain4/team"}
items: dict[str, Item] = {}
for name, folder in runs.items():
    recorded = {row["task_id"]: row for row in load_rows(Path(f"{folder}/answers.jsonl")) if row["method"] == "team"}
    for task in select_tasks(name, 127 if name == "plain" else 126, "0")[1]:
        if task.task_id not in scored or task.task_id not in recorded:
            continue
        run = recorded[task.task_id]
        greedy = task.grade(next(a["text"] for a in run["first_answers"] if a["agent"] == "local_3")).correct
        team = task.grade(run["text"]).correct
        items[task.task_id] = (name, task.family, scored[task.task_id]["score"], greedy, team)


def estimate(rows: list[Item], t: float) -> int:
    return sum(team if s >= t else greedy for _, _, s, greedy, team in rows)


train = [v for v in items.values() if v[0] == "plain"]
candidates = sorted({v[2] for v in train} | {0.0, 1.01})
best = max(estimate(train, t) for t in candidates)
t_star = min(t for t in candidates if estimate(train, t) == best)
print(f"plain (train, n {len(train)}): greedy {sum(v[3] for v in train)}, recorded team {sum(v[4] for v in train)}, "
      f"best estimate {best} at t = {t_star:.4f}")
test = [v for v in items.values() if v[0] != "plain"]
n = len(test)
greedy_right = sum(v[3] for v in test)
team_right = sum(v[4] for v in test)
held_out = estimate(test, t_star)
print(f"plain2-4 (held out, n {n}): greedy {greedy_right} ({100 * greedy_right / n:.1f} %), recorded team {team_right} "
      f"({100 * (team_right - greedy_right) / n:+.1f} points), estimate {held_out} "
      f"({100 * (held_out - greedy_right) / n:+.1f} points); below t: {sum(v[2] < t_star for v in test)} questions")
print("\n| kind (plain2-4 pooled) | n | below t (greedy answers) | greedy | recorded team | estimate |\n"
      "|---|---|---|---|---|---|")
for kind in sorted({v[1] for v in test}):
    rows = [v for v in test if v[1] == kind]
    print(f"| {kind} | {len(rows)} | {sum(v[2] < t_star for v in rows)} | {sum(v[3] for v in rows)} "
          f"| {sum(v[4] for v in rows)} | {estimate(rows, t_star)} |")
print("\nfor reference, not the rule: the held-out estimate at other thresholds")
for t in (0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9):
    print(f"  t {t}: train {estimate(train, t)}, held out {estimate(test, t)} "
          f"({100 * (estimate(test, t) - greedy_right) / n:+.1f} points)")
