"""``--tasks plain``: questions asked as users type them, no answer format asked, each written with its grader.

Why (issue 48, item 4): a method tuned on sets that end every question with "give your final answer on the last
line as 'Answer: ...'" scored 18 of 32 there against one greedy call's 2, and on 24 questions asked plainly scored
16 against 15, below its own bare agent (17): its reader did not take "1 January 2000 was a Monday." as stating a
result, a program's failed printout presented, and a program that printed a literal counted as computed. Only a set
that never asks for a format shows such failures, so this one asks none.

The set: nine kinds (``fact``, ``letters``, ``numbers``, ``dates``, ``order``, ``yes-no``, ``sequences``, ``prose``:
14 questions each; ``trick``: 15), 127 in all, phrased as people type them (lowercase or not, a question or an
imperative, with or without a question mark). Every computable key is computed here by code beside its question
(``_count``, ``_weekday``, ``_is_prime``, ``sorted``, ``timedelta`` ...), so a key cannot be mistyped; the facts are
unambiguous, stable ones; the trick questions have one definite answer.

The graders read a reply as a person does, not as the team's own reader (``actors/coordination/results.py``) does,
so the two can disagree and the benchmark can catch the reader. A reply's *final* result counts: its last
``Answer:`` line ("Answer: 3", "the answer is 3"), else its last line outside code that states a value of the
question's kind (closing remarks such as "Hope this helps!" aside; a Python code block is no result, a plain output
block is). Within that line the last value counts, except:

- a value the question itself holds (an echo: "391 is 17 times 23" states 391) when another value is there, except
  where the key is the question's own number (the trick "all but 9 die");
- a value negated ("3, not 4"; "Canberra, not Sydney"), or an aside in brackets ("250 cm (2.5 m)");
- numbers: digits first, spelled-out numbers ("three") only where the line has no digits;
- comparisons: a claim is read for what it says ("9.9 is larger than 9.11", "9.11 < 9.9" and "the larger is 9.9"
  answer "which is larger?" with 9.9; "9.9 is smaller than 9.11" answers it with 9.11);
- yes/no: a sentence-opening yes/no (or a printed True/False), or the question's property said or negated ("221 is
  not prime": no), not restated ("to check if 97 is prime" says nothing);
- lists: every item in order; a line naming fewer items than the list names none (a trailing bulleted or numbered
  list is read as one line);
- one trick question is right when the trick is caught anywhere in the reply ("it was Noah, not Moses").

Prose is right when it is prose: enough words, no code, the words the request requires. Each question carries a
typical right reply and a typical wrong one, which ``tests/test_asked_plainly.py`` grades. The graders read what a
reply states, not how it got there: a program's printout that is right is right (whether the team should trust a
literal it printed is the method's question, not the grader's).

The set and its graders were written on 2026-12-06, before any run of any method on it.
"""

from __future__ import annotations

import calendar
import random
import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta

from bench.tasks import Task, Verdict

__all__ = ["KINDS", "NUMERIC_FAMILIES", "QUESTIONS", "Check", "Question", "drawn_tasks", "grader", "plain_tasks",
           "read", "reasoning_gym_plain_tasks"]

Found = list[tuple[int, Hashable]]
"""Values of one kind found in a piece of text: (offset, value), in the order they occur."""


@dataclass(frozen=True)
class Check:
    """How one question's reply is read: ``find`` the values of its kind in a line, ``right`` says whether a
    value is the answer. ``echo``: ignore values the question holds when others are there. ``negatable``:
    drop a value negated ("not 4"); a yes/no reader keeps negation in its value instead. ``lists``: a
    trailing bulleted list is read as one line."""

    find: Callable[[str], Found]
    right: Callable[[Hashable], bool]
    echo: bool = True
    negatable: bool = True
    lists: bool = False
    whole: Callable[[str], Verdict] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Question:
    """One question as asked, its key (computed where it can be), how a reply is read, and a typical right and
    wrong reply (the tests grade both)."""

    kind: str
    text: str
    expected: str | int | float
    check: Check
    right_reply: str
    wrong_reply: str


# -- reading a reply ---------------------------------------------------------------------------------------------

_FENCE = re.compile(r"^\s*(?:```|~~~)\s*([\w+-]*)")
_OUTPUT_TAGS = frozenset({"", "text", "output", "console", "plaintext", "txt"})
_CODE_LIKE = re.compile(r"^\s*(?:def |import |from \S+ import |print\(|return\b|for .+:$|if .+:$|\w+\s*=[^=])")
_CLOSING = re.compile(
    r"^\W*(?:i\s+)?(?:hope\b|let\s+me\s+know\b|feel\s+free\b|if\s+you\s+(?:have|need)\b|happy\s+to\s+help|"
    r"glad\s+to\s+help|good\s+luck|thanks?\b|thank\s+you|cheers\b|you'?re\s+welcome|is\s+there\s+anything\s+else|"
    r"(?:do\s+you\s+have\s+)?any\s+(?:other|more|further)\s+questions|enjoy\b|best\s+regards)",
    re.IGNORECASE,
)
_ANSWER = re.compile(r"\b(?:final\s+)?answer\b\s*(?:is\b\s*[:\uff1a]?|[:=\uff1a])\s*(?P<value>\S.*)$", re.IGNORECASE)
_ITEM = re.compile(r"^\s*(?:[-*\u2022]|\d{1,2}[.)])\s+(?P<item>.+)$")
_NEGATED = re.compile(r"(?:\bnot|n't|\bnever|\brather\s+than|\binstead\s+of)\s+(?:the\s+|a\s+|an\s+|equal\s+to\s+|"
                      r"exactly\s+|in\s+)?[\"'\u201c\u2018*`]*$", re.IGNORECASE)


# Math delimiters are no brackets of an aside: "the product is \\(\\boxed{391}\\)" states 391 (added after the run
# of 13:03 UTC, which showed the reader taking such a value for an aside; every method's replies are read again).
_LATEX = re.compile(r"\\[()\[\]]|\\boxed\{|\$")


def _prose_lines(text: str) -> list[str]:
    """The reply's lines a reader reads for a result: code blocks out (a plain output block stays), emphasis
    off, closing remarks and punctuation-only lines at the end dropped."""
    kept: list[str] = []
    block: list[str] | None = None
    tag = ""
    for raw in text.splitlines():
        fence = _FENCE.match(raw)
        if fence:
            if block is None:
                block, tag = [], fence.group(1).lower()
            else:
                if tag in _OUTPUT_TAGS and not any(_CODE_LIKE.match(line) for line in block):
                    kept += block
                block = None
            continue
        if block is not None:
            block.append(raw)
        elif raw.strip():
            kept.append(raw)
    lines = [_LATEX.sub(" ", re.sub(r"\*\*|__", "", line)).strip() for line in kept if line.strip()]
    while lines and (_CLOSING.match(lines[-1]) or not re.search(r"\w", lines[-1])):
        lines.pop()
    return lines


def _segments(text: str, lists: bool) -> list[str]:
    """Where a reader looks, in order: the last ``Answer:`` line's value, a trailing list read as one line
    (``lists``), then the lines from the last back."""
    lines = _prose_lines(text)
    found: list[str] = []
    for line in reversed(lines):
        match = _ANSWER.search(line)
        if match:
            found.append(match.group("value"))
            break
    if lists:
        items: list[str] = []
        for line in reversed(lines):
            item = _ITEM.match(line)
            if item is None and len(line.split()) > 3:
                break
            items.insert(0, item.group("item") if item else line)
        if len(items) >= 2:
            found.append(", ".join(items))
    return found + list(reversed(lines))


def read(check: Check, question: str, reply: str | None) -> Hashable | None:
    """The final value of the question's kind that a reply states, or None."""
    echoes = {value for _, value in check.find(question)} if check.echo else set()
    for segment in _segments(reply or "", check.lists):
        values = [(at, value) for at, value in check.find(segment)
                  if not (check.negatable and _NEGATED.search(segment[:at]))]
        outside = [(at, value) for at, value in values if segment[:at].count("(") <= segment[:at].count(")")]
        values = outside or values  # "250 cm (2.5 m)": an aside in brackets is not the result
        fresh = [value for _, value in values if value not in echoes]
        if fresh or values:
            return (fresh or [value for _, value in values])[-1]
    return None


