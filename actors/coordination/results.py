"""What an answer concludes: its final result, for counting agreement.

Two answers agree when their final results are equal, compared with case, spacing, emphasis,
brackets, quotes, a leading article and thousands separators aside. The result an answer
*states* is, in order:

1. the number on its last ``Answer: ...`` line ("**Final answer:** 42", "... is Answer: 42",
   "The final answer to ... is \\boxed{913}");
2. the content of its last ``\\boxed{...}`` (small models write LaTeX: ``\\[\\boxed{-336}\\]``);
3. the number a concluding sentence ends with: "Therefore, the result of the expression ... is
   -336.", "which is indeed 467", "= 507" (the last line, or the sentence before a closing
   remark);
4. the subject of the comparison the last sentence claims: "Therefore, 9.9 is larger than 9.11."
   states 9.9, as "Answer: 9.9" does ("9.11 is smaller than 9.9" states 9.11: the number the
   sentence is about, which is what a user asking "which is smaller?" is told); a justification
   after the claim is not the claim ("9.11 is larger, because 11 > 9." states 9.11, not 11);
5. the words on its last ``Answer: ...`` line, when they are not a number ("Answer: Paris"), the line
   introduces them (":", "is") and they read as a result ("The answer provided by agent1 is
   correct" uses the word, it states nothing);
6. what its last line announces or shows as a result: "The sorted list is: a, b, c",
   "Relationship: mother-in-law", the last bold span ("Sarah is Elizabeth's **mother-in-law**.",
   "h appears **3** times"), or a line that is only a result ("No.", "Mother-in-law", "thought,
   sentence, Only") as the whole reply or after a line ending in ":"; never a sentence or a verdict
   ("Verified."): after working, a short line nothing announces may be either.

Words are read by kind (reasoning-gym's answers have these shapes): yes/no ("Yes", "yes.",
"**No**", "Answer: No, it does not follow" all state yes or no); a word or name ("the mother"
states "mother"); a list, comma- or space-separated, brackets and quotes aside, order kept
("[a, b]" and "a b" agree; "b, a" does not: sorting tasks differ by order).

A closing remark ("Let me know if you need anything else!"), a line of punctuation or a brace
is no result: the result is read before it. A text that ends in a code block states no result
but its ``Answer:`` line (code inside a block is never an ``Answer:`` line), and has no last-line
result either, so two programs never agree because both end in "```" or "return result".

``final_result`` falls back to the normalised last line, so two prose answers agree only when
they end the same way. ``reason_result`` reads a vote's reason the same way, but only for a
number, and with the references to answers in view taken out first ("agent2.1 is right",
"Answer 2 is correct" state no result). Pure functions, used by the turn (an agent that reaches an
answer in view agrees with it), the supervisor and the judge.
"""

from __future__ import annotations

import re

# Results of a two-valued answer, as normalised: two wrong answers agree on one whenever both are wrong.
TWO_VALUED_RESULTS = frozenset({"yes", "no", "true", "false"})
# "Answer: 42", "**Final answer:** 42", "... is Answer: 42", "The answer is 42."
_ANSWER_LINE = re.compile(r"\banswer\b[\s*_]*(?P<is>is\b)?[\s*_]*(?P<colon>[:\uff1a=])?\s*(?P<value>.+)$",
                          re.IGNORECASE)
# "the answer is indeed 121", "the answer is clearly Yes": the adverb is not the result
_LEADING_ADVERB = re.compile(r"^[\s*_]*(?:indeed|clearly|therefore|thus|simply|just|definitely|then|now)\s+",
                             re.IGNORECASE)
# A template copied, not filled in: "Answer: <answer>", "(Answer Yes or No)"
_PLACEHOLDERS = frozenset({"answer", "your answer", "final answer", "integer", "result", "number", "word",
                           "yes or no", "yes/no", "yesno"})
