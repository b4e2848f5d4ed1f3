import json, sys, collections
from bench.tasks import select_tasks
pilot = {json.loads(l)["task_id"]: json.loads(l) for l in open(sys.argv[1])}
rec = {}
for l in open("bench/results/issue48-plain4/team/answers.jsonl"):
    r = json.loads(l)
    if r["method"] == "team": rec[r["task_id"]] = r
tasks = {t.task_id: t for t in select_tasks("plain4", 126, "0")[1]}
by = collections.defaultdict(collections.Counter)
for tid, p in pilot.items():
    t = tasks[tid]; r = rec[tid]
    f = {a["agent"]: t.grade(a["text"]).correct for a in r["first_answers"]}
    k = t.family
    for key in (k, "overall"):
        c = by[key]; c["n"] += 1; c["pilot"] += p["correct"]; c["local_1"] += bool(f.get("local_1")); c["greedy"] += bool(f.get("local_3"))
        c["program"] += p["program"]; c["pilot_only"] += p["correct"] and not f.get("local_1"); c["l1_only"] += bool(f.get("local_1")) and not p["correct"]
comp = collections.Counter()
for k in ("numbers", "letters", "dates", "sequences"):
    for x in ("pilot", "local_1", "n"): comp[x] += by[k][x]
print("| kind | n | pilot member alone | local_1 alone (recorded) | greedy (recorded) | replies that were programs | right only in pilot / only local_1 |")
print("|---|---|---|---|---|---|---|")
for k in sorted(by, key=lambda k: (k == "overall", k)):
    c = by[k]; print(f"| {k} | {c['n']} | {c['pilot']} | {c['local_1']} | {c['greedy']} | {c['program']} | {c['pilot_only']} / {c['l1_only']} |")
print(f"\nnumbers, letters, dates and sequences together: pilot {comp['pilot']} against local_1 {comp['local_1']} (n {comp['n']})")
