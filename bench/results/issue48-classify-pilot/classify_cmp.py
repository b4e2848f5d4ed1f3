import json, sys, collections
from bench.tasks import select_tasks
cls = {json.loads(l)["task_id"]: json.loads(l) for l in open(sys.argv[1])}
runs = {"plain": "bench/results/plain-127/team", "plain2": "bench/results/issue48-fresh/plain2",
        "plain3": "bench/results/issue48-plain3/team", "plain4": "bench/results/issue48-plain4/team"}
print("| set | kind | n | said yes (computing) | first word neither yes nor no | greedy | recorded team | estimate |")
print("|---|---|---|---|---|---|---|---|")
fresh = collections.Counter()
for name, d in runs.items():
    rec = {}
    for l in open(f"{d}/answers.jsonl"):
        r = json.loads(l)
        if r["method"] == "team": rec[r["task_id"]] = r
    tasks = select_tasks(name, 127 if name == "plain" else 126, "0")[1]
    by = collections.defaultdict(collections.Counter)
    for t in tasks:
        if t.task_id not in cls or t.task_id not in rec: continue
        r, c = rec[t.task_id], cls[t.task_id]
        greedy_text = next(a["text"] for a in r["first_answers"] if a["agent"] == "local_3")
        g = t.grade(greedy_text).correct; team = t.grade(r["text"]).correct
        est = team if c["compute"] else g
        for k in (t.family, "all"):
            b = by[k]; b["n"] += 1; b["yes"] += c["compute"]; b["unread"] += not c["read"]; b["greedy"] += g; b["team"] += team; b["est"] += est
            if name != "plain" and k != "all":
                f = fresh; f["n"] += 1; f["greedy"] += g; f["team"] += team; f["est"] += est
    for k in sorted(by, key=lambda k: (k == "all", k)):
        b = by[k]; print(f"| {name} | {k} | {b['n']} | {b['yes']} | {b['unread']} | {b['greedy']} | {b['team']} | {b['est']} |")
f = fresh
print(f"\nplain2-4 together: n {f['n']}, greedy {f['greedy']} ({100*f['greedy']/max(f['n'],1):.1f} %), recorded team {f['team']}, estimate {f['est']} ({100*(f['est']-f['greedy'])/max(f['n'],1):+.1f} points over greedy)")