def grader(question: Question) -> Callable[[str | None], Verdict]:
    """The question's grader: the value read, and whether it is the answer."""
    check = question.check

    def grade(text: str | None) -> Verdict:
        if check.whole is not None:
            return check.whole(text or "")
        value = read(check, question.text, text)
        return Verdict(value, value is not None and check.right(value))
    return grade


# -- kinds of value ----------------------------------------------------------------------------------------------

_NUMBER = re.compile(r"(?<![\w.])[-\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
_SMALL = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
          "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_SPELLED = re.compile(rf"\b(?:({'|'.join(_TENS)})(?:[-\s]({'|'.join(_SMALL[1:10])}))?|({'|'.join(_SMALL)}))\b",
                      re.IGNORECASE)
_PRONOUN_ONE = re.compile(r"(?:\b(?:the|this|that|which|each|every|any|no|last|first|other|another)\s+$)",
                          re.IGNORECASE)
_CENTS = re.compile(r"\s*(?:cents?\b|\u00a2)", re.IGNORECASE)


def _plain(value: float) -> int | float:
    return int(value) if float(value).is_integer() else round(value, 6)


def numbers(segment: str, cents: bool = False) -> Found:
    """The numbers a line states: digits ("1,440", "-0.79", "negative 0.79", "25%"), else spelled-out ("three",
    "twenty-one"; "one" as a pronoun aside). ``cents``: "5 cents" is 0.05."""
    found: Found = []
    for match in _NUMBER.finditer(segment):
        value = float(match.group().replace(",", "").replace("\u2212", "-"))
        if cents and _CENTS.match(segment, match.end()):
            value /= 100
        if re.search(r"\bnegative\s+$", segment[:match.start()], re.IGNORECASE):
            value = -value  # "negative 0.79"
        found.append((match.start(), _plain(value)))
    if found:
        return found
    for match in _SPELLED.finditer(segment):
        tens, unit, small = (g.lower() if g else None for g in match.groups())
        if small == "one" and _PRONOUN_ONE.search(segment[:match.start()]):
            continue
        if small:
            value = _SMALL.index(small)
        else:
            value = (_TENS.index(tens or "") + 2) * 10 + (_SMALL.index(unit) if unit else 0)
        if cents and _CENTS.match(segment, match.end()):
            found.append((match.start(), _plain(value / 100)))
        else:
            found.append((match.start(), value))
    return found


def number(expected: float, tol: float = 1e-9, cents: bool = False, echo: bool = True) -> Check:
    """A number, right within ``tol``. ``echo`` False where the key is one of the question's own numbers (the
    trick questions "all but 9 die", "5 machines, 5 minutes"): there the last number counts, echoed or not."""
    return Check(lambda s: numbers(s, cents), lambda v: isinstance(v, int | float) and abs(v - expected) <= tol,
                 echo=echo)


_WEEKDAYS = tuple(calendar.day_name)
_WEEKDAY = re.compile(rf"\b({'|'.join(_WEEKDAYS)})s?\b", re.IGNORECASE)


def weekday(expected: str) -> Check:
    """A day of the week, by its full name in any case."""
    return Check(lambda s: [(m.start(), m.group(1).lower()) for m in _WEEKDAY.finditer(s)],
                 lambda v: v == expected.lower())


_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DATE_FORMS = (
    re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})\b"),
    re.compile(rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?\s+(?P<m>{_MONTH})\.?(?:,?\s+(?P<y>\d{{4}}))?\b",
               re.IGNORECASE),
    re.compile(rf"\b(?P<m>{_MONTH})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<y>\d{{4}}))?\b", re.IGNORECASE),
)
_SLASHED = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b")


def dates(segment: str) -> Found:
    """The dates a line names: "2024-06-09", "9 June 2024", "9th of June", "June 9, 2024", "27/12/2024" as (month,
    day, year or 0)."""
    found: dict[int, Hashable] = {}
    for form in _DATE_FORMS:
        for m in form.finditer(segment):
            month = m.group("m")
            month_number = int(month) if month.isdigit() else _MONTHS[month.lower()]
            if 1 <= month_number <= 12 and 1 <= int(m.group("d")) <= 31:
                found.setdefault(m.start(), (month_number, int(m.group("d")), int(m.group("y") or 0)))
    for m in _SLASHED.finditer(segment):  # 27/12/2024 or 12/27/2024; 06/09/2024 could be either, and is not read
        first, second, year = (int(g) for g in m.groups())
        if first > 12 >= second or second > 12 >= first:
            month_number, day = (second, first) if first > 12 else (first, second)
            found.setdefault(m.start(), (month_number, day, year))
    return sorted(found.items(), key=lambda pair: pair[0])


def on_date(expected: date) -> Check:
    """A date: month and day right, and the year right when one is given."""
    def right(value: Hashable) -> bool:
        if not isinstance(value, tuple):
            return False
        month, day, year = value
        return (month, day) == (expected.month, expected.day) and year in (0, expected.year)
    return Check(dates, right)


def markers(right: Sequence[str], wrong: Sequence[str] = ()) -> Check:
    """Named answers: the last phrase (regex) of ``right`` or ``wrong`` the reply's final line uses, negated ones
    aside ("Canberra, not Sydney" names Canberra)."""
    patterns = [(re.compile(p, re.IGNORECASE), True) for p in right] + \
               [(re.compile(p, re.IGNORECASE), False) for p in wrong]

    def find(segment: str) -> Found:
        hits = [(m.start(), (ok, m.group().lower())) for p, ok in patterns for m in p.finditer(segment)]
        return sorted(hits, key=lambda hit: hit[0])
    return Check(find, lambda v: isinstance(v, tuple) and bool(v[0]), echo=False)


def named(*accepted: str, wrong: Sequence[str] = ()) -> Check:
    """A name or word among ``accepted`` (whole words, any case); ``wrong`` names the usual mistakes."""
    return markers([rf"(?<![\w-]){re.escape(a)}(?![\w-])" for a in accepted],
                   [rf"(?<![\w-]){re.escape(w)}(?![\w-])" for w in wrong])


_LETTER = re.compile(r"['\u2018\"\u201c`]([A-Za-z])['\u2019\"\u201d`]"  # a quoted letter: 'e'
                     r"|(?<![\w'\u2019.-])([A-Za-z])(?![\w'\u2019-]|\.\w)")  # a bare one: "N comes after M"


def letters(segment: str) -> Found:
    """The single letters a line names ("'e'", "N", "e."), less an article or "I" that opens a phrase."""
    found: Found = []
    for m in _LETTER.finditer(segment):
        quoted, bare = m.group(1), m.group(2)
        if bare in ("a", "A", "I") and re.match(r"\s+[A-Za-z]{2,}", segment[m.end():]):
            continue
        found.append((m.start(), (quoted or bare).lower()))
    return found


def letter(expected: str) -> Check:
    """One letter, any case."""
    return Check(letters, lambda v: v == expected.lower())


def letter_set(expected: str) -> Check:
    """The letters a reply lists (after its last colon, if it has one), as a set: "s, t, r, n, g, t, h", or one a
    line in a trailing bulleted list."""
    def find(segment: str) -> Found:
        tail = segment.rsplit(":", 1)[-1] if ":" in segment else segment
        named_letters = frozenset(v for _, v in letters(tail))
        return [(0, named_letters)] if named_letters else []
    return Check(find, lambda v: v == frozenset(expected.lower()), echo=False, lists=True)


