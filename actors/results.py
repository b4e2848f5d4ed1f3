"""What an answer concludes: its final result, for counting agreement.

Two answers agree when their final results are equal: the last ``Answer: ...`` line
if the answer has one, else its last non-empty line, compared with case, spacing,
emphasis and thousands separators aside. Pure functions, used by the turn (an agent
that reaches an answer in view agrees with it), the supervisor and the judge.
"""

from __future__ import annotations

import re

# "Answer: 42", "**Final answer:** 42", "... is Answer: 42", "The answer is 42."
_ANSWER_LINE = re.compile(r"\banswer\b[\s*_]*(?:is\b)?[\s*_]*[:\uff1a=]?\s*(.+)$", re.IGNORECASE)
_LEADING_NUMBER = re.compile(r"^(-?\d+(?:\.\d+)?)(?![\d.]*\w)")
_EMPHASIS = re.compile(r"[*_`$'\"]|\\\(|\\\)|\\\[|\\\]|\\boxed\{|\}")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")


def _normalise(text: str) -> str:
    text = _EMPHASIS.sub("", text)
    text = _THOUSANDS.sub("", text)
    return " ".join(text.lower().split()).strip(" .!;")


def explicit_result(text: str | None) -> str:
    """The normalised value of the last ``Answer: ...`` line, or "" when there is none."""
    for line in reversed((text or "").splitlines()):
        # The last "answer" of the line: "the final answer is 'Answer: 155'" concludes 155.
        starts = [m.start() for m in re.finditer(r"\banswer\b", line, re.IGNORECASE)]
        for start in reversed(starts):
            match = _ANSWER_LINE.match(line, start)
            if match and match.group(1).strip(" *_:'\""):
                value = _normalise(match.group(1))
                number = _LEADING_NUMBER.match(value)
                return number.group(1) if number else value
    return ""


def final_result(text: str | None) -> str:
    """The explicit answer line's value, else the normalised last non-empty line ("" for no text)."""
    explicit = explicit_result(text)
    if explicit:
        return explicit
    lines = [line for line in (text or "").splitlines() if line.strip()]
    return _normalise(lines[-1]) if lines else ""


def conclusion(text: str, lines: int = 2) -> str:
    """The last ``lines`` non-empty lines of a reply: what a model itself says it concluded."""
    kept = [line.strip() for line in text.splitlines() if line.strip()]
    return "\n".join(kept[-lines:])


__all__ = ["conclusion", "explicit_result", "final_result"]
