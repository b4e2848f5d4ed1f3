"""``--tasks plain4``: a fourth fresh set of questions asked as users type them, graded as ``--tasks plain`` is.

Why: a set whose replies have been read no longer says how a method does on questions nobody has looked at; this one
is for the next measurement. It was written on 2026-12-06, before any run of any method on it, without reading any
recorded answer of the other three sets (only their questions and graders). None of it was chosen by running a model.

The set: the first set's nine kinds (``fact``, ``letters``, ``numbers``, ``dates``, ``order``, ``yes-no``,
``sequences``, ``trick``, ``prose``), 14 questions each, 126 in all. No question is one of the first three sets'. A
pattern the first three sets ask three times or more together is not asked again: those the second and third sets'
docstrings list, and a clock time, days counted in a period (the weekdays of a month, the Thursdays of a year, the
days of a half year, a quarter or a month), which of two is more, a thing classed ("is a whale a fish", "is a bat
a mammal", "is the sun a star"), a myth, a bare product of two numbers (17 times 23, 999 x 999), a fact of a kind
the sets asked twice (a writer, a currency), a poem. This set asks others:

- fact: a baby animal's name, a guitar's strings, a painter, an instrument's use, a science's name, a phobia, an
  inventor, a vitamin, a vaccine's maker, an ocean between two continents, a scientist's subject, a ship, a Greek
  god, what bees make;
- letters: a NATO code word, a Morse code, the word with no letter twice, a spelling, syllables, a silent letter, a
  key on the keyboard, two words joined, a letter taken out, an irregular plural, letter numbers decoded, a
  hexadecimal digit, the latest letter of a word, a letter turned upside down;
- numbers: a unit price, a fence, a floor's area, the mark needed for an average, a division, a decimal as a
  fraction, a dice probability, handshakes, a week's pay, odd numbers summed, an average speed (not the mean), a
  circle's area, empty seats, a sum shared in a ratio;
- dates: a Chinese zodiac year, a star sign, Mother's Day, a tax year's end, a last business day, the months of 31
  days, a US date written with slashes, Easter's latest date, the Unix epoch, the Ides of March, St Patrick's Day,
  Advent Sunday, a train past midnight on New Year's Eve, years between two years;
- order: weekdays from Monday, medals, a butterfly's stages, army ranks, speeds, chess pieces' values, Roman
  numerals, mitosis, wavelengths, hardness, notes' lengths, coffee cup sizes, the Earth's layers, playing cards;
- yes-no: 52 weeks in a year, a googol, odd plus odd, a light-year, the Earth's distance in January, a triangle's
  sides, dividing by zero, plants and oxygen, a coin after five heads, a dice's numbers summed, ice, the Moon by day,
  the Dead Sea, the Moon's gravity;
- sequences: Catalan numbers, numbers and their reversals, a clock face, Roman tens, Collatz, seasons, polygons,
  digit sums added, primorials, palindromic numbers, numbers not multiples of 3, the 1-2-5 series, US coins, US
  presidents;
- trick: classic riddles (a clock's hands, a hole, a river, a candle, a cold, a bed, a teapot, a deck of cards,
  "short", Monopoly, a glove, your name, an echo, a dictionary);
- prose: a text saying I'm late, a mortgage explained, a complaint about lost luggage, quitting a job, a welcome for a
  club, a bio, declining a wedding, the seasons explained, asking for a raise, a plot summary, a group chat message,
  an API explained, a job ad, a short horror story.

Phrased as people type them (lowercase or not, with or without a question mark, a few with a sentence of context);
no question asks for a format.

Every computable key is computed here by code beside its question (``str`` methods, set algebra, ``sorted`` over
facts stated beside it, ``date``, ``datetime``, ``timedelta``, ``calendar``, ``Fraction``, ``math``, ``statistics``,
``itertools``), so no key can be mistyped. Facts are stable ones with one accepted answer; the trick questions are
classic riddles with one definite answer.

The graders are the first set's (``Check`` constructors of ``bench/asked_plainly.py``; the first three sets' grades
unchanged), reading a reply as a person does: its final result, the question's own values echoed aside. No grader is
extended: a fraction is read by the third set's ``_fraction`` (``markers`` with patterns built there), and a day of
the year named with or without any year (the Ides of March, Easter's latest date) by ``_any_year`` here, the first
set's ``dates`` reader with a ``right`` that leaves the year aside. Where a right reply often names another answer
after the right one (the other words of a list, Sabin after Salk, other Roman numerals), that answer is not listed as
wrong: a reply naming only it names no answer, which is wrong too. Each question carries a typical right and a typical
wrong reply, graded by ``tests/test_asked_plainly_4.py``. Questions whose usual right reply those graders would
misread were left out while writing (a past tense, whose reply names the past participle after it; the month a
fiscal year starts, whose reply names the month it ends; the chambers of the heart, counted "two atria and two
ventricles"; the most common number of a list, whose reply counts how often it appears with one of the list's own
numbers; the digits of 1, 2, 3 ... run together, whose reply names the number the next digit comes from; the colours
of the rainbow, whose reply goes on to the last ones; a date in ISO 8601, which the date reader reads as the
question's own date; whether Greenland is bigger than Africa, whose reply "Africa is bigger than Greenland" the
yes-no reader takes for a yes; a walking time, whose reply ends on its minutes).
"""

from __future__ import annotations

import calendar
import itertools
import math
import statistics
from collections.abc import Hashable
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
    dates,
    drawn_tasks,
    letter,
    markers,
    named,
    number,
    on_date,
    prose,
    sequence,
    word,
    yes_no,
)
from bench.asked_plainly_3 import _easter, _fraction, _roman
from bench.tasks import Task

__all__ = ["KINDS_4", "QUESTIONS_4", "plain4_tasks"]


# -- a reader built from the first set's ``dates`` ---------------------------------------------------------------


def _any_year(day: date) -> Check:
    """A day of the year ("15 March", "March 15", "15 March 44 BC"): month and day right, whatever year is named
    with it. Any other day is wrong."""
    def right(value: Hashable) -> bool:
        return isinstance(value, tuple) and value[:2] == (day.month, day.day)
    return Check(dates, right)


# -- keys, computed ----------------------------------------------------------------------------------------------


