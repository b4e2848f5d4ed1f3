"""``--tasks probes``: questions a user asks as they come, no answer format asked, of every kind a default team
meets: prose (no result to compute), short facts, letters and words, numbers, yes/no, lists.

Why: the benchmark families all ask for an ``Answer:`` line, and every one has a result; a default team is also
asked for a haiku, an email or a fact. The sixth candidate answered a haiku with a program's ``30`` before its
rule, and five single probes were all that judged it (``results/no-result-asked-preregistered.md``).

Each question has its own grader, written with the question: prose is right when it is prose (at least six
words, no code block), a short answer when its final line names an accepted answer, a number as the team's
reader reads it (``tasks.extract``), a yes/no by its stated result or its first word, a list when every item
is named (in order, where the question asks for an order).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bench.tasks import Grader, Task, Verdict, extract, final_answer
from massgen.actors.coordination.results import stated_result

__all__ = ["probe_tasks"]

_FENCE = "```"
_YES = {"yes": "yes", "true": "yes", "no": "no", "false": "no"}


def _prose(text: str | None) -> Verdict:
    body = (text or "").strip()
    right = len(body.split()) >= 6 and _FENCE not in body
    return Verdict("prose" if right else "not prose", right)


def _named(*accepted: str) -> Grader:
    """Right when the final answer (its ``Answer:`` line, stated result or last line) names one of ``accepted``."""
    patterns = [re.compile(rf"(?<![\w.]){re.escape(a)}(?![\w]|\.\d)", re.IGNORECASE) for a in accepted]

    def grade(text: str | None) -> Verdict:
        answer = final_answer(text)
        return Verdict(answer.lower() or None, any(p.search(answer) for p in patterns))
    return grade


def _number(expected: float) -> Grader:
    def grade(text: str | None) -> Verdict:
        got = extract(text)
        return Verdict(got, got is not None and abs(float(got) - expected) < 1e-9)
    return grade


def _yes_no(expected: str) -> Grader:
    def grade(text: str | None) -> Verdict:
        stated = stated_result(text).lower()
        first = re.sub(r"[^a-z]", "", ((text or "").strip().split() or [""])[0].lower())
        said = _YES.get(stated) or _YES.get(first)
        return Verdict(said, said == expected)
    return grade


def _items(*items: str, ordered: bool = False) -> Grader:
    """Every item named in the reply (``ordered``: in its final answer, in this order)."""
    def grade(text: str | None) -> Verdict:
        where = final_answer(text) if ordered else (text or "")
        places = [m.start() if (m := re.search(rf"\b{re.escape(i)}\b", where, re.IGNORECASE)) else -1 for i in items]
        right = all(p >= 0 for p in places) and (not ordered or places == sorted(places))
        return Verdict(tuple(places) if right else None, right)
    return grade


PROBES: tuple[tuple[str, str, str, Callable[[str | None], Verdict]], ...] = (
    ("prose", "Write a haiku about the sea.", "a haiku", _prose),
    ("prose", "Explain in two sentences why the sky is blue.", "an explanation", _prose),
    ("prose", "Write a short, polite email declining a meeting invitation.", "an email", _prose),
    ("prose", "Summarize the plot of Romeo and Juliet in one sentence.", "a summary", _prose),
    ("prose", "Give me three tips for sleeping better.", "three tips", _prose),
    ("prose", "Describe a cat to someone who has never seen one, in two sentences.", "a description", _prose),
    ("fact", "What is the capital of France?", "Paris", _named("paris")),
    ("fact", 'Who wrote "Pride and Prejudice"?', "Jane Austen", _named("austen")),
    ("fact", "What is the chemical symbol for gold?", "Au", _named("au")),
    ("fact", "How many continents are there?", "7", _named("7", "seven")),
    ("letters", "How many r's are in the word strawberry?", "3", _named("3", "three")),
    ("letters", 'How many vowels are in the word "education"?', "5", _named("5", "five")),
    ("letters", 'Spell the word "banana" backwards.', "ananab", _named("ananab")),
    ("letters", "What is the third letter of the English alphabet?", "C", _named("c")),
    ("number", "Which is larger, 9.11 or 9.9?", "9.9", _number(9.9)),
    ("number", "What is 17 times 23?", "391", _number(391)),
    ("number", "How many days are in a leap year?", "366", _number(366)),
    ("number", "What is 15% of 80?", "12", _number(12)),
    ("yes-no", "Is 91 a prime number?", "no", _yes_no("no")),
    ("yes-no", "Is the Pacific the largest ocean on Earth?", "yes", _yes_no("yes")),
    ("yes-no", "Can penguins fly?", "no", _yes_no("no")),
    ("list", "List the three primary colors of light.", "red, green, blue", _items("red", "green", "blue")),
    ("list", "Sort these words alphabetically: pear, apple, mango.", "apple, mango, pear",
     _items("apple", "mango", "pear", ordered=True)),
    ("list", "Name the planets between the Sun and Earth.", "Mercury, Venus", _items("mercury", "venus")),
)


def probe_tasks(n: int) -> list[Task]:
    """The first ``n`` probes, in the order above (every kind is reached only with ``--n`` 24)."""
    return [Task(f"probe-{i}", question, expected, f"probe-{kind}", grader)
            for i, (kind, question, expected, grader) in enumerate(PROBES[:n])]
