"""Recorded first answers, decided again: issue 48's rule (``decide`` now) and the rule before it (its first-answer
rules as they were at 2cddd55, ``bench/replays/rules_before_issue_48.py``), on the very answers a recorded team
run gave.

A team's first answers are independent requests (each sees the question alone, at a fixed seed), and one request
gives one reply on the local server, so a live run of today's team gives the answers it recorded, and the team's
answer is what ``decide`` makes of them. Where issue 48's rule asks a reserve agent, the recorded run has no such
answer: those tasks are listed as needing one (the live run of the team asks them).

Run: python -m bench.replays.first_answers RUN_DIR --tasks rg:gsm_symbolic,... --n 40 --seed 5000
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.quality import load_rows
from bench.replays.rules_before_issue_48 import RULES as BEFORE_RULES
from bench.tasks import Task, select_tasks
from massgen.actors.coordination.decision import Decision, Evidence, FirstTurnsEnded, decide
from massgen.actors.coordination.evidence import computed_value, conclusion_of
from massgen.actors.coordination.results import final_result, stated_result
from massgen.messages import AnswerResult

__all__ = ["Replayed", "answer_results", "decide_recorded", "replay"]

PROGRAM_AGENTS = ("local_1", "local_2", "local_4", "local_5")
ORDER = ("local_1", "local_2", "local_3", "local_4", "local_5")
RESERVE = ("local_4", "local_5")
_PROGRAM = re.compile(r"\A```python\n(?P<code>.*?)\n```\n\nThe program printed:\n(?P<printed>.*)\n\nAnswer: ",
                      re.DOTALL)


def answer_results(first_answers: list[dict[str, Any]], *, new_rule: bool) -> tuple[AnswerResult, ...]:
    """The judge's view of recorded first answers, as ``Coordination.results`` builds it: a program's answer is
    computed when it printed (before issue 48) or printed a computed value (``evidence.computed_value``)."""
    out = []
    for a in first_answers:
        text, agent = a["text"], a["agent"]
        program = agent in PROGRAM_AGENTS
        match = _PROGRAM.match(text) if program else None
        printed = bool(match and match.group("printed").strip())
        computed = printed and (not new_rule or computed_value(match.group("code"), match.group("printed")))
        out.append(AnswerResult(agent=agent, label=a["label"], result=final_result(text), independent=True,
                                stated=bool(stated_result(text)), computed=computed, program=program,
                                conclusion="" if program else conclusion_of(text)))
    return tuple(out)


@dataclass(frozen=True)
class Replayed:
    task_id: str
    family: str
    new: bool | None  # issue 48's rule right; None: it asks a reserve agent the record does not have
    before: bool  # the rule before issue 48 right
    asks: str | None


def _winner_text(first_answers: list[dict[str, Any]], winner: str | None) -> str | None:
    return next((a["text"] for a in first_answers if a["agent"] == winner), None)


def decide_recorded(firsts: list[dict[str, Any]]) -> Decision:
    """``decide`` now, on a recorded row's first answers: the reserve agents it holds were asked, the others not."""
    agents = tuple(a["agent"] for a in firsts)
    asked = tuple(a for a in agents if a in RESERVE)
    return decide(Evidence(answers=answer_results(firsts, new_rule=True), order=ORDER, after_first_answers="decide",
                           reserve=tuple(a for a in RESERVE if a not in asked),
                           reserve_spent=len(asked) == len(RESERVE), first_turns=FirstTurnsEnded(agents=agents)))


def replay(rows: list[dict[str, Any]], tasks: list[Task]) -> list[Replayed]:
    """Each recorded team row decided by both rules, graded by its task."""
    by_id = {t.task_id: t for t in tasks}
    out = []
    for row in rows:
        task = by_id.get(row["task_id"])
        firsts = row.get("first_answers") or []
        if row.get("method") != "team" or task is None or not firsts:
            continue
        new = decide_recorded(firsts)
        today = [a for a in firsts if a["agent"] not in RESERVE]  # today's team has no reserve agents
        before = decide(Evidence(answers=answer_results(today, new_rule=False), order=ORDER,
                                 after_first_answers="decide",
                                 first_turns=FirstTurnsEnded(agents=tuple(a["agent"] for a in today))), BEFORE_RULES)
        new_right = None if new.ask else task.grade(_winner_text(firsts, new.winner)).correct
        out.append(Replayed(task.task_id, task.family, new_right,
                            task.grade(_winner_text(today, before.winner)).correct, new.ask))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path, help="a bench.quality output folder (its answers.jsonl)")
    parser.add_argument("--tasks", required=True)
    parser.add_argument("--n", type=int, required=True)
    parser.add_argument("--seed", default="0")
    parser.add_argument("--live", type=Path, help="a bench.quality folder holding live team runs of the tasks "
                                                  "that ask a reserve agent (``--only`` those): their answers count")
    args = parser.parse_args(argv)
    _seeds, tasks = select_tasks(args.tasks, args.n, args.seed)
    results = replay(load_rows(args.run / "answers.jsonl"), tasks)
    by_id = {t.task_id: t for t in tasks}
    live = {r["task_id"]: r for r in load_rows(args.live / "answers.jsonl")
            if r.get("method") == "team" and not r.get("error")} if args.live else {}
    families = sorted({r.family for r in results})
    print("| family | n | rule before issue 48 | issue 48's rule, decided without a reserve | asks a reserve | "
          "of those, right live (before) | issue 48's rule in all | calls |")
    print("|---|---|---|---|---|---|---|---|")
    for family in [*families, "overall"]:
        picked = [r for r in results if family in ("overall", r.family)]
        decided = [r for r in picked if r.new is not None]
        asked = [r for r in picked if r.new is None]
        ran = [r for r in asked if r.task_id in live]
        live_right = sum(by_id[r.task_id].grade(live[r.task_id]["text"]).correct for r in ran)
        calls = 3 * len(decided) + sum(live[r.task_id]["calls"] for r in ran)
        total = (f"{sum(bool(r.new) for r in decided) + live_right} of {len(decided) + len(ran)}"
                 if ran or not asked else "-")
        print(f"| {family} | {len(picked)} | {sum(r.before for r in picked)} | {sum(bool(r.new) for r in decided)} of "
              f"{len(decided)} (before: {sum(r.before for r in decided)}) | {len(asked)} | "
              f"{live_right} of {len(ran)} ({sum(r.before for r in ran)}) | {total} | "
              f"{calls / max(1, len(decided) + len(ran)):.2f} |")
    print(json.dumps({"asks": [r.task_id for r in results if r.new is None]}))


if __name__ == "__main__":
    main()
