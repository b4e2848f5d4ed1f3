"""Recorded first answers decided by issue 48's rule with and without its kind-of-result check
(``decision._off_kind``; bench/results/issue48-plain3/RULE.md): a program's computed value of a kind no written
answer gives (a truth value, a number) answered another question and is not counted.

Both decisions are ``decide`` on the same recorded first answers (reserve answers included where the run asked
them); the check is left out by deciding with ``_off_kind`` finding nothing. Where a rule asks a reserve agent the
recorded run did not ask, the question is counted as unknown.

Run: python -m bench.replays.kind_of_result RUN_DIR --tasks plain3 --n 126 --seed 0 [--live DIR]
(``--live``: a bench.quality folder whose team rows replace the run's rows of the same task, as reasoning-gym seed
5000's reserve answers were run apart: ``bench/results/plain-127/rg-s5000-reserve``).
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.quality import load_rows
from bench.replays.first_answers import decide_recorded
from bench.tasks import Task, select_tasks
from massgen.actors.coordination import decision

__all__ = ["Decided", "main", "replay"]


@dataclass(frozen=True)
class Decided:
    task_id: str
    family: str
    with_check: bool | None  # right; None: asks a reserve agent the run did not ask
    without_check: bool | None


@contextlib.contextmanager
def _without_check() -> Iterator[None]:
    """``decide`` as it was before the check: no computed result is set aside for its kind."""
    checking = decision._off_kind
    decision._off_kind = lambda firsts: set()
    try:
        yield
    finally:
        decision._off_kind = checking


def _right(task: Task, firsts: list[dict[str, Any]]) -> bool | None:
    made = decide_recorded(firsts)
    if made.ask:
        return None
    text = next((a["text"] for a in firsts if a["agent"] == made.winner), None)
    return task.grade(text).correct


def replay(rows: list[dict[str, Any]], tasks: list[Task]) -> list[Decided]:
    by_id = {t.task_id: t for t in tasks}
    out = []
    for row in rows:
        task = by_id.get(row["task_id"])
        firsts = row.get("first_answers") or []
        if row.get("method") != "team" or task is None or not firsts:
            continue
        with_check = _right(task, firsts)
        with _without_check():
            without_check = _right(task, firsts)
        out.append(Decided(task.task_id, task.family, with_check, without_check))
    return out


def _count(values: list[bool | None]) -> str:
    unknown = sum(v is None for v in values)
    return f"{sum(bool(v) for v in values)}" + (f" (+{unknown} unknown)" if unknown else "")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path, help="a bench.quality output folder (its answers.jsonl)")
    parser.add_argument("--tasks", required=True)
    parser.add_argument("--n", type=int, required=True)
    parser.add_argument("--seed", default="0")
    parser.add_argument("--live", type=Path, help="team rows that replace the run's rows of the same task")
    args = parser.parse_args(argv)
    _seeds, tasks = select_tasks(args.tasks, args.n, args.seed)
    rows = load_rows(args.run / "answers.jsonl")
    if args.live:
        live = {r["task_id"]: r for r in load_rows(args.live / "answers.jsonl") if r.get("method") == "team"}
        rows = [live.get(r["task_id"], r) if r.get("method") == "team" else r for r in rows]
    decided = replay(rows, tasks)
    if not decided:
        raise SystemExit(f"{args.run}: no team row of --tasks {args.tasks} --n {args.n} --seed {args.seed}")
    print("| family | n | issue 48's rule without the kind check | with it |")
    print("|---|---|---|---|")
    for family in [*sorted({d.family for d in decided}), "overall"]:
        picked = [d for d in decided if family in ("overall", d.family)]
        print(f"| {family} | {len(picked)} | {_count([d.without_check for d in picked])} | "
              f"{_count([d.with_check for d in picked])} |")
    turned = [(d.task_id, d.without_check, d.with_check) for d in decided if d.with_check != d.without_check]
    print("changed (without -> with):", ", ".join(f"{t} {a} -> {b}" for t, a, b in turned) or "none")


if __name__ == "__main__":
    main()
