"""The decision rules of ``after_first_answers: decide``, on graded keys, for replays of recorded calls.

``ranked_two_valued`` is ``turn_handout._decide_by_first_answers`` on the keys a task's grader gives each answer
(None: the answer states no result), so a replay of recorded first answers decides as the team would have;
``ranked`` is the rule before the fifth candidate (two-valued results decided by agreement too).
"""

from __future__ import annotations

import asyncio
import collections
import json
from collections.abc import Collection, Hashable, Iterable, Mapping
from pathlib import Path
from typing import Any

from bench.tasks import Task
from massgen.actors.agent.turn import program_answer
from massgen.actors.coordination.code_checks import program_code
from massgen.actors.coordination.results import TWO_VALUED_RESULTS
from massgen.files import confined

__all__ = [
    "ProgramRuns", "graded", "print_counts", "ranked", "ranked_two_valued", "recorded_calls", "scored",
]


def ranked(computed: list[Hashable | None], written: list[Hashable | None]) -> Hashable | None:
    """Most computed holders (results a program printed), then most holders of all, then the first listed
    (computed answers listed first); nothing stated: None."""
    everyone = computed + written
    support = collections.Counter(v for v in everyone if v is not None)
    if not support:
        return None
    weighed = collections.Counter(v for v in computed if v is not None)
    best = max((weighed[v], support[v]) for v in support)
    return next(v for v in everyone if v is not None and (weighed[v], support[v]) == best)


def ranked_two_valued(computed: list[Hashable | None], written: list[Hashable | None]) -> Hashable | None:
    """``ranked``, except that where every stated result is two-valued (yes/no, true/false) the first listed
    answer stating one decides: agreement on a two-valued answer is weak evidence (the fifth candidate)."""
    everyone = computed + written
    stated = [v for v in everyone if v is not None]
    if stated and all(str(v).lower() in TWO_VALUED_RESULTS for v in stated):
        return stated[0]
    return ranked(computed, written)


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


def graded(task: Task, by: Mapping[str, str]) -> tuple[dict[str, bool], dict[str, Hashable | None]]:
    """Each call's verdict and the result it states; a program call (``p...``) whose program printed nothing
    states none."""
    right = {m: task.grade(t).correct for m, t in by.items()}
    keys = {m: None if m.startswith("p") and "\nAnswer:" not in t else task.grade(t).key for m, t in by.items()}
    return right, keys