def _distance(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def word(expected: str) -> Check:
    """A written word (a reversal, a spelling): the last word near it (an anagram, or two edits away), letters
    joined when spelled out ("n-o-m-e-l"); right only when exact."""
    target = expected.lower()

    def find(segment: str) -> Found:
        joined = re.sub(r"(?<=\b[A-Za-z])[-\s,]+(?=[A-Za-z]\b)", "", segment)
        found: Found = []
        for m in re.finditer(r"[A-Za-z]+", joined):
            token = m.group().lower()
            if sorted(token) == sorted(target) or _distance(token, target) <= 2:
                found.append((m.start(), token))
        return found
    return Check(find, lambda v: v == target)


def _as_float(text: str) -> float:
    return float(text.replace(",", ""))


def sequence(expected: Sequence[float | str]) -> Check:
    """Items in order: numbers, or words from the question's own list. A line naming fewer items than the list
    states no list; one naming more is read after its last ":", "is", "are", "get", "gives", "becomes", "=" or
    arrow."""
    words = not isinstance(expected[0], int | float)
    vocab = re.compile(rf"\b({'|'.join(re.escape(str(e)) for e in expected)})\b", re.IGNORECASE) if words else None
    want = tuple(str(e).lower() for e in expected) if words else tuple(float(e) for e in expected)

    def items(text: str) -> tuple[Hashable, ...]:
        if vocab is not None:
            return tuple(m.group(1).lower() for m in vocab.finditer(text))
        return tuple(_as_float(m.group()) for m in _NUMBER.finditer(text.replace("\u2212", "-")))

    def find(segment: str) -> Found:
        got = items(segment)
        if len(got) < len(want):
            return []  # "The smallest is 3" under the sorted list names no list
        if len(got) != len(want):
            cut = max((m.end() for m in re.finditer(r":|\b(?:is|are|get|gives?|becomes?)\b|\u2192|->|=", segment)),
                      default=0)
            got = items(segment[cut:]) if cut else got
        return [(0, got)] if got else []
    return Check(find, lambda v: v == want, echo=False, lists=True)


_BIG = ("larger|greater|bigger|higher|more|heavier|longer|taller|older|largest|greatest|biggest|highest|heaviest|"
        "longest|tallest|oldest|most")
_SMALL_WORDS = ("smaller|less|lesser|lower|fewer|lighter|shorter|younger|smallest|least|lowest|lightest|shortest|"
                "youngest")


def choice(options: Sequence[str], expected: str, ask: str = "big", asides: bool = False) -> Check:
    """Which of ``options`` is the largest (``ask`` "big") or smallest ("small"), read from the claim the line
    makes ("9.9 is larger than 9.11", "9.11 < 9.9", "the larger is 9.9"; "9.9 is smaller" says 9.9 is not the
    larger), else the option it names last. Numeric options match any equal number (9.90 is 9.9). ``asides``
    (the second set's, ``bench/asked_plainly_2.py``): claims are read first with the line's bracketed asides dropped
    ("the Statue of Liberty (1886) is older than the Eiffel Tower (1889)"); off, a line reads as it always did."""
    numeric = all(re.fullmatch(r"-?\d+(?:\.\d+)?", o) for o in options)

    def tagged(segment: str) -> str:
        if numeric:
            values = [float(o) for o in options]
            return _NUMBER.sub(lambda m: f" OPT{values.index(_as_float(m.group()))} "
                               if _as_float(m.group()) in values else m.group(), segment)
        for i, option in enumerate(options):  # "kilometer|kilometre|km": one option, spelled any of these ways
            alternatives = "|".join(re.escape(a) for a in option.split("|"))
            segment = re.sub(rf"\b(?:{alternatives})s?\b", f" OPT{i} ", segment, flags=re.IGNORECASE)
        return segment

    def pick(i: int, big: bool) -> int | None:
        """The option a claim names for the question's direction."""
        if big == (ask == "big"):
            return i
        return 1 - i if len(options) == 2 else None

    claims_of = (
        (re.compile(rf"OPT(\d)\s*\W?\s*(?:is|are|was|has|weighs|comes|would be)\s+(?:\w+\s+){{0,2}}?(?:({_BIG})|"
                    rf"({_SMALL_WORDS}))\b(?:\s+than\s+(?:\w+\s+){{0,2}}?OPT(\d))?", re.IGNORECASE), "claim"),
        (re.compile(rf"\b(?:({_BIG})|({_SMALL_WORDS}))\b(?:\s+\w+){{0,4}}?\s*(?:is|:|=|would be|will be)\s+"
                    rf"(?:\w+\s+)?OPT(\d)", re.IGNORECASE), "announce"),
        (re.compile(r"OPT(\d)\s*([<>])\s*OPT(\d)"), "sign"),
    )

    def claims_in(text: str) -> Found:
        claims: Found = []
        for pattern, shape in claims_of:
            for m in pattern.finditer(text):
                if shape == "claim":  # "9.11 is not larger than 9.9" claims 9.11 is the smaller
                    negated = re.search(r"\bnot\b|n't\b", m.group(), re.IGNORECASE) is not None
                    chosen = pick(int(m.group(1)), bool(m.group(2)) != negated)
                elif shape == "announce":
                    chosen = pick(int(m.group(3)), bool(m.group(1)))
                else:
                    larger = m.group(1) if m.group(2) == ">" else m.group(3)
                    chosen = pick(int(larger), True)
                if chosen is not None:
                    claims.append((m.start(), options[chosen]))
        return claims

    def find(segment: str) -> Found:
        text = tagged(segment)
        claims = claims_in(text)
        if asides:  # "100 meters (about 109 yards) is longer": the aside's option makes no claim
            claims = claims_in(re.sub(r"\s*\([^()]*\)", "", text)) or claims
        if claims:
            return sorted(claims, key=lambda c: c[0])
        return [(m.start(), options[int(m.group(1))]) for m in re.finditer(r"OPT(\d)", text)]
    return Check(find, lambda v: v == expected, echo=False)


_SAID = re.compile(r"(?:^|[.!?:;]\s*|\bso,?\s+|\bthus,?\s+)[\"'*(]*(yes|yep|yeah|correct|true|no|nope|false)\b",
                   re.IGNORECASE)
_VERB = re.compile(r"\b(?:is|are|was|were|be|been|isn't|aren't|wasn't|weren't|have|has|haven't|hasn't|do|does|"
                   r"don't|doesn't|can|can't|cannot|it's|that's)\b|\w'(?:s|re)\b", re.IGNORECASE)
_CONDITIONAL = re.compile(r"\b(?:if|whether|check|determine|find out|see)\b", re.IGNORECASE)
_NEGATION = re.compile(r"(?:\bnot\b|n't\b|\bnever\b|\bno\b|\bneither\b)[^.,;:!?]{0,30}$", re.IGNORECASE)


def yes_no(expected: str, prop: str, yes_words: Sequence[str] = (), no_words: Sequence[str] = ()) -> Check:
    """Yes or no: a yes/no that opens a sentence, the question's property ``prop`` (regex) said or negated by a
    verb before it in its clause ("221 is not prime" says no; "a prime has two divisors" says nothing), or a word
    that means one ("composite": no); the last in the final line counts."""
    prop_re = re.compile(prop, re.IGNORECASE)
    yes_re = [re.compile(p, re.IGNORECASE) for p in yes_words]
    no_re = [re.compile(p, re.IGNORECASE) for p in no_words]

    def find(segment: str) -> Found:
        found: Found = []
        for m in _SAID.finditer(segment):
            found.append((m.start(1), "yes" if m.group(1).lower() in ("yes", "yep", "yeah", "correct", "true")
                          else "no"))
        for m in prop_re.finditer(segment):
            clause = re.split(r"[.,;:!?\u2014]", segment[:m.start()])[-1]
            # "1 is not prime" says it; "a prime has two divisors" and "to check if 221 is prime" only use the word
            if _VERB.search(clause) and not _CONDITIONAL.search(clause):
                found.append((m.start(), "no" if _NEGATION.search(clause) else "yes"))
        found += [(m.start(), "yes") for p in yes_re for m in p.finditer(segment)]
        found += [(m.start(), "no") for p in no_re for m in p.finditer(segment)]
        return sorted(found, key=lambda f: f[0])
    return Check(find, lambda v: v == expected, echo=False, negatable=False)


def prose(min_words: int, *required: str) -> Check:
    """Prose: at least ``min_words`` words, no code block or line of code, and each ``required`` regex present."""
    def whole(text: str) -> Verdict:
        body = text.strip()
        code = "```" in body or any(_CODE_LIKE.match(line) and "(" in line for line in body.splitlines())
        ok = len(body.split()) >= min_words and not code and all(
            re.search(r, body, re.IGNORECASE) for r in required)
        return Verdict("prose" if ok else "not prose", ok)
    return Check(lambda s: [], lambda v: False, whole=whole)


def caught(*right: str) -> Check:
    """A trick caught anywhere in the reply (``right``: regexes), whatever else it says: "Moses took none; it was
    Noah's ark" catches the trick even if it goes on to count Noah's animals."""
    patterns = [re.compile(p, re.IGNORECASE) for p in right]

    def whole(text: str) -> Verdict:
        ok = any(p.search(text) for p in patterns)
        return Verdict("caught" if ok else "missed", ok)
    return Check(lambda s: [], lambda v: False, whole=whole)


# -- keys, computed ----------------------------------------------------------------------------------------------


def _count(word_: str, letter_: str) -> int:
    return word_.lower().count(letter_.lower())


def _vowels(word_: str) -> int:
    return sum(c in "aeiou" for c in word_.lower())


def _consonants(word_: str) -> str:
    return "".join(c for c in word_.lower() if c.isalpha() and c not in "aeiou")


def _weekday(year: int, month: int, day: int) -> str:
    return calendar.day_name[date(year, month, day).weekday()]


def _is_prime(n: int) -> bool:
    return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _fib(n: int) -> int:
    a, b = 1, 1
    for _ in range(n - 1):
        a, b = b, a + b
    return a


def _long(day: date) -> str:
    return f"{day.day} {calendar.month_name[day.month]} {day.year}"


def _listed(values: Sequence[object]) -> str:
    return ", ".join(str(v) for v in values)


_STRAWBERRY = _count("strawberry", "r")
_MISSISSIPPI = _count("Mississippi", "s")
_EXCELLENCE = _count("excellence", "e")
_ONOMATOPOEIA = _vowels("onomatopoeia")
_ORCHESTRA_5 = "orchestra"[4]
_RHYTHM_LAST = "rhythm"[-1]
_AFTER_M = chr(ord("m") + 1)
_LONG_WORD = len("antidisestablishmentarianism")
_STRENGTH = _consonants("strength")
_EDUCATION = "".join(c for c in "education" if c in "aeiou")
_FOX = "the quick brown fox jumps over the lazy dog"
_FOX_WORDS = len(_FOX.split(" "))
_FAHRENHEIT = (100 - 32) * 5 / 9
_MEAN = (4 + 8 + 15 + 16 + 23 + 42) / 6
_NINE_ELEVEN = round(9.11 - 9.9, 2)
_DAYS_2024 = (date(2024, 3, 1) - date(2024, 1, 1)).days
_DAYS_2025 = (date(2025, 12, 25) - date(2025, 3, 15)).days
_DAYS_25_YEARS = (date(2025, 1, 1) - date(2000, 1, 1)).days
_AFTER_100 = date(2024, 3, 1) + timedelta(days=100)
_BEFORE_45 = date(2025, 2, 10) - timedelta(days=45)
_TWO_WEEKS = date(2025, 12, 25) + timedelta(days=14)
_WEDNESDAY_100 = calendar.day_name[(list(calendar.day_name).index("Wednesday") + 100) % 7]
_FEB_2028 = calendar.monthrange(2028, 2)[1]
_NEXT_PRIME = next(n for n in range(14, 100) if _is_prime(n))
_SORT_1 = sorted([12, 3, 45, 7, 19])
_SORT_2 = sorted([0.5, 0.25, 0.75, 0.05], reverse=True)
_SORT_3 = sorted(["banana", "cherry", "apple", "date"])
_SORT_4 = sorted(["zebra", "mango", "kiwi", "apple", "lemon"])
_SORT_5 = sorted([2.5, 2.05, 2.55, 2.505])
_SORT_6 = sorted(["Olivia", "Liam", "Emma", "Noah", "Ava"])
_CODE_REPLY = "```python\nprint('done')\n```"


def _q(kind: str, text: str, expected: str | float, check: Check, right: str, wrong: str) -> Question:
    return Question(kind, text, expected, check, right, wrong)


QUESTIONS: tuple[Question, ...] = (
    # -- fact: short, stable facts
    _q("fact", "what's the capital of australia", "Canberra", named("Canberra", wrong=("Sydney", "Melbourne")),
       "The capital of Australia is Canberra (not Sydney, as many people think).",
       "Sydney is the capital of Australia."),
    _q("fact", "Who wrote 1984?", "George Orwell", named("Orwell", "Eric Blair", wrong=("Huxley", "Bradbury")),
       "1984 was written by George Orwell and published in 1949.", "Aldous Huxley wrote 1984."),
    _q("fact", "What is the chemical symbol for sodium?", "Na", named("Na", wrong=("So", "Sd", "Sn")),
       "Sodium's chemical symbol is Na, from its Latin name natrium.", "The chemical symbol for sodium is So."),
    _q("fact", "how many legs does a spider have", 8, number(8), "Spiders have 8 legs.", "A spider has 6 legs."),
    _q("fact", "What's the boiling point of water in Fahrenheit?", 212, number(212),
       "Water boils at 212 °F at sea level (100 °C).", "Water boils at 100 degrees."),
    _q("fact", "Which planet is the biggest in our solar system", "Jupiter",
       named("Jupiter", wrong=("Saturn", "Earth", "Neptune", "Uranus")),
       "Jupiter is the largest planet in the solar system.", "Saturn."),
    _q("fact", "who painted the mona lisa", "Leonardo da Vinci",
       named("Leonardo", "da Vinci", wrong=("Michelangelo", "Raphael", "Van Gogh", "Botticelli")),
       "The Mona Lisa was painted by Leonardo da Vinci in the early 1500s.", "It was painted by Michelangelo."),
    _q("fact", "How many bones are in the adult human body?", 206, number(206),
       "An adult human body has 206 bones.", "There are about 300 bones in the adult body."),
    _q("fact", "What is the SI unit of force", "newton",
       named("newton", "newtons", wrong=("joule", "joules", "pascal", "watt", "kilogram")),
       "The SI unit of force is the newton (N).", "Force is measured in joules."),
    _q("fact", "which planet is called the red planet?", "Mars", named("Mars", wrong=("Jupiter", "Venus", "Mercury")),
       "Mars is known as the Red Planet because of the iron oxide on its surface.", "Venus is the red planet."),
    _q("fact", "What's the chemical formula for water", "H2O",
       named("H2O", "H\u2082O", wrong=("HO", "HO2", "H2O2", "CO2")),
       "The chemical formula for water is H2O: two hydrogen atoms and one oxygen atom.\n\n"
       "Let me know if you need more!",
       "Water is H2O2."),
    _q("fact", "who came up with the theory of relativity?", "Albert Einstein",
       named("Einstein", wrong=("Newton", "Galileo", "Hawking", "Bohr")),
       "Albert Einstein developed the theory of relativity (special in 1905, general in 1915).",
       "Isaac Newton came up with it."),
    _q("fact", "How many minutes are there in a day?", 24 * 60, number(24 * 60),
       f"24 hours \u00d7 60 minutes = {24 * 60:,} minutes in a day.", "There are 1,400 minutes in a day."),
    _q("fact", "freezing point of water in celsius?", 0, number(0),
       "Water freezes at 0 °C (32 °F).", "Water freezes at 32 degrees."),
    # -- letters: counting, reversing, naming letters
    _q("letters", "how many r's in strawberry", _STRAWBERRY, number(_STRAWBERRY),
       f"There are {_STRAWBERRY} r's in strawberry: st-r-awbe-r-r-y.",
       f"The letter r appears {_STRAWBERRY - 1} times in strawberry."),
    _q("letters", "How many s's are in Mississippi?", _MISSISSIPPI, number(_MISSISSIPPI),
       f"```python\nprint('mississippi'.count('s'))\n```\nOutput: {_MISSISSIPPI}\n\nAnswer: {_MISSISSIPPI}",
       "NameError: name 'mississippi' is not defined"),
    _q("letters", "count the e's in excellence", _EXCELLENCE, number(_EXCELLENCE),
       f"The word \"excellence\" has {_EXCELLENCE} e's.", f"There are {_EXCELLENCE - 1} e's in excellence."),
    _q("letters", 'How many vowels are in the word "onomatopoeia"?', _ONOMATOPOEIA, number(_ONOMATOPOEIA),
       f"o, o, a, o, o, e, i, a — that's {_ONOMATOPOEIA} vowels.", f"Onomatopoeia has {_ONOMATOPOEIA - 2} vowels."),
    _q("letters", "spell lemon backwards", "nomel", word("nomel"),
       "Lemon spelled backwards is nomel.", "Lemon backwards is nomell."),
    _q("letters", "What is 'stressed' spelled backwards?", "desserts", word("desserts"),
       "\"Stressed\" spelled backwards is \"desserts\"!", "It's dessert."),
    _q("letters", "reverse the word algorithm", "mhtirogla", word("mhtirogla"),
       "Reversed, algorithm becomes: mhtirogla", "```python\nprint('mhtirogla')\n```"),
    _q("letters", "what's the 5th letter of the word orchestra", _ORCHESTRA_5, letter(_ORCHESTRA_5),
       f"The 5th letter of orchestra is '{_ORCHESTRA_5}'.", "The fifth letter is 'h'."),
    _q("letters", "What is the last letter of the word rhythm?", _RHYTHM_LAST, letter(_RHYTHM_LAST),
       f"The last letter of rhythm is {_RHYTHM_LAST.upper()}.", "The last letter is 'h'."),
    _q("letters", "which letter comes after m in the alphabet", _AFTER_M, letter(_AFTER_M),
       f"{_AFTER_M.upper()} comes after M.", "The letter after M is O."),
    _q("letters", "How many letters are in antidisestablishmentarianism?", _LONG_WORD, number(_LONG_WORD),
       f"\"Antidisestablishmentarianism\" has {_LONG_WORD} letters.", "It has 25 letters."),
    _q("letters", "What are the consonants in the word strength?", _STRENGTH, letter_set(_STRENGTH),
       f"The consonants in strength are {', '.join(_STRENGTH[:-1])} and {_STRENGTH[-1]}.",
       "The consonants are s, t, r, n and g."),
    _q("letters", 'list the vowels in "education"', _EDUCATION, letter_set(_EDUCATION),
       f"The vowels in education are {', '.join(_EDUCATION[:-1])} and {_EDUCATION[-1]}.", "e, u, a, o"),
    _q("letters", f"How many words are in the sentence '{_FOX}'?", _FOX_WORDS,
       number(_FOX_WORDS), f"That sentence has {_FOX_WORDS} words.", "It has 8 words."),
    # -- numbers: arithmetic, percentages, conversions, word problems
    _q("numbers", "What is 17 times 23?", 17 * 23, number(17 * 23),
       f"{17 * 23} is 17 times 23.", "17 \u00d7 23 = 381"),
    _q("numbers", "what's 15% of 240", 240 * 15 // 100, number(240 * 15 / 100),
       f"15% of 240 is {240 * 15 // 100}.", "15% of 240 is 24."),
    _q("numbers", "what is 2 + 3 * 4", 2 + 3 * 4, number(2 + 3 * 4),
       f"Multiplication comes first: 3 * 4 = 12, then 2 + 12 = {2 + 3 * 4}.", "2 + 3 = 5, 5 * 4 = 20"),
    _q("numbers", "How much is 100 - 8 * 12 / 4?", _plain(100 - 8 * 12 / 4), number(100 - 8 * 12 / 4),
       f"8 * 12 = 96, 96 / 4 = 24, and 100 - 24 = {_plain(100 - 8 * 12 / 4)}.",
       "100 - 8 = 92, 92 * 12 = 1104, 1104 / 4 = 276"),
    _q("numbers", "How many centimeters are in 2.5 meters?", _plain(2.5 * 100), number(2.5 * 100),
       "2.5 meters is 250 centimeters.", "2.5 meters = 25 cm"),
    _q("numbers", "convert 100 degrees fahrenheit to celsius", round(_FAHRENHEIT, 2), number(_FAHRENHEIT, tol=0.25),
       f"100 °F is about {_FAHRENHEIT:.1f} °C.", "100°F is 212°C."),
    _q("numbers", "What's the average of 4, 8, 15, 16, 23 and 42?", _plain(_MEAN), number(_MEAN),
       f"The sum is 108 and there are 6 numbers, so the average is {_plain(_MEAN)}.", "The average is 16."),
    _q("numbers", "a shirt costs $40 and is 25% off. how much do I pay?", 30, number(40 * 0.75),
       "You pay $30 (you save $10).", "The discount is $10."),
    _q("numbers", "What is 9.11 minus 9.9?", _NINE_ELEVEN, number(_NINE_ELEVEN, tol=1e-6),
       f"9.11 \u2212 9.9 = \u2212{abs(_NINE_ELEVEN)}", "9.11 - 9.9 = 0.21"),
    _q("numbers", "If I drive 180 km in 2 hours, what's my average speed?", 90, number(180 / 2),
       "Your average speed is 90 km/h.", "It's 360 km/h."),
    _q("numbers", "what is 12 squared minus 5 squared", 12 ** 2 - 5 ** 2, number(12 ** 2 - 5 ** 2),
       f"144 - 25 = {12 ** 2 - 5 ** 2}", "12 squared minus 5 squared is 49."),
    _q("numbers", "How many seconds are in 3 hours?", 3 * 3600, number(3 * 3600),
       f"3 hours is {3 * 3600:,} seconds.", "There are 180 seconds in 3 hours."),
    _q("numbers", "What percent of 80 is 20?", _plain(20 / 80 * 100), number(20 / 80 * 100),
       f"20 is {_plain(20 / 80 * 100)}% of 80.", "20 is 4% of 80."),
    _q("numbers", "What is 7 factorial?", 7 * 6 * 5 * 4 * 3 * 2, number(7 * 6 * 5 * 4 * 3 * 2),
       f"7! = 7 \u00d7 6 \u00d7 5 \u00d7 4 \u00d7 3 \u00d7 2 \u00d7 1 = {7 * 6 * 5 * 4 * 3 * 2:,}", "7! = 49"),
    # -- dates: weekdays, spans, leap years, date arithmetic
    _q("dates", "What day of the week was 14 July 1789?", _weekday(1789, 7, 14), weekday(_weekday(1789, 7, 14)),
       f"14 July 1789 was a {_weekday(1789, 7, 14)}.", "14 July 1789 was a Monday."),
    _q("dates", "what day of the week is christmas 2030", _weekday(2030, 12, 25), weekday(_weekday(2030, 12, 25)),
       f"Christmas Day 2030 falls on a {_weekday(2030, 12, 25)}.", "It falls on a Thursday."),
    _q("dates", "Which weekday was 1 January 2000?", _weekday(2000, 1, 1), weekday(_weekday(2000, 1, 1)),
       f"1 January 2000 was a {_weekday(2000, 1, 1)}.", "1 January 2000 was a Monday."),
    _q("dates", "What day of the week will March 1, 2100 be?", _weekday(2100, 3, 1), weekday(_weekday(2100, 3, 1)),
       f"It will be a {_weekday(2100, 3, 1)}.", "March 1, 2100 will be a Sunday."),
    _q("dates", "How many days are there between 1 January 2024 and 1 March 2024?", _DAYS_2024, number(_DAYS_2024),
       f"2024 is a leap year, so January (31) + February (29) = {_DAYS_2024} days.",
       "January has 31 days and February 28, so 59 days."),
    _q("dates", "how many days from March 15 2025 to December 25 2025", _DAYS_2025, number(_DAYS_2025),
       f"There are {_DAYS_2025} days from March 15 to December 25, 2025.", "There are 290 days."),
    _q("dates", "Is 2100 a leap year?", _yes(calendar.isleap(2100)),
       yes_no(_yes(calendar.isleap(2100)), r"leap\s+year"),
       "No. 2100 is divisible by 100 but not by 400, so it is not a leap year.",
       "Yes, 2100 is a leap year because it is divisible by 4."),
    _q("dates", "was 2000 a leap year", _yes(calendar.isleap(2000)),
       yes_no(_yes(calendar.isleap(2000)), r"leap\s+year"),
       "Yes — 2000 is divisible by 400, so it was a leap year.", "No, century years aren't leap years."),
    _q("dates", "Was 1900 a leap year?", _yes(calendar.isleap(1900)),
       yes_no(_yes(calendar.isleap(1900)), r"leap\s+year"),
       "1900 was not a leap year: it is divisible by 100 but not by 400.", "Yes, 1900 was a leap year."),
    _q("dates", "What date is 100 days after 1 March 2024?", _long(_AFTER_100), on_date(_AFTER_100),
       f"100 days after 1 March 2024 is {_long(_AFTER_100)}.", "It's 10 June 2024."),
    _q("dates", "what's the date 45 days before 10 February 2025", _long(_BEFORE_45), on_date(_BEFORE_45),
       f"{calendar.month_name[_BEFORE_45.month]} {_BEFORE_45.day}, {_BEFORE_45.year} is 45 days before "
       "10 February 2025.", "It's December 28, 2024."),
    _q("dates", "If today is Wednesday, what day will it be in 100 days?", _WEDNESDAY_100, weekday(_WEDNESDAY_100),
       f"100 = 14 weeks + 2 days, so it will be {_WEDNESDAY_100}.", "It will be Wednesday again."),
    _q("dates", "How many days are in February 2028?", _FEB_2028, number(_FEB_2028),
       f"2028 is a leap year, so February 2028 has {_FEB_2028} days.", "February 2028 has 28 days."),
    _q("dates", "What date is two weeks after 25 December 2025?", _long(_TWO_WEEKS), on_date(_TWO_WEEKS),
       f"Two weeks after Christmas 2025 is {calendar.month_name[_TWO_WEEKS.month]} {_TWO_WEEKS.day}, "
       f"{_TWO_WEEKS.year}.", "It's January 7, 2026."),
    # -- order: sorting, largest/smallest, decimal comparisons
    _q("order", "Put these in order from smallest to largest: 12, 3, 45, 7, 19", _listed(_SORT_1), sequence(_SORT_1),
       f"Here they are from smallest to largest: {_listed(_SORT_1)}", "3"),
    _q("order", "sort these from largest to smallest: 0.5, 0.25, 0.75, 0.05", _listed(_SORT_2), sequence(_SORT_2),
       "From largest to smallest:\n" + "\n".join(f"{i}. {v}" for i, v in enumerate(_SORT_2, 1)),
       "0.75, 0.5, 0.05, 0.25"),
    _q("order", "Sort alphabetically: banana, cherry, apple, date", _listed(_SORT_3), sequence(_SORT_3),
       f"Sorted alphabetically: {_listed(_SORT_3)}.", "apple, banana, date, cherry"),
    _q("order", "can you put these words in alphabetical order? zebra, mango, kiwi, apple, lemon", _listed(_SORT_4),
       sequence(_SORT_4), "Sure! In alphabetical order:\n\n" + "\n".join(f"- {w}" for w in _SORT_4),
       "apple, kiwi, mango, lemon, zebra"),
    _q("order", "Which is larger, 9.11 or 9.9?", "9.9", choice(["9.11", "9.9"], "9.9"),
       "9.9 is larger than 9.11, because 0.90 > 0.11.", "9.11 is larger than 9.9."),
    _q("order", "which is bigger: 3.45 or 3.5", "3.5", choice(["3.45", "3.5"], "3.5"),
       "3.45 is smaller than 3.5, so 3.5 is bigger.", "3.45 is bigger, since 45 > 5."),
    _q("order", "Which is smaller, 0.7 or 0.65?", "0.65", choice(["0.7", "0.65"], "0.65", ask="small"),
       "0.65 is smaller than 0.7.", "0.7 is smaller."),
    _q("order", "what's the largest of these: 23, 7, 91, 45, 18", "91", choice(["23", "7", "91", "45", "18"], "91"),
       "The largest is 91.", "45 is the largest."),
    _q("order", "Which is the smallest number: -3, 2, -7, 0?", "-7", choice(["-3", "2", "-7", "0"], "-7", ask="small"),
       "The smallest number is -7.", "0 is the smallest."),
    _q("order", "which is longer, a mile or a kilometer", "mile",
       choice(["mile", "kilometer|kilometre|km"], "mile"),
       "A mile is longer: about 1.61 kilometers.", "A kilometer is longer than a mile."),
    _q("order", "put 2.5, 2.05, 2.55, 2.505 in ascending order", _listed(_SORT_5), sequence(_SORT_5),
       f"Ascending: {_listed(_SORT_5)}", "2.05, 2.5, 2.55, 2.505"),
    _q("order", "Which is heavier, a kilogram or a pound?", "kilogram",
       choice(["kilogram|kilo|kg", "pound|lb"], "kilogram|kilo|kg"),
       "A kilogram is heavier (1 kg is about 2.2 pounds).", "A pound is heavier."),
    _q("order", "Which number is biggest: 1.5, 1.45, 1.405?", "1.5", choice(["1.5", "1.45", "1.405"], "1.5"),
       "1.5 is the biggest (1.50 > 1.45 > 1.405).", "1.45 is the biggest."),
    _q("order", "Sort these names alphabetically: Olivia, Liam, Emma, Noah, Ava", _listed(_SORT_6), sequence(_SORT_6),
       f"{_listed(_SORT_6)}", "Ava, Emma, Noah, Liam, Olivia"),
    # -- yes-no: properties of numbers and words, facts
    _q("yes-no", "is 221 prime", _yes(_is_prime(221)),
       yes_no(_yes(_is_prime(221)), r"\bprime\b", no_words=[r"\bcomposite\b"]),
       "No. 221 = 13 \u00d7 17, so it is not prime.", "Yes, 221 is a prime number."),
    _q("yes-no", "Is 97 a prime number?", _yes(_is_prime(97)),
       yes_no(_yes(_is_prime(97)), r"\bprime\b", no_words=[r"\bcomposite\b"]),
       "Yes, 97 is prime: it has no divisors other than 1 and itself.", "No, 97 is not prime."),
    _q("yes-no", "Is 1001 prime?", _yes(_is_prime(1001)),
       yes_no(_yes(_is_prime(1001)), r"\bprime\b", no_words=[r"\bcomposite\b"]),
       "1001 = 7 \u00d7 11 \u00d7 13, so it's composite.", "Yes, 1001 is prime."),
    _q("yes-no", "is 1 a prime number", _yes(_is_prime(1)),
       yes_no(_yes(_is_prime(1)), r"\bprime\b", no_words=[r"\bcomposite\b"]),
       "No, 1 is not a prime number; a prime has exactly two divisors.", "Yes, 1 is prime."),
    _q("yes-no", "Is 'racecar' a palindrome?", _yes("racecar"[::-1] == "racecar"),
       yes_no(_yes("racecar"[::-1] == "racecar"), r"\bpalindrom"),
       "Yes! \"racecar\" reads the same forwards and backwards, so it's a palindrome.",
       "No, racecar is not a palindrome."),
    _q("yes-no", "is the word palindrome a palindrome?", _yes("palindrome"[::-1] == "palindrome"),
       yes_no(_yes("palindrome"[::-1] == "palindrome"), r"\bpalindrome\b(?!['\"\u2019\u201d])"),
       "No — reversed it is \"emordnilap\", so \"palindrome\" is not a palindrome.", "Yes, it is a palindrome."),
    _q("yes-no", "Is a whale a fish?", "no", yes_no("no", r"\bfish\b", no_words=[r"\bmammals?\b"]),
       "No, a whale is a mammal, not a fish.", "Yes, whales are fish."),
    _q("yes-no", "Do spiders have six legs?", "no",
       yes_no("no", r"\b(?:six|6) legs\b", no_words=[r"\b(?:eight|8) legs\b"]),
       "No, spiders have eight legs; insects have six.", "Yes, spiders have six legs."),
    _q("yes-no", "is the sun a star", "yes", yes_no("yes", r"\ba star\b", no_words=[r"\ba planet\b"]),
       "Yes, the Sun is a star — a G-type main-sequence star.", "No, the Sun is a planet."),
    _q("yes-no", "Is Australia in the Northern Hemisphere?", "no",
       yes_no("no", r"northern\s+hemisphere", no_words=[r"southern\s+hemisphere"]),
       "No, Australia is in the Southern Hemisphere.", "Yes, it is in the Northern Hemisphere."),
    _q("yes-no", "Is 144 a perfect square?", _yes(12 * 12 == 144), yes_no(_yes(12 * 12 == 144), r"perfect\s+square"),
       "Yes, 144 = 12², so it is a perfect square.", "No, 144 is not a perfect square."),
    _q("yes-no", "Is water made of hydrogen and oxygen?", "yes", yes_no("yes", r"hydrogen and oxygen"),
       "Yes, water (H2O) is made of hydrogen and oxygen.", "No, water is an element."),
    _q("yes-no", "Is Mount Everest the tallest mountain above sea level?", "yes",
       yes_no("yes", r"\b(?:tallest|highest)\b"),
       "Yes, Everest is the highest mountain above sea level, at 8,849 m.", "No, K2 is taller."),
    _q("yes-no", "is 561 divisible by 3", _yes(561 % 3 == 0), yes_no(_yes(561 % 3 == 0), r"\bdivisible\b"),
       "Yes: 5 + 6 + 1 = 12, which is divisible by 3, so 561 is divisible by 3 (561 = 3 \u00d7 187).",
       "No, 561 is not divisible by 3."),
    # -- sequences: next term, nth term
    _q("sequences", "what comes next: 2, 4, 8, 16, ...", 32, number(16 * 2),
       "Each number doubles, so after 16 comes 32.", "The next number is 24."),
    _q("sequences", "What's the next number in 1, 1, 2, 3, 5, 8, 13?", 8 + 13, number(8 + 13),
       f"It's the Fibonacci sequence: 8 + 13 = {8 + 13}.", "The next number is 18."),
    _q("sequences", "next number: 3, 6, 9, 12", 15, number(12 + 3), "15", "14"),
    _q("sequences", "What comes after 1, 4, 9, 16, 25?", 6 ** 2, number(6 ** 2),
       f"These are the squares, so next is 6² = {6 ** 2}.", "The next number is 34."),
    _q("sequences", "1, 3, 6, 10, 15, what's next", 15 + 6, number(15 + 6),
       f"The gaps grow by one each time (2, 3, 4, 5), so the next is 15 + 6 = {15 + 6}.", "The next is 20."),
    _q("sequences", "what is the 10th term of 5, 8, 11, 14, ...?", 5 + 9 * 3, number(5 + 9 * 3),
       f"The 10th term is 5 + 9 \u00d7 3 = {5 + 9 * 3}.", "The 10th term is 35."),
    _q("sequences", "What's the 20th Fibonacci number if the first two are 1 and 1?", _fib(20), number(_fib(20)),
       f"The 20th Fibonacci number is {_fib(20):,}.", "The 20th Fibonacci number is 4181."),
    _q("sequences", "next in the sequence 2, 3, 5, 7, 11, 13", _NEXT_PRIME, number(_NEXT_PRIME),
       f"These are the primes, so the next one is {_NEXT_PRIME}.", "The next is 15."),
    _q("sequences", "100, 90, 81, 73, 66 ... what's next?", 66 - 6, number(66 - 6),
       f"The differences are 10, 9, 8, 7, so the next is 66 - 6 = {66 - 6}.", "The next is 59."),
    _q("sequences", "What number comes next: 1, 8, 27, 64?", 5 ** 3, number(5 ** 3),
       f"These are cubes: 1³, 2³, 3³, 4³, so next is 5³ = {5 ** 3}.", "The next number is 100."),
    _q("sequences", "What is the next term: 2, 6, 18, 54", 54 * 3, number(54 * 3),
       f"Each term is multiplied by 3: 54 \u00d7 3 = {54 * 3}", "The next term is 108."),
    _q("sequences", "1, 2, 6, 24, 120, next?", 120 * 6, number(120 * 6),
       f"These are factorials, so the next is 6! = {120 * 6}.", "The next is 240."),
    _q("sequences", "what's the 7th term of the sequence 3, 6, 12, 24, ...?", 3 * 2 ** 6, number(3 * 2 ** 6),
       f"Each term doubles, so the 7th term is 3 \u00d7 2^6 = {3 * 2 ** 6}.", "The 7th term is 96."),
    _q("sequences", "Complete the pattern: 81, 27, 9, 3, ...", 3 // 3, number(3 / 3),
       "Each term is divided by 3, so the next is 3 ÷ 3 = 1.", "The next is 0."),
    # -- trick: classic questions with a definite answer
    _q("trick", "How many months have 28 days?", 12, number(12),
       "All 12 months have at least 28 days.", "Only one: February."),
    _q("trick", "A bat and a ball cost $1.10 in total. The bat costs $1.00 more than the ball. How much does the ball "
       "cost?", 0.05, number(0.05, tol=1e-9, cents=True),
       "The ball costs 5 cents ($0.05), and the bat $1.05.\n\nAnswer: 5 cents", "The ball costs 10 cents."),
    _q("trick", "which weighs more, a kilo of feathers or a kilo of steel", "neither: the same",
       markers([r"\bsame\b", r"\bequal(?:ly)?\b", r"\bneither\b", r"\bboth weigh\b"],
               [r"\bsteel (?:is|weighs) (?:more|heavier)\b", r"\bfeathers (?:are|weigh) (?:more|heavier)\b",
                r"^\W*(?:a kilo of |the )?(?:steel|feathers)\W*$"]),
       "Neither — they both weigh one kilogram.", "A kilo of steel weighs more."),
    _q("trick", "If you pass the person in second place in a race, what place are you in?", "second",
       markers([r"\bsecond\b", r"\b2nd\b"], [r"\bfirst\b", r"\b1st\b", r"\bthird\b", r"\b3rd\b"]),
       "You'd be in second place: you take their place, not first.", "You're in first place now."),
    _q("trick", "A farmer has 17 sheep and all but 9 die. How many are left?", 9, number(9, echo=False),
       "9 sheep are left.", "17 - 9 = 8, so 8 sheep are left."),
    _q("trick", "How many animals of each kind did Moses take on the ark?", "none (it was Noah)",
       caught(r"\bnoah\b", r"\bnone\b", r"\bzero\b", r"\bno animals\b", r"\bmoses\s+(?:didn'?t|did not|never)\b"),
       "None — it was Noah, not Moses, who built the ark.", "Two of each kind."),
    _q("trick", "If you have 3 apples and you take away 2, how many do you have?", 2, number(2, echo=False),
       "You took 2, so you have 2 apples.", "You have 1 apple left."),
    _q("trick", "If it takes 5 machines 5 minutes to make 5 widgets, how long would it take 100 machines to make 100 "
       "widgets?", 5, number(5, echo=False),
       "Each machine makes 1 widget in 5 minutes, so 100 machines make 100 widgets in 5 minutes.", "100 minutes."),
    _q("trick", "Mary's father has five daughters: Nana, Nene, Nini and Nono. What is the fifth daughter's name?",
       "Mary", named("Mary", wrong=("Nunu", "Nana", "Nene", "Nini", "Nono")),
       "The fifth daughter is Mary.", "Nunu."),
    _q("trick", "If a plane crashes on the border between the US and Canada, where do they bury the survivors?",
       "nowhere: survivors are not buried",
       markers([r"\b(?:don'?t|do not|wouldn'?t|would not|never)\s+bury\b", r"\bnot buried\b", r"\bnowhere\b",
                r"\b(?:are|still|they're)\s+alive\b"],
               [r"\bcanada\b", r"\bthe us\b", r"\bunited states\b", r"\bamerica\b", r"\bhome countr(?:y|ies)\b"]),
       "You don't bury survivors — they're alive!", "They'd be buried in their home countries."),
    _q("trick", "A rooster lays an egg on the peak of a barn roof. Which side does the egg roll down?",
       "neither: roosters don't lay eggs",
       markers([r"\broosters?\s+(?:don'?t|do not|can'?t|cannot|doesn'?t|does not|never)\s+lay\b", r"\bno egg\b",
                r"\bmales?\b"],
               [r"\bleft\b", r"\bright side\b", r"\b(?:east|west|north|south)\b", r"\bsteeper\b", r"\bdepends\b"]),
       "Neither side — roosters don't lay eggs.", "It rolls down the left side."),
    _q("trick", "A doctor gives you three pills and tells you to take one every half hour. How long until you've taken "
       "all of them?", "60 minutes",
       markers([r"\b60 minutes\b", r"\bsixty minutes\b", r"\b(?:1|one|an) hour\b(?!\s+and)(?!\s*(?:30|thirty))"],
               [r"\b(?:30|45|90|120|150) minutes\b", r"\b(?:1\.5|one and a half|2|two) hours?\b",
                r"\b(?:an|one) hour and a half\b"]),
       "One hour: the first pill now, the second after 30 minutes and the third after 60 minutes.",
       "1.5 hours (90 minutes)."),
    _q("trick", "Divide 30 by half and add 10. What do you get?", 70, number(30 / 0.5 + 10),
       "30 divided by 0.5 is 60, plus 10 is 70.", "30 / 2 = 15, and 15 + 10 = 25."),
    _q("trick", "If an electric train is travelling south, which way does the smoke blow?", "there is no smoke",
       markers([r"\bno smoke\b", r"\b(?:doesn'?t|does not|don'?t|do not)\s+(?:produce|make|emit|give off|have)\s+"
                r"(?:any\s+)?smoke\b"],
               [r"\bnorth(?:wards?)?\b", r"\bsouth(?:wards?)?\b", r"\beast\b", r"\bwest\b", r"\bbackwards?\b",
                r"\bbehind\b"]),
       "There's no smoke: electric trains don't produce smoke.", "The smoke blows north, behind the train."),
    _q("trick", "Can a man legally marry his widow's sister?", "no",
       yes_no("no", r"\blegal(?:ly)?\b", no_words=[r"\bdead\b", r"\bdied\b", r"\bdeceased\b"]),
       "No — if he has a widow, he is dead.", "Yes, in most countries it is legal."),
    # -- prose: no result, only prose
    _q("prose", "write a haiku about autumn", "a haiku", prose(8),
       "Crimson leaves drifting\nwhispers of the cooling wind\nautumn settles in", _CODE_REPLY),
    _q("prose", "Write a two-sentence email to my landlord saying the heater is broken.", "an email",
       prose(15, r"heat"),
       "Dear Mr. Patel, the heater in my apartment stopped working yesterday and the flat is getting cold. "
       "Could you please arrange a repair this week? Best, Sam", "30"),
    _q("prose", "Explain why the sky is blue in simple terms.", "an explanation", prose(15, r"light|scatter"),
       "Sunlight is made of many colors. Blue light is scattered by the air much more than red light, so blue "
       "reaches our eyes from every part of the sky.", "Blue."),
    _q("prose", "give me three tips for staying focused while studying", "three tips", prose(12),
       "1. Put your phone in another room.\n2. Study in 25-minute blocks with short breaks.\n3. Decide what you "
       "will finish before you start.", "```python\ntips = ['focus']\nprint(tips)\n```"),
    _q("prose", "Write a short thank-you note to a colleague who helped me move.", "a note", prose(12, r"thank"),
       "Hi Dana, thank you so much for giving up your Saturday to help me move. I couldn't have done it without "
       "you — lunch is on me!", "Answer: 1"),
    _q("prose", "Describe the taste of a lemon to someone who has never had one.", "a description",
       prose(10, r"sour|tart|acid|sharp"),
       "A lemon tastes very sour and sharp: it makes your mouth pucker and water, with a fresh, bright smell.",
       "NameError: name 'lemon' is not defined"),
    _q("prose", "Summarize the story of Cinderella in two sentences.", "a summary",
       prose(15, r"cinderella|prince|slipper"),
       "Cinderella, mistreated by her stepfamily, goes to the royal ball with her fairy godmother's help and wins "
       "the prince's heart. She flees at midnight, and the prince finds her again with the glass slipper she left.",
       "Cinderella."),
    _q("prose", "What's the difference between weather and climate?", "an explanation",
       prose(15, r"weather", r"climate"),
       "Weather is what the atmosphere does over hours or days, like today's rain. Climate is the average pattern "
       "of weather in a place over many years.", "Weather is short-term."),
    _q("prose", "Write a limerick about a cat.", "a limerick", prose(20, r"\bcat"),
       "There once was a cat named Lou,\nWho napped in a size-seven shoe.\nShe'd stretch and she'd yawn\n"
       "From dusk until dawn,\nThen demand that her breakfast was due.", "cat = 'Lou'\nprint(cat)"),
    _q("prose", "explain what a black hole is to a ten year old", "an explanation", prose(15, r"gravity|light|pull"),
       "A black hole is a place in space where gravity pulls so hard that nothing, not even light, can get out. "
       "It forms when a giant star collapses.", "10"),
    _q("prose", "Write a tweet announcing our bakery's new sourdough bread.", "a tweet", prose(8, r"sourdough|bread"),
       "Fresh out of the oven: our brand-new sourdough bread! Crispy crust, soft tangy crumb. Come grab a loaf "
       "today #bakery", "```\nsourdough\n```"),
    _q("prose", "Give me a motivational quote for a Monday morning", "a quote", prose(6),
       "\"Start where you are. Use what you have. Do what you can.\" — Arthur Ashe", "Monday"),
    _q("prose", "How do I politely tell a coworker they're talking too loud?", "advice", prose(15),
       "Pick a private moment and keep it friendly, for example: \"Hey, I have trouble concentrating when calls get "
       "loud — would you mind keeping your voice down a bit?\"", "Answer: 0"),
    _q("prose", "Write a short birthday message for my grandmother.", "a message", prose(8, r"birthday"),
       "Happy birthday, Grandma! Thank you for all your love and stories. I hope your day is as wonderful as you "
       "are.", "```python\nprint('Happy birthday')\n```"),
)

KINDS: tuple[str, ...] = tuple(dict.fromkeys(q.kind for q in QUESTIONS))
"""The kinds, in the order the set lists them."""


# reasoning-gym families whose answer is one number, asked without the "Answer:" instruction (``rg-plain:FAMILY``)
NUMERIC_FAMILIES = frozenset({"gsm_symbolic", "letter_counting", "chain_sum", "basic_arithmetic"})


def reasoning_gym_plain_tasks(family: str, n: int, seed: int) -> list[Task]:
    """Reasoning-gym's own questions of a numeric family, asked as they come (no answer format asked, unlike
    ``rg:FAMILY``), read as this set reads a number: the reply's final value. Ids are ``FAMILY-SEED-i``, as
    ``rg:FAMILY``'s, so a replay can pair them; the family is ``FAMILY (plain)``."""
    if family not in NUMERIC_FAMILIES:
        raise ValueError(f"rg-plain asks only numeric families ({', '.join(sorted(NUMERIC_FAMILIES))})")
    import reasoning_gym  # the [bench] extra

    data = reasoning_gym.create_dataset(family, size=n, seed=seed)
    tasks = []
    for i, entry in enumerate(data):
        expected = float(entry["answer"])
        question = Question(family, str(entry["question"]), _plain(expected), number(expected), "", "")
        tasks.append(Task(f"{family}-{seed}-{i}", question.text, question.expected, f"{family} (plain)",
                          grader(question)))
    return tasks


def drawn_tasks(questions: Sequence[Question], prefix: str, n: int, seed: int) -> list[Task]:
    """``n`` of ``questions`` drawn by ``random.Random(seed)`` (all of them when ``n`` covers the set), in the set's
    own order, so a smaller ``n`` draws a subset of a larger one's draw. Ids are ``<prefix>-<kind>-<k>``, k counted
    within the kind, whatever is drawn; the family is the kind, for the benchmark's table per kind."""
    order = list(range(len(questions)))
    random.Random(seed).shuffle(order)
    drawn = set(order[:n])
    tasks: list[Task] = []
    within: dict[str, int] = {}
    for i, question in enumerate(questions):
        k = within[question.kind] = within.get(question.kind, -1) + 1
        if i in drawn:
            tasks.append(Task(f"{prefix}-{question.kind}-{k}", question.text, question.expected, question.kind,
                              grader(question)))
    return tasks


def plain_tasks(n: int, seed: int) -> list[Task]:
    """``n`` questions of this set drawn by ``seed`` (``drawn_tasks``); ids are ``plain-<kind>-<k>``."""
    return drawn_tasks(QUESTIONS, "plain", n, seed)
