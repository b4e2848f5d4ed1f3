"""A team run's table by kind of question: the team beside one greedy call, each agent alone and the ceiling, with
calls and wall time; and how well the team's reader (``evidence.states``) tells agreement.

Issue 48 asks, on questions asked as users ask them (``--tasks plain``): the team at or above its best agent alone
on every kind and overall, at least greedy + 10 points overall, mean calls <= 4.5, wall time <= 3x one greedy call.
Each of those is checked here and printed as met or not, with the team against greedy paired question by question
(the discordant questions, the difference's 95 % interval, McNemar's exact p): how much a set of 126 can tell.
``--pool RUN_DIR:TASKS:N`` (repeatable) pools other runs with this one in that paired comparison, and prints only it.

"Each agent alone" is the agent's first answer, which is independent (it sees no other answer): the team's first
answers are the members' own single calls. The reserve agents answer only where the first answers disagree, so
they have no row of their own; the ceiling counts every first answer given.

The reader is measured against the graders (written with the set, before any run, and reading as a person does):
where the written answer and a program's computed value are both right they agree, where one is right and the
other wrong they do not; both wrong is left out (two wrong answers may or may not agree).

Run: python -m bench.by_kind RUN_DIR [--tasks plain --n 127 --seed 0]; the fresh set written for the revised
rule (``bench/asked_plainly_2.py``): --tasks plain2 (126 questions, the same nine kinds); the third fresh set
(``bench/asked_plainly_3.py``): --tasks plain3 (126 questions, the same nine kinds); the fourth fresh set
(``bench/asked_plainly_4.py``): --tasks plain4 (126 questions, the same nine kinds). Kinds are the tasks' families,
never read from their ids.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.quality import load_rows
from bench.replays.first_answers import answer_results
from bench.tasks import Task, select_tasks
from massgen.actors.coordination.evidence import conclusion_of, states

__all__ = ["KindRow", "by_kind", "main", "paired", "reader_agreement"]

ALWAYS_ASKED = ("local_1", "local_2", "local_3")
GREEDY_AGENT = "local_3"


@dataclass
class KindRow:
    kind: str
    n: int = 0
    greedy: int = 0
    team: int = 0
    alone: dict[str, int] | None = None
    # Per agent, the questions whose run weighed its first answer (a run that stopped on agreement did not wait
    # for every agent's: its "alone" is known only on these).
    answered: dict[str, int] | None = None
    ceiling: int = 0
    calls: float = 0.0
    team_s: float = 0.0
    greedy_s: float = 0.0
    greedy_timed: int = 0  # questions with a greedy call of their own (its time known)
    team_s_timed: float = 0.0  # the team's time on those questions
    asked_reserve: int = 0
    # The paired comparison's discordant questions: the team right and greedy wrong, and the other way round.
    team_only: int = 0
    greedy_only: int = 0

    def add(self, other: KindRow) -> None:
        self.n += other.n
        self.greedy += other.greedy
        self.team += other.team
        self.team_only += other.team_only
        self.greedy_only += other.greedy_only
        for agent, right in (other.alone or {}).items():
            self.alone = self.alone or {}
            self.alone[agent] = self.alone.get(agent, 0) + right
        for agent, answered in (other.answered or {}).items():
            self.answered = self.answered or {}
            self.answered[agent] = self.answered.get(agent, 0) + answered
        self.ceiling += other.ceiling
        self.calls += other.calls
        self.team_s += other.team_s
        self.greedy_s += other.greedy_s
        self.greedy_timed += other.greedy_timed
        self.team_s_timed += other.team_s_timed
        self.asked_reserve += other.asked_reserve


def _paired(rows: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """task id -> method -> its newest row without error."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for row in rows:
        if not row.get("error"):
            out.setdefault(row["task_id"], {})[row["method"]] = row
    return out


