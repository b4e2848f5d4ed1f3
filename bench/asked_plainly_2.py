"""``--tasks plain2``: a second, fresh set of questions asked as users type them, graded as ``--tasks plain`` is.

Why: the decision rule of issue 48 was revised while its authors looked at the first set's questions and replies
(``bench/asked_plainly.py``, ``bench/results/plain-127``), so a score there no longer says how a rule does on
questions nobody tuned on. This set was written on 2026-12-06, before any run of any method on it, as a fresh set
for measuring the revised decision rule on such questions. None of it was chosen by running a model.

The set: the first set's nine kinds (``fact``, ``letters``, ``numbers``, ``dates``, ``order``, ``yes-no``,
``sequences``, ``trick``, ``prose``), 14 questions each, 126 in all. No question is one of the first set's. A
pattern the first set asks three times or more (one letter counted, a word reversed, a date's weekday, a leap year,
N days after or before a date, a prime, a unit converted, a percentage, an alphabetical sort, the larger of two
decimals, the nth term) is not asked again; this set asks others (consonants counted, letters that repeat, letters
shifted or sorted, a word's vowels removed, an anagram, a clock time, weeks between dates, the first Monday of a
month, a date's day number, an age, a missing term, look-and-say, n^n, ...). Phrased as people type them; no
question asks for a format.

Every computable key is computed here by code beside its question (``str.count``, ``Counter``, ``sorted``,
``date``, ``datetime``, ``timedelta``, ``calendar``, ``Fraction``, ``ord``), so no key can be mistyped. Facts are
stable ones with one accepted answer; the trick questions are classic riddles with one definite answer.

The graders are the first set's (``Check`` constructors of ``bench/asked_plainly.py``; the first set's grades
unchanged), reading a reply as a person does: its final result, the question's own values echoed aside. One
extension, used only here: ``choice(..., asides=True)`` reads a comparison with its bracketed asides dropped first,
as "the Statue of Liberty (1886) is older than the Eiffel Tower (1889)". Each question carries a typical right
and a typical wrong reply, graded by ``tests/test_asked_plainly_2.py``. Questions whose usual right reply those
graders would misread were left out while writing (a fact whose reply goes on to name another number, as "Apollo
11" after the year of the Moon landing or "carbon-12" after carbon's atomic number; a first letter whose reply names
the letter it sounds like; Fridays in a month, whose reply lists their dates; a month named first of three
"followed by" the other two; a claim "2^10 = 1024 is larger than 10^3", which names the options only by their
values).
"""

from __future__ import annotations

import calendar
import math
from collections import Counter
from datetime import date, datetime, timedelta
from fractions import Fraction
from itertools import groupby

from bench.asked_plainly import (
    _CODE_REPLY,
    Question,
    _consonants,
    _listed,
    _long,
    _plain,
    _q,
    _weekday,
    _yes,
    caught,
    choice,
    drawn_tasks,
    letter,
    letter_set,
    markers,
    named,
    number,
    on_date,
    prose,
    sequence,
    weekday,
    word,
    yes_no,
)
from bench.tasks import Task

__all__ = ["KINDS_2", "QUESTIONS_2", "plain2_tasks"]


# -- keys, computed ----------------------------------------------------------------------------------------------


def _look_and_say(term: str) -> str:
    return "".join(f"{len(list(run))}{digit}" for digit, run in groupby(term))


def _nth_weekday(year: int, month: int, weekday_: int, nth: int) -> date:
    """The ``nth`` (1-based) ``weekday_`` (Monday 0) of the month."""
    first = date(year, month, 1)
    return first + timedelta(days=(weekday_ - first.weekday()) % 7 + 7 * (nth - 1))


def _age(born: date, on: date) -> int:
    return on.year - born.year - ((on.month, on.day) < (born.month, born.day))


def _snail_days(depth: int, up: int, down: int) -> int:
    height, day = 0, 0
    while True:
        day += 1
        height += up
        if height >= depth:
            return day
        height -= down


