"""Replays of recorded first answers under the team's decision rules, on graded keys.

``decided`` runs the team's decision as it stood before issue 48 (``bench/replays/rules_before_issue_48.py``: the
replays here were written against its rules) on the
keys a task's grader gives each answer (None: the answer states no result), so a replay decides as that team
would have. A replay of the rule as it stood before a later rule was added names the rules it replays:
``BEFORE_TWO_VALUED`` (the third and fourth candidates: two-valued results decided by agreement too) and
``BEFORE_NO_RESULT_ASKED`` (the fifth candidate). Issue 48's rule is replayed by ``bench.replays.first_answers``.
"""

from __future__ import annotations

import asyncio
import collections
import json
from collections.abc import Collection, Hashable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.replays import rules_before_issue_48 as before
from bench.tasks import Task, select_tasks
from massgen.actors.agent.turn import program_answer
from massgen.actors.coordination.code_checks import program_code
from massgen.actors.coordination.decision import Evidence, FirstTurnsEnded, Rule, decide
from massgen.actors.coordination.results import TWO_VALUED_RESULTS
from massgen.files import confined
from massgen.messages import AnswerResult

__all__ = [
    "BEFORE_NO_RESULT_ASKED", "BEFORE_TWO_VALUED", "ProgramRuns", "decided", "graded", "pilot_inputs", "pilot_problems",
    "print_counts", "recorded_calls", "scored",
]

RULES: tuple[Rule, ...] = before.RULES  # the rules these replays were written against
BEFORE_NO_RESULT_ASKED: tuple[Rule, ...] = before.rules_without("no_result_asked")
BEFORE_TWO_VALUED: tuple[Rule, ...] = before.rules_without("no_result_asked", "two_valued_first_answers")


def decided(computed: list[Hashable | None], written: list[Hashable | None],
            rules: Sequence[Rule] = RULES) -> Hashable | None:
    """The key of the first answer the team's ``decide`` picks, the program calls (``computed``: keys of what a
    program printed) listed before the written ones; None when the winner states no result."""
    tokens: dict[Hashable, str] = {}

    def token(key: Hashable) -> str:
        """One result per distinct key; a two-valued key keeps its word, which the two-valued rule reads."""
        word = str(key).lower()
        return tokens.setdefault(key, word if word in TWO_VALUED_RESULTS else f"#{len(tokens)}")

    calls = [(key, True) for key in computed] + [(key, False) for key in written]
    answers = tuple(
        AnswerResult(agent=f"a{i}", label=f"a{i}.1", result="" if key is None else token(key), independent=True,
                     stated=key is not None, computed=program and key is not None, program=program)
        for i, (key, program) in enumerate(calls))
    order = tuple(answer.agent for answer in answers)
    decision = decide(Evidence(answers=answers, order=order, after_first_answers="decide",
                               first_turns=FirstTurnsEnded(agents=order)), rules)
    if decision.winner is None or decision.record is None or not decision.record.result:
        return None
    return calls[order.index(decision.winner)][0]


def print_counts(table: Mapping[str, collections.Counter[str]]) -> None:
    """One line per family, then one overall."""
    overall: collections.Counter[str] = collections.Counter()
    for family, counts in sorted(table.items()):
        print(family, dict(counts))
        overall.update(counts)
    print("ALL", dict(overall))


def scored(value: Hashable | None, right: Mapping[str, bool], keys: Mapping[str, Hashable | None]) -> bool:
    """Whether the decided ``value`` is right: some call stating it (``keys``) was graded right."""
    return value is not None and any(right[m] and keys[m] == value for m in keys)


class ProgramRuns:
    """A pilot's program requests, run as the team runs them (``program_code``, ``confined.run_python``,
    ``program_answer``) once per problem; the answers are kept in ``path`` (JSON) between replays."""

    def __init__(self, path: Path, tasks: Mapping[str, Task]) -> None:
        self.path, self.tasks = path, tasks
        self.answers: dict[str, str] = json.loads(path.read_text()) if path.exists() else {}

    def __call__(self, task_id: str, reply: str) -> str:
        """The first answer the team would make of ``reply`` to ``task_id``'s program request."""
        if task_id not in self.answers:
            code = program_code(reply)
            ran = asyncio.run(confined.run_python(code)) if code.strip() else None
            self.answers[task_id] = program_answer(code, ran, self.tasks[task_id].question) if ran else "no program"
        return self.answers[task_id]

    def save(self) -> None:
        self.path.write_text(json.dumps(self.answers))


def recorded_calls(rows: Iterable[dict[str, Any]], agent_calls: Mapping[str, str],
                   wanted: Collection[str]) -> dict[str, dict[str, str]]:
    """Per problem in ``wanted``, a counted run's calls by name: ``greedy``, and each team agent's first answer
    under its name in ``agent_calls`` (``local_1`` -> ``p0``)."""
    texts: dict[str, dict[str, str]] = collections.defaultdict(dict)
    for row in rows:
        if row["task_id"] not in wanted:
            continue
        if row["method"] == "greedy":
            texts[row["task_id"]]["greedy"] = row["text"]
        elif row["method"] == "team":
            for first in row["first_answers"]:
                texts[row["task_id"]][agent_calls[first["agent"]]] = first["text"]
    return texts


def pilot_inputs(counted: Path, pilot: Path, seed: str, runs: Path,
                 ) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]], dict[str, Task], ProgramRuns]:
    """A pilot's inputs: the counted run's rows, the pilot's rows by task, the tasks (the pilot's families, 40
    problems of ``seed``) and the program runs, kept in ``runs``."""
    counted_rows = [json.loads(line) for line in counted.read_text().splitlines()]
    pilot_rows = {row["task"]: row for row in map(json.loads, pilot.read_text().splitlines())}
    families = sorted({row["family"] for row in pilot_rows.values()})
    _, tasks = select_tasks(",".join(f"rg:{f}" for f in families), 40, seed)
    task_of = {t.task_id: t for t in tasks}
    return counted_rows, pilot_rows, task_of, ProgramRuns(runs, task_of)


def pilot_problems(counted: Iterable[dict[str, Any]], agent_calls: Mapping[str, str], pilot: Mapping[str, Any],
                   run: ProgramRuns, call: str, task_of: Mapping[str, Task],
                   ) -> Iterator[tuple[str, Task, dict[str, bool], dict[str, Hashable | None]]]:
    """Per counted problem of a pilot: its id, its task, and each call's verdict and key (``graded``), the pilot's
    program request run as ``call``; a problem missing any of its five calls is left out."""
    for task_id, by in recorded_calls(counted, agent_calls, pilot).items():
        by[call] = run(task_id, pilot[task_id]["text"])
        if len(by) < 5:
            continue
        task = task_of[task_id]
        right, keys = graded(task, by)
        yield task_id, task, right, keys


def graded(task: Task, by: Mapping[str, str]) -> tuple[dict[str, bool], dict[str, Hashable | None]]:
    """Each call's verdict and the result it states; a program call (``p...``) whose program printed nothing
    states none."""
    right = {m: task.grade(t).correct for m, t in by.items()}
    keys = {m: None if m.startswith("p") and "\nAnswer:" not in t else task.grade(t).key for m, t in by.items()}
    return right, keys