def bare_call_seconds(trace: Path) -> float | None:
    """How long the bare agent's own call took inside a team run: the local server answers one request at a time,
    so its call ran from its start, or from the end of the last other call that ended before it, to its end.
    That is one greedy call's time on the same server (the same request), where no greedy row timed one."""
    started: dict[str, float] = {}
    finished: list[tuple[float, str]] = []
    for line in trace.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        sender = str(record.get("sender", "")).split("#")[0]
        if record.get("type") == "ModelCallStarted":
            started.setdefault(sender, record["ts"])
        elif record.get("type") == "ModelCallFinished":
            finished.append((record["ts"], sender))
    own = next((ts for ts, sender in finished if sender == GREEDY_AGENT), None)
    if own is None or GREEDY_AGENT not in started:
        return None
    before = [ts for ts, sender in finished if sender != GREEDY_AGENT and ts <= own]
    return own - max([started[GREEDY_AGENT], *before])


def by_kind(rows: list[dict[str, Any]], tasks: Iterable[Task], runs: Path | None = None) -> list[KindRow]:
    """One row per kind (family) of the tasks that have both a greedy and a team row, then the overall row."""
    paired = _paired(rows)
    kinds: dict[str, KindRow] = {}
    # The traces stay out of the repository (bench/results/*/*/runs/ is ignored): what is read of them is kept
    # beside the answers, so the table is made again from the committed files.
    kept = runs.parent / "bare_call_seconds.json" if runs is not None else None
    timings: dict[str, float] = json.loads(kept.read_text(encoding="utf-8")) if kept and kept.exists() else {}
    for task in tasks:
        done = paired.get(task.task_id, {})
        if "team" not in done:
            continue
        team = done["team"]
        firsts = team.get("first_answers") or []
        # The greedy call is the bare question at T 0: local_3's first answer is that very request's reply, so a
        # run without greedy rows reads it there (its time then unknown: 0, and no ratio is claimed).
        bare = next((f["text"] for f in firsts if f["agent"] == GREEDY_AGENT), None)
        greedy = done.get("greedy") or {"text": bare, "seconds": 0.0}
        trace = runs / task.task_id / "trace.jsonl" if runs is not None else None
        bare_s = bare_call_seconds(trace) if trace is not None and trace.exists() else timings.get(task.task_id)
        if bare_s is not None:
            timings[task.task_id] = bare_s
        row = kinds.setdefault(task.family, KindRow(task.family, alone={a: 0 for a in ALWAYS_ASKED},
                                                    answered={a: 0 for a in ALWAYS_ASKED}))
        row.n += 1
        greedy_right, team_right = task.grade(greedy["text"]).correct, task.grade(team["text"]).correct
        row.greedy += greedy_right
        row.team += team_right
        row.team_only += team_right and not greedy_right
        row.greedy_only += greedy_right and not team_right
        assert row.alone is not None and row.answered is not None
        for first in firsts:
            if first["agent"] in row.alone:
                row.alone[first["agent"]] += task.grade(first["text"]).correct
                row.answered[first["agent"]] += 1
        row.ceiling += any(task.grade(first["text"]).correct for first in firsts)
        row.calls += team["calls"]
        row.team_s += team["seconds"]
        if "greedy" in done or bare_s is not None:
            row.greedy_s += greedy["seconds"] if "greedy" in done else bare_s or 0.0
            row.greedy_timed += 1
            row.team_s_timed += team["seconds"]
        row.asked_reserve += any(first["agent"] not in ALWAYS_ASKED for first in firsts)
    if kept is not None and timings:
        kept.write_text(json.dumps(timings, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    overall = KindRow("overall", alone={a: 0 for a in ALWAYS_ASKED}, answered={a: 0 for a in ALWAYS_ASKED})
    for row in kinds.values():
        overall.add(row)
    return [*sorted(kinds.values(), key=lambda r: r.kind), overall]


def _pct(right: int, n: int) -> str:
    return f"{right} ({100 * right / n:.0f} %)" if n else "-"


def _alone(row: KindRow, agent: str) -> str:
    """An agent's right answers alone; "right/answered" where some runs did not wait for its answer."""
    right, answered = (row.alone or {}).get(agent, 0), (row.answered or {}).get(agent, row.n)
    return str(right) if answered >= row.n else f"{right}/{answered}"


def table(rows: list[KindRow]) -> str:
    lines = ["| kind | n | one greedy call | **team** | " + " / ".join(ALWAYS_ASKED) + " alone | ceiling | calls | "
             "s/question, team / greedy | reserve asked |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        alone = " / ".join(_alone(r, a) for a in ALWAYS_ASKED)
        timed = (f"{r.team_s / r.n:.1f} / {r.greedy_s / r.greedy_timed:.1f} "
                 f"({r.team_s_timed / r.greedy_s:.1f}x where both were timed, {r.greedy_timed})"
                 if r.greedy_timed and r.greedy_s else f"{r.team_s / r.n:.1f} / -")
        lines.append(f"| {r.kind} | {r.n} | {_pct(r.greedy, r.n)} | **{_pct(r.team, r.n)}** | {alone} | "
                     f"{r.ceiling} | {r.calls / r.n:.2f} | {timed} | {r.asked_reserve} |")
    return "\n".join(lines)


def must_show(rows: list[KindRow]) -> str:
    """Issue 48's conditions, each met or not, on these rows."""
    overall = rows[-1]
    lines = []
    for r in rows:
        best = max((r.alone or {}).values(), default=0)
        if any(n < r.n for n in (r.answered or {}).values()):  # a run stopped on agreement: not every answer is known
            lines.append(f"- {r.kind}: team {r.team} against its best agent alone: not known here (some runs did "
                         f"not wait for every agent's first answer; replay a run that did)")
            continue
        lines.append(f"- {r.kind}: team {r.team} against its best agent alone {best}: "
                     f"{'met' if r.team >= best else 'NOT met'}")
    if overall.n:
        gain = 100 * (overall.team - overall.greedy) / overall.n
        lines.append(f"- overall: team {100 * overall.team / overall.n:.1f} % against greedy "
                     f"{100 * overall.greedy / overall.n:.1f} %: {gain:+.1f} points, "
                     f"{'met' if gain >= 10 else 'NOT met'} (at least +10)")
        lines.append(f"- {paired(overall)}")
        calls = overall.calls / overall.n
        lines.append(f"- mean calls {calls:.2f}: {'met' if calls <= 4.5 else 'NOT met'} (at most 4.5)")
        if overall.greedy_s:
            ratio = overall.team_s_timed / overall.greedy_s  # on the questions where both were timed
            lines.append(f"- wall time {ratio:.2f}x one greedy call (on {overall.greedy_timed} questions: a greedy "
                         f"row's time, else the bare agent's own call in the team's run): "
                         f"{'met' if ratio <= 3 else 'NOT met'} (at most 3x)")
        else:
            lines.append("- wall time: no greedy call timed in this run (greedy read from local_3's first answer)")
    return "\n".join(lines)


def paired(row: KindRow) -> str:
    """The team against greedy on the same questions: the discordant pairs, the difference with its 95 % interval
    (paired Wald: the two answers to one question are not independent) and McNemar's exact two-sided p."""
    wins, losses, n = row.team_only, row.greedy_only, row.n
    difference = (wins - losses) / n
    spread = 1.96 * math.sqrt(max(wins + losses - (wins - losses) ** 2 / n, 0.0)) / n
    discordant = wins + losses
    tail = sum(math.comb(discordant, k) for k in range(min(wins, losses) + 1)) / 2 ** discordant if discordant else 1.0
    return (f"paired with greedy on {n} questions: team right and greedy wrong {wins}, greedy right and team wrong "
            f"{losses}; difference {100 * difference:+.1f} points, 95 % interval {100 * (difference - spread):+.1f} "
            f"to {100 * (difference + spread):+.1f} (paired Wald), McNemar exact p {_p(min(1.0, 2 * tail))}")


def _p(value: float) -> str:
    return "< 0.001" if value < 0.001 else f"= {value:.3f}"


def reader_agreement(rows: list[dict[str, Any]], tasks: Iterable[Task]) -> str:
    """``states`` on every (written answer, computed value) pair of the team's first answers, against the graders."""
    by_id = {t.task_id: t for t in tasks}
    counts = {"agree, read as agreeing": 0, "agree, read as not": 0, "differ, read as agreeing": 0,
              "differ, read as not": 0, "both wrong (left out)": 0}
    examples: list[str] = []
    for task_id, done in _paired(rows).items():
        task, team = by_id.get(task_id), done.get("team")
        if task is None or team is None:
            continue
        firsts = team.get("first_answers") or []
        written = [f for f in firsts if f["agent"] == "local_3"]
        if not written:
            continue
        conclusion = conclusion_of(written[0]["text"])
        written_right = task.grade(written[0]["text"]).correct
        for first, result in zip(firsts, answer_results(firsts, new_rule=True), strict=True):
            if not (result.program and result.computed and result.result):
                continue
            program_right = task.grade(first["text"]).correct
            read = states(conclusion, result.result)
            if not written_right and not program_right:
                counts["both wrong (left out)"] += 1
                continue
            truth = "agree" if written_right and program_right else "differ"
            counts[f"{truth}, read as {'agreeing' if read else 'not'}"] += 1
            if (truth == "agree") != read and len(examples) < 12:
                examples.append(f"  - {task_id}: value {result.result!r}; conclusion "
                                f"{conclusion[-160:]!r} ({truth}, read as {'agreeing' if read else 'not'})")
    judged = sum(v for k, v in counts.items() if "left out" not in k)
    right = counts["agree, read as agreeing"] + counts["differ, read as not"]
    head = f"reader (evidence.states) against the graders: {right} of {judged} pairs read right"
    return "\n".join([head, *(f"- {k}: {v}" for k, v in counts.items()), *(["misread:", *examples] if examples
                                                                              else [])])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path)
    parser.add_argument("--tasks", default="plain")
    parser.add_argument("--n", type=int, default=127)
    parser.add_argument("--seed", default="0")
    parser.add_argument("--pool", action="append", default=[], metavar="RUN_DIR:TASKS:N",
                        help="another run (its tasks and n, seed 0) pooled with this one in the paired comparison")
    args = parser.parse_args(argv)
    _seeds, tasks = select_tasks(args.tasks, args.n, args.seed)
    rows = load_rows(args.run / "answers.jsonl")
    kinds = by_kind(rows, tasks, args.run / "runs")
    if not kinds[-1].n:
        parser.exit(2, f"{args.run}: no team row of the tasks --tasks {args.tasks} --n {args.n} --seed {args.seed} "
                       "selects (give the run's own)\n")
    if args.pool:
        pooled = KindRow("pooled")
        pooled.add(kinds[-1])
        for spec in args.pool:
            run, _, rest = spec.partition(":")
            names, _, n = rest.partition(":")
            if not names or not n.isdigit():
                parser.exit(2, f"--pool {spec!r}: give RUN_DIR:TASKS:N, for example bench/results/x/team:plain3:126\n")
            _seeds, more = select_tasks(names, int(n), "0")
            pooled.add(by_kind(load_rows(Path(run) / "answers.jsonl"), more, Path(run) / "runs")[-1])
        print(f"pooled over {1 + len(args.pool)} runs: {paired(pooled)}")
        return
    report = "\n\n".join([table(kinds), must_show(kinds), reader_agreement(rows, tasks)])
    print(report)
    (args.run / "by_kind.md").write_text(report + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