# letters
_SHIFTED = "".join(chr(ord(c) + 1) for c in "hello")
_PYTHON_SORTED = "".join(sorted("python"))
_COMPUTER = len(_consonants("computer"))
_K_PLACE = ord("k") - ord("a") + 1
_MASSACHUSETTS = len("Massachusetts")
_SEQUENTIAL = [v for v in "aeiou" if v not in "sequential"]
assert len(_SEQUENTIAL) == 1  # one vowel is missing
_COMMITTEE = "".join(sorted({c for c in "committee" if "committee".count(c) > 1}))
_KAYAK = "kayak"[len("kayak") // 2]
_BALLOON = len(set("balloon"))
_BANANA = "".join(c for c in "banana" if c not in "aeiou")
_HAMLET = "to be or not to be, that is the question"
_HAMLET_WORDS = len(_HAMLET.split())
_ASSESSMENT = Counter("assessment").most_common(1)[0][0]
_ELEPHANT = "elephant"[-2]
assert sorted("listen") == sorted("silent")
assert Counter("assessment").most_common(2)[1][1] < Counter("assessment")[_ASSESSMENT]  # one letter is the most

# numbers
_EGGS = 3 * 12 - 5
_CHANGE = round(10 - 3 * 2.45, 2)
_POINT_3 = round(0.1 + 0.2, 6)

# dates
_LATER = datetime(2026, 1, 1, 9, 0) + timedelta(minutes=500)
_CLOCK_12 = f"{_LATER.hour % 12 or 12}:{_LATER.minute:02d}"
_CLOCK_24 = f"{_LATER.hour}:{_LATER.minute:02d}"
_AFTERNOON = "pm" if _LATER.hour >= 12 else "am"
_MORNING = "am" if _AFTERNOON == "pm" else "pm"
_FIRST_QUARTER = sum(calendar.monthrange(2026, m)[1] for m in (1, 2, 3))
_TO_CHRISTMAS = (date(2026, 12, 25) - date(2026, 11, 1)).days
_LEAP_AGE = _age(date(2000, 2, 29), date(2025, 3, 1))
_TURNS_50 = 1990 + 50
_SEPTEMBER = calendar.monthrange(2025, 9)[1]
_DAY_100 = date(2025, 1, 1) + timedelta(days=99)
_WEEKS_SPAN = (date(2026, 3, 30) - date(2026, 1, 5)).days
assert _WEEKS_SPAN % 7 == 0  # a whole number of weeks, so "how many weeks" has one answer
_WEEKS = _WEEKS_SPAN // 7
_LABOR_DAY = _nth_weekday(2026, 9, calendar.MONDAY, 1)
_END_FEB_2026 = date(2026, 2, calendar.monthrange(2026, 2)[1])
_SPAN_MINUTES = (datetime(2026, 1, 1, 14, 15) - datetime(2026, 1, 1, 10, 45)).seconds // 60
_DAY_OF_YEAR = date(2026, 3, 1).timetuple().tm_yday
_THANKSGIVING = _nth_weekday(2026, 11, calendar.THURSDAY, 4)
_CHRISTMAS_2026 = _weekday(2026, 12, 25)
_NEW_YEAR_2027 = _weekday(2027, 1, 1)

# order
_CENTS = {"penny": 1, "nickel": 5, "dime": 10, "quarter": 25}
_COINS = sorted(_CENTS, key=_CENTS.__getitem__)
_FRACTION = "3/8" if Fraction(3, 8) > Fraction(1, 3) else "1/3"
_METERS = "meters|metres|meter|metre"
_LONGER = _METERS if 100 > 100 * 0.9144 else "yards|yard"  # a yard is 0.9144 m
_YEARS = sorted([1492, 1066, 1945, 1215, 1776])
_LOW_HIGH = sorted([-2, 5, -10, 0, 3])
_WEEK = "week" if 7 * 24 > 100 else "100 hours|hundred hours"
_BY_LENGTH = sorted(["banana", "fig", "apple", "kiwi"], key=len)
assert len({len(w) for w in _BY_LENGTH}) == len(_BY_LENGTH)  # no two words of one length
_FINISHED = {"Eiffel Tower|Eiffel": 1889, "Statue of Liberty": 1886}  # the tower completed, the statue dedicated
_OLDER = min(_FINISHED, key=_FINISHED.__getitem__)
_MONTHS_IN_ORDER = sorted(["March", "January", "December", "July"], key=list(calendar.month_name).index)
_DOZEN = "40" if 40 > 3 * 12 else "3 dozen|three dozen"

# yes-no
_POWER_OF_2 = 256 & (256 - 1) == 0
_CUBE = round(1000 ** (1 / 3)) ** 3 == 1000
_SECONDS_A_DAY = 24 * 60 * 60

# sequences
_LOOK_AND_SAY = ["1"]
for _ in range(4):
    _LOOK_AND_SAY.append(_look_and_say(_LOOK_AND_SAY[-1]))
_NEXT_SAY = _look_and_say(_LOOK_AND_SAY[-1])
_MONTH_DAYS = [calendar.monthrange(2025, m)[1] for m in range(1, 8)]  # a common year: 28 days in February
_STEPPED = [1]
for _step in range(1, 7):  # each gap one more than the last
    _STEPPED.append(_STEPPED[-1] + _step)
_GAPS, _NEXT_TWO = _STEPPED[:5], _STEPPED[5:]

# trick
_NINES = sum(str(n).count("9") for n in range(1, 101))
_NUMBER_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_INITIALS = ", ".join(w[0].upper() for w in _NUMBER_WORDS[:-1])
_NINTH_INITIAL = _NUMBER_WORDS[-1][0]
_KEYPAD = math.prod(range(10))
_SNAIL = _snail_days(10, 3, 2)
_M_RIDDLE = next(c for c in "abcdefghijklmnopqrstuvwxyz"
                 if "minute".count(c) == 1 and "moment".count(c) == 2 and "a thousand years".count(c) == 0)


QUESTIONS_2: tuple[Question, ...] = (
    # -- fact: short, stable facts
    _q("fact", "what's the capital of canada", "Ottawa", named("Ottawa", wrong=("Toronto", "Montreal", "Vancouver")),
       "The capital of Canada is Ottawa, in Ontario.", "Toronto is the capital of Canada."),
    _q("fact", "Who wrote Pride and Prejudice?", "Jane Austen",
       named("Austen", wrong=("Bront\u00eb", "Bronte", "Dickens", "Eliot", "Shelley")),
       "Pride and Prejudice was written by Jane Austen and published in 1813.", "Charlotte Bront\u00eb wrote it."),
    _q("fact", "What is the chemical symbol for gold", "Au", named("Au", wrong=("Ag", "Go", "Gd", "Gl")),
       "Gold's chemical symbol is Au, from the Latin aurum.", "The chemical symbol for gold is Ag."),
    _q("fact", "what's the currency of japan", "yen", named("yen", wrong=("yuan", "won", "dollar", "ringgit")),
       "Japan's currency is the yen (\u00a5).", "Japan uses the yuan."),
    _q("fact", "What's the largest ocean on Earth?", "Pacific",
       named("Pacific", wrong=("Atlantic", "Indian", "Arctic", "Southern")),
       "The Pacific Ocean is the largest, covering about a third of the Earth's surface.", "The Atlantic."),
    _q("fact", "who discovered penicillin", "Alexander Fleming",
       named("Fleming", wrong=("Pasteur", "Curie", "Jenner", "Koch", "Lister")),
       "Alexander Fleming discovered penicillin in 1928.", "Louis Pasteur discovered penicillin."),
    _q("fact", "What is the hardest natural substance?", "diamond",
       named("diamond", "diamonds", wrong=("graphite", "quartz", "steel", "titanium", "granite")),
       "Diamond is the hardest naturally occurring substance.", "Titanium is the hardest natural substance."),
    _q("fact", "which planet is closest to the sun?", "Mercury", named("Mercury", wrong=("Venus", "Mars", "Earth")),
       "Mercury is the closest planet to the Sun.", "Venus is the closest planet to the Sun."),
    _q("fact", "In which country are the pyramids of Giza?", "Egypt",
       named("Egypt", wrong=("Mexico", "Sudan", "Peru", "Iraq")),
       "The pyramids of Giza are in Egypt, just outside Cairo.", "They are in Mexico."),
    _q("fact", "how many sides does a hexagon have", 6, number(6),
       "A hexagon has 6 sides.", "A hexagon has 8 sides."),
    _q("fact", "What's the largest mammal?", "blue whale",
       named("blue whale", "blue whales", wrong=("elephant", "elephants", "African elephant", "giraffe")),
       "The blue whale is the largest mammal, and the largest animal known to have lived.",
       "The African elephant is the largest mammal."),
    _q("fact", "who was the first president of the united states", "George Washington",
       named("Washington", wrong=("Lincoln", "Jefferson", "Adams", "Franklin")),
       "George Washington was the first President, serving from 1789 to 1797.", "Abraham Lincoln."),
    _q("fact", "What's the tallest animal in the world?", "giraffe",
       named("giraffe", "giraffes", wrong=("elephant", "elephants", "ostrich", "blue whale")),
       "The giraffe is the tallest animal: adults can reach about 5.5 m.", "The African elephant is the tallest."),
    _q("fact", "what language do they speak in brazil", "Portuguese",
       named("Portuguese", wrong=("Spanish", "Brazilian", "English")),
       "The official and most widely spoken language of Brazil is Portuguese.", "They speak Spanish in Brazil."),
    # -- letters: consonants, positions, anagrams, repeats, vowels removed, word counts
    _q("letters", "shift every letter of hello one place forward in the alphabet", _SHIFTED, word(_SHIFTED),
       f"Each letter moves one place: h to i, e to f, l to m, l to m, o to p, so hello becomes {_SHIFTED}.",
       "hello becomes igmmp"),
    _q("letters", "How many consonants are in the word computer?", _COMPUTER, number(_COMPUTER),
       f"Computer has {_COMPUTER} consonants: c, m, p, t and r.", f"Computer has 3 vowels and {_COMPUTER - 1} "
       "consonants."),
    _q("letters", "what position is the letter k in the alphabet", _K_PLACE, number(_K_PLACE),
       f"K is the {_K_PLACE}th letter of the alphabet.", f"K is letter number {_K_PLACE + 1}."),
    _q("letters", "put the letters of python in alphabetical order", _PYTHON_SORTED, word(_PYTHON_SORTED),
       f"In alphabetical order the letters of python are {', '.join(_PYTHON_SORTED)}: {_PYTHON_SORTED}.",
       "hnotpy"),
    _q("letters", "What word that means quiet can you make by rearranging the letters of listen?", "silent",
       word("silent"), "Rearranging the letters of listen gives silent.", "You can make enlist."),
    _q("letters", "how many letters does Massachusetts have", _MASSACHUSETTS, number(_MASSACHUSETTS),
       f"Massachusetts has {_MASSACHUSETTS} letters.", f"Massachusetts has {_MASSACHUSETTS - 1} letters."),
    _q("letters", "Which vowel doesn't appear in the word sequential?", _SEQUENTIAL[0], letter(_SEQUENTIAL[0]),
       f"Sequential has e, u, i and a, so the missing vowel is {_SEQUENTIAL[0]}.", "The missing vowel is 'u'."),
    _q("letters", "which letters appear more than once in committee", _COMMITTEE, letter_set(_COMMITTEE),
       "In committee the letters m, t and e each appear twice.", "Only m and t are doubled."),
    _q("letters", "what's the middle letter of kayak", _KAYAK, letter(_KAYAK),
       f"The middle letter of kayak is {_KAYAK}.", "The middle letter is 'a'."),
    _q("letters", "How many different letters are in the word balloon?", _BALLOON, number(_BALLOON),
       f"Balloon uses {_BALLOON} different letters: b, a, l, o and n.", "Balloon has 7 letters."),
    _q("letters", "remove all the vowels from banana", _BANANA, word(_BANANA),
       f"Without its vowels, banana becomes {_BANANA}.", "Without vowels it's bnna."),
    _q("letters", f"how many words are in the sentence \"{_HAMLET}\"", _HAMLET_WORDS, number(_HAMLET_WORDS),
       f"That sentence has {_HAMLET_WORDS} words.", f"It has {_HAMLET_WORDS - 1} words."),
    _q("letters", "Which letter appears most often in the word assessment?", _ASSESSMENT, letter(_ASSESSMENT),
       f"The letter {_ASSESSMENT} appears most often in assessment: {Counter('assessment')[_ASSESSMENT]} times.",
       "The letter e appears most often."),
    _q("letters", "what's the second to last letter of elephant", _ELEPHANT, letter(_ELEPHANT),
       f"The second-to-last letter of elephant is {_ELEPHANT}.", "It's 't'."),
    # -- numbers: arithmetic, powers, roots, fractions, conversions, word problems
    _q("numbers", "What is 1234 + 5678?", 1234 + 5678, number(1234 + 5678),
       f"1234 + 5678 = {1234 + 5678:,}", "1234 + 5678 = 6812"),
    _q("numbers", "what's 2 to the power of 10", 2 ** 10, number(2 ** 10),
       f"2^10 = {2 ** 10}", "2 to the power of 10 is 20."),
    _q("numbers", "square root of 169?", math.isqrt(169), number(math.isqrt(169)),
       f"The square root of 169 is {math.isqrt(169)}, since {math.isqrt(169)} \u00d7 {math.isqrt(169)} = 169.",
       "The square root of 169 is 14."),
    _q("numbers", "What is 1000 minus 387?", 1000 - 387, number(1000 - 387),
       f"1000 - 387 = {1000 - 387}", "1000 - 387 = 723"),
    _q("numbers", "what is three quarters of 96", 96 * 3 // 4, number(96 * 3 / 4),
       f"A quarter of 96 is 24, so three quarters is {96 * 3 // 4}.", "Three quarters of 96 is 32."),
    _q("numbers", "What is 4.5 times 6?", _plain(4.5 * 6), number(4.5 * 6),
       f"4.5 \u00d7 6 = {_plain(4.5 * 6)}", "4.5 times 6 is 24.3"),
    _q("numbers", "I have 3 boxes with 12 eggs in each and 5 eggs break. How many eggs are left?", _EGGS,
       number(_EGGS), f"3 \u00d7 12 = 36 eggs, and 36 - 5 = {_EGGS} are left.", "3 + 12 + 5 = 20 eggs."),
    _q("numbers", "what is 144 divided by 0.12", _plain(144 / 0.12), number(144 / 0.12, tol=1e-6),
       f"144 \u00f7 0.12 = 14400 \u00f7 12 = {_plain(144 / 0.12):,}", "144 / 0.12 = 12"),
    _q("numbers", "what's the remainder when 100 is divided by 7", 100 % 7, number(100 % 7),
       f"100 = 14 \u00d7 7 + {100 % 7}, so the remainder is {100 % 7}.", "100 / 7 = 14 remainder 3"),
    _q("numbers", "What is the sum of all the numbers from 1 to 100?", sum(range(1, 101)), number(sum(range(1, 101))),
       f"Pair them up: 50 pairs that each add to 101, so the sum is {sum(range(1, 101)):,}.",
       "The sum is 5,000."),
    _q("numbers", "a recipe needs 250 g of flour for 4 people. how much flour do I need for 6 people?",
       250 * 6 // 4, number(250 * 6 / 4),
       f"That's 62.5 g per person, so for 6 people you need {250 * 6 // 4} g.", "You need 300 g."),
    _q("numbers", "What is 0.1 + 0.2?", _POINT_3, number(_POINT_3), f"0.1 + 0.2 = {_POINT_3}", "0.1 + 0.2 = 0.12"),
    _q("numbers", "what is 13 cubed", 13 ** 3, number(13 ** 3),
       f"13\u00b3 = 13 \u00d7 13 \u00d7 13 = {13 ** 3:,}", "13 cubed is 39."),
    _q("numbers", "I bought 3 notebooks at $2.45 each and paid with a $10 bill. How much change should I get?",
       _CHANGE, number(_CHANGE, tol=1e-6),
       f"3 \u00d7 $2.45 = $7.35, so your change is ${_CHANGE:.2f}.", "Your change is $7.35."),
    # -- dates: weekdays, spans, ages, nth weekday of a month, date arithmetic
    _q("dates", "what time will it be 500 minutes after 9 am", f"{_CLOCK_12} {_AFTERNOON}",
       markers([rf"\b{_CLOCK_12}\s*(?:{_AFTERNOON}|{_AFTERNOON[0]}\.m\.)", rf"\b{_CLOCK_24}\b",
                rf"\b{_CLOCK_12}\b(?!\s*(?:{_MORNING}|{_MORNING[0]}\.m\.))"],
               [rf"\b(?!{_CLOCK_12}\b|{_CLOCK_24}\b)\d{{1,2}}:\d\d\b",
                rf"\b{_CLOCK_12}\s*(?:{_MORNING}|{_MORNING[0]}\.m\.)"]),
       f"500 minutes is 8 hours and 20 minutes, so it will be {_CLOCK_12} {_AFTERNOON}.", "It will be 6:20 pm."),
    _q("dates", "How many days are there in the first quarter of 2026?", _FIRST_QUARTER, number(_FIRST_QUARTER),
       f"January (31) + February (28) + March (31) = {_FIRST_QUARTER} days.", f"{_FIRST_QUARTER + 1} days."),
    _q("dates", "how many days are there from 1 November 2026 to christmas day, december 25?", _TO_CHRISTMAS,
       number(_TO_CHRISTMAS),
       f"November has 30 days, so 29 days to 30 November plus 25 in December: {_TO_CHRISTMAS} days.",
       f"There are {_TO_CHRISTMAS + 1} days."),
    _q("dates", "Someone was born on 29 February 2000. How old are they on 1 March 2025?", _LEAP_AGE,
       number(_LEAP_AGE), f"They turned {_LEAP_AGE} on 1 March 2025, so they are {_LEAP_AGE} years old.",
       "They have had only 6 real birthdays, so they are 6."),
    _q("dates", "what year will someone born in 1990 turn 50", _TURNS_50, number(_TURNS_50),
       f"1990 + 50 = {_TURNS_50}, so they turn 50 in {_TURNS_50}.", f"They turn 50 in {_TURNS_50 + 1}."),
    _q("dates", "How many days does September have?", _SEPTEMBER, number(_SEPTEMBER),
       f"September has {_SEPTEMBER} days.", f"September has {_SEPTEMBER + 1} days."),
    _q("dates", "What date is the 100th day of 2025?", _long(_DAY_100), on_date(_DAY_100),
       f"The 100th day of 2025 is {calendar.month_name[_DAY_100.month]} {_DAY_100.day}, 2025.",
       f"It's {_long(_DAY_100 + timedelta(days=1))}."),
    _q("dates", "how many weeks are there between 5 January 2026 and 30 March 2026", _WEEKS, number(_WEEKS),
       f"That's {_WEEKS_SPAN} days, which is exactly {_WEEKS} weeks.", f"There are {_WEEKS + 1} weeks."),
    _q("dates", "What's the date of the first Monday in September 2026?", _long(_LABOR_DAY), on_date(_LABOR_DAY),
       f"The first Monday in September 2026 is {_long(_LABOR_DAY)}.",
       f"It's {_long(_LABOR_DAY - timedelta(days=1))}."),
    _q("dates", "what's the date of the last day of february 2026", _long(_END_FEB_2026), on_date(_END_FEB_2026),
       f"2026 is not a leap year, so the last day of February 2026 is {_long(_END_FEB_2026)}.",
       "It's 29 February 2026."),
    _q("dates", "how many minutes are there between 10:45 am and 2:15 pm", _SPAN_MINUTES, number(_SPAN_MINUTES),
       f"From 10:45 am to 2:15 pm is 3 hours 30 minutes, which is {_SPAN_MINUTES} minutes.",
       "It is 3 hours 30 minutes, which is 330 minutes."),
    _q("dates", "What number day of the year is 1 March 2026?", _DAY_OF_YEAR, number(_DAY_OF_YEAR),
       f"1 March 2026 is day {_DAY_OF_YEAR} of the year (31 + 28 + 1).", f"It's day {_DAY_OF_YEAR + 1}."),
    _q("dates", "when is thanksgiving 2026 in the US", _long(_THANKSGIVING), on_date(_THANKSGIVING),
       f"Thanksgiving is the fourth Thursday of November: {calendar.month_name[_THANKSGIVING.month]} "
       f"{_THANKSGIVING.day}, 2026.", f"It's on November {_THANKSGIVING.day + 1}, 2026."),
    _q("dates", f"If Christmas 2026 is on a {_CHRISTMAS_2026}, what day of the week is New Year's Day 2027?",
       _NEW_YEAR_2027, weekday(_NEW_YEAR_2027),
       f"New Year's Day is exactly one week after Christmas, so it's also a {_NEW_YEAR_2027}.",
       f"It's a {calendar.day_name[(date(2027, 1, 1).weekday() + 1) % 7]}."),
    # -- order: sorting numbers, years, words and names; comparing fractions, units, quantities
    _q("order", "sort these coins from least to most valuable: quarter, penny, dime, nickel", _listed(_COINS),
       sequence(_COINS), f"From least to most valuable: {_listed(_COINS)}.", "penny, dime, nickel, quarter"),
    _q("order", "Which is bigger, 3/8 or 1/3?", _FRACTION, choice(["3/8", "1/3"], _FRACTION, asides=True),
       "3/8 is bigger than 1/3 (0.375 against 0.333).", "1/3 is bigger than 3/8."),
    _q("order", "which is longer, 100 meters or 100 yards", f"100 {_LONGER.split('|')[0]}",
       choice([_METERS, "yards|yard"], _LONGER, asides=True),
       "100 meters is longer, since 100 yards is only 91.44 meters.", "100 yards is longer."),
    _q("order", "sort these animals from smallest to biggest: elephant, mouse, horse, cat",
       "mouse, cat, horse, elephant", sequence(["mouse", "cat", "horse", "elephant"]),
       "From smallest to biggest:\n1. Mouse\n2. Cat\n3. Horse\n4. Elephant", "mouse, horse, cat, elephant"),
    _q("order", "put these years in chronological order: 1492, 1066, 1945, 1215, 1776", _listed(_YEARS),
       sequence(_YEARS), f"In chronological order: {_listed(_YEARS)}.", "1066, 1492, 1215, 1776, 1945"),
    _q("order", "Arrange from lowest to highest: -2, 5, -10, 0, 3", _listed(_LOW_HIGH), sequence(_LOW_HIGH),
       f"Lowest to highest: {_listed(_LOW_HIGH)}", "-2, -10, 0, 3, 5"),
    _q("order", "which is longer, a week or 100 hours?", _WEEK.split("|")[0],
       choice(["week", "100 hours|hundred hours"], _WEEK, asides=True),
       f"A week is longer: it has {7 * 24} hours.", "100 hours is longer than a week."),
    _q("order", "order these planets by distance from the sun: mars, earth, mercury, venus",
       "mercury, venus, earth, mars", sequence(["mercury", "venus", "earth", "mars"]),
       "Closest to farthest: Mercury, Venus, Earth, Mars.", "Mercury, Earth, Venus, Mars"),
    _q("order", "Sort these words from shortest to longest: banana, fig, apple, kiwi", _listed(_BY_LENGTH),
       sequence(_BY_LENGTH), f"Shortest to longest: {_listed(_BY_LENGTH)}", "apple, banana, fig, kiwi"),
    _q("order", "Which is older, the Eiffel Tower or the Statue of Liberty?", _OLDER.split("|")[0],
       choice(list(_FINISHED), _OLDER, asides=True),
       "The Statue of Liberty is older: it was dedicated in 1886, the Eiffel Tower was finished in 1889.",
       "The Eiffel Tower is older."),
    _q("order", "put these months in calendar order: March, January, December, July", _listed(_MONTHS_IN_ORDER),
       sequence(_MONTHS_IN_ORDER), f"In calendar order: {_listed(_MONTHS_IN_ORDER)}.",
       "January, July, March, December"),
    _q("order", "which is more, 3 dozen or 40", _DOZEN, choice(["3 dozen|three dozen", "40"], _DOZEN, asides=True),
       "40 is more than 3 dozen, which is 36.", "3 dozen is more."),
    _q("order", "Is Russia or Canada bigger?", "Russia", choice(["Russia", "Canada"], "Russia", asides=True),
       "Russia is bigger: about 17.1 million km\u00b2 against Canada's 10 million.", "Canada is bigger than Russia."),
    _q("order", "Put these in order from oldest to newest: the iPhone, the television, the telephone, the printing "
       "press", "printing press, telephone, television, iPhone",
       sequence(["printing press", "telephone", "television", "iPhone"]),
       "Oldest to newest: the printing press (1440s), the telephone (1876), the television (1920s), the iPhone "
       "(2007).", "telephone, printing press, television, iPhone"),
    # -- yes-no: properties of numbers, facts
    _q("yes-no", "is 1000 a perfect cube", _yes(_CUBE), yes_no(_yes(_CUBE), r"\b(?:perfect )?cube\b"),
       "Yes, 1000 = 10 \u00d7 10 \u00d7 10, so it is a perfect cube.", "No, 1000 is not a perfect cube."),
    _q("yes-no", "Is 256 a power of 2?", _yes(_POWER_OF_2), yes_no(_yes(_POWER_OF_2), r"\bpower of (?:2|two)\b"),
       "Yes: 256 = 2^8, so it is a power of 2.", "No, 256 is not a power of 2."),
    _q("yes-no", "do penguins live at the north pole", "no",
       yes_no("no", r"\bnorth pole\b", no_words=[r"\bsouthern hemisphere\b", r"\bantarctic"]),
       "No, penguins live in the Southern Hemisphere, not at the North Pole.", "Yes, penguins live at the North Pole."),
    _q("yes-no", "Is zero an even number?", _yes(0 % 2 == 0), yes_no(_yes(0 % 2 == 0), r"\beven\b"),
       "Yes, 0 is even: it is divisible by 2 with no remainder.", "No, zero is neither even nor odd."),
    _q("yes-no", "is a bat a mammal?", "yes", yes_no("yes", r"\bmammals?\b", no_words=[r"\bbirds?\b"]),
       "Yes, bats are mammals: they have fur and feed their young milk.", "No, a bat is a bird."),
    _q("yes-no", "is 7 a factor of 343", _yes(343 % 7 == 0),
       yes_no(_yes(343 % 7 == 0), r"\bfactor\b|\bdivisible\b"),
       "Yes: 343 = 7 \u00d7 49, so 7 is a factor of 343.", "No, 343 is not divisible by 7."),
    _q("yes-no", "Does light travel faster than sound?", "yes",
       yes_no("yes", r"\bfaster than sound\b",
              yes_words=[r"\blight (?:travels |is |moves |goes )?(?:much |far )?faster\b"],
              no_words=[r"\bsound (?:travels |is |moves |goes )?(?:much |far )?faster\b"]),
       "Yes, by far: light travels about 300,000 km per second, sound about 343 m per second.",
       "No, sound is faster than light."),
    _q("yes-no", "is pi equal to 3.14", _yes(math.pi == 3.14), yes_no(_yes(math.pi == 3.14), r"\bexactly\b"),
       "No, 3.14 is only an approximation: pi is irrational, 3.14159...", "Yes, pi is 3.14."),
    _q("yes-no", "Do humans have 23 pairs of chromosomes?", "yes", yes_no("yes", r"\b(?:23|twenty-three) pairs\b"),
       "Yes, humans have 23 pairs of chromosomes, 46 in all.", "No, humans have 24 pairs."),
    _q("yes-no", "is every square a rectangle", "yes", yes_no("yes", r"\brectangles?\b"),
       "Yes. A square has four right angles, so it is a rectangle, one with all sides equal.",
       "No, a square is not a rectangle."),
    _q("yes-no", "Is Pluto a planet?", "no",
       yes_no("no", r"\ba planet\b", no_words=[r"\bdwarf planet\b"]),
       "No. Since 2006 Pluto has been classified as a dwarf planet.", "Yes, Pluto is the ninth planet."),
    _q("yes-no", "is the square root of 2 a rational number", "no",
       yes_no("no", r"\brational\b", no_words=[r"\birrational\b"]),
       "No, the square root of 2 is irrational: it cannot be written as a fraction.", "Yes, it is rational."),
    _q("yes-no", "Is 100 a multiple of 8?", _yes(100 % 8 == 0), yes_no(_yes(100 % 8 == 0), r"\bmultiple\b"),
       "No: 100 \u00f7 8 = 12.5, so 100 is not a multiple of 8.", "Yes, 100 is a multiple of 8."),
    _q("yes-no", "are there more than 100,000 seconds in a day?", _yes(_SECONDS_A_DAY > 100_000),
       yes_no(_yes(_SECONDS_A_DAY > 100_000), r"\bmore than\b", no_words=[r"\bless than\b", r"\bfewer than\b"]),
       f"No. A day has {_SECONDS_A_DAY:,} seconds, which is less than 100,000.",
       "Yes, there are more than 100,000 seconds in a day."),
    # -- sequences: next term, nth term, next letters, next two terms
    _q("sequences", "50, 43, 36, 29, what comes next?", 29 - 7, number(29 - 7),
       f"It goes down by 7 each time, so next is {29 - 7}.", "The next is 21."),
    _q("sequences", "what's the next number: 2, 5, 11, 23, 47", 47 * 2 + 1, number(47 * 2 + 1),
       f"Each term is double the last plus one, so next is 47 \u00d7 2 + 1 = {47 * 2 + 1}.", "The next is 94."),
    _q("sequences", "0, 3, 8, 15, 24 ... next?", 6 ** 2 - 1, number(6 ** 2 - 1),
       f"These are the squares minus one, so next is 36 - 1 = {6 ** 2 - 1}.", "The next is 33."),
    _q("sequences", f"{', '.join(_LOOK_AND_SAY)}, what comes next?", int(_NEXT_SAY), number(int(_NEXT_SAY)),
       f"Each term reads the one before aloud: {_LOOK_AND_SAY[-1]} is three 1s, two 2s and one 1, so next is "
       f"{_NEXT_SAY}.", "The next is 1112221."),
    _q("sequences", "What's the next letter: B, D, F, H", chr(ord("h") + 2), letter(chr(ord("h") + 2)),
       f"It skips one letter each time, so next is {chr(ord('h') + 2).upper()}.", "The next letter is I."),
    _q("sequences", f"{', '.join(str(d) for d in _MONTH_DAYS[:-1])}, ... what's next?", _MONTH_DAYS[-1],
       number(_MONTH_DAYS[-1], echo=False),
       f"These are the days in each month, January to June, so next is July: {_MONTH_DAYS[-1]}.",
       "The next is 30."),
    _q("sequences", "fill in the missing number: 3, 9, ?, 81, 243", 9 * 3, number(9 * 3),
       f"Each term is 3 times the one before, so the missing number is {9 * 3}.", "The missing number is 45."),
    _q("sequences", "1, 4, 27, 256, what's next", 5 ** 5, number(5 ** 5),
       f"These are 1^1, 2^2, 3^3, 4^4, so next is 5^5 = {5 ** 5:,}.", "The next is 625."),
    _q("sequences", "1, -2, 4, -8, 16, next?", 16 * -2, number(16 * -2),
       f"Each term is multiplied by -2, so the next is {16 * -2}.", "The next is 32."),
    _q("sequences", "Z, Y, X, W ... what comes next", chr(ord("w") - 1), letter(chr(ord("w") - 1)),
       f"It's the alphabet backwards, so next is {chr(ord('w') - 1).upper()}.", "The next is U."),
    _q("sequences", "What comes next: 2, 4, 12, 48, 240?", 240 * 6, number(240 * 6),
       f"Multiply by 2, 3, 4, 5, then 6: 240 \u00d7 6 = {240 * 6:,}.", "The next is 480."),
    _q("sequences", "10, 9, 7, 4, ?", 4 - 4, number(4 - 4),
       f"The differences are 1, 2, 3, 4, so the next is 4 - 4 = {4 - 4}.", "The next is 1."),
    _q("sequences", "what comes next in this sequence: 1, 10, 100, 1000", 1000 * 10, number(1000 * 10),
       f"Each term is 10 times the one before, so next is {1000 * 10:,}.", "The next is 1001."),
    _q("sequences", f"what are the next two terms: {_listed(_GAPS)}", _listed(_NEXT_TWO), sequence(_NEXT_TWO),
       f"The differences go up by one each time, so the next two are {_NEXT_TWO[0]} and {_NEXT_TWO[1]}.",
       "The next two are 15 and 19."),
    # -- trick: classic riddles with one definite answer
    _q("trick", "How many times can you subtract 5 from 25?", "once",
       markers([r"\bonce\b", r"\b(?:1|one)\s+time\b"], [r"\b(?:5|five)\s+times\b", r"\b(?:4|four)\s+times\b"]),
       "Only once: after that you're subtracting 5 from 20, not from 25.", "5 times: 25 / 5 = 5."),
    _q("trick", "A butcher is 6 feet tall and wears size 11 shoes. What does he weigh?", "meat",
       markers([r"\bmeats?\b"], [r"\bpounds?\b", r"\blbs?\b", r"\bkg\b", r"\bkilo(?:gram)?s?\b", r"\bstone\b"]),
       "He weighs meat!", "About 180 pounds."),
    _q("trick", "If a red house is made of red bricks and a blue house is made of blue bricks, what is a greenhouse "
       "made of?", "glass", markers([r"\bglass\b"], [r"\bgreen\s+bricks?\b"]),
       "A greenhouse is made of glass.", "A greenhouse is made of green bricks."),
    _q("trick", "A patch of lily pads doubles in size every day. If it takes 48 days to cover the whole lake, how "
       "long does it take to cover half the lake?", 48 - 1, number(48 - 1),
       f"{48 - 1} days: it doubles on the last day, from half the lake to all of it.", "24 days."),
    _q("trick", "how many 9s are there in the numbers from 1 to 100", _NINES, number(_NINES),
       f"Ten in the ones place (9, 19, ..., 99) and ten in the tens place (90 to 99), so {_NINES} in all.",
       "There are 10."),
    _q("trick", f"what's the next letter: {_INITIALS}", _NINTH_INITIAL, letter(_NINTH_INITIAL),
       f"{_NINTH_INITIAL.upper()}: they are the first letters of one, two, three and so on, and nine comes next.",
       "The next letter is T."),
    _q("trick", "How far can a dog run into the woods?", "halfway",
       markers([r"\bhalf\s*-?\s*way\b", r"\bhalf\b", r"\bmidway\b"],
               [r"\bmiles?\b", r"\bkilomet(?:er|re)s?\b", r"\bas far as\b"]),
       "Halfway: after that it's running out of the woods.", "As far as it wants, maybe a few miles."),
    _q("trick", "Before Mount Everest was discovered, what was the highest mountain in the world?", "Mount Everest",
       named("Everest", wrong=("K2", "Kangchenjunga", "Kanchenjunga", "Chimborazo", "Mont Blanc")),
       "Still Mount Everest: it was the highest even before anyone measured it.", "K2 was the highest."),
    _q("trick", "if you multiply all the numbers on a phone keypad together what do you get", _KEYPAD,
       number(_KEYPAD, echo=False), f"Zero, because one of the keys is {_KEYPAD}.", "9! = 362,880"),
    _q("trick", "A woman has 4 daughters and each of them has 1 brother. How many children does she have?", 4 + 1,
       number(4 + 1), f"She has {4 + 1} children: 4 daughters and 1 son, who is every daughter's brother.",
       "She has 8 children: 4 daughters and 4 sons."),
    _q("trick", "A snail is at the bottom of a 10 meter well. Each day it climbs up 3 meters and each night it slides "
       "back 2 meters. How many days does it take to get out?", _SNAIL, number(_SNAIL),
       f"After 7 days it is at 7 m; on day {_SNAIL} it climbs to 10 m and is out, so {_SNAIL} days.", "10 days."),
    _q("trick", "What comes once in a minute, twice in a moment, but never in a thousand years?", _M_RIDDLE,
       letter(_M_RIDDLE), f"The letter {_M_RIDDLE.upper()}.", "Time."),
    _q("trick", "Which is correct: 'the yolk of the egg is white' or 'the yolk of the egg are white'?",
       "neither: a yolk is yellow", caught(r"\byellow\b"),
       "Neither, since egg yolks are yellow!", "'The yolk of the egg is white' is correct, since yolk is singular."),
    _q("trick", "How much dirt is there in a hole that is 3 feet deep, 3 feet wide and 3 feet long?", "none",
       caught(r"\bno (?:dirt|soil|earth)\b", r"\bnone\b", r"\bnothing\b", r"\bempty\b", r"\bzero\b"),
       "None: it's a hole, so there's no dirt in it.", "3 \u00d7 3 \u00d7 3 = 27 cubic feet of dirt."),
    # -- prose: no result, only prose
    _q("prose", "write a short poem about the ocean", "a poem", prose(15, r"sea|ocean|wave|tide"),
       "The ocean hums a silver tune,\nit rolls beneath the rising moon;\nthe waves come in, the waves retreat,\n"
       "and leave the sand beneath my feet.", _CODE_REPLY),
    _q("prose", "Can you write the opening paragraph of a cover letter for a junior web developer job?",
       "a paragraph", prose(25, r"develop"),
       "Dear Hiring Manager, I am excited to apply for the Junior Web Developer position at your company. Over the "
       "past year I have built responsive websites with HTML, CSS and JavaScript, and I am eager to grow as a "
       "developer on a team that cares about clean, accessible code.", "Junior web developer."),
    _q("prose", "explain how a rainbow forms", "an explanation", prose(15, r"light"),
       "A rainbow forms when sunlight enters raindrops. The light bends as it goes in, reflects off the back of "
       "the drop and bends again on the way out, and because each color bends by a different amount the white "
       "light spreads into its colors.", "7"),
    _q("prose", "give me an idea for a quick vegetarian dinner", "an idea", prose(15),
       "Try a chickpea and spinach curry: fry an onion with garlic and curry paste, add a can of chickpeas, a can "
       "of coconut milk and a few handfuls of spinach, and serve it over rice in about 20 minutes.",
       "```python\ndinner = 'curry'\nprint(dinner)\n```"),
    _q("prose", "Write an apology text to a friend for missing their birthday party.", "a text",
       prose(12, r"sorry|apolog"),
       "Hey Jess, I'm so sorry I missed your party last night. I feel terrible about it. Can I take you out for "
       "dinner this week to make it up to you?", "Answer: 1"),
    _q("prose", "what are some good ways to fall asleep faster", "advice", prose(15),
       "Keep a regular bedtime, put your phone away an hour before bed, keep the room cool and dark, and avoid "
       "coffee after lunch. If you can't sleep, get up and read something calm until you feel drowsy.", "8"),
    _q("prose", "Write a product description for a stainless steel water bottle.", "a description",
       prose(15, r"bottle"),
       "Stay hydrated in style with our stainless steel water bottle. Its double-walled design keeps drinks cold "
       "for 24 hours or hot for 12, and the leak-proof lid means you can toss it in any bag.",
       "bottle = 'steel'\nprint(bottle)"),
    _q("prose", "Explain the difference between a virus and a bacterium.", "an explanation",
       prose(15, r"virus", r"bacteri"),
       "Bacteria are single-celled living organisms that can reproduce on their own, and many are harmless. A virus "
       "is much smaller and can only multiply inside the cells of another organism, which is why antibiotics work "
       "on bacteria but not on viruses.", "A virus is smaller."),
    _q("prose", "tell me a short bedtime story about a dragon", "a story", prose(30, r"dragon"),
       "Once upon a time, a little dragon named Ember could not breathe fire, only warm puffs of air. The other "
       "dragons laughed, until one winter night the village froze and Ember's gentle breath warmed every house "
       "until morning. From then on, everyone asked Ember to stay. The end.", "Dragon."),
    _q("prose", "write a polite email asking my manager for next Friday off", "an email",
       prose(15, r"friday|day off"),
       "Hi Karen, I'd like to ask whether I could take next Friday off as a personal day. My tasks for the week "
       "will be finished by Thursday, and Tom has agreed to cover anything urgent. Thank you, Alex",
       "```\nFriday\n```"),
    _q("prose", "what should I pack for a weekend camping trip", "a list", prose(10),
       "- A tent, sleeping bag and sleeping pad\n- Warm layers and a rain jacket\n- A headlamp with spare "
       "batteries\n- Food, water and a small stove\n- A first-aid kit and sunscreen", "Answer: 12"),
    _q("prose", "Write a four-line poem about coffee", "a poem", prose(12, r"coffee|brew|cup|mug|bean"),
       "A steaming cup at break of day,\nthe dark brew chases sleep away;\nthe bitter warmth, the rich perfume,\n"
       "bring morning light to every room.", "coffee = 4\nprint(coffee)"),
    _q("prose", "how do I explain photosynthesis to a kid?", "an explanation", prose(15, r"sun|light"),
       "You could say: plants make their own food. Their leaves catch sunlight, drink water from the roots and "
       "breathe in air, and they turn all that into sugar to grow, giving out the oxygen we breathe.", "6CO2"),
    _q("prose", "Write a toast for my sister's wedding.", "a toast", prose(20, r"sister|bride|couple|love"),
       "Good evening, everyone. I've known the bride her whole life, and I have never seen my sister as happy as "
       "she is with Daniel. Please raise your glasses to a lifetime of love, laughter and adventure together. "
       "To the happy couple!", "Cheers!"),
)

KINDS_2: tuple[str, ...] = tuple(dict.fromkeys(q.kind for q in QUESTIONS_2))
"""The kinds, in the order the set lists them (the first set's kinds)."""


def plain2_tasks(n: int, seed: int) -> list[Task]:
    """``n`` questions of this set drawn by ``seed``, as ``plain_tasks`` draws the first set (``drawn_tasks``): a
    smaller ``n`` draws a subset of a larger one's draw. Ids are ``plain2-<kind>-<k>``; the family is the kind."""
    return drawn_tasks(QUESTIONS_2, "plain2", n, seed)
