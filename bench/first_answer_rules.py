"""The decision rules of ``after_first_answers: decide``, on graded keys, for replays of recorded calls.

``ranked`` is ``turn_handout._decide_by_first_answers`` on the keys a task's grader gives each answer (None:
the answer states no result), so a replay of recorded first answers decides as the team would have.
"""

from __future__ import annotations

import collections
from collections.abc import Hashable, Mapping

__all__ = ["print_counts", "ranked"]


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


def print_counts(table: Mapping[str, collections.Counter[str]]) -> None:
    """One line per family, then one overall."""
    overall: collections.Counter[str] = collections.Counter()
    for family, counts in sorted(table.items()):
        print(family, dict(counts))
        overall.update(counts)
    print("ALL", dict(overall))
