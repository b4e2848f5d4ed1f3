"""``--tasks plain3``: a third fresh set of questions asked as users type them, graded as ``--tasks plain`` is.

Why: the second set (``bench/asked_plainly_2.py``) has been run and its replies read, so a score on it no longer
says how a method does on questions nobody has looked at. This set was written on 2026-12-06, before any run of any
method on it, without reading any recorded answer of the other two sets (only their questions and graders). None of
it was chosen by running a model.

The set: the first set's nine kinds (``fact``, ``letters``, ``numbers``, ``dates``, ``order``, ``yes-no``,
``sequences``, ``trick``, ``prose``), 14 questions each, 126 in all. No question is one of the first two sets'. A
pattern the first two sets ask three times or more together is not asked again: those the second set's docstring
lists, and a planet, a capital city, a chemical symbol, a superlative fact (the largest, tallest, hardest ...), a
count of letters or words, the nth letter of a word, vowels, a letter sequence, an arithmetic, geometric or
growing-gaps sequence, squares or cubes, a power, divisibility, units compared, things put in order of their dates,
a plain sort of numbers. This set asks others:

- fact: an organ, a gas of the air, an ingredient, a composer, an acronym spelled out, a colour mixed, a part of the
  cell, our galaxy, a right angle, the first person in space, an instrument, a country of a landmark;
- letters: initials of a phrase, a letter missing from the alphabet, a word's letter values summed, a letter three
  words share, letters replaced, a word counted in a sentence (a trap: "then"), the longest word, a spelling, letters
  in alphabetical order, ROT13, two letters swapped, letters doubled, the letter no US state uses;
- numbers: a big product, LCM, GCD, fractions added, a median, rounding, negatives subtracted, pages a day, a bill
  split, a Roman numeral, a digit sum, binary, an age puzzle, a hypotenuse;
- dates: a landing time past midnight, Easter, months ahead, an ISO week, a century, weekdays in a month, hours
  worked, months between, a Unix timestamp, a time zone, renewal months, Thursdays in a year, days in a half year,
  the next palindromic date;
- order: by height, by rainbow, by legs, by sides, by size, by area, by atomic number, the Greek alphabet (not the
  English one), by wheels, and which is more of a fraction and a decimal, of water and oil, of fat and sugar, of
  coins;
- yes-no: myths (the Great Wall, goldfish), sound in water, 0.999..., real roots, 153, negatives multiplied, a
  mountain's country, boiling on a mountain, a pace against a speed, a repeating decimal, a desert, a triangle,
  mammals' eggs;
- sequences: weekdays three apart, alternate months, tribonacci, two interleaved, alternating operations, letters in
  number words, digits of pi, the planets, n repeated n times, repunits squared, perfect numbers, fractions n/(n+1),
  a missing pronic number, double less one;
- trick: classic riddles (a towel, footsteps, a white bear, silence, a stamp, four and five, an egg, a sponge, the
  bottom rung, "wrong", your age, a ton, a horse named Friday, a map);
- prose: a slogan, a couplet, a note to a neighbour, vaccines explained, an out-of-office reply, a board game's
  pitch, a LinkedIn post, the offside rule, a reminder, a speech's opening, a sunset, a review, inflation for a child,
  a sign for a fridge.

Phrased as people type them (lowercase or not, with or without a question mark, a few with a sentence of context);
no question asks for a format.

Every computable key is computed here by code beside its question (``str`` methods, set algebra, ``sorted`` over
facts stated beside it, ``date``, ``datetime``, ``timedelta``, ``calendar``, ``Fraction``, ``math``, ``statistics``,
``codecs``), so no key can be mistyped. Facts are stable ones with one accepted answer; the trick questions are
classic riddles with one definite answer.

The graders are the first set's (``Check`` constructors of ``bench/asked_plainly.py``; the first two sets' grades
unchanged), reading a reply as a person does: its final result, the question's own values echoed aside. No grader is
extended: a clock time (``_clock``) and a fraction (``_fraction``) are read by ``markers`` with patterns built here,
as the second set's clock question builds its own. Where a right reply often names a wrong answer after the right
one (oxygen after nitrogen, Shepard after Gagarin, tomatoes in guacamole, Andromeda beside the Milky Way), that
answer is not listed as wrong: a reply naming only it names no answer, which is wrong too. Each question carries a
typical right and a typical wrong reply, graded by ``tests/test_asked_plainly_3.py``. Questions whose usual right
reply those graders would misread were left out while writing (a year a war ended, whose reply goes on to name days
of months; an octopus's hearts, whose reply counts them "two ... and one"; a team's players on the field, whose
reply adds both teams; the Fridays the 13th of a year and the Sundays of a month, whose replies list their dates; a
comparison asked with "further", which the comparison reader does not read; a sum of three consecutive numbers,
whose reply checks itself on the last line; counting in binary, whose reply ends on the decimal value; a letter "a",
which the letter reader takes for an article; whether a baby or an adult has more bones, whose reply "babies have
more bones" the comparison reader does not read as a claim; the pencil's and the keyboard's riddles, which have two
answers).
"""

from __future__ import annotations

import calendar
import codecs
import math
import statistics
import string
from datetime import UTC, date, datetime, timedelta
from fractions import Fraction

