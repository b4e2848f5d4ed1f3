"""What a run's question may be: not blank, and not larger than a limit the user can raise.

Checked where every surface (command line, Python API, ``serve``, the Web UI) starts a run:
``Team.start``, before a log file or an actor exists. The limit is on the UTF-8 size of the
question and of the history the team is given with it (both are in every prompt); a
question past every model's context window is a mistake, and one of 50 MB used to cost
900 MB of logs and 618 MB of memory before any model refused it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from massgen.outcome.errors import ConfigError

MAX_BYTES_ENV = "MASSGEN_MAX_QUESTION_BYTES"
DEFAULT_MAX_BYTES = 4 * 1024 * 1024


class QuestionError(ConfigError):
    """A question that cannot be run: blank, or larger than the limit (``limit`` is set then)."""

    def __init__(self, message: str, limit: int | None = None) -> None:
        super().__init__(message)
        self.limit = limit


def max_bytes(env: Mapping[str, str] | None = None) -> int:
    """The limit: ``$MASSGEN_MAX_QUESTION_BYTES`` when it is a positive integer, else 4 MiB."""
    text = (os.environ if env is None else env).get(MAX_BYTES_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_BYTES
    if not text.isdigit() or int(text) < 1:
        raise ConfigError(f"${MAX_BYTES_ENV} must be a positive whole number of bytes, not {text[:40]!r}")
    return int(text)


def check_text(question: object, history: object = ()) -> None:
    """Raise ``QuestionError`` unless the question is text and the history (question, answer) pairs of text:
    the Python API takes what a script passes, and ``run(None)`` should say which argument is wrong."""
    if not isinstance(question, str):
        raise QuestionError(f"the question must be text (a str), not {type(question).__name__}")
    pairs = history if isinstance(history, tuple | list) else None
    if pairs is None:
        raise QuestionError(f"the history must be (question, answer) pairs of text, not {type(history).__name__}")
    for number, pair in enumerate(pairs, 1):
        if not (isinstance(pair, tuple | list) and len(pair) == 2 and all(isinstance(t, str) for t in pair)):
            raise QuestionError(f"history {number} must be a (question, answer) pair of text, not {pair!r:.80}")


def check_question(question: str, history: tuple[tuple[str, str], ...] = (),
          env: Mapping[str, str] | None = None) -> None:
    """Raise ``QuestionError`` for a blank question, or one (with its history) over the limit."""
    if not question.strip():
        raise QuestionError("the question is empty (only whitespace); give the task for the team")
    limit = max_bytes(env)
    size = _utf8_size(question) + sum(_utf8_size(q) + _utf8_size(a) for q, a in history)
    if size > limit:
        what = "the question and its history are" if history else "the question is"
        raise QuestionError(f"{what} {size:,} bytes, over the limit of {limit:,} bytes "
                            f"(set ${MAX_BYTES_ENV} to raise it)", limit=limit)


def _utf8_size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))