def _to_roman(n: int) -> str:
    out = ""
    for value, numeral in ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"),
                           (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        while n >= value:
            out, n = out + numeral, n - value
    return out


assert all(_roman(_to_roman(n)) == n for n in range(1, 400))

# letters
_NATO = ["Alfa", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel", "India", "Juliett", "Kilo", "Lima",
         "Mike", "November", "Oscar", "Papa", "Quebec", "Romeo", "Sierra", "Tango", "Uniform", "Victor", "Whiskey",
         "X-ray", "Yankee", "Zulu"]
assert [w[0] for w in _NATO] == [chr(c) for c in range(ord("A"), ord("Z") + 1)]
_NATO_Q = next(w for w in _NATO if w[0] == "Q")
_MORSE = {"b": "-...", "d": "-..", "s": "...", "v": "...-", "h": "....", "n": "-."}
_MORSE_SAID = " ".join({"-": "dash", ".": "dot"}[c] for c in _MORSE["b"])
_MORSE_KEY = next(k for k, v in _MORSE.items() if v == _MORSE["b"])
assert len(set(_MORSE.values())) == len(_MORSE)
_FOUR_WORDS = ["apple", "letter", "planet", "banana"]
_NO_REPEAT = [w for w in _FOUR_WORDS if len(set(w)) == len(w)]
assert len(_NO_REPEAT) == 1  # one word has no letter twice
_BA_NA_NA = ["ba", "na", "na"]
assert "".join(_BA_NA_NA) == "banana"
_BANANA = len(_BA_NA_NA)
_SILENT_WORDS = ["knife", "knee", "know"]
_SILENT = {w[0] for w in _SILENT_WORDS}
assert len(_SILENT) == 1  # they all start with the same (silent) letter
_QWERTY = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]
_BOTTOM_LEFT = _QWERTY[-1][0]
_JOINED = "sun" + "flower"
_FIEND = "friend".replace("r", "", 1)
_HOUSE_CODE = [8, 15, 21, 19, 5]
_HOUSE = "".join(chr(ord("a") + n - 1) for n in _HOUSE_CODE)
_HEX_15 = format(15, "X")
_LATEST = max("jumping")
_TURNED = {"b": "q", "q": "b", "d": "p", "p": "d", "n": "u", "u": "n"}  # a lowercase letter rotated 180 degrees

# numbers
_PENCILS = _plain(float(Fraction(75, 3) * 7 / 100))  # dollars
_FENCE = 2 * (20 + 15)
_CARPET = _plain(4 * 3.5)
_NEEDED = 4 * 85 - (72 + 85 + 90)
_1001 = 1001 // 13
assert 1001 % 13 == 0
_EIGHTHS = Fraction("0.375")
_DICE = [(a, b) for a in range(1, 7) for b in range(1, 7)]
_SEVEN = Fraction(sum(a + b == 7 for a, b in _DICE), len(_DICE))
_HANDSHAKES = math.comb(10, 2)
_PAY = _plain(18 * 37.5)
_ODD_SUM = sum(range(1, 100, 2))
_ROUND_TRIP = _plain(statistics.harmonic_mean([30, 60]))
_LAWN = math.pi * 5 ** 2
_EMPTY_SEATS = 8 * 64 - 397
_BIGGER_SHARE = _plain(90 * 3 / (2 + 3))

# dates
_ANIMALS = ["Rat", "Ox", "Tiger", "Rabbit", "Dragon", "Snake", "Horse", "Goat", "Monkey", "Rooster", "Dog", "Pig"]
_ANIMAL_2027 = _ANIMALS[(2027 - 2020) % 12]  # 2020 was a Year of the Rat
_SIGNS = [((1, 20), "Aquarius"), ((2, 19), "Pisces"), ((3, 21), "Aries"), ((4, 20), "Taurus"), ((5, 21), "Gemini"),
          ((6, 21), "Cancer"), ((7, 23), "Leo"), ((8, 23), "Virgo"), ((9, 23), "Libra"), ((10, 23), "Scorpio"),
          ((11, 22), "Sagittarius"), ((12, 22), "Capricorn")]  # each sign from its first day
_SIGN = [s for start, s in _SIGNS if start <= (8, 3)][-1]
_MAY_SUNDAYS = [date(2027, 5, d) for d in range(1, 32) if date(2027, 5, d).weekday() == calendar.SUNDAY]
_MOTHERS_DAY = _MAY_SUNDAYS[1]  # the second Sunday of May
_TAX_YEAR_END = date(2027, 4, 5)  # the UK tax year runs from 6 April to 5 April
_LAST_BUSINESS = max(date(2027, 2, d) for d in range(1, calendar.monthrange(2027, 2)[1] + 1)
                     if date(2027, 2, d).weekday() < 5)
_LONG_MONTHS = [calendar.month_name[m] for m in range(1, 13) if calendar.monthrange(2027, m)[1] == 31]
_US_DATE = date(2027, 3, 4)  # 03/04/2027, month first
_LATEST_EASTER = max((_easter(y) for y in range(1583, 4100)), key=lambda d: (d.month, d.day))
_EPOCH = datetime.fromtimestamp(0, tz=UTC).date()
_IDES = date(2027, 3, 15)  # the Ides are the 15th of March, May, July and October, the 13th of other months
_ST_PATRICK = date(2027, 3, 17)
_ADVENT = next(date(2026, 11, 27) + timedelta(days=i) for i in range(7)
               if (date(2026, 11, 27) + timedelta(days=i)).weekday() == calendar.SUNDAY)
assert (date(2026, 12, 25) - _ADVENT).days // 7 == 3  # four Sundays of Advent, the last before Christmas
_ARRIVAL = (datetime(2026, 12, 31, 23, 30) + timedelta(hours=2)).date()
_YEARS_APART = 1492 - 1066

# order (facts stated here, the order computed from them)
_DAYS = sorted(["friday", "tuesday", "sunday", "wednesday"], key=[d.lower() for d in calendar.day_name].index)
_MEDALS = {"bronze": 3, "gold": 1, "silver": 2}  # place
_BY_MEDAL = sorted(_MEDALS, key=_MEDALS.__getitem__)
_STAGES = {"pupa": 3, "egg": 1, "adult": 4, "caterpillar": 2}
_BY_STAGE = sorted(_STAGES, key=_STAGES.__getitem__)
_RANKS = {"general": 10, "private": 1, "captain": 3, "sergeant": 5}  # pay grades O-10, E-1, O-3, E-5
_BY_RANK = sorted(_RANKS, key=lambda r: (r in ("captain", "general"), _RANKS[r]))  # every officer outranks enlisted
_KMH = {"snail": 0.05, "cheetah": 110, "human": 45, "horse": 88}  # top speeds
_BY_SPEED = sorted(_KMH, key=_KMH.__getitem__)
_PIECES = {"rook": 5, "knight": 3, "queen": 9, "pawn": 1}
_BY_VALUE = sorted(_PIECES, key=_PIECES.__getitem__)
_NUMERALS = ["XL", "IX", "LX", "XC"]
_BY_NUMERAL = sorted(_NUMERALS, key=_roman)
_MITOSIS = ["prophase", "metaphase", "anaphase", "telophase"]
_PHASES = sorted(["anaphase", "prophase", "telophase", "metaphase"], key=_MITOSIS.index)
_WAVELENGTH = {"X-rays": 1e-10, "radio waves": 1.0, "visible light": 5e-7, "microwaves": 1e-2}  # metres
_BY_WAVELENGTH = sorted(_WAVELENGTH, key=_WAVELENGTH.__getitem__, reverse=True)
_MOHS = {"diamond": 10, "talc": 1, "quartz": 7, "gypsum": 2}
_BY_HARDNESS = sorted(_MOHS, key=_MOHS.__getitem__)
_BEATS = {"quarter": Fraction(1, 4), "whole": Fraction(1), "eighth": Fraction(1, 8), "half": Fraction(1, 2)}
_BY_LENGTH = sorted(_BEATS, key=_BEATS.__getitem__, reverse=True)
_OUNCES = {"venti": 20, "tall": 12, "grande": 16}  # hot drinks
_BY_CUP = sorted(_OUNCES, key=_OUNCES.__getitem__)
_DEPTH_KM = {"mantle": 35, "inner core": 5150, "crust": 0, "outer core": 2890}  # where each layer starts
_BY_DEPTH = sorted(_DEPTH_KM, key=_DEPTH_KM.__getitem__)
_CARDS = {"king": 13, "ace": 14, "jack": 11, "queen": 12}  # ace high
_BY_CARD = sorted(_CARDS, key=_CARDS.__getitem__)

