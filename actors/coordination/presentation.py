"""Whether a final presentation keeps the result the team agreed on.

The presenter may reword, expand and format the winning answer, never change what it concludes.
The agreed result is the winner's explicit one (its ``Answer:`` line or ``\\boxed{}``). Comparing
it with the presentation's last line read prose as a different result: "The capital of France is
**Paris**, on the Seine, ..." was thrown away for "Final answer: Paris". So a presentation keeps
the result when it states the same one explicitly, or, stating none of its own, says it in its
text: the same number as a number, the same words as words.
"""

from __future__ import annotations

import re

from massgen.actors.coordination.results import explicit_result, final_result, stated_result

__all__ = ["presentation_change"]

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
# A word or number with its inner dots, dashes and apostrophes ("9.9", "well-known", "o'clock").
_TOKEN = re.compile(r"-?\w+(?:[.\-']\w+)*")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(_THOUSANDS.sub("", text.lower()))


def _says(tokens: list[str], phrase: list[str]) -> bool:
    """Whether ``phrase`` occurs in ``tokens`` as consecutive whole tokens."""
    size = len(phrase)
    return size > 0 and any(tokens[i:i + size] == phrase for i in range(len(tokens) - size + 1))


def presentation_change(agreed: str, presentation: str) -> str | None:
    """The result ``presentation`` states instead of ``agreed`` (normalised, as ``results`` gives
    it); None when it keeps the agreed result, or when nothing was agreed explicitly."""
    if not agreed:
        return None
    own = explicit_result(presentation)
    if own:  # the presenter wrote its own "Answer: ..." line or \boxed{}: that is its result
        return None if own == agreed else own
    stated = stated_result(presentation)
    if _NUMBER.fullmatch(agreed):
        if stated and _NUMBER.fullmatch(stated):  # a concluding or compared number
            return None if stated == agreed else stated
        return None if agreed in _tokens(presentation) else final_result(presentation)
    if stated == agreed or _says(_tokens(presentation), _tokens(agreed)):
        return None
    return final_result(presentation)
