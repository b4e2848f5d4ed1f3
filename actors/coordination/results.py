"""What an answer concludes: its final result, for counting agreement.

Two answers agree when their final results are equal, compared with case, spacing,
emphasis and thousands separators aside. The result an answer *states* is, in order:

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
5. the words on its last ``Answer: ...`` line, when they are not a number ("Answer: Paris").

``final_result`` falls back to the normalised last non-empty line, so two prose answers agree
only when they end the same way. ``reason_result`` reads a vote's reason the same way, but only
for a number, and with the references to answers in view taken out first ("agent2.1 is right",
"Answer 2 is correct" state no result). Pure functions, used by the turn (an agent that reaches an
answer in view agrees with it), the supervisor and the judge.
"""

from __future__ import annotations

import re

# "Answer: 42", "**Final answer:** 42", "... is Answer: 42", "The answer is 42."
_ANSWER_LINE = re.compile(r"\banswer\b[\s*_]*(?:is\b)?[\s*_]*[:\uff1a=]?\s*(.+)$", re.IGNORECASE)
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


def _normalise(text: str) -> str:
    text = _EMPHASIS.sub("", text)
    text = _THOUSANDS.sub("", text)
    return " ".join(text.lower().split()).strip(" .!;")


def _number(value: str) -> str:
    """``-1,089`` and ``- 1089`` as ``-1089``; a decimal keeps its point."""
    return value.replace(",", "").replace(" ", "")


def _answer_line(text: str) -> str:
    """The value of the last ``Answer: ...`` line (a boxed value in it is that value)."""
    for line in reversed(text.splitlines()):
        # The last "answer" of the line: "the final answer is 'Answer: 155'" concludes 155.
        starts = [m.start() for m in re.finditer(r"\banswer\b", line, re.IGNORECASE)]
        for start in reversed(starts):
            match = _ANSWER_LINE.match(line, start)
            if match and match.group(1).strip(" *_:'\"\\[]()$"):
                if _BOXED.search(match.group(1)):
                    return _boxed(match.group(1))
                value = _normalise(match.group(1))
                number = _LEADING_NUMBER.match(value)
                return number.group(1) if number else value
    return ""


def _boxed(text: str) -> str:
    found = _BOXED.findall(text)
    if not found:
        return ""
    value = _normalise(found[-1])
    number = _ONLY_NUMBER.match(value)
    return _number(number.group(1)) if number else value


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


def stated_result(text: str | None) -> str:
    """The result an answer states (``Answer:`` line, ``\\boxed{}``, concluding number, compared number), or ""."""
    text = text or ""
    line = _answer_line(text)
    if _LEADING_NUMBER.match(line):
        return line
    # "The final answer will be the result of the above calculation" is no result: a number after it is
    return _boxed(text) or _concluding_number(text) or _compared(text) or line


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
    """The stated result, else the normalised last non-empty line ("" for no text)."""
    stated = stated_result(text)
    if stated:
        return stated
    lines = [line for line in (text or "").splitlines() if line.strip()]
    return _normalise(lines[-1]) if lines else ""


def conclusion(text: str, lines: int = 2) -> str:
    """The last ``lines`` non-empty lines of a reply: what a model itself says it concluded."""
    kept = [line.strip() for line in text.splitlines() if line.strip()]
    return "\n".join(kept[-lines:])


__all__ = ["conclusion", "explicit_result", "final_result", "reason_result", "stated_result"]