# yes-no
_WHOLE_WEEKS = 365 % 7 == 0
_GOOGOL = 10 ** 100 > 10 ** 82  # the observable universe holds about 10^80 atoms
_ODD_PLUS_ODD = all((a + b) % 2 == 0 for a in range(1, 100, 2) for b in range(1, 100, 2))
_TRIANGLE = 2 + 3 > 6
_DICE_21 = sum(range(1, 7)) == 21

# sequences
_CATALAN = [math.comb(2 * n, n) // (n + 1) for n in range(8)]
_REVERSED = [v for n in (12, 23, 34) for v in (n, int(str(n)[::-1]))] + [45]
_CLOCK = [(12 + 3 * i - 1) % 12 + 1 for i in range(5)]
_TENS = [_to_roman(10 * k) for k in range(1, 7)]
_COLLATZ = [6]
while len(_COLLATZ) < 8:
    _COLLATZ.append(_COLLATZ[-1] // 2 if _COLLATZ[-1] % 2 == 0 else 3 * _COLLATZ[-1] + 1)
_SEASONS = ["spring", "summer", "autumn", "winter"]
_POLYGONS = {3: "triangle", 4: "square", 5: "pentagon", 6: "hexagon", 7: "heptagon"}
_DIGIT_SUMS = [1]
while len(_DIGIT_SUMS) < 10:
    _DIGIT_SUMS.append(_DIGIT_SUMS[-1] + sum(int(d) for d in str(_DIGIT_SUMS[-1])))
_PRIMES = [p for p in range(2, 30) if _is_prime(p)]
_PRIMORIALS = list(itertools.accumulate(_PRIMES[:5], lambda a, b: a * b))
_PALINDROMES = [n for n in range(88, 130) if str(n) == str(n)[::-1]][:5]
_NOT_THREES = [n for n in range(1, 20) if n % 3][:8]
_ONE_TWO_FIVE = [m * 10 ** e for e in range(3) for m in (1, 2, 5)][:9]
_COINS = {"penny": 1, "nickel": 5, "dime": 10, "quarter": 25, "half dollar": 50}  # cents
_BY_COIN = sorted(_COINS, key=_COINS.__getitem__)
_PRESIDENTS = ["Washington", "Adams", "Jefferson", "Madison", "Monroe"]


QUESTIONS_4: tuple[Question, ...] = (
    # -- fact: short, stable facts
    _q("fact", "what's a baby kangaroo called", "joey", named("joey", "joeys", wrong=("cub", "kit", "calf", "pup")),
       "A baby kangaroo is called a joey.", "A baby kangaroo is called a cub."),
    _q("fact", "How many strings does a normal guitar have?", 6, number(6),
       "A standard guitar has 6 strings, tuned E, A, D, G, B, E.", "A guitar has 4 strings."),
    _q("fact", "who painted the starry night", "Vincent van Gogh",
       named("van Gogh", "Gogh", wrong=("Monet", "Picasso", "Gauguin", "Cezanne", "C\u00e9zanne")),
       "Vincent van Gogh painted The Starry Night in 1889, at the asylum in Saint-R\u00e9my.",
       "Claude Monet painted it."),
    _q("fact", "what does a thermometer measure", "temperature",
       named("temperature", "temperatures", wrong=("pressure", "humidity", "weight")),
       "A thermometer measures temperature: how hot or cold something is.", "It measures air pressure."),
    _q("fact", "What's the study of earthquakes called?", "seismology",
       named("seismology", wrong=("geology", "volcanology", "meteorology")),
       "The study of earthquakes is called seismology, and the scientists who do it are seismologists.",
       "It's called volcanology."),
    _q("fact", "whats the word for a fear of spiders", "arachnophobia",
       named("arachnophobia", wrong=("acrophobia", "claustrophobia", "agoraphobia")),
       "A fear of spiders is called arachnophobia.", "Claustrophobia."),
    _q("fact", "Who invented the telephone?", "Alexander Graham Bell",
       named("Bell", wrong=("Edison", "Tesla", "Marconi")),
       "Alexander Graham Bell is credited with inventing the telephone; he patented it in 1876.",
       "Thomas Edison invented the telephone."),
    _q("fact", "which vitamin does your body make from sunlight", "vitamin D",
       markers([r"\bvitamin\s*D\d?\b"], [r"\bvitamin\s*[ABCEK]\d{0,2}\b"]),
       "Vitamin D: your skin makes it when it's exposed to UVB light.", "Vitamin C."),
    _q("fact", "who made the first polio vaccine", "Jonas Salk", named("Salk", wrong=("Pasteur", "Jenner", "Fleming")),
       "Jonas Salk developed the first effective polio vaccine, introduced in 1955; Albert Sabin later made an oral "
       "one.", "Louis Pasteur made the first polio vaccine."),
    _q("fact", "which ocean is between Africa and Australia?", "the Indian Ocean",
       named("Indian", wrong=("Pacific", "Atlantic", "Southern", "Arctic")),
       "The Indian Ocean lies between Africa and Australia.", "The Pacific Ocean."),
    _q("fact", "what does a botanist study", "plants",
       named("plants", "plant", "plant life", "flora", wrong=("animals", "insects", "rocks", "stars")),
       "A botanist studies plants: how they grow, work and are classified.", "A botanist studies animals."),
    _q("fact", "What was the name of the ship Charles Darwin sailed around the world on?", "HMS Beagle",
       named("Beagle", wrong=("Endeavour", "Endeavor", "Bounty", "Victory", "Mayflower")),
       "Darwin sailed on HMS Beagle, on a voyage from 1831 to 1836.", "HMS Endeavour."),
    _q("fact", "who was the greek god of the sea", "Poseidon", named("Poseidon", wrong=("Zeus", "Hades", "Apollo")),
       "Poseidon was the Greek god of the sea (Neptune to the Romans).", "Zeus."),
    _q("fact", "what do bees make from nectar?", "honey", named("honey", wrong=("wax", "beeswax", "pollen", "jelly")),
       "Bees turn nectar into honey, which they store in the comb.", "Beeswax."),
    # -- letters: code words, Morse, spelling, syllables, joined and shortened words, letters as numbers
    _q("letters", "what's the NATO phonetic alphabet word for Q", _NATO_Q,
       named(_NATO_Q, wrong=("Queen", "Quiet", "Quick", "Quartz")),
       f"Q is {_NATO_Q} in the NATO phonetic alphabet.", "Q is Queen."),
    _q("letters", f"what letter is {_MORSE_SAID} in morse code?", _MORSE_KEY.upper(), letter(_MORSE_KEY),
       f"{_MORSE['b']} ({_MORSE_SAID}) is the letter {_MORSE_KEY.upper()}.", "That's D."),
    _q("letters", f"which of these words has no letter that appears twice: {', '.join(_FOUR_WORDS)}", _NO_REPEAT[0],
       named(_NO_REPEAT[0]), f"{_NO_REPEAT[0].capitalize()}: all six of its letters are different.", "Apple."),
    _q("letters", "how do you spell recieve properly", "receive", word("receive"),
       "It's spelled receive: i before e, except after c.", "It's spelled recieve."),
    _q("letters", "How many syllables are in the word banana?", _BANANA, number(_BANANA),
       f"Banana has {_BANANA} syllables: {'-'.join(_BA_NA_NA)}.", "Banana has 2 syllables."),
    _q("letters", f"what silent letter do {', '.join(_SILENT_WORDS[:-1])} and {_SILENT_WORDS[-1]} all start with",
       next(iter(_SILENT)), letter(next(iter(_SILENT))),
       f"They all start with a silent {next(iter(_SILENT)).upper()}.", "They start with a silent N."),
    _q("letters", "which letter is at the far left of the bottom row on a qwerty keyboard?", _BOTTOM_LEFT.upper(),
       letter(_BOTTOM_LEFT), f"{_BOTTOM_LEFT.upper()} is the leftmost letter of the bottom row, next to Shift.",
       "It's X."),
    _q("letters", "what word do you get if you stick sun and flower together", _JOINED, word(_JOINED),
       f"Sun + flower = {_JOINED}.", "Sunflour."),
    _q("letters", "if you take the r out of friend what word is left", _FIEND, word(_FIEND),
       f"Friend without the r is {_FIEND}.", "Friend without the r is fried."),
    _q("letters", "whats the plural of child", "children", word("children"),
       "The plural of child is children.", "The plural of child is childs."),
    _q("letters", f"if a=1, b=2 and so on, what word is {' '.join(map(str, _HOUSE_CODE))}?", _HOUSE, word(_HOUSE),
       f"{', '.join(f'{n} = {c.upper()}' for n, c in zip(_HOUSE_CODE, _HOUSE, strict=True))}, so it "
       f"spells {_HOUSE.upper()}.", "It spells HORSE."),
    _q("letters", "Which letter stands for 15 in hexadecimal?", _HEX_15, letter(_HEX_15),
       f"15 is {_HEX_15} in hexadecimal: A to F stand for 10 to 15.", "E stands for 15."),
    _q("letters", "which letter in the word jumping comes latest in the alphabet", _LATEST, letter(_LATEST),
       f"The letter of jumping latest in the alphabet is {_LATEST}.", "It's p."),
    _q("letters", "what letter do you get if you turn a lowercase d upside down, rotating it 180 degrees?",
       _TURNED["d"], letter(_TURNED["d"]),
       f"A lowercase d rotated 180 degrees looks like a {_TURNED['d']}.", "It looks like a b."),
    # -- numbers: prices, lengths and areas, averages, fractions, chances, counts, pay, shares
    _q("numbers", "if 3 pencils cost 75 cents how much do 7 pencils cost", _PENCILS, number(_PENCILS, cents=True),
       f"Each pencil costs 25 cents, so 7 pencils cost ${_PENCILS:.2f}.", "7 pencils cost $2.10."),
    _q("numbers", "How much fencing do I need to go all the way around a garden that's 20 m by 15 m?", _FENCE,
       number(_FENCE), f"The perimeter is 2 \u00d7 (20 + 15) = {_FENCE} m.", "You need 300 m of fencing."),
    _q("numbers", "my bedroom is 4 metres by 3.5 metres, how many square metres of carpet do i need", _CARPET,
       number(_CARPET), f"4 \u00d7 3.5 = {_CARPET} square metres.", "You need 15 square metres."),
    _q("numbers", "I got 72, 85 and 90 on my first three tests. What do I need on the fourth to average 85?",
       _NEEDED, number(_NEEDED),
       f"You need 4 \u00d7 85 = 340 points in all, and you have 72 + 85 + 90 = 247, so you need {_NEEDED}.",
       "You need 85."),
    _q("numbers", "whats 1001 divided by 13", _1001, number(_1001), f"1001 \u00f7 13 = {_1001}", "1001 \u00f7 13 = 76"),
    _q("numbers", "what's 0.375 as a fraction?", str(_EIGHTHS), _fraction(_EIGHTHS, r"three[- ]eighths"),
       f"0.375 = 375/1000 = {_EIGHTHS}", "0.375 = 3/4"),
    _q("numbers", "If you roll two dice, what's the chance the total is 7?", str(_SEVEN),
       _fraction(_SEVEN, r"one[- ]sixth", r"1 in 6"),
       f"6 of the 36 equally likely outcomes add up to 7, so the chance is 6/36 = {_SEVEN}, about 16.7%.",
       "The chance is 1/12."),
    _q("numbers", "10 people in a room all shake hands with each other once. how many handshakes is that",
       _HANDSHAKES, number(_HANDSHAKES), f"Each pair shakes once: 10 \u00d7 9 \u00f7 2 = {_HANDSHAKES} handshakes.",
       "There are 100 handshakes."),
    _q("numbers", "I earn $18 an hour and worked 37.5 hours this week, what's my pay before tax?", _PAY, number(_PAY),
       f"$18 \u00d7 37.5 = ${_PAY:,}", "Your pay is $666."),
    _q("numbers", "what's 1 + 3 + 5 + ... + 99", _ODD_SUM, number(_ODD_SUM),
       f"There are 50 odd numbers from 1 to 99, and their sum is 50\u00b2 = {_ODD_SUM:,}.", "The sum is 2,550."),
    _q("numbers", "I drive to work at 30 mph and back home the same way at 60 mph. What's my average speed for the "
       "round trip?", _ROUND_TRIP, number(_ROUND_TRIP),
       f"For a distance d each way, the time is d/30 + d/60 = d/20, so the average is 2d \u00f7 (d/20) = "
       f"{_ROUND_TRIP} mph.", "Your average speed is 45 mph."),
    _q("numbers", "I want grass seed for a round lawn with a radius of 5 metres. How many square metres is it?",
       round(_LAWN, 1), number(_LAWN, tol=0.1),
       f"\u03c0 \u00d7 5\u00b2 = 25\u03c0, about {_LAWN:.1f} square metres.", "It's about 31.4 square metres."),
    _q("numbers", "a train has 8 carriages with 64 seats each and 397 people get on. how many seats are empty?",
       _EMPTY_SEATS, number(_EMPTY_SEATS),
       f"8 \u00d7 64 = 512 seats, and 512 \u2212 397 = {_EMPTY_SEATS} are empty.", "125 seats are empty."),
    _q("numbers", "my friend and i are splitting $90 in the ratio 2:3, how much is the bigger share", _BIGGER_SHARE,
       number(_BIGGER_SHARE),
       f"90 \u00f7 5 = 18, so the shares are 2 \u00d7 18 = $36 and 3 \u00d7 18 = ${_BIGGER_SHARE}. The bigger share "
       f"is ${_BIGGER_SHARE}.", "The bigger share is $60."),
    # -- dates: signs, holidays, a tax year, a business day, dates written and read, days of the year
    _q("dates", "what's the chinese zodiac animal for 2027", _ANIMAL_2027,
       named(_ANIMAL_2027, "Sheep", "Ram", wrong=[a for a in _ANIMALS if a != _ANIMAL_2027]),
       f"2027 is the Year of the {_ANIMAL_2027} (also called the Sheep or Ram).", "2027 is the Year of the Horse."),
    _q("dates", "what star sign is someone born on 3 august", _SIGN,
       named(_SIGN, wrong=[s for _, s in _SIGNS if s != _SIGN]),
       f"Someone born on 3 August is a {_SIGN}.", "They're a Cancer."),
    _q("dates", "When is Mother's Day in the US in 2027?", _long(_MOTHERS_DAY), on_date(_MOTHERS_DAY),
       f"Mother's Day in the US is the second Sunday of May: {calendar.month_name[_MOTHERS_DAY.month]} "
       f"{_MOTHERS_DAY.day}, 2027.", f"It's on {_long(_MOTHERS_DAY + timedelta(days=7))}."),
    _q("dates", "what date does the 2026/27 UK tax year end", _long(_TAX_YEAR_END), on_date(_TAX_YEAR_END),
       f"The 2026/27 tax year ends on {_long(_TAX_YEAR_END)}.", "It ends on 31 March 2027."),
    _q("dates", "my rent is due on the last business day of february 2027. what date is that?", _long(_LAST_BUSINESS),
       on_date(_LAST_BUSINESS),
       f"28 February 2027 is a {calendar.day_name[date(2027, 2, 28).weekday()]}, so the last business day is "
       f"{calendar.day_name[_LAST_BUSINESS.weekday()]} {_long(_LAST_BUSINESS)}.",
       "It's 28 February 2027."),
    _q("dates", "which months have 31 days", _listed(_LONG_MONTHS), sequence(_LONG_MONTHS),
       f"{', '.join(_LONG_MONTHS[:-1])} and {_LONG_MONTHS[-1]}.", "January, March, May, July, September, November"),
    _q("dates", "I got a letter from the US dated 03/04/2027. What date is that?", _long(_US_DATE), on_date(_US_DATE),
       f"In the US the month comes first, so 03/04/2027 is {calendar.month_name[_US_DATE.month]} {_US_DATE.day}, "
       "2027.", "It's 3 April 2027."),
    _q("dates", "what's the latest date easter sunday can ever fall on",
       f"{_LATEST_EASTER.day} {calendar.month_name[_LATEST_EASTER.month]}", _any_year(_LATEST_EASTER),
       f"The latest possible date for Easter Sunday is {calendar.month_name[_LATEST_EASTER.month]} "
       f"{_LATEST_EASTER.day}.", "Easter can fall as late as April 30."),
    _q("dates", "what date does unix time count from", _long(_EPOCH), on_date(_EPOCH),
       f"Unix time counts seconds from {_long(_EPOCH)}, at midnight UTC.", "It counts from 1 January 1900."),
    _q("dates", "what date are the ides of march?", f"{_IDES.day} March", _any_year(_IDES),
       f"The Ides of March is {_IDES.day} March, the day Julius Caesar was killed in 44 BC.",
       "The Ides of March is March 13."),
    _q("dates", "when is St Patrick's Day", f"{_ST_PATRICK.day} March", _any_year(_ST_PATRICK),
       f"St Patrick's Day is on {_ST_PATRICK.day} March every year.", "It's on March 16."),
    _q("dates", "when is the first sunday of advent in 2026", _long(_ADVENT), on_date(_ADVENT),
       f"Advent begins four Sundays before Christmas, on Sunday {_long(_ADVENT)}.", "It's on 1 December 2026."),
    _q("dates", "A train leaves at 11:30pm on 31 December 2026 and the trip takes 2 hours. What date does it arrive?",
       _long(_ARRIVAL), on_date(_ARRIVAL), f"It arrives at 1:30 am on {_long(_ARRIVAL)}.",
       "It arrives on 31 December 2026."),
    _q("dates", "how many years were there between 1066 and 1492", _YEARS_APART, number(_YEARS_APART),
       f"1492 \u2212 1066 = {_YEARS_APART} years.", "There were 436 years."),
    # -- order: lists by a property of their own, each stated beside it
    _q("order", "put these days in order starting from monday: friday, tuesday, sunday, wednesday", _listed(_DAYS),
       sequence(_DAYS), f"{_listed(d.capitalize() for d in _DAYS)}.", "friday, sunday, tuesday, wednesday"),
    _q("order", "rank these medals from best to worst: bronze, gold, silver", _listed(_BY_MEDAL),
       sequence(_BY_MEDAL), f"{_listed(m.capitalize() for m in _BY_MEDAL)}.", "gold, bronze, silver"),
    _q("order", "what order do these come in for a butterfly: pupa, egg, adult, caterpillar", _listed(_BY_STAGE),
       sequence(_BY_STAGE), f"{_listed(_BY_STAGE)}.", "egg, pupa, caterpillar, adult"),
    _q("order", "Put these army ranks from lowest to highest: general, private, captain, sergeant",
       _listed(_BY_RANK), sequence(_BY_RANK), f"{_listed(r.capitalize() for r in _BY_RANK)}.",
       "private, captain, sergeant, general"),
    _q("order", "sort these from slowest to fastest: snail, cheetah, human, horse", _listed(_BY_SPEED),
       sequence(_BY_SPEED), ", ".join(f"{a} ({_KMH[a]} km/h)" for a in _BY_SPEED), "snail, human, cheetah, horse"),
    _q("order", "rank these chess pieces from least to most valuable: rook, knight, queen, pawn", _listed(_BY_VALUE),
       sequence(_BY_VALUE), ", ".join(f"{p} ({_PIECES[p]})" for p in _BY_VALUE), "pawn, rook, knight, queen"),
    _q("order", "sort these roman numerals from smallest to biggest: XL, IX, LX, XC", _listed(_BY_NUMERAL),
       sequence(_BY_NUMERAL), ", ".join(f"{n} ({_roman(n)})" for n in _BY_NUMERAL), "IX, LX, XL, XC"),
    _q("order", "what order do the phases of mitosis go in? anaphase, prophase, telophase, metaphase",
       _listed(_PHASES), sequence(_PHASES), f"{_listed(p.capitalize() for p in _PHASES)}.",
       "prophase, anaphase, metaphase, telophase"),
    _q("order", "order these from longest wavelength to shortest: X-rays, radio waves, visible light, microwaves",
       _listed(_BY_WAVELENGTH), sequence(_BY_WAVELENGTH), f"{_listed(_BY_WAVELENGTH)}.",
       "X-rays, visible light, microwaves, radio waves"),
    _q("order", "Rank these from softest to hardest: diamond, talc, quartz, gypsum", _listed(_BY_HARDNESS),
       sequence(_BY_HARDNESS), ", ".join(f"{m} ({_MOHS[m]})" for m in _BY_HARDNESS),
       "talc, quartz, gypsum, diamond"),
    _q("order", "sort these notes from longest to shortest: quarter note, whole note, eighth note, half note",
       _listed(f"{n} note" for n in _BY_LENGTH), sequence(_BY_LENGTH),
       f"{_listed(f'{n} note' for n in _BY_LENGTH)}.", "eighth note, quarter note, half note, whole note"),
    _q("order", "starbucks cup sizes from smallest to biggest: venti, tall, grande", _listed(_BY_CUP),
       sequence(_BY_CUP), ", ".join(f"{c.capitalize()} ({_OUNCES[c]} oz)" for c in _BY_CUP), "grande, tall, venti"),
    _q("order", "order the layers of the earth from the outside in: mantle, inner core, crust, outer core",
       _listed(_BY_DEPTH), sequence(_BY_DEPTH), f"{_listed(_BY_DEPTH)}.", "crust, mantle, inner core, outer core"),
    _q("order", "in poker, rank these from lowest to highest: king, ace, jack, queen", _listed(_BY_CARD),
       sequence(_BY_CARD), f"{_listed(c.capitalize() for c in _BY_CARD)}.", "ace, jack, queen, king"),
    # -- yes-no: numbers' properties, the world, chance
    _q("yes-no", "does a year have exactly 52 weeks", _yes(_WHOLE_WEEKS),
       yes_no(_yes(_WHOLE_WEEKS), r"\bexactly 52 weeks\b", no_words=[r"\b52 weeks and (?:1|one|2|two) days?\b"]),
       "No: 365 days is 52 weeks and 1 day, and a leap year is 52 weeks and 2 days.",
       "Yes, a year has exactly 52 weeks."),
    _q("yes-no", "is a googol bigger than the number of atoms in the universe?", _yes(_GOOGOL),
       yes_no(_yes(_GOOGOL), r"\b(?:bigger|larger|greater) than\b"),
       "Yes, by far: a googol is 10^100, and the observable universe holds only about 10^80 atoms.",
       "No, the universe has more atoms than a googol."),
    _q("yes-no", "is the sum of two odd numbers always even", _yes(_ODD_PLUS_ODD),
       yes_no(_yes(_ODD_PLUS_ODD), r"\beven\b"),
       "Yes: odd + odd is always even, for example 3 + 5 = 8.", "No, two odd numbers add up to an odd number."),
    _q("yes-no", "Is a light year a unit of time?", "no",
       yes_no("no", r"\bunit of time\b", no_words=[r"\bunit of (?:distance|length)\b"]),
       "No, a light-year is a unit of distance: how far light travels in a year, about 9.46 trillion km.",
       "Yes, a light year is a unit of time, one year."),
    _q("yes-no", "is the earth closer to the sun in january than in july", "yes",
       yes_no("yes", r"\bcloser\b", no_words=[r"\bfarther\b", r"\bfurther\b"]),
       "Yes. Earth is at its closest to the Sun in early January (about 147 million km) and farthest in early July "
       "(about 152 million km).", "No, the Earth is farther from the sun in January; that's why it's winter."),
    _q("yes-no", "can you make a triangle with sides 2, 3 and 6 cm long", _yes(_TRIANGLE),
       yes_no(_yes(_TRIANGLE), r"\b(?:make|form) a triangle\b"),
       "No. The two shorter sides add up to 5 cm, less than 6 cm, so their ends can't meet.",
       "Yes, any three lengths can make a triangle."),
    _q("yes-no", "can you divide by zero", "no", yes_no("no", r"\bdivide (?:\w+ )?by zero\b"),
       "No, you can't divide by zero: it's undefined.", "Yes, anything divided by zero is infinity."),
    _q("yes-no", "Do plants need oxygen?", "yes", yes_no("yes", r"\bneed oxygen\b"),
       "Yes. Plants make oxygen by photosynthesis, but their cells also use oxygen for respiration, day and night.",
       "No, plants only need carbon dioxide; they make oxygen."),
    _q("yes-no", "I flipped a fair coin and got heads 5 times in a row. Is tails more likely on the next flip?", "no",
       yes_no("no", r"\bmore likely\b", no_words=[r"\bindependent\b", r"\bstill 50\b"]),
       "No. Each flip is independent, so the chance of tails is still 50%.",
       "Yes, after 5 heads, tails is more likely."),
    _q("yes-no", "do the numbers on a normal dice add up to 21", _yes(_DICE_21),
       yes_no(_yes(_DICE_21), r"\badd up to 21\b"),
       "Yes: 1 + 2 + 3 + 4 + 5 + 6 = 21.", "No, they add up to 20."),
    _q("yes-no", "does ice sink in water?", "no", yes_no("no", r"\bsinks?\b", no_words=[r"\bfloats?\b"]),
       "No, ice floats: it's about 9% less dense than liquid water.", "Yes, ice sinks because it's solid."),
    _q("yes-no", "can you see the moon in the daytime", "yes", yes_no("yes", r"\bsee (?:it|the moon)\b|\bvisible\b"),
       "Yes, often: the Moon is up during the day on most days of the month, and you can see it when it's far "
       "enough from the Sun.", "No, the Moon only comes out at night."),
    _q("yes-no", "is the Dead Sea below sea level?", "yes", yes_no("yes", r"\bbelow sea level\b"),
       "Yes, its shore is about 430 m below sea level, the lowest land on Earth.", "No, it's at sea level."),
    _q("yes-no", "does the moon have gravity", "yes", yes_no("yes", r"\bgravity\b"),
       "Yes, about one sixth of Earth's gravity, which is why astronauts bounce when they walk there.",
       "No, there's no gravity on the Moon; that's why astronauts float."),
    # -- sequences: famous numbers, rules on digits, a clock, Roman numerals, words in order
    _q("sequences", f"{_listed(_CATALAN[:-1])}, what's next", _CATALAN[-1], number(_CATALAN[-1]),
       f"These are the Catalan numbers, so next is {_CATALAN[-1]}.", f"The next is {_CATALAN[-2] * 3}."),
    _q("sequences", f"{_listed(_REVERSED[:-1])}, ?", _REVERSED[-1], number(_REVERSED[-1]),
       f"Each number is followed by its digits reversed, then the next pair starts 11 higher: {_REVERSED[-1]}.",
       "The next is 54."),
    _q("sequences", f"what comes next: {_listed(_CLOCK[:-1])}", _CLOCK[-1], number(_CLOCK[-1], echo=False),
       f"It goes round a clock face in steps of 3 hours, so after {_CLOCK[-2]} comes {_CLOCK[-1]}.",
       "The next is 15."),
    _q("sequences", f"{', '.join(_TENS[:-1])}, what comes next", _TENS[-1],
       markers([rf"\b{_TENS[-1]}\b"], [r"\bLL\b", r"\bXXXXXX\b", r"\bLXX\b"]),
       f"{_TENS[-1]} ({10 * len(_TENS)}): the tens in Roman numerals.", "LL"),
    _q("sequences", f"{_listed(_COLLATZ[:-1])}, ... next?", _COLLATZ[-1], number(_COLLATZ[-1]),
       f"Halve an even number, triple an odd one and add 1: {_COLLATZ[-2]} is even, so next is {_COLLATZ[-1]}.",
       "The next is 1."),
    _q("sequences", f"{', '.join(_SEASONS[:-1])}, ...", _SEASONS[-1], named(_SEASONS[-1]),
       f"The seasons in order: after {_SEASONS[-2]} comes {_SEASONS[-1]}.", "Fall."),
    _q("sequences", f"{', '.join(_POLYGONS[k] for k in range(3, 6))}, what comes next?", _POLYGONS[6],
       named(_POLYGONS[6], wrong=("octagon", "septagon", "circle")),
       f"Each shape has one more side: 3, 4, 5, so next is the {_POLYGONS[6]} with 6 sides.", "An octagon."),
    _q("sequences", f"{_listed(_DIGIT_SUMS[:-1])}, ?", _DIGIT_SUMS[-1], number(_DIGIT_SUMS[-1]),
       f"Each term adds the sum of its own digits: {_DIGIT_SUMS[-2]} + "
       f"{' + '.join(str(_DIGIT_SUMS[-2]))} = {_DIGIT_SUMS[-1]}.", f"The next is {_DIGIT_SUMS[-2] + 11}."),
    _q("sequences", f"next number: {_listed(_PRIMORIALS[:-1])}", _PRIMORIALS[-1], number(_PRIMORIALS[-1]),
       f"Each is the product of the primes so far: {_PRIMORIALS[-2]} \u00d7 {_PRIMES[4]} = {_PRIMORIALS[-1]:,}.",
       f"The next is {_PRIMORIALS[-2] * 9}."),
    _q("sequences", f"{_listed(_PALINDROMES[:-1])}, what's next", _PALINDROMES[-1], number(_PALINDROMES[-1]),
       f"These numbers read the same backwards, so next is {_PALINDROMES[-1]}.", "The next is 122."),
    _q("sequences", f"What's next: {_listed(_NOT_THREES[:-1])}", _NOT_THREES[-1], number(_NOT_THREES[-1]),
       f"It skips the multiples of 3, so next is {_NOT_THREES[-1]}.", "The next is 12."),
    _q("sequences", f"{_listed(_ONE_TWO_FIVE[:-1])}, ...", _ONE_TWO_FIVE[-1], number(_ONE_TWO_FIVE[-1]),
       f"It goes 1, 2, 5 in each power of ten, like banknotes, so next is {_ONE_TWO_FIVE[-1]}.", "The next is 400."),
    _q("sequences", f"{', '.join(_BY_COIN[:3])}, what's the next coin", _BY_COIN[3],
       named(_BY_COIN[3], "quarters", wrong=("dollar", "half-dollar")),
       f"US coins in order of value: penny, nickel, dime, then the {_BY_COIN[3]} ({_COINS[_BY_COIN[3]]} cents).",
       "The dollar coin."),
    _q("sequences", f"{', '.join(_PRESIDENTS[:3])}, ... who comes next", _PRESIDENTS[3],
       named(_PRESIDENTS[3], wrong=("Monroe", "Lincoln", "Jackson", "Hamilton")),
       f"These are the US presidents in order, so next is James {_PRESIDENTS[3]}, the fourth.", "James Monroe."),
    # -- trick: classic riddles with one definite answer
    _q("trick", "What has hands but can't clap?", "a clock",
       markers([r"\bclocks?\b", r"\bwatch(?:es)?\b"], [r"\bstatues?\b", r"\bmannequins?\b", r"\brobots?\b"]),
       "A clock.", "A statue."),
    _q("trick", "what gets bigger the more you take away from it", "a hole",
       markers([r"\bholes?\b"], [r"\bdebts?\b", r"\bproblems?\b", r"\bshadows?\b"]),
       "A hole: the more you dig out, the bigger it gets.", "Debt."),
    _q("trick", "Riddle: what runs but never walks, has a mouth but never talks, and has a bed but never sleeps?",
       "a river", markers([r"\brivers?\b"], [r"\bclocks?\b", r"\bnoses?\b", r"\bfaucets?\b", r"\btaps?\b"]),
       "A river.", "A clock."),
    _q("trick", "I'm tall when I'm young and short when I'm old, and I give off light. What am I?", "a candle",
       markers([r"\bcandles?\b"], [r"\bpencils?\b", r"\btrees?\b", r"\bsun\b"]), "A candle.", "A pencil."),
    _q("trick", "what can you catch but not throw", "a cold",
       markers([r"\bcold\b", r"\bflu\b"], [r"\bballs?\b", r"\bfish\b", r"\bbreath\b"]), "A cold!", "A fish."),
    _q("trick", "What has one head, one foot and four legs?", "a bed",
       markers([r"\bbeds?\b"], [r"\btables?\b", r"\bchairs?\b", r"\bhorses?\b"]), "A bed.", "A table."),
    _q("trick", "what starts with T, ends with T, and has T in it?", "a teapot",
       markers([r"\btea\s?pots?\b"], [r"\btents?\b", r"\btoilets?\b", r"\btoasts?\b"]),
       "A teapot: it starts and ends with T, and it has tea in it.", "A tent."),
    _q("trick", "What has 13 hearts but no other organs?", "a deck of cards",
       markers([r"\bdecks?\b", r"\bcards\b"], [r"\boctopus(?:es)?\b", r"\bmonsters?\b", r"\baliens?\b"]),
       "A deck of cards.", "An octopus."),
    _q("trick", "what word becomes shorter when you add two letters to it", "short",
       markers([r"\bshort\b"], [r"\blong\b", r"\bsmall\b"]),
       "Short: add 'er' and it becomes 'shorter'.", "Long."),
    _q("trick", "A man pushes his car to a hotel and tells the owner he's bankrupt. Why?", "he's playing Monopoly",
       markers([r"\bmonopoly\b"], [r"\bbroke down\b", r"\bout of (?:gas|petrol|fuel)\b", r"\bno money\b"]),
       "He's playing Monopoly.", "His car broke down and he has no money."),
    _q("trick", "what has a thumb and four fingers but isn't alive?", "a glove",
       markers([r"\bgloves?\b"], [r"\bmittens?\b", r"\brobots?\b", r"\bstatues?\b"]), "A glove.", "A mitten."),
    _q("trick", "What belongs to you, but other people use it more than you do?", "your name",
       markers([r"\bnames?\b"], [r"\bphones?\b", r"\bcars?\b", r"\bmoney\b", r"\bhouse\b"]),
       "Your name.", "Your phone."),
    _q("trick", "what can't talk but answers back when you speak to it", "an echo",
       markers([r"\bechoe?s?\b"], [r"\bparrots?\b", r"\brobots?\b", r"\bphones?\b", r"\bmirrors?\b"]),
       "An echo.", "A parrot."),
    _q("trick", "Where does Friday come before Thursday?", "in the dictionary",
       markers([r"\bdictionar(?:y|ies)\b", r"\balphabetical(?:ly)?\b"],
               [r"\bcalendars?\b", r"\btime zones?\b", r"\bdate line\b"]),
       "In the dictionary.", "On a calendar that starts on Friday."),
    # -- prose: no result, only prose
    _q("prose", "text my friend that i'm running 10 minutes late for lunch", "a text", prose(6, r"late|minutes"),
       "Hey! So sorry, I'm running about 10 minutes late. Grab a table and I'll be there soon!", "10"),
    _q("prose", "explain what a mortgage is in simple words", "an explanation", prose(15, r"loan|borrow|lend"),
       "A mortgage is a loan you take out to buy a home. The bank pays most of the price, and you pay it back in "
       "monthly instalments with interest over many years; if you stop paying, the bank can take the house.",
       "Answer: a loan"),
    _q("prose", "Write a complaint email to an airline about my lost luggage.", "an email",
       prose(25, r"luggage|bag|suitcase"),
       "Dear Customer Service,\n\nI flew with you on flight BA 117 from London to New York on 3 June, and my suitcase "
       "never arrived. I reported it at the airport (reference NYC12345), but I have heard nothing since. Please "
       "tell me where my luggage is and how you will compensate me for the essentials I had to buy.\n\nYours "
       "sincerely,\nAlex Morgan", "Lost luggage."),
    _q("prose", "how do I tell my boss I'm quitting", "advice", prose(20, r"resign|quit|notice|leav"),
       "Ask for a short private meeting and tell them directly: \"I've decided to resign, and my last day will be "
       "in four weeks.\" Thank them for the opportunity, offer to help hand over your work, and follow up with a "
       "written resignation letter.", "```python\nprint('I quit')\n```"),
    _q("prose", "write a welcome message for new members of our hiking club", "a message",
       prose(15, r"hik|trail|walk|club"),
       "Welcome to the club! We're so glad you're joining us. We hike every Saturday morning, from easy trails to "
       "tough climbs, so bring good boots, plenty of water and your sense of adventure. See you on the trail!",
       "Welcome!"),
    _q("prose", "write a short instagram bio for me, I'm a baker in Leeds", "a bio",
       prose(5, r"bak|bread|cake|pastr|sourdough|dough"),
       "Leeds baker \U0001f35e Sourdough, cinnamon buns and cakes made with love. Fresh bakes every Saturday!",
       "Leeds."),
    _q("prose", "what's a polite way to decline a wedding invitation", "a reply",
       prose(15, r"wedding|invit|celebrat|day"),
       "Something like: \"Thank you so much for inviting us to your wedding. Sadly we won't be able to attend, but "
       "we'll be thinking of you both and wish you a wonderful day.\" Send it soon, and consider a card or gift.",
       "No."),
    _q("prose", "Why do we have seasons?", "an explanation", prose(15, r"tilt|axis"),
       "Because the Earth's axis is tilted by about 23.5 degrees. As we orbit the Sun, each hemisphere takes turns "
       "leaning toward it, getting more direct sunlight and longer days (summer), or leaning away (winter).",
       "Tilt."),
    _q("prose", "how should I ask my manager for a raise?", "advice", prose(20, r"raise|salary|pay"),
       "Book a meeting rather than asking in passing. Come with evidence: what you've achieved, extra "
       "responsibilities you've taken on, and what similar roles pay. Ask for a specific figure, stay calm and "
       "positive, and if the answer is no, ask what you'd need to do to get there.", "5%"),
    _q("prose", "sum up the plot of romeo and juliet in a few sentences", "a summary", prose(20, r"romeo|juliet"),
       "Romeo and Juliet, the teenage children of two feuding families in Verona, fall in love and marry in secret. "
       "After Romeo kills Juliet's cousin in a fight, he is banished, and a plan to reunite them goes wrong: each "
       "thinks the other is dead, and both take their own lives.", "Romeo + Juliet"),
    _q("prose", "write a message for the group chat asking who wants to split a pizza order tonight", "a message",
       prose(8, r"pizza"),
       "Anyone up for splitting a pizza order tonight? Thinking of ordering around 7. Reply with what you fancy! "
       "\U0001f355", "pizza?"),
    _q("prose", "explain what an API is to my grandma", "an explanation",
       prose(15, r"app|program|software|menu|waiter|computer"),
       "An API is like a waiter in a restaurant. You don't go into the kitchen yourself: you tell the waiter what "
       "you want from the menu, and they bring it back. In the same way, one computer program asks another for "
       "something through its API and gets the answer back.", "API = application programming interface"),
    _q("prose", "Write a short job ad for a part-time barista at our cafe.", "an ad",
       prose(20, r"barista|coffee|caf"),
       "We're hiring! Our friendly neighbourhood cafe is looking for a part-time barista for weekend shifts. "
       "Experience with espresso is a plus, but we'll train the right person. You'll need a smile, a love of coffee "
       "and a knack for remembering regulars' orders. Drop in with your CV!", "Barista wanted."),
    _q("prose", "write a one paragraph horror story set in a library", "a story", prose(30, r"librar|book|shel"),
       "The library closed at nine, but Emma was still in the stacks when the lights went out. She heard a book "
       "slide off a shelf somewhere behind her, then another, closer. By the glow of her phone she saw them all "
       "lying open on the floor, every one at the same page, and on every page, in fresh ink, was her name.",
       _CODE_REPLY),
)

KINDS_4: tuple[str, ...] = tuple(dict.fromkeys(q.kind for q in QUESTIONS_4))
"""The kinds, in the order the set lists them (the first set's kinds)."""


def plain4_tasks(n: int, seed: int) -> list[Task]:
    """``n`` questions of this set drawn by ``seed``, as ``plain_tasks`` draws the first set (``drawn_tasks``): a
    smaller ``n`` draws a subset of a larger one's draw. Ids are ``plain4-<kind>-<k>``; the family is the kind."""
    return drawn_tasks(QUESTIONS_4, "plain4", n, seed)
