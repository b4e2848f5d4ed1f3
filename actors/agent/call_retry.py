"""A model call whose stream broke before its first workflow event is tried again in the turn.

The backend's retry policy (``backends/retry.py``) retries an attempt only before its
first event reached the caller: after that the caller has seen text it would have to
take back. But text is not a commitment. Until a tool call (``new_answer``, ``vote``,
any tool) arrived, nothing of the call was acted on, so the turn drops the partial text
and sends the same request again, a bounded number of times with a short backoff: a
cut stream costs one more call, not a restart of the whole incarnation. Each retry is a
``BackendEvent`` (``call.retry``) in the trace, naming the error and what was dropped.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from massgen.backends.retry import exponential_backoff

RETRY_EVENT = "call.retry"


@dataclass(frozen=True)
class CallRetry:
    """How often and how soon a broken call is sent again (``max_retries`` 0 turns it off)."""

    max_retries: int = 2
    base_delay_s: float = 0.1
    max_delay_s: float = 2.0
    jitter: float = 0.2
    rand: Callable[[], float] = field(default=random.random, compare=False, repr=False)

    def delay(self, retry: int, *, retryable: bool, had_output: bool, had_tool_call: bool) -> float | None:
        """Seconds before retry number ``retry`` (1-based), or None when the call must fail.

        Only a retryable error after some output and before any tool call qualifies: an
        error with no output at all was already retried by the backend's own policy."""
        if not retryable or not had_output or had_tool_call or retry > self.max_retries:
            return None
        return exponential_backoff(retry, self.base_delay_s, self.max_delay_s, self.jitter, self.rand())
