import json, sys, itertools, collections
sys.path.insert(0, '/work/main')
import asyncio, os
from massgen.actors.agent.turn import first_program, program_answer
from massgen.files import confined
CACHE='/work/lead/pilot/runs.json'
cache=json.load(open(CACHE)) if os.path.exists(CACHE) else {}
from bench.tasks import select_tasks, final_answer
from massgen.actors.coordination import results
rows = [json.loads(l) for l in open('/work/lead/pilot/pilot.jsonl')]
fams = sorted({r['family'] for r in rows})
_, tasks = select_tasks(",".join("rg:"+f for f in fams), 6, "2000")
T = {t.task_id: t for t in tasks}
def pal_text(r):
    code = first_program(r['text'])
    k = r['task']+r['method']
    if k not in cache:
        run = asyncio.run(confined.run_python(code)) if code.strip() else None
        cache[k] = program_answer(code, run, T[r['task']].question) if run else "no program"
    return cache[k]
by = collections.defaultdict(dict)
for r in rows:
    txt = pal_text(r) if r['method'].startswith('pal') else r['text']
    by[r['task']][r['method']] = txt
def right(t, txt): return txt is not None and T[t].grade(txt).correct
def key(t, txt):
    if txt is None: return None
    v = T[t].grade(txt).key
    return v
methods = ['greedy','cot04','pal0','pal04']
tab = collections.defaultdict(lambda: collections.Counter())
for t, d in by.items():
    if len(d) < 4: continue
    f = T[t].family
    tab[f]['n'] += 1
    for m in methods: tab[f][m] += right(t, d.get(m))
    g, c, p0, p4 = (key(t, d.get(m)) for m in methods)
    def maj(vals, tie):
        cnt = collections.Counter(v for v in vals if v is not None)
        if not cnt: return tie
        top = cnt.most_common()
        if len(top) > 1 and top[0][1] == top[1][1]: return tie
        return top[0][0] if top[0][1] >= 2 else tie
    def maj4(vals):
        cnt = collections.Counter(v for v in vals if v is not None)
        if not cnt: return vals[0]
        best = max(cnt.values())
        return next(v for v in vals if v is not None and cnt[v] == best)
    exp = lambda v: v is not None and any(right(t, d[m]) and key(t, d[m]) == v for m in methods)
    truth = lambda v: v is not None and (T[t].grade("Answer: " + str(v)).correct)
    rules = {
      'maj(g,p0,c) tie g': maj([g,p0,c], g),
      'maj(g,p0,c) tie p0': maj([g,p0,c], p0 if p0 is not None else g),
      'maj(g,p0,p4) tie g': maj([g,p0,p4], g),
      'maj(g,p0,p4) tie p0': maj([g,p0,p4], p0 if p0 is not None else g),
      'p0 else g': p0 if p0 is not None else g,
      'maj4(p0,g,c,p4) order': maj4([p0,g,c,p4]),
      'maj4(g,p0,c,p4) order': maj4([g,p0,c,p4]),
      'maj(p0,c,g) order': maj4([p0,c,g]),
    }
    for name, v in rules.items():
        tab[f][name] += exp(v)
    tab[f]['ceiling'] += any(right(t, d.get(m)) for m in methods)
    tab[f]['pal0 ran'] += d.get('pal0') is not None
for f, c in tab.items():
    print(f, dict(c))
tot = collections.Counter()
for c in tab.values(): tot.update(c)
print('ALL', dict(tot))

json.dump(cache, open(CACHE,'w'))
