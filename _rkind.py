"""Scratch: issue 48's rule now against the kind-of-result candidate, on recorded first answers (post hoc)."""
import json
import sys
from collections import defaultdict
from pathlib import Path

from bench.quality import load_rows
from bench.replays.first_answers import ORDER, RESERVE, _winner_text, answer_results
from bench.tasks import select_tasks
from massgen.actors.coordination import decision, evidence
from massgen.actors.coordination.decision import Evidence, FirstTurnsEnded, decide
from massgen.actors.coordination.results import stated_result

plain_weighed = decision._weighed


def kind(value: str) -> str:
    tokens = evidence._tokens(value)
    if tokens in (["yes"], ["no"]):
        return "truth"
    if tokens and all(t[0].isdigit() or (t[0] == "-" and t[1:2].isdigit()) for t in tokens):
        return "number"
    return "words"


def holds(conclusion: str, k: str) -> bool:
    tokens = evidence._tokens(conclusion)
    if k == "truth":
        said = evidence._tokens(stated_result(conclusion))
        return tokens[:1] in (["yes"], ["no"]) or said in (["yes"], ["no"])
    if k == "number":
        return bool(evidence._numbers(tokens))
    return True


def kind_weighed(firsts):
    written = [a for a in firsts if not a.program]
    if written:
        keep = []
        for a in firsts:
            if a.program and a.computed and a.result and not any(holds(w.conclusion, kind(a.result)) for w in written):
                a = a.model_copy(update={"computed": False})
            keep.append(a)
        firsts = keep
    return plain_weighed(firsts)


def run(rows, tasks):
    by_id = {t.task_id: t for t in tasks}
    out = defaultdict(lambda: [0, 0, 0, 0, 0])  # n, now right, now asks, cand right, cand asks
    changed = []
    for row in rows:
        task = by_id.get(row["task_id"])
        firsts = row.get("first_answers") or []
        if row.get("method") != "team" or task is None or not firsts:
            continue
        agents = tuple(a["agent"] for a in firsts)
        asked = tuple(a for a in agents if a in RESERVE)
        res = []
        for old in (True, False):
            plain_off = decision._off_kind
            if old:
                decision._off_kind = lambda firsts: set()
            d = decide(Evidence(answers=answer_results(firsts, new_rule=True), order=ORDER, after_first_answers="decide",
                                reserve=tuple(a for a in RESERVE if a not in asked),
                                reserve_spent=len(asked) == len(RESERVE), first_turns=FirstTurnsEnded(agents=agents)))
            decision._off_kind = plain_off
            res.append(None if d.ask else task.grade(_winner_text(firsts, d.winner)).correct)
        o = out[task.family]
        o[0] += 1
        for i, r in enumerate(res):
            if r is None:
                o[2 + 2 * i] += 1
            elif r:
                o[1 + 2 * i] += 1
        if res[0] != res[1]:
            changed.append((task.task_id, res[0], res[1]))
    return out, changed


def main():
    sets = {
        "plain-127": ("bench/results/plain-127/team", "plain", 127, "0", None),
        "plain2": ("bench/results/issue48-fresh/plain2", "plain2", 126, "0", None),
        "rg-plain-s6000": ("bench/results/issue48-fresh/rg-plain-s6000",
                           "rg-plain:gsm_symbolic,rg-plain:letter_counting,rg-plain:chain_sum,rg-plain:basic_arithmetic",
                           10, "6000", None),
        "rg-s5000": ("bench/results/quality-two-valued-s5000", "rg:gsm_symbolic,rg:letter_counting,rg:syllogism", 40,
                     "5000", "bench/results/plain-127/rg-s5000-reserve"),
    }
    for name in sys.argv[1:] or sets:
        d, spec, n, seed, live = sets[name]
        _s, tasks = select_tasks(spec, n, seed)
        rows = [r for r in load_rows(Path(d) / "answers.jsonl") if r.get("method") == "team"]
        if live:
            lv = {r["task_id"]: r for r in load_rows(Path(live) / "answers.jsonl") if r.get("method") == "team"}
            rows = [lv.get(r["task_id"], r) for r in rows]
        out, changed = run(rows, tasks)
        print(f"== {name}: family n | now right (asks) | candidate right (asks)")
        tot = [0] * 5
        for fam, o in sorted(out.items()):
            print(f"  {fam:28s} {o[0]:4d} | {o[1]:3d} ({o[2]}) | {o[3]:3d} ({o[4]})")
            tot = [a + b for a, b in zip(tot, o)]
        print(f"  {'overall':28s} {tot[0]:4d} | {tot[1]:3d} ({tot[2]}) | {tot[3]:3d} ({tot[4]})")
        print("  changed:", json.dumps(changed))


main()
