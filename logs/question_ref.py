"""A large question is written into ``trace.jsonl`` once; later lines refer to it.

The question travels in many messages: ``RunStarted``, every ``StartTurn`` and
``PresentFinal``, and the prompt of every model call (``ModelRequestSent``). Traced as is,
a 1 MB question made an 18 MB trace after seven calls (a 4 MiB request, 75 MB in three
seconds), growing with every call. So, from ``MIN_CHARS`` up, the writer replaces the
question's JSON text in every line after ``RunStarted`` by a marker derived from the
question's hash, and every reader puts it back before parsing the line: the records are
the same, only the file is smaller, and its size grows with the question once, not once
per call. JSON escapes each character on its own, so the question's escaped text is a
substring of the escaped text of any string that contains it: the replacement is on the
line, and needs no knowledge of any record's fields.

A model cannot plant the marker by accident: it holds a hash of the question that the
model never sees. Questions below ``MIN_CHARS`` are written as they are.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from massgen.messages import RunStarted, message_class

MIN_CHARS = 16 * 1024


@dataclass(frozen=True)
class QuestionRef:
    marker: str  # stands for ``escaped``
    marker_ascii: str  # stands for ``escaped_ascii``; two markers keep ``expand`` the exact inverse
    escaped: str  # json.dumps(question, ensure_ascii=False) without its quotes
    escaped_ascii: str  # the same with ensure_ascii=True: lines with lone surrogates are written so

    @classmethod
    def of(cls, record: dict[str, Any]) -> QuestionRef | None:
        """The reference for a trace whose first record is ``record``, or None (a small question)."""
        if message_class(record) is not RunStarted:
            return None
        question = record.get("payload", {}).get("question")
        if not isinstance(question, str) or len(question) < MIN_CHARS:
            return None
        digest = hashlib.sha256(question.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return cls(marker=f"@massgen:question:{digest}@", marker_ascii=f"@massgen:question-ascii:{digest}@",
                   escaped=json.dumps(question, ensure_ascii=False)[1:-1],
                   escaped_ascii=json.dumps(question, ensure_ascii=True)[1:-1])

    def shorten(self, line: str) -> str:
        """``line`` (JSON text of a record after ``RunStarted``) with the question as the marker."""
        line = line.replace(self.escaped, self.marker)
        return line if self.escaped_ascii == self.escaped else line.replace(self.escaped_ascii, self.marker_ascii)

    def expand(self, line: str) -> str:
        """The line exactly as it was before ``shorten``."""
        if "@massgen:question" not in line:
            return line
        return line.replace(self.marker, self.escaped).replace(self.marker_ascii, self.escaped_ascii)
