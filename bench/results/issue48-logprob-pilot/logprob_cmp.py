import json, sys, collections
from bench.tasks import select_tasks
sc = {json.loads(l)["task_id"]: json.loads(l) for l in open(sys.argv[1])}
runs = {"plain": "bench/results/plain-127/team", "plain2": "bench/results/issue48-fresh/plain2",
        "plain3": "bench/results/issue48-plain3/team", "plain4": "bench/results/issue48-plain4/team"}
items = {}
for name, d in runs.items():
    rec = {}
    for l in open(f"{d}/answers.jsonl"):
        r = json.loads(l)
        if r["method"] == "team": rec[r["task_id"]] = r
    for t in select_tasks(name, 127 if name == "plain" else 126, "0")[1]:
        if t.task_id not in sc or t.task_id not in rec: continue
        r = rec[t.task_id]
        g = t.grade(next(a["text"] for a in r["first_answers"] if a["agent"] == "local_3")).correct
        items[t.task_id] = (name, t.family, sc[t.task_id]["score"], g, t.grade(r["text"]).correct)
def est(rows, t): return sum(team if s >= t else g for _, _, s, g, team in rows)
train = [v for v in items.values() if v[0] == "plain"]
cands = sorted({v[2] for v in train} | {0.0, 1.01})
best = max(est(train, t) for t in cands); t_star = min(t for t in cands if est(train, t) == best)
print(f"plain (train, n {len(train)}): greedy {sum(v[3] for v in train)}, recorded team {sum(v[4] for v in train)}, best estimate {best} at t = {t_star:.4f}")
test = [v for v in items.values() if v[0] != "plain"]
n = len(test); G = sum(v[3] for v in test); T = sum(v[4] for v in test); E = est(test, t_star)
print(f"plain2-4 (held out, n {n}): greedy {G} ({100*G/n:.1f} %), recorded team {T} ({100*(T-G)/n:+.1f} points), estimate {E} ({100*(E-G)/n:+.1f} points); below t: {sum(v[2] < t_star for v in test)} questions")
print("\n| kind (plain2-4 pooled) | n | below t (greedy answers) | greedy | recorded team | estimate |\n|---|---|---|---|---|---|")
for k in sorted({v[1] for v in test}):
    rs = [v for v in test if v[1] == k]
    print(f"| {k} | {len(rs)} | {sum(v[2] < t_star for v in rs)} | {sum(v[3] for v in rs)} | {sum(v[4] for v in rs)} | {est(rs, t_star)} |")
print("\nfor reference, not the rule: the held-out estimate at other thresholds")
for t in (0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9):
    print(f"  t {t}: train {est(train, t)}, held out {est(test, t)} ({100*(est(test, t)-G)/n:+.1f} points)")