from bench.asked_plainly import (
    _CODE_REPLY,
    Check,
    Question,
    _is_prime,
    _listed,
    _long,
    _plain,
    _q,
    _yes,
    choice,
    drawn_tasks,
    letter,
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

__all__ = ["KINDS_3", "QUESTIONS_3", "plain3_tasks"]


# -- readers built from the first set's markers ------------------------------------------------------------------


def _clock(at: datetime) -> Check:
    """A clock time: "6:15 am", "6:15 a.m.", "06:15", "6:15" with no half of the day named, the 24-hour "15:00",
    or the hour alone ("3 pm") when the minutes are 0. The same digits in the other half of the day, or any other
    time, are wrong; a UTC offset ("UTC+5:30") is no time."""
    h12, minutes = at.hour % 12 or 12, f"{at.minute:02d}"
    half, other = ("pm", "am") if at.hour >= 12 else ("am", "pm")

    def said(h: str) -> str:
        return rf"\s*(?:{h}\b|{h[0]}\.\s?m\.)"
    either = r"\s*(?:[ap]m\b|[ap]\.\s?m\.)"
    start = r"(?<![+\-\u2212\d:])"
    this = rf"(?:0?{h12}|0?{at.hour}):{minutes}\b"
    right = [rf"{start}0?{h12}:{minutes}{said(half)}", rf"{start}{this}(?!{either})"]
    wrong = [rf"{start}0?{h12}:{minutes}{said(other)}", rf"{start}(?!{this})\d{{1,2}}:\d\d\b"]
    if at.minute == 0:
        right.append(rf"{start}\b{h12}{said(half)}")
        wrong.append(rf"{start}\b{h12}{said(other)}")
    return markers(right, wrong)


def _fraction(value: Fraction, *spelled: str) -> Check:
    """A fraction: "11/12", "11 / 12", "\\frac{11}{12}" or its name spelled out (``spelled``); any other fraction
    (the question's own among them) is wrong."""
    n, d = value.numerator, value.denominator
    this = rf"{n}\s*/\s*{d}(?![\d/])"
    right = [rf"(?<![\d/.]){this}", rf"\\d?frac\{{{n}\}}\{{{d}\}}", *(rf"\b{s}\b" for s in spelled)]
    wrong = [rf"(?<![\d/.])(?!{this})\d+\s*/\s*\d+(?![\d/])", rf"\\d?frac\{{(?!{n}\}}\{{{d}\}})\d+\}}\{{\d+\}}"]
    return markers(right, wrong)


# -- keys, computed ----------------------------------------------------------------------------------------------


def _roman(numeral: str) -> int:
    values = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
    total = 0
    for i, c in enumerate(numeral):
        value = values[c]
        total += -value if i + 1 < len(numeral) and values[numeral[i + 1]] > value else value
    return total


def _easter(year: int) -> date:
    """Western Easter Sunday (the anonymous Gregorian computus)."""
    a, (b, c) = year % 19, divmod(year, 100)
    d, e = divmod(b, 4)
    g = (b - (b + 8) // 25 + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    l_ = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * l_) // 451
    month, day = divmod(h + l_ - 7 * m + 114, 31)
    return date(year, month, day + 1)


def _repeats(value: Fraction) -> bool:
    """Whether the decimal of ``value`` repeats forever: its denominator has a prime factor other than 2 and 5."""
    d = value.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    return d != 1


def _proper_divisors(n: int) -> int:
    return sum(d + (n // d if d * d != n and d != 1 else 0) for d in range(1, math.isqrt(n) + 1) if n % d == 0)


# letters
_PHRASE = "please excuse my dear aunt sally"
_INITIALS = "".join(w[0] for w in _PHRASE.split())
_SHOWN = "abcdefghijklmnopqrstuvwxz"
_GAP = sorted(set(string.ascii_lowercase) - set(_SHOWN))
assert len(_GAP) == 1  # one letter is missing
_DOG = sum(ord(c) - ord("a") + 1 for c in "dog")
_SHARED = sorted(set("plum") & set("lime") & set("apple"))
assert len(_SHARED) == 1  # one letter is in all three
_ZEES = "mississippi".replace("s", "z")
_CAT_SENTENCE = "the dog chased the cat up the tree and then the cat came down"
_THE = _CAT_SENTENCE.split().count("the")
assert _CAT_SENTENCE.count("the") > _THE  # "then" holds "the" and is not the word
_ENJOY = "i really enjoy eating chocolate cake"
_LONGEST = max(_ENJOY.split(), key=len)
assert [len(w) for w in _ENJOY.split()].count(len(_LONGEST)) == 1  # one longest word
_ALMOST = list("almost") == sorted("almost")
_ROT13 = codecs.encode("uryyb", "rot13")
_FORM = list("form")
_O, _R = _FORM.index("o"), _FORM.index("r")
_FORM[_O], _FORM[_R] = _FORM[_R], _FORM[_O]
_SWAPPED = "".join(_FORM)
_DOUBLED = "".join(c * 2 for c in "cat")
_STATES = ("Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Connecticut", "Delaware", "Florida",
           "Georgia", "Hawaii", "Idaho", "Illinois", "Indiana", "Iowa", "Kansas", "Kentucky", "Louisiana", "Maine",
           "Maryland", "Massachusetts", "Michigan", "Minnesota", "Mississippi", "Missouri", "Montana", "Nebraska",
           "Nevada", "New Hampshire", "New Jersey", "New Mexico", "New York", "North Carolina", "North Dakota", "Ohio",
           "Oklahoma", "Oregon", "Pennsylvania", "Rhode Island", "South Carolina", "South Dakota", "Tennessee",
           "Texas", "Utah", "Vermont", "Virginia", "Washington", "West Virginia", "Wisconsin", "Wyoming")
assert len(set(_STATES)) == 50
_NO_STATE = sorted(set(string.ascii_lowercase) - set("".join(_STATES).lower()))
assert len(_NO_STATE) == 1  # one letter is in no state's name

# numbers
_SUM_FRACTION = Fraction(2, 3) + Fraction(1, 4)
_MEDIAN = _plain(statistics.median([3, 9, 4, 7, 12, 5]))
_PAGES = math.ceil(350 / 25)
_SHARE = _plain((84 + 16) / 4)
_MCMXCIV = _roman("MCMXCIV")
_DIGITS_4096 = sum(int(d) for d in "4096")
_BINARY = int("101101", 2)
_SON = next(s for s in range(1, 100) if 3 * s + 12 == 2 * (s + 12))
_ME = 3 * _SON
_HYPOTENUSE = _plain(math.hypot(5, 12))

# dates
_LANDING = datetime(2026, 1, 1, 22, 50) + timedelta(hours=7, minutes=25)
_EASTER_2027 = _easter(2027)
assert _EASTER_2027.weekday() == calendar.SUNDAY
_IN_17_MONTHS = calendar.month_name[(3 - 1 + 17) % 12 + 1]
_ISO_WEEK = date(2026, 3, 15).isocalendar()[1]
_CENTURY = (1905 - 1) // 100 + 1
_MARCH_WEEKDAYS = sum(date(2026, 3, d).weekday() < 5 for d in range(1, calendar.monthrange(2026, 3)[1] + 1))
_WORKED = _plain((datetime(2026, 1, 5, 16, 15) - datetime(2026, 1, 5, 7, 45) - timedelta(minutes=30))
                 / timedelta(hours=1))
_MONTHS_SPAN = (2026 - 2025) * 12 + (11 - 3)
_UNIX = datetime.fromtimestamp(1_700_000_000, tz=UTC).date()
# London keeps GMT (UTC+0) in January; India keeps UTC+5:30 all year, with no daylight saving
_INDIA = datetime(2026, 1, 15, 9, 30) + timedelta(hours=5, minutes=30)
_RENEWALS = [calendar.month_name[m] for m in range(1, 13, 3)]
_THURSDAYS = sum((date(2026, 1, 1) + timedelta(days=i)).weekday() == calendar.THURSDAY
                 for i in range(365 + calendar.isleap(2026)))
_SECOND_HALF = sum(calendar.monthrange(2026, m)[1] for m in range(7, 13))
_PALINDROME_DAY = next(d for d in (date(2027, 1, 1) + timedelta(days=i) for i in range(20000))
                       if d.strftime("%Y%m%d") == d.strftime("%Y%m%d")[::-1])

# order (facts stated here, the order computed from them)
_HEIGHTS = {"Everest": 8849, "K2": 8611, "Kilimanjaro": 5895, "Mont Blanc": 4806}  # metres
_BY_HEIGHT = sorted(_HEIGHTS, key=_HEIGHTS.__getitem__, reverse=True)
_RAINBOW = ["red", "orange", "yellow", "green", "blue", "indigo", "violet"]
_COLOURS = sorted(["green", "red", "violet", "yellow", "blue"], key=_RAINBOW.index)
_LEGS = {"spider": 8, "snake": 0, "human": 2, "dog": 4, "ant": 6}
_BY_LEGS = sorted(_LEGS, key=_LEGS.__getitem__)
_THIRD = "1/3" if Fraction(1, 3) > Fraction(3, 10) else "0.3"
_KG_PER_LITRE = {"water": 1.0, "oil": 0.92}  # olive oil
_HEAVIER = max(_KG_PER_LITRE, key=_KG_PER_LITRE.__getitem__)
_KCAL_PER_GRAM = {"fat": 9, "sugar": 4}
_RICHER = max(_KCAL_PER_GRAM, key=_KCAL_PER_GRAM.__getitem__)
_SIDES = {"hexagon": 6, "triangle": 3, "octagon": 8, "pentagon": 5, "square": 4}
_BY_SIDES = sorted(_SIDES, key=_SIDES.__getitem__)
_METRES = {"cell": 1e-5, "proton": 1e-15, "molecule": 1e-9, "atom": 1e-10}  # orders of magnitude
_BY_SIZE = sorted(_METRES, key=_METRES.__getitem__)
_AREAS = {"Europe": 10.2, "Africa": 30.4, "Australia": 8.6, "Asia": 44.6}  # million km²
_BY_AREA = sorted(_AREAS, key=_AREAS.__getitem__, reverse=True)
_COINS = {"3 quarters|three quarters": 3 * 25, "8 dimes|eight dimes": 8 * 10}  # cents
_WORTH_MORE = max(_COINS, key=_COINS.__getitem__)
_ATOMIC = {"oxygen": 8, "hydrogen": 1, "carbon": 6, "helium": 2}
_BY_ATOMIC = sorted(_ATOMIC, key=_ATOMIC.__getitem__)
_GREEK = ["alpha", "beta", "gamma", "delta", "epsilon"]
_GREEK_ORDER = sorted(["gamma", "alpha", "delta", "beta"], key=_GREEK.index)
assert sorted(_GREEK_ORDER) != _GREEK_ORDER  # the Greek order is not the English alphabetical one
_DIAMETERS = {"tennis ball": 6.7, "basketball": 24.0, "golf ball": 4.3, "marble": 1.6}  # cm
_BY_DIAMETER = sorted(_DIAMETERS, key=_DIAMETERS.__getitem__)
_WHEELS = {"car": 4, "unicycle": 1, "tricycle": 3, "bicycle": 2}
_BY_WHEELS = sorted(_WHEELS, key=_WHEELS.__getitem__)

# yes-no
_CUBES_153 = sum(int(d) ** 3 for d in "153") == 153
_NEGATIVES = all(a * b > 0 for a in range(-20, 0) for b in range(-20, 0))
_FASTER = 60 / 13 > 5  # a 13-minute mile in miles per hour, against 5
_SEVENTH = _repeats(Fraction(1, 7))

# sequences
_EVERY_THIRD = [calendar.day_name[3 * i % 7] for i in range(5)]
_ALTERNATE = [calendar.month_name[m] for m in range(1, 12, 2)][:5]
_TRIBONACCI = [1, 1, 2]
while len(_TRIBONACCI) < 8:
    _TRIBONACCI.append(sum(_TRIBONACCI[-3:]))
_INTERLEAVED = [x for i in range(1, 5) for x in (i, 10 * i)]
_TWICE_LESS_TWO = [3]
while len(_TWICE_LESS_TWO) < 8:
    _TWICE_LESS_TWO.append(_TWICE_LESS_TWO[-1] * 2 if len(_TWICE_LESS_TWO) % 2 else _TWICE_LESS_TWO[-1] - 2)
_NUMBER_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
_WORD_LENGTHS = [len(w) for w in _NUMBER_WORDS]
_PI_DIGITS = [int(d) for d in f"{math.pi:.15f}".split(".")[1]]
_REPEATED = [n for n in range(1, 6) for _ in range(n)]
_REPUNIT_SQUARES = [int("1" * k) ** 2 for k in range(1, 5)]
_PERFECT = [2 ** (p - 1) * (2 ** p - 1) for p in range(2, 8) if _is_prime(p) and _is_prime(2 ** p - 1)]
assert all(_proper_divisors(n) == n for n in _PERFECT) and len(_PERFECT) == 4
_RATIOS = [Fraction(n, n + 1) for n in range(1, 6)]
_PRONIC = [n * (n + 1) for n in range(1, 7)]
_DOUBLE_LESS_ONE = [3]
while len(_DOUBLE_LESS_ONE) < 6:
    _DOUBLE_LESS_ONE.append(2 * _DOUBLE_LESS_ONE[-1] - 1)

# trick
_FOUR_AND_FIVE = 4 + 5
assert "ton"[::-1] == "not"


QUESTIONS_3: tuple[Question, ...] = (
    # -- fact: short, stable facts
    _q("fact", "which organ pumps blood around your body", "heart",
       named("heart", wrong=("lungs", "lung", "liver", "brain", "kidneys")),
       "Your heart pumps blood around your body through the arteries and veins.", "The lungs pump the blood."),
    _q("fact", "What gas makes up most of the air we breathe?", "nitrogen", named("nitrogen"),
       "Nitrogen: it makes up about 78% of the air.", "Oxygen makes up most of the air we breathe."),
    _q("fact", "whats the main ingredient in guacamole", "avocado", named("avocado", "avocados"),
       "The main ingredient in guacamole is avocado, mashed with lime juice, onion, cilantro and salt.",
       "Tomatoes."),
    _q("fact", "what's the only mammal that can really fly?", "bat", named("bat", "bats"),
       "Bats are the only mammals capable of true, powered flight.", "The flying squirrel."),
    _q("fact", "What currency do they use in the UK", "pound sterling",
       named("pound", "pounds", "pound sterling", "sterling", wrong=("euro", "euros", "dollar")),
       "The UK uses the pound sterling (\u00a3, GBP).", "The UK uses the euro."),
    _q("fact", "who composed the four seasons", "Antonio Vivaldi",
       named("Vivaldi", wrong=("Bach", "Mozart", "Beethoven", "Handel", "Haydn")),
       "The Four Seasons was composed by Antonio Vivaldi and published in 1725.", "Johann Sebastian Bach wrote it."),
    _q("fact", "What does DNA stand for?", "deoxyribonucleic acid",
       named("deoxyribonucleic acid", "deoxyribonucleic", wrong=("ribonucleic acid",)),
       "DNA stands for deoxyribonucleic acid, the molecule that carries genetic information.",
       "DNA stands for ribonucleic acid."),
    _q("fact", "if you mix blue and yellow paint what colour do you get", "green",
       named("green", wrong=("purple", "orange", "brown", "violet")),
       "Mixing blue and yellow paint gives you green.", "You get purple."),
    _q("fact", "which part of a cell is known as the powerhouse?", "mitochondria",
       named("mitochondria", "mitochondrion", wrong=("nucleus", "ribosome", "ribosomes", "chloroplast")),
       "The mitochondria are the powerhouse of the cell: they make most of its ATP.", "The nucleus."),
    _q("fact", "whats the name of our galaxy", "the Milky Way", named("Milky Way"),
       "We live in the Milky Way, a barred spiral galaxy.", "Andromeda."),
    _q("fact", "how many degrees in a right angle", 90, number(90),
       "A right angle is 90 degrees.", "A right angle has 180 degrees."),
    _q("fact", "Who was the first person to go to space?", "Yuri Gagarin",
       named("Gagarin", wrong=("Armstrong", "Aldrin")),
       "Yuri Gagarin, a Soviet cosmonaut, was the first person in space, on 12 April 1961.",
       "Neil Armstrong was the first person in space."),
    _q("fact", "what instrument has 88 keys", "piano",
       named("piano", "pianos", "pianoforte", wrong=("organ", "harpsichord", "accordion")),
       "A standard modern piano has 88 keys: 52 white and 36 black.", "An organ has 88 keys."),
    _q("fact", "what country is machu picchu in", "Peru",
       named("Peru", wrong=("Mexico", "Bolivia", "Chile", "Ecuador", "Colombia")),
       "Machu Picchu is in Peru, high in the Andes above the Urubamba valley near Cusco.", "It's in Bolivia."),
    # -- letters: initials, a missing letter, letter values, letters replaced, swapped, doubled; spelling; ROT13
    _q("letters", f"what do you get if you take the first letter of each word in '{_PHRASE}'", _INITIALS.upper(),
       word(_INITIALS), f"The first letters spell {_INITIALS.upper()}, the order of operations.", "PEDMAS"),
    _q("letters", f"which letter is missing: {_SHOWN}", _GAP[0], letter(_GAP[0]),
       f"The missing letter is {_GAP[0]}.", f"The missing letter is {chr(ord(_GAP[0]) - 1)}."),
    _q("letters", "if a=1, b=2, c=3 and so on, what does the word dog add up to", _DOG, number(_DOG),
       f"d = 4, o = 15, g = 7, so dog = 4 + 15 + 7 = {_DOG}.", f"dog = {_DOG - 1}"),
    _q("letters", "which letter is in all three of these words: plum, lime, apple", _SHARED[0], letter(_SHARED[0]),
       f"All three words contain the letter '{_SHARED[0]}'.", "They all have an 'e'."),
    _q("letters", "change every s in mississippi to a z", _ZEES, word(_ZEES),
       f"With every s changed to z, it becomes {_ZEES}.", "mizzissippi"),
    _q("letters", f'how many times does the word "the" appear in "{_CAT_SENTENCE}"', _THE, number(_THE),
       f"The word 'the' appears {_THE} times ('then' doesn't count).", f"It appears {_THE + 1} times."),
    _q("letters", f"whats the longest word in '{_ENJOY}'", _LONGEST, word(_LONGEST),
       f"The longest word is {_LONGEST}, with {len(_LONGEST)} letters.", "The longest word is 'really'."),
    _q("letters", "how do you spell 40", "forty", word("forty"),
       "Forty: F-O-R-T-Y, with no u.", "It's spelled fourty."),
    _q("letters", "whats the right way to spell definately", "definitely", word("definitely"),
       "It's spelled definitely.", "It's spelled definately."),
    _q("letters", "are the letters in the word almost in alphabetical order?", _yes(_ALMOST),
       yes_no(_yes(_ALMOST), r"\balphabetical order\b"),
       "Yes: a, l, m, o, s, t are already in alphabetical order.",
       "No, the letters of almost are not in alphabetical order."),
    _q("letters", "decode this rot13: uryyb", _ROT13, word(_ROT13),
       f"In ROT13, uryyb decodes to {_ROT13}.", "It decodes to help."),
    _q("letters", "what word do you get if you swap the o and the r in form", _SWAPPED, word(_SWAPPED),
       f"Swapping the o and the r in form gives {_SWAPPED}.", "It becomes fmor."),
    _q("letters", "Write cat with every letter doubled", _DOUBLED, word(_DOUBLED), _DOUBLED, "catcat"),
    _q("letters", "which letter of the alphabet isn't in the name of any US state?", _NO_STATE[0],
       letter(_NO_STATE[0]), f"{_NO_STATE[0].upper()} is the only letter that doesn't appear in any US state's name.",
       "The letter J."),
    # -- numbers: a product, LCM and GCD, fractions, a median, rounding, word problems, numerals, bases
    _q("numbers", "whats 999 x 999", 999 * 999, number(999 * 999),
       f"999 \u00d7 999 = (1000 \u2212 1)\u00b2 = {999 * 999:,}", "999 \u00d7 999 = 998,991"),
    _q("numbers", "What's the least common multiple of 4, 6 and 10?", math.lcm(4, 6, 10), number(math.lcm(4, 6, 10)),
       f"The least common multiple of 4, 6 and 10 is {math.lcm(4, 6, 10)}.", "The LCM is 240."),
    _q("numbers", "greatest common factor of 84 and 126", math.gcd(84, 126), number(math.gcd(84, 126)),
       f"The greatest common factor of 84 and 126 is {math.gcd(84, 126)}.", "It's 21."),
    _q("numbers", "what's 2/3 + 1/4", str(_SUM_FRACTION), _fraction(_SUM_FRACTION, r"eleven[- ]twelfths"),
       f"2/3 + 1/4 = 8/12 + 3/12 = {_SUM_FRACTION}", "2/3 + 1/4 = 3/7"),
    _q("numbers", "what is the median of 3, 9, 4, 7, 12, 5", _MEDIAN, number(_MEDIAN),
       f"Sorted: 3, 4, 5, 7, 9, 12. The median is the average of the middle two, (5 + 7) / 2 = {_MEDIAN}.",
       "The median is 7."),
    _q("numbers", "round 3.14159 to two decimal places", round(3.14159, 2), number(round(3.14159, 2)),
       f"3.14159 rounded to two decimal places is {round(3.14159, 2)}.", "It's 3.141."),
    _q("numbers", "what's -8 minus -15", -8 - -15, number(-8 - -15),
       f"-8 - (-15) = -8 + 15 = {-8 - -15}", "-8 - (-15) = -23"),
    _q("numbers", "I'm reading a 350 page book and I read 25 pages a day. How many days will it take me to finish?",
       _PAGES, number(_PAGES), f"350 \u00f7 25 = {_PAGES}, so it will take you {_PAGES} days.", "It takes 12 days."),
    _q("numbers", "dinner came to $84 and we're leaving a $16 tip. if 4 of us split it evenly how much does each "
       "person pay", _SHARE, number(_SHARE),
       f"$84 + $16 = $100, and $100 \u00f7 4 = ${_SHARE} each.", "Each person pays $21."),
    _q("numbers", "what year is MCMXCIV", _MCMXCIV, number(_MCMXCIV),
       f"MCMXCIV = M (1000) + CM (900) + XC (90) + IV (4) = {_MCMXCIV}.", "MCMXCIV is 1996."),
    _q("numbers", "add up the digits of 4096", _DIGITS_4096, number(_DIGITS_4096),
       f"4 + 0 + 9 + 6 = {_DIGITS_4096}", f"The digits add up to {_DIGITS_4096 + 1}."),
    _q("numbers", "What is the binary number 101101 in decimal?", _BINARY, number(_BINARY),
       f"101101 in binary is 32 + 8 + 4 + 1 = {_BINARY}.", "101101 in binary is 44."),
    _q("numbers", "I'm three times as old as my son. In 12 years I'll be twice as old as him. How old am I?", _ME,
       number(_ME), f"If your son is s, then 3s + 12 = 2(s + 12), so s = {_SON} and you are {_ME}.",
       "You are 24."),
    _q("numbers", "a right triangle has legs of 5 and 12, how long is the hypotenuse", _HYPOTENUSE,
       number(_HYPOTENUSE), f"By Pythagoras, \u221a(5\u00b2 + 12\u00b2) = \u221a169 = {_HYPOTENUSE}.",
       "The hypotenuse is 17."),
    # -- dates: clock times, Easter, months ahead and between, ISO weeks, centuries, counts of days, a timestamp
    _q("dates", "my flight leaves at 10:50pm and takes 7 hours 25 minutes. what time do I land if there's no time "
       "difference?", f"{_LANDING.hour % 12 or 12}:{_LANDING.minute:02d} am", _clock(_LANDING),
       f"10:50 pm + 7 h 25 min = {_LANDING.hour % 12 or 12}:{_LANDING.minute:02d} am the next morning.",
       f"You land at {_LANDING.hour % 12 or 12}:{_LANDING.minute:02d} pm."),
    _q("dates", "when is easter sunday in 2027", _long(_EASTER_2027), on_date(_EASTER_2027),
       f"Easter Sunday 2027 falls on {calendar.month_name[_EASTER_2027.month]} {_EASTER_2027.day}, 2027.",
       f"It's on {_long(_EASTER_2027 + timedelta(days=7))}."),
    _q("dates", "It's March now. What month will it be in 17 months?", _IN_17_MONTHS,
       named(_IN_17_MONTHS, wrong=[m for m in calendar.month_name[1:] if m not in (_IN_17_MONTHS, "May")]),
       f"17 months is a year and 5 months, so 5 months after March: {_IN_17_MONTHS}.",
       f"It will be {calendar.month_name[(3 - 1 + 16) % 12 + 1]}."),
    _q("dates", "which ISO week number is 15 March 2026 in", _ISO_WEEK, number(_ISO_WEEK),
       f"15 March 2026 falls in ISO week {_ISO_WEEK}.", f"It's in ISO week {_ISO_WEEK + 1}."),
    _q("dates", "what century was the year 1905 in", _CENTURY, number(_CENTURY),
       f"1905 was in the {_CENTURY}th century.", f"The {_CENTURY - 1}th century."),
    _q("dates", "How many weekdays (Monday to Friday) are there in March 2026?", _MARCH_WEEKDAYS,
       number(_MARCH_WEEKDAYS), f"There are {_MARCH_WEEKDAYS} weekdays in March 2026.",
       f"March 2026 has {_MARCH_WEEKDAYS + 1} weekdays."),
    _q("dates", "i started work at 7:45am and left at 4:15pm with a 30 minute lunch break. how many hours did i "
       "actually work", _WORKED, number(_WORKED),
       f"7:45 am to 4:15 pm is 8 hours 30 minutes; minus the 30-minute lunch, you worked {_WORKED} hours.",
       "You worked 8.5 hours."),
    _q("dates", "how many months is it from march 2025 to november 2026", _MONTHS_SPAN, number(_MONTHS_SPAN),
       f"March 2025 to March 2026 is 12 months, and March to November is 8 more: {_MONTHS_SPAN} months.",
       f"{_MONTHS_SPAN + 1} months."),
    _q("dates", "what date is the unix timestamp 1700000000", _long(_UNIX), on_date(_UNIX),
       f"1700000000 is {_long(_UNIX)}, 22:13:20 UTC.", f"It's {_long(_UNIX + timedelta(days=1))}."),
    _q("dates", "if it's 9:30 in the morning in London in January, what time is it in India?",
       f"{_INDIA.hour % 12 or 12}:{_INDIA.minute:02d} pm", _clock(_INDIA),
       f"India is 5 hours 30 minutes ahead of London in January, so it's {_INDIA.hour % 12 or 12}:"
       f"{_INDIA.minute:02d} pm there.", "It's 2:30 pm in India."),
    _q("dates", "my subscription renews every 3 months and the first payment was in january. which months of the "
       "year do i pay in?", _listed(_RENEWALS), sequence(_RENEWALS),
       f"You pay in {', '.join(_RENEWALS[:-1])} and {_RENEWALS[-1]}.", "January, March, June and September."),
    _q("dates", "how many thursdays are there in 2026", _THURSDAYS, number(_THURSDAYS),
       f"2026 starts on a Thursday and has 365 days (52 weeks and 1 day), so it has {_THURSDAYS} Thursdays.",
       f"There are {_THURSDAYS - 1} Thursdays."),
    _q("dates", "How many days are in the second half of the year, July to December?", _SECOND_HALF,
       number(_SECOND_HALF), f"31 + 31 + 30 + 31 + 30 + 31 = {_SECOND_HALF} days.", f"{_SECOND_HALF - 1} days."),
    _q("dates", "what's the next date after 2026 that reads the same backwards when you write it as YYYYMMDD?",
       _long(_PALINDROME_DAY), on_date(_PALINDROME_DAY),
       f"The next one is {_long(_PALINDROME_DAY)}: {_PALINDROME_DAY:%Y%m%d} reads the same backwards.",
       "It's 20 February 2027."),
    # -- order: lists by a property, the Greek alphabet, which is more of two
    _q("order", "rank these mountains from tallest to shortest: Kilimanjaro, K2, Mont Blanc, Everest",
       _listed(_BY_HEIGHT), sequence(_BY_HEIGHT),
       "\n".join(f"{i}. {m} ({_HEIGHTS[m]:,} m)" for i, m in enumerate(_BY_HEIGHT, 1)),
       "Everest, Kilimanjaro, K2, Mont Blanc"),
    _q("order", "put these rainbow colours in order: green, red, violet, yellow, blue", _listed(_COLOURS),
       sequence(_COLOURS), f"In rainbow order: {_listed(_COLOURS)}.", "red, yellow, blue, green, violet"),
    _q("order", "sort these from fewest legs to most: spider, snake, human, dog, ant", _listed(_BY_LEGS),
       sequence(_BY_LEGS), ", ".join(f"{a} ({_LEGS[a]})" for a in _BY_LEGS), "snake, human, dog, spider, ant"),
    _q("order", "which is more, 0.3 or 1/3", _THIRD, choice(["0.3", "1/3"], _THIRD, asides=True),
       "1/3 is more: it's 0.333..., which is bigger than 0.3.", "0.3 is more."),
    _q("order", "What weighs more, a litre of water or a litre of olive oil?", _HEAVIER,
       choice(list(_KG_PER_LITRE), _HEAVIER, asides=True),
       "A litre of water weighs more (about 1 kg) than a litre of olive oil (about 0.92 kg).",
       "Olive oil is heavier."),
    _q("order", "which has more calories, a gram of fat or a gram of sugar", _RICHER,
       choice(list(_KCAL_PER_GRAM), _RICHER, asides=True),
       "A gram of fat has more: about 9 calories, against about 4 for a gram of sugar.",
       "A gram of sugar has more calories."),
    _q("order", "order these shapes by number of sides, fewest first: hexagon, triangle, octagon, pentagon, square",
       _listed(_BY_SIDES), sequence(_BY_SIDES), ", ".join(f"{s} ({_SIDES[s]})" for s in _BY_SIDES),
       "triangle, square, hexagon, pentagon, octagon"),
    _q("order", "put these in order from smallest to biggest: cell, proton, molecule, atom", _listed(_BY_SIZE),
       sequence(_BY_SIZE), f"From smallest to biggest: {_listed(_BY_SIZE)}.", "atom, proton, molecule, cell"),
    _q("order", "Rank these continents from biggest to smallest: Europe, Africa, Australia, Asia", _listed(_BY_AREA),
       sequence(_BY_AREA), f"By area: {_listed(_BY_AREA)}.", "Asia, Africa, Australia, Europe"),
    _q("order", "what's worth more, 3 quarters or 8 dimes?", _WORTH_MORE.split("|")[0],
       choice(list(_COINS), _WORTH_MORE, asides=True),
       "8 dimes are worth more: 80 cents, against 75 cents for 3 quarters.", "3 quarters are worth more."),
    _q("order", "put these in order of atomic number: oxygen, hydrogen, carbon, helium", _listed(_BY_ATOMIC),
       sequence(_BY_ATOMIC), ", ".join(f"{e} ({_ATOMIC[e]})" for e in _BY_ATOMIC),
       "hydrogen, carbon, helium, oxygen"),
    _q("order", "can you put these greek letters in order: gamma, alpha, delta, beta", _listed(_GREEK_ORDER),
       sequence(_GREEK_ORDER), f"In the order of the Greek alphabet: {_listed(_GREEK_ORDER)}.",
       _listed(sorted(_GREEK_ORDER))),
    _q("order", "order these from smallest to biggest: a tennis ball, a basketball, a golf ball, a marble",
       _listed(_BY_DIAMETER), sequence(_BY_DIAMETER), f"Smallest to biggest: {_listed(_BY_DIAMETER)}.",
       "golf ball, marble, tennis ball, basketball"),
    _q("order", "sort these by number of wheels: car, unicycle, tricycle, bicycle", _listed(_BY_WHEELS),
       sequence(_BY_WHEELS), f"Fewest to most wheels: {_listed(_BY_WHEELS)}.", "unicycle, tricycle, bicycle, car"),
    # -- yes-no: myths, numbers' properties, facts of the world
    _q("yes-no", "can you see the great wall of china from space with the naked eye", "no",
       yes_no("no", r"\bvisible\b", no_words=[r"\bmyth\b"]),
       "No, that's a myth: from orbit the wall is far too narrow to make out with the naked eye.",
       "Yes, it's the only man-made structure visible from space."),
    _q("yes-no", "Do goldfish really only have a 3 second memory?", "no",
       yes_no("no", r"\b(?:3|three)[- ]second memory\b", no_words=[r"\bmyth\b", r"\bmonths\b"]),
       "No, that's a myth: goldfish can remember things for months.",
       "Yes, goldfish forget everything after about 3 seconds."),
    _q("yes-no", "does sound travel faster in water than in air", "yes",
       yes_no("yes", r"\bfaster in water\b", no_words=[r"\bslower in water\b"]),
       "Yes, about four times faster: roughly 1,480 m/s in water against 343 m/s in air.",
       "No, sound travels slower in water."),
    _q("yes-no", "is 0.999 repeating equal to 1?", "yes",
       yes_no("yes", r"\bequal (?:to )?1\b|\bequals 1\b", no_words=[r"\bless than 1\b", r"\bsmaller than 1\b"]),
       "Yes. 0.999... repeating is exactly equal to 1: 1/3 = 0.333..., and 3 \u00d7 1/3 = 0.999... = 1.",
       "No, 0.999... is just less than 1."),
    _q("yes-no", "does x^2 + 1 = 0 have any real solutions", "no",
       yes_no("no", r"\breal (?:solutions?|roots?)\b", no_words=[r"\bonly complex\b", r"\bimaginary\b"]),
       "No: x^2 = -1 has no real solutions, only the imaginary ones x = i and x = -i.",
       "Yes, x = -1 is a real solution."),
    _q("yes-no", "Is 153 equal to the sum of the cubes of its digits?", _yes(_CUBES_153),
       yes_no(_yes(_CUBES_153), r"\bsum of the cubes\b"),
       "Yes: 1\u00b3 + 5\u00b3 + 3\u00b3 = 1 + 125 + 27 = 153.", "No, the cubes of its digits add up to 135."),
    _q("yes-no", "is a negative number times a negative number always positive", _yes(_NEGATIVES),
       yes_no(_yes(_NEGATIVES), r"\bpositive\b"),
       "Yes: a negative times a negative is always positive, for example (-3) \u00d7 (-4) = 12.",
       "No, it's negative."),
    _q("yes-no", "Is Mount Kilimanjaro in Kenya?", "no", yes_no("no", r"\bin kenya\b", no_words=[r"\btanzania\b"]),
       "No, Kilimanjaro is in Tanzania, near the border with Kenya.", "Yes, Kilimanjaro is in Kenya."),
    _q("yes-no", "does water boil at a lower temperature up a mountain?", "yes",
       yes_no("yes", r"\blower temperature\b", no_words=[r"\bhigher temperature\b", r"\balways boils at 100\b"]),
       "Yes. The air pressure is lower at altitude, so water boils at a lower temperature: about 70 \u00b0C on top "
       "of Everest.", "No, water always boils at 100 \u00b0C."),
    _q("yes-no", "is a 13 minute mile faster than 5 miles per hour", _yes(_FASTER),
       yes_no(_yes(_FASTER), r"\bfaster than\b", no_words=[r"\bslower than\b"]),
       f"No: a 13-minute mile is about {60 / 13:.1f} mph, which is slower than 5 mph.",
       "Yes, a 13-minute mile is faster than 5 mph."),
    _q("yes-no", "does 1/7 have a repeating decimal", _yes(_SEVENTH),
       yes_no(_yes(_SEVENTH), r"\brepeating\b|\brecurring\b", no_words=[r"\bterminat"]),
       "Yes: 1/7 = 0.142857142857..., the block 142857 repeats forever.", "No, 1/7 = 0.14 exactly; it terminates."),
    _q("yes-no", "Is Antarctica a desert?", "yes", yes_no("yes", r"\bdesert\b"),
       "Yes, Antarctica is the largest desert in the world: a polar desert, with very little precipitation.",
       "No, Antarctica is covered in ice, so it isn't a desert."),
    _q("yes-no", "can a triangle have two right angles", "no", yes_no("no", r"\btwo right angles\b"),
       "No: the angles of a triangle add up to 180\u00b0, so two right angles would leave nothing for the third.",
       "Yes, a triangle can have two right angles."),
    _q("yes-no", "do all mammals give birth to live young?", "no",
       yes_no("no", r"\blive young\b", no_words=[r"\blay eggs\b"]),
       "No: the platypus and the echidnas are mammals that lay eggs.",
       "Yes, all mammals give birth to live young."),
    # -- sequences: words, interleaved and alternating rules, digits, famous numbers, fractions, a missing term
    _q("sequences", f"{', '.join(_EVERY_THIRD[:-1]).lower()}... what comes next", _EVERY_THIRD[-1],
       weekday(_EVERY_THIRD[-1]),
       f"Each day is three days after the one before, so after {_EVERY_THIRD[-2]} comes {_EVERY_THIRD[-1]}.",
       f"The next is {calendar.day_name[(list(calendar.day_name).index(_EVERY_THIRD[-1]) - 1) % 7]}."),
    _q("sequences", f"{', '.join(_ALTERNATE[:-1]).lower()}, ... next?", _ALTERNATE[-1],
       named(_ALTERNATE[-1], wrong=("August", "October", "November")),
       f"It skips every other month, so next is {_ALTERNATE[-1]}.", "August."),
    _q("sequences", f"{_listed(_TRIBONACCI[:-1])}, ?", _TRIBONACCI[-1], number(_TRIBONACCI[-1]),
       f"Each number is the sum of the three before it: {' + '.join(map(str, _TRIBONACCI[-4:-1]))} = "
       f"{_TRIBONACCI[-1]}.", f"The next is {sum(_TRIBONACCI[-3:-1])}."),
    _q("sequences", f"{_listed(_INTERLEAVED[:-1])}, what's next", _INTERLEAVED[-1], number(_INTERLEAVED[-1]),
       f"Two sequences take turns: 1, 2, 3, 4 and 10, 20, 30, so next is {_INTERLEAVED[-1]}.", "The next is 5."),
    _q("sequences", f"What comes next: {_listed(_TWICE_LESS_TWO[:-1])}", _TWICE_LESS_TWO[-1],
       number(_TWICE_LESS_TWO[-1]),
       f"It alternates \u00d72 and \u22122: {_TWICE_LESS_TWO[-2]} \u00d7 2 = {_TWICE_LESS_TWO[-1]}.",
       f"The next is {_TWICE_LESS_TWO[-2] - 2}."),
    _q("sequences", f"{_listed(_WORD_LENGTHS[:-1])}, ?", _WORD_LENGTHS[-1], number(_WORD_LENGTHS[-1], echo=False),
       f"These are the numbers of letters in one, two, three and so on up to nine, so next is ten: "
       f"{_WORD_LENGTHS[-1]}.", "The next is 6."),
    _q("sequences", f"{_listed(_PI_DIGITS[:7])} ... next?", _PI_DIGITS[7], number(_PI_DIGITS[7], echo=False),
       f"Those are the digits of pi after the 3 (3.1415926...), so next is {_PI_DIGITS[7]}.", "The next is 7."),
    _q("sequences", "mercury venus earth ... what comes next", "Mars",
       named("Mars", wrong=("Jupiter", "Saturn", "Moon", "Pluto")),
       "These are the planets in order from the Sun, so Mars comes next.", "Jupiter."),
    _q("sequences", f"{_listed(_REPEATED[:10])}, ...", _REPEATED[10], number(_REPEATED[10]),
       f"Each number n appears n times, and 4 has appeared four times, so next is {_REPEATED[10]}.",
       "The next is 4."),
    _q("sequences", f"{_listed(_REPUNIT_SQUARES[:-1])}, next?", _REPUNIT_SQUARES[-1], number(_REPUNIT_SQUARES[-1]),
       f"These are 1\u00b2, 11\u00b2, 111\u00b2, so next is 1111\u00b2 = {_REPUNIT_SQUARES[-1]:,}.",
       "The next is 123321."),
    _q("sequences", f"{_listed(_PERFECT[:-1])}, what's the next number", _PERFECT[-1], number(_PERFECT[-1]),
       f"These are the perfect numbers, so next is {_PERFECT[-1]:,}.", "The next is 1024."),
    _q("sequences", f"{', '.join(map(str, _RATIOS[:-1]))}, ... what's next?", str(_RATIOS[-1]),
       _fraction(_RATIOS[-1], r"five[- ]sixths"), f"Each is n/(n+1), so next is {_RATIOS[-1]}.",
       "The next is 6/7."),
    _q("sequences", f"fill in the blank: {', '.join('__' if i == 3 else str(v) for i, v in enumerate(_PRONIC))}",
       _PRONIC[3], number(_PRONIC[3]),
       f"These are 1\u00d72, 2\u00d73, 3\u00d74, 4\u00d75, 5\u00d76, 6\u00d77, so the missing number is {_PRONIC[3]}.",
       "The missing number is 18."),
    _q("sequences", f"{_listed(_DOUBLE_LESS_ONE[:-1])}, ...", _DOUBLE_LESS_ONE[-1], number(_DOUBLE_LESS_ONE[-1]),
       f"Each term is double the last minus 1: {_DOUBLE_LESS_ONE[-2]} \u00d7 2 \u2212 1 = {_DOUBLE_LESS_ONE[-1]}.",
       "The next is 49."),
    # -- trick: classic riddles with one definite answer
    _q("trick", "riddle: what gets wetter the more it dries?", "a towel",
       markers([r"\btowels?\b"], [r"\bsponges?\b"]), "A towel!", "A sponge."),
    _q("trick", "The more you take, the more you leave behind. What are they?", "footsteps",
       markers([r"\bfoot\s*steps?\b", r"\bsteps\b"], [r"\bphotos?\b", r"\bpictures?\b", r"\bmemories\b"]),
       "Footsteps: every step you take leaves one behind.", "Photos."),
    _q("trick", "A man builds a house where all four walls face south. A bear walks past. What colour is the bear?",
       "white", markers([r"\bwhite\b"], [r"\bbrown\b", r"\bblack\b", r"\bgr[ae]y\b"]),
       "White: a house whose walls all face south must be at the North Pole, so the bear is a polar bear.",
       "Brown."),
    _q("trick", "whats so fragile that saying its name breaks it", "silence",
       markers([r"\bsilence\b"], [r"\bglass\b", r"\bpromises?\b", r"\bhearts?\b"]), "Silence.", "A promise."),
    _q("trick", "What can travel all around the world while staying in a corner?", "a stamp",
       markers([r"\b(?:postage\s+)?stamps?\b"], [r"\bthe sun\b", r"\bthe wind\b", r"\bspiders?\b"]),
       "A stamp: it stays in the corner of an envelope.", "The wind."),
    _q("trick", "if two's company and three's a crowd, what are four and five?", _FOUR_AND_FIVE,
       number(_FOUR_AND_FIVE), f"Nine! Four and five make {_FOUR_AND_FIVE}.", "Four and five are a party."),
    _q("trick", "What has to be broken before you can use it?", "an egg",
       markers([r"\beggs?\b"], [r"\bpromises?\b", r"\bhearts?\b", r"\bsilence\b", r"\bice\b"]),
       "An egg.", "A promise."),
    _q("trick", "what's full of holes but still holds water", "a sponge",
       markers([r"\bsponges?\b"], [r"\bnets?\b", r"\bsieves?\b", r"\bcolanders?\b", r"\bbuckets?\b"]),
       "A sponge.", "A sieve."),
    _q("trick", "A girl fell off a 20 foot ladder but didn't get hurt at all. How?", "she fell from the bottom rung",
       markers([r"\bbottom\b", r"\b(?:first|lowest)\s+(?:step|rung)\b"],
               [r"\bwater\b", r"\bsoft\b", r"\bmattress\b", r"\bhay\b", r"\bluck(?:y|ily)?\b"]),
       "She fell off the bottom rung.", "She landed on something soft."),
    _q("trick", "which word is spelled wrong in every dictionary", "wrong",
       markers([r"[\"'\u2018\u201c]wrong[\"'\u2019\u201d]", r"^\W*wrong\b", r"\bthe word wrong\b", r"\bw-r-o-n-g\b"]),
       "\"Wrong\" \u2014 it's always spelled W-R-O-N-G.", "None: dictionaries spell every word correctly."),
    _q("trick", "What goes up but never comes down?", "your age",
       markers([r"\bages?\b"], [r"\bballoons?\b", r"\bsmoke\b", r"\bprices?\b", r"\brockets?\b"]),
       "Your age.", "A balloon."),
    _q("trick", "forward I'm heavy but backward I'm not. what am I?", "ton", markers([r"\btons?\b"]),
       "A ton: spelled backward it's 'not'.", "A feather."),
    _q("trick", "A cowboy rides into town on Friday, stays three days, and rides out on Friday. How is that possible?",
       "his horse is named Friday",
       markers([r"\bhorse\b"],
               [r"\bnext friday\b", r"\bfollowing friday\b", r"\ba week\b", r"\b(?:seven|eight) days\b"]),
       "His horse is named Friday.", "He arrived on one Friday and left the following Friday."),
    _q("trick", "I have cities but no houses, forests but no trees, and water but no fish. What am I?", "a map",
       markers([r"\bmaps?\b", r"\batlas\b"], [r"\bdeserts?\b", r"\bpaintings?\b", r"\bdreams?\b", r"\bglobe\b"]),
       "A map.", "A painting."),
    # -- prose: no result, only prose
    _q("prose", "write a slogan for my bike repair shop", "a slogan",
       prose(4, r"bike|bicycle|wheel|ride|pedal|cycl|spoke|chain|gear|roll"),
       "Bent wheel? Broken chain? We'll get you rolling again!", "```\nslogan\n```"),
    _q("prose", "can you write a rhyming couplet about monday mornings", "a couplet",
       prose(8, r"monday|morning|alarm|week"),
       "The Monday alarm rings loud and clear,\nI hit snooze and wish the weekend were here.", "Answer: 2"),
    _q("prose", "Write a short note to my neighbour asking them to keep the music down after 10pm.", "a note",
       prose(12, r"music|noise|volume|loud|quiet"),
       "Hi! I hope you're well. Would you mind keeping the music down after 10pm on weeknights? I start work early. "
       "Thanks so much, Priya (flat 4)", "22:00"),
    _q("prose", "explain how vaccines work in a couple of sentences", "an explanation", prose(15, r"immun"),
       "A vaccine shows your immune system a harmless piece or a weakened form of a germ. Your body learns to "
       "recognise it and makes antibodies, so if the real germ turns up later it can fight it off quickly.",
       "Vaccines = immunity"),
    _q("prose", "write an out of office message, I'm on holiday until the 14th", "a message",
       prose(12, r"office|away|holiday|vacation|leave|return|back"),
       "Thank you for your email. I'm on holiday until the 14th with no access to email. I'll reply when I'm back; "
       "for anything urgent, please contact Sam at sam@example.com.", "14"),
    _q("prose", "give me a name and a one-line pitch for a board game about pirates", "a pitch",
       prose(8, r"pirate|treasure|ship|sail|sea|plunder"),
       "Plunder Bay: race rival crews across a cursed sea to bury your treasure before the storm hits.",
       "print('Plunder Bay')"),
    _q("prose", "Write a short LinkedIn post saying I just started a new job as a nurse.", "a post", prose(15, r"nurs"),
       "Some personal news: I've just started a new role as a registered nurse at St Mary's Hospital! I'm grateful "
       "to everyone who supported me through nursing school, and I can't wait to care for patients on the ward.",
       "Nurse."),
    _q("prose", "explain the offside rule in football like I've never watched a game", "an explanation",
       prose(15, r"offside|defender|goal"),
       "A player is offside if, when a teammate passes the ball to them, they are nearer the other team's goal line "
       "than both the ball and the second-last defender. It stops attackers from simply waiting next to the goal.",
       "Answer: 2"),
    _q("prose", "write a quick reminder for my book club that we meet thursday at 7 at the library", "a reminder",
       prose(10, r"thursday"),
       "Hi all! Just a reminder that book club meets this Thursday at 7pm at the library. See you there, and don't "
       "forget your copy!", "Thursday 7pm"),
    _q("prose", "how should I start a speech at my dad's retirement party?", "an opening",
       prose(15, r"dad|father|retire|career"),
       "Open with something warm and light, for example: \"Good evening, everyone. For forty years Dad left the house "
       "at seven every morning, and starting Monday, Mom has to figure out what to do with him all day.\" Then thank "
       "everyone for coming before you tell your stories.", "40"),
    _q("prose", "describe a sunset in three sentences", "a description", prose(20, r"sun|sky"),
       "The sun sinks slowly toward the hills, turning the sky orange and pink. Long shadows stretch across the "
       "fields as the air grows cool. Then the last sliver of light slips away, and the first stars appear.",
       _CODE_REPLY),
    _q("prose", "write a short review of a pizza place, the food was great but the service was really slow",
       "a review", prose(15, r"pizza|food"),
       "The pizza here is excellent: a crisp, blistered crust and fresh toppings. Sadly, the service was very slow, "
       "and we waited almost an hour for our food. Great for a relaxed evening, not for a quick bite. 3/5.", "3/5"),
    _q("prose", "explain inflation like i'm 12", "an explanation", prose(15, r"price|cost|money"),
       "Inflation is when prices go up over time, so the same amount of money buys less. If a candy bar costs $1 "
       "this year and $1.10 next year, your dollar doesn't go as far as it used to.", "Answer: 3%"),
    _q("prose", "Write a sign for the office fridge telling people to put their name on their food", "a sign",
       prose(8, r"name|label"),
       "Please label your food with your name and the date! Anything unlabelled will be thrown out on Friday "
       "afternoon. Thank you!", "Fridge."),
)

KINDS_3: tuple[str, ...] = tuple(dict.fromkeys(q.kind for q in QUESTIONS_3))
"""The kinds, in the order the set lists them (the first set's kinds)."""


def plain3_tasks(n: int, seed: int) -> list[Task]:
    """``n`` questions of this set drawn by ``seed``, as ``plain_tasks`` draws the first set (``drawn_tasks``): a
    smaller ``n`` draws a subset of a larger one's draw. Ids are ``plain3-<kind>-<k>``; the family is the kind."""
    return drawn_tasks(QUESTIONS_3, "plain3", n, seed)