_ANSWER_WORDS = 6  # an announced result of words may be longer than one a last line merely is
_LEADING_NUMBER = re.compile(r"^(-?\d+(?:\.\d+)?)(?![\d.]*\w)")
_EMPHASIS = re.compile(r"[*_`$'\"]|\\\(|\\\)|\\\[|\\\]|\\boxed\{|\}")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_BOXED = re.compile(r"\\boxed\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
_LATEX_NOISE = re.compile(r"\\[()\[\]]|\$|\*\*|__|\\,|\\!|\\;|\\text\{[^}]*\}|\\quad")
# A concluding sentence: "... is -336", "... indeed 467", "... equals 12", "... = 507", at its end.
_CONCLUDING_NUMBER = re.compile(
    r"(?:\bis\b|\bindeed\b|\bequals?\b|\bgives\b|\bget\b|\bbe\b|=|:)\s*(?:equal to\s*)?[(\[{\s]*"
    r"(-?\s?\d[\d,]*(?:\.\d+)?)\s*[)\]}]*\s*[.!]?\s*$",
    re.IGNORECASE,
)
_ONLY_NUMBER = re.compile(r"^[(\[{\s]*(-?\s?\d[\d,]*(?:\.\d+)?)\s*[)\]}]*\s*[.!]?$")
_NUM = r"-?\d[\d,]*(?:\.\d+)?"
_COMPARATIVE = r"(?:larger|greater|bigger|higher|smaller|less|lower)"
# "9.9 is larger than 9.11.", "9.9 is greater", "9.9 is the larger number", "9.9 > 9.11", at the sentence's end
_COMPARISON = re.compile(
    rf"(?<![\d.])({_NUM})\s+(?:is\s+(?:(?:much|slightly|clearly|definitely|indeed)\s+)?"
    rf"(?:{_COMPARATIVE}(?:\s+than\s+{_NUM})?|the\s+{_COMPARATIVE}(?:\s+(?:one|number|value|of\s+the\s+two))?)"
    rf"|[<>]\s*{_NUM})\s*[.!]?\s*$",
    re.IGNORECASE,
)
# Where a sentence's claim ends and its justification starts ("9.11 is larger, because 11 > 9"), and
# where a conclusion starts after its justification ("0.9 > 0.11, so 9.9 is larger").
_JUSTIFICATION = re.compile(r"\s*[:;]\s+|,?\s+\b(?:because|since)\b\s*", re.IGNORECASE)
_THEREFORE = re.compile(r"(?:^|[,;:]?\s+)\b(?:so|therefore|thus|hence)\b,?\s*", re.IGNORECASE)
_WORD = re.compile(r"[\w.\-]+")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
# How a reason points at an answer in view rather than at a result: "agent2.1", "Agent 2", "answer #2"
_REFERENCE = re.compile(r"\b(?:agent|answer|option|solution|response|candidate)\s*#?\s*(\d{1,2})(?:\.\d+)?\b",
                        re.IGNORECASE)


# Kinds of word results. A yes or no, alone or opening an answer line ("No, it does not follow").
_YES_NO = re.compile(r"^(yes|no)\b(?![-'])\s*(?:$|[,.;:!(\u2014-]\s*(.*)$)")
_ARTICLE = re.compile(r"^(?:the\s+|an?\s+(?=\w{2}))")
_LIST_SEPARATOR = re.compile(r"\s*[,;]\s*(?:(?:and|or)\s+)?|\s+")
_NUMBER_LIST = re.compile(r"^-?\d+(?:\.\d+)?(?:(?:\s*[,;]\s*|\s+)-?\d+(?:\.\d+)?)+$")
_WRAPPING = " '\"[](){}<>.!;:"
_EXPLANATION = re.compile(r"(?<=\w)[.!?]\s+|\s+\((?=[^()]*\)?$)|\s+(?:because|since)\s+")
# Lines that state no result: a closing remark, punctuation, a brace, a rule ("---").
_CLOSING = re.compile(
    r"^\W*(?:i\s+)?(?:hope\b|let\s+me\s+know\b|feel\s+free\b|if\s+you\s+(?:have|need)\b|happy\s+to\s+help|"
    r"glad\s+to\s+help|good\s+luck|thanks?\b|thank\s+you|cheers\b|you'?re\s+welcome|is\s+there\s+anything\s+else|"
    r"(?:do\s+you\s+have\s+)?any\s+(?:other|more|further)\s+questions|enjoy\b|best\s+regards)",
    re.IGNORECASE,
)
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_BRACKETS_ONLY = re.compile(r"^[\s{}()\[\];,]+$")
_CODE_MARK = re.compile(r"[=(){}\[\]]")  # inside a value, not around it: "f(x)", "x = 1" are code
# Words of a sentence or of a verdict on an answer: a short line holding one is no result of its own.
_SENTENCE_WORDS = frozenset([
    "i", "we", "you", "it", "its", "this", "that", "these", "those", "he", "she", "they", "me", "my", "our",
    "your", "is", "are", "was", "were", "am", "be", "been", "being", "do", "does", "did", "has", "have", "had",
    "will", "would", "can", "could", "should", "may", "might", "must", "let", "so", "therefore", "thus", "hence",
    "because", "since", "if", "then", "here", "there", "correct", "incorrect", "right", "wrong", "agree", "agreed",
    "answer", "answers", "agent", "agents", "step", "note", "verified", "confirmed", "checked", "valid", "invalid",
    "match", "matches", "agrees", "same", "consistent", "ok", "okay", "done", "good", "fine",
    # and of code: "return result" is no result
    "return", "print", "def", "import", "pass", "yield", "else", "elif",
])
_TOKEN = re.compile(r"[a-z]+")
_SHORT_WORDS = 4  # a result of words is a word, a name or a short phrase ("mother-in-law", "New York City")
# A last line that announces its result after a colon ("The sorted list is: ...", "Relationship: ...").
_ANNOUNCED = re.compile(r"^(?P<head>[^:\uff1a]{1,80}?)\s*[:\uff1a]\s*(?P<value>\S.*)$")
_ANNOUNCING = re.compile(
    r"\b(?:result|final|conclusion|solution|output|relationship|sorted|sorting|list|order|count|total|verdict)\b"
    r"|\b(?:is|are)\W*$",
    re.IGNORECASE,
)
_BOLD = re.compile(r"\*\*([^*\n]+?)\*\*|__([^_\n]+?)__")
_REFERENCE_LIKE = re.compile(r"^(?:agent|answer|option|solution|response|candidate)[\s#_]*\d", re.IGNORECASE)


def _normalise(text: str) -> str:
    text = _EMPHASIS.sub("", text)
    text = _THOUSANDS.sub("", text)
    return " ".join(text.lower().split()).strip(" .!;")


def _number(value: str) -> str:
    """``-1,089`` and ``- 1089`` as ``-1089``; a decimal keeps its point."""
    return value.replace(",", "").replace(" ", "")


def _word_list(value: str) -> bool:
    """Three or more single words between commas: a list, even when its first word is a number or a yes
    ("100, Full, floats", "yes, widest, often": words to sort), unlike "42, exactly" or "No, it does not"."""
    items = [item.strip(_WRAPPING) for item in re.split(r"\s*[,;]\s*", value)]
    return len(items) >= 3 and all(item and " " not in item for item in items)


def _words(value: str, clause: bool = False) -> str:
    """A normalised value of words by kind: "yes"/"no", a list ("[a, b]" and "a b" as "a b"), or a word or
    phrase without its leading article ("the mother" as "mother"). ``clause``: a yes or no may open a
    sentence ("no, it does not follow"), as on an ``Answer:`` line."""
    value = value.strip(_WRAPPING)
    yes_no = None if _word_list(value) else _YES_NO.match(value)
    if yes_no and (clause or not (yes_no.group(2) or "").strip(_WRAPPING)):
        return yes_no.group(1)
    if _NUMBER_LIST.match(value) or re.search(r"[,;]", value):
        items = (item.strip(_WRAPPING) for item in _LIST_SEPARATOR.split(value))
        return " ".join(item for item in items if item)
    return _ARTICLE.sub("", value) if len(value.split()) <= _SHORT_WORDS else value


def _value(raw: str, clause: bool = False) -> str:
    """A result's normalised value: its leading number ("3 apples" states 3), else its words by kind.
    ``clause``: the value opens a line that may go on to explain it ("Answer: mother-in-law. Sarah is ...",
    "Answer: aunt (her mother's sister)"); the explanation is not the result."""
    value = _normalise(raw).strip(_WRAPPING)
    if _NUMBER_LIST.match(value) or _word_list(value):
        return _words(value)
    number = _LEADING_NUMBER.match(value)
    if number:
        return number.group(1)
    if clause:
        value = _EXPLANATION.split(value, maxsplit=1)[0].strip(_WRAPPING) or value
    return _words(value, clause)


def _meaningful_lines(text: str) -> list[str]:
    """The non-empty lines, less the closing remarks and lines of punctuation at the end ("Hope this helps!",
    "\\]", "---"): the result is read before them. A fence or a closing brace ends code, and is kept."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    while lines and not _ends_in_code(lines) and (
            _CLOSING.match(lines[-1]) or not re.search(r"\w", _EMPHASIS.sub("", lines[-1]))):
        lines.pop()
    return lines


def _ends_in_code(lines: list[str]) -> bool:
    """A last line that is a code fence or only closing brackets ("}", "});") ends code: no result."""
    return bool(lines) and bool(_FENCE.match(lines[-1]) or _BRACKETS_ONLY.match(lines[-1]))


def _prose_lines(lines: list[str]) -> list[str]:
    """The lines outside code blocks; a block of one line is an emphasised answer, not code."""
    kept: list[str] = []
    block: list[str] | None = None
    for line in lines:
        if _FENCE.match(line):
            if block is None:
                block = []
            else:
                kept += block if len(block) == 1 else []
                block = None
        elif block is not None:
            block.append(line)
        else:
            kept.append(line)
    return kept


def _answer_line(text: str) -> str:
    """The value of the last ``Answer: ...`` line outside code (a boxed value in it is that value).

    A value of words counts only when the line introduces it (":", "is", "=") and it reads as a result:
    "the answer provided by agent1", "Agent 2's answer is correct" and "Answer: <answer>" use the word
    answer, they state none, and an earlier line is read instead."""
    for line in reversed(_prose_lines(text.splitlines())):
        # The last "answer" of the line: "the final answer is 'Answer: 155'" concludes 155.
        starts = [m.start() for m in re.finditer(r"\banswer\b", line, re.IGNORECASE)]
        for start in reversed(starts):
            match = _ANSWER_LINE.match(line, start)
            value = _LEADING_ADVERB.sub("", match.group("value")) if match else ""
            if not match or not value.strip(" *_:'\"\\[]()$<>") or value.lstrip().startswith("```"):
                continue
            if _BOXED.search(value):
                return _boxed(value)
            result = _value(value, clause=True)
            if _LEADING_NUMBER.match(result):
                return result
            plain = _normalise(value).strip(_WRAPPING)
            plain = _EXPLANATION.split(plain, maxsplit=1)[0].strip(_WRAPPING) or plain
            if (match.group("is") or match.group("colon")) and result not in _PLACEHOLDERS \
                    and (result in ("yes", "no") or _result_like(plain, _ANSWER_WORDS)):
                return result
    return ""


def _boxed(text: str) -> str:
    found = _BOXED.findall(text)
    if not found:
        return ""
    inner = re.sub(r"\\(?:text|textbf|mathrm|mathbf)\s*\{([^{}]*)\}", r"\1", found[-1])
    value = _normalise(inner)
    number = _ONLY_NUMBER.match(value)
    return _number(number.group(1)) if number else _words(value, clause=True)
def _concluding_number(text: str) -> str:
    """The number the last sentence of the text ends with, when it reads as a conclusion."""
    lines = [_LATEX_NOISE.sub(" ", line).strip() for line in text.splitlines()]
    lines = [line for line in lines if line.strip(" .")]
    if not lines:
        return ""
    last = lines[-1]
    only = _ONLY_NUMBER.match(last)
    if only and len(lines) > 1 and _CONCLUDING_NUMBER.search(lines[-2] + " =") is None \
            and not lines[-2].rstrip().endswith((":", "is")):
        only = None  # a bare number after working that does not announce it is just the last step
    if only:
        return _number(only.group(1))
    # "... is -336." or "... is -336. Let me know if ..." : the sentence that ends with the number
    for sentence in reversed(re.split(r"(?<=[.!?])\s+(?=[A-Z])", last)[-2:]):
        match = _CONCLUDING_NUMBER.search(sentence)
        if match:
            return _number(match.group(1))
    return ""


def _compared(text: str) -> str:
    """The number the last sentence compares and ends with ("9.9 is larger than 9.11."), or ""."""
    lines = [_EMPHASIS.sub("", _LATEX_NOISE.sub(" ", line)).strip() for line in text.splitlines()]
    lines = [line for line in lines if line.strip(" .")]
    if not lines:
        return ""
    sentences = [s for s in _SENTENCE_END.split(lines[-1]) if s.strip(" .")]
    if len(sentences) > 1 and not re.search(r"\d", sentences[-1]):
        sentences.pop()  # "... 9.9 is larger than 9.11. Let me know if you need more help!"
    if not sentences:
        return ""
    # The claim first: "9.9 is larger: 9.9 = 9.90, and 0.90 > 0.11." is about 9.9, not about 0.90.
    claim = _JUSTIFICATION.split(_THEREFORE.split(sentences[-1])[-1], maxsplit=1)[0]
    match = _COMPARISON.search(claim) or _COMPARISON.search(sentences[-1])
    return _number(match.group(1)) if match else ""


def _result_like(value: str, most: int = _SHORT_WORDS) -> bool:
    """Whether a value of words reads as a result rather than a sentence or a verdict on an answer: a
    phrase of at most ``most`` words, or a list of short items."""
    if not value or _REFERENCE_LIKE.match(value) or value.endswith(("?", ":")) \
            or _CODE_MARK.search(value.strip(_WRAPPING)):
        return False
    items = [item.strip(_WRAPPING) for item in re.split(r"\s*[,;]\s*", value)]
    if len(items) > 1:  # a list: words ("Let, This, has": words to sort), or short items none of them a clause
        return all(item and (len(item.split()) == 1 or (len(item.split()) <= _SHORT_WORDS
                             and not _SENTENCE_WORDS & set(_TOKEN.findall(item)))) for item in items)
    return len(value.split()) <= most and not _SENTENCE_WORDS & set(_TOKEN.findall(value))


def _last_line_result(lines: list[str]) -> str:
    """What the last line announces ("The sorted list is: a, b"), shows in bold ("... **mother-in-law**."), or
    is when it is the whole reply or follows a line that announces it ("No.", "Mother-in-law", "a, b, c");
    "" for a sentence, a verdict on an answer, or a text ending in code. (A short line after working that
    nothing announces may be a verdict, "Verified.", or a step; it still agrees by ``final_result``.)"""
    if not lines or _ends_in_code(lines):
        return ""
    last = lines[-1]
    announced = _ANNOUNCED.match(_EMPHASIS.sub("", last))
    if announced and _ANNOUNCING.search(announced.group("head")):
        value = _normalise(announced.group("value")).strip(_WRAPPING)
        if _YES_NO.match(value) or _result_like(value) or _LEADING_NUMBER.match(value):
            return _value(value, clause=True)
    bold = [a or b for a, b in _BOLD.findall(last)]
    if bold:
        value = _normalise(bold[-1]).strip(_WRAPPING)
        if _LEADING_NUMBER.match(value) or _value(value) in ("yes", "no") or _result_like(value):
            return _value(value)
    if len(lines) > 1 and not _EMPHASIS.sub("", lines[-2]).rstrip().endswith((":", "\uff1a")):
        return ""
    value = _normalise(last).strip(_WRAPPING)
    if _LEADING_NUMBER.match(value) and not (_NUMBER_LIST.match(value) or _word_list(value)):
        return ""  # a bare number is the number rules' to read
    words = _words(value)
    return words if words in ("yes", "no") or _result_like(value) else ""


def stated_result(text: str | None) -> str:
    """The result an answer states (``Answer:`` line, ``\\boxed{}``, concluding number, compared number, what its
    last line announces or is), or ""."""
    lines = _meaningful_lines(text or "")
    text = "\n".join(lines)
    line = _answer_line(text)
    if _LEADING_NUMBER.match(line):
        return line
    if _ends_in_code(lines):
        return line  # a text that ends in code states only its answer line
    # "The final answer will be the result of the above calculation" is no result: a number after it is
    return _boxed(text) or _concluding_number(text) or _compared(text) or line or _last_line_result(lines)


def reason_result(reason: str | None, names: tuple[str, ...] = (), answers: int = 0) -> str:
    """The number a vote's reason states as the result ("... so the total is 456", "9.9 is larger
    than 9.11"), or "": a reason that names no number of its own is no recomputation.

    ``names`` (labels and agent ids in view) and "answer N"/"agent N" for N up to ``answers`` are
    taken out first, so that pointing at an answer is never read as computing a result.
    """
    wanted = {name.lower() for name in names if name}

    def unnamed(match: re.Match[str]) -> str:  # one pass over the words, whatever the size of the view
        word = match.group(0)
        core = word.rstrip(".")
        return " " + word[len(core):] if core.lower() in wanted else word

    text = _WORD.sub(unnamed, reason or "") if wanted else reason or ""
    text = _REFERENCE.sub(lambda m: " " if int(m.group(1)) <= max(answers, 1) else m.group(0), text)
    result = stated_result(text)
    return result if _ONLY_NUMBER.match(result) else ""


def explicit_result(text: str | None) -> str:
    """The normalised value of the last ``Answer: ...`` line, else of the last ``\\boxed{}``; "" when none."""
    text = text or ""
    line = _answer_line(text)
    return line if _LEADING_NUMBER.match(line) else (_boxed(text) or line)


def final_result(text: str | None) -> str:
    """The stated result, else the normalised last line that may state one; "" for no text, and for a text
    that ends in code or says nothing but closing remarks: such endings are alike and no agreement."""
    stated = stated_result(text)
    if stated:
        return stated
    lines = _meaningful_lines(text or "")
    if not lines or _ends_in_code(lines):
        return ""
    return _words(_normalise(lines[-1]))


def closing_remark(line: str) -> bool:
    """A line that states no result: a closing remark ("Hope this helps!") or punctuation only."""
    return bool(_CLOSING.match(line)) or not re.search(r"\w", _EMPHASIS.sub("", line))


def conclusion(text: str, lines: int = 2) -> str:
    """The last ``lines`` non-empty lines of a reply: what a model itself says it concluded."""
    kept = [line.strip() for line in text.splitlines() if line.strip()]
    return "\n".join(kept[-lines:])


__all__ = [
    "TWO_VALUED_RESULTS", "closing_remark", "conclusion", "explicit_result", "final_result", "reason_result",
    "stated_result",
]
