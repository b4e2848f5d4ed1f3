"""Guards on one model call's event stream: a straggling stream ends with a named cause.

A model that loops, drips or never starts would otherwise hold its agent (and, through
convergence, the team) until the run deadline. The guard sits between the backend and
the turn and ends the stream with a ``StreamError`` that says which limit was hit
(time limits are the supervisor's: first byte and idle by activity, the turn by the clock):

- ``max_output_chars``: text plus reasoning of this one call exceeds the budget;
- ``max_tool_argument_chars``: the arguments of this call's tool calls, all together, exceed theirs
  (the backends stop accumulating a reply's argument fragments at the same default,
  ``backends/wire_limits.py``, so what a model asks for is bounded before it is whole);
- repetition: the tail of the output is one short pattern repeated over
  ``repeat_window_chars`` characters (a looping model never stops by itself).

The backend's generator is closed when the guard stops, so its connection is released.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

from massgen.backends.wire_limits import MAX_TOOL_ARGUMENT_CHARS
from massgen.messages.stream import ReasoningDelta, StreamError, StreamEvent, TextDelta, ToolCallEvent


@dataclass(frozen=True)
class StreamLimits:
    """Per-call limits; ``None`` turns a limit off. Defaults suit cloud models."""

    max_output_chars: int | None = 200_000
    max_tool_argument_chars: int | None = MAX_TOOL_ARGUMENT_CHARS
    # A loop is the last ``repeat_window_chars`` characters having a period of at most
    # ``repeat_max_period`` characters. Checked every ``repeat_check_every`` new characters.
    repeat_window_chars: int = 2_000
    repeat_max_period: int = 400
    repeat_check_every: int = 200


def repeated_period(text: str, window: int, max_period: int) -> int | None:
    """The shortest period ``p <= max_period`` such that the last ``window`` characters of
    ``text`` repeat with period ``p``; None when there is none (or too little text)."""
    for period in range(1, max_period + 1):
        if len(text) < window + period:
            return None
        if text[-1] == text[-1 - period] and text[-window:] == text[-window - period:-period]:
            return period
    return None


class _Output:
    """The output seen so far, with the bookkeeping of when to look for a loop."""

    def __init__(self, limits: StreamLimits) -> None:
        self.limits = limits
        self.text = ""
        self.total = 0
        self._next_check = limits.repeat_window_chars

    def add(self, chunk: str) -> str | None:
        """Note a chunk; return why the stream must end, or None."""
        limits = self.limits
        self.total += len(chunk)
        if limits.max_output_chars is not None and self.total > limits.max_output_chars:
            return f"output budget exceeded: more than {limits.max_output_chars} characters in one call"
        # Keep only what a loop check can look at.
        keep = limits.repeat_window_chars + limits.repeat_max_period
        self.text = (self.text + chunk)[-keep:]
        if self.total < self._next_check:
            return None
        self._next_check = self.total + limits.repeat_check_every
        period = repeated_period(self.text, limits.repeat_window_chars, limits.repeat_max_period)
        if period is None:
            return None
        sample = self.text[-period:][:40]
        return (f"repetition: the last {limits.repeat_window_chars} characters repeat a "
                f"{period}-character pattern ({sample!r})")


async def guard(events: AsyncIterator[StreamEvent], limits: StreamLimits) -> AsyncIterator[StreamEvent]:
    """Yield ``events`` until they end or a limit is hit; then a ``StreamError`` naming the limit."""
    output = _Output(limits)
    argument_chars = 0
    iterator = events.__aiter__()
    try:
        async for event in iterator:
            problem: str | None = None
            if isinstance(event, ToolCallEvent) and limits.max_tool_argument_chars is not None:
                call = event.call
                argument_chars += len(call.raw_arguments) if call.raw_arguments else len(str(call.arguments))
                if argument_chars > limits.max_tool_argument_chars:
                    problem = (f"tool-call arguments exceeded: more than {limits.max_tool_argument_chars} characters"
                               " in one call's tool calls")
                    yield StreamError(message=f"stream guard: {problem}", retryable=False)
                    return
            yield event
            if isinstance(event, TextDelta | ReasoningDelta):
                problem = output.add(event.text)
                if problem is not None:
                    yield StreamError(message=f"stream guard: {problem}", retryable=False)
                    return
    finally:
        close = getattr(iterator, "aclose", None)
        if close is not None:
            with contextlib.suppress(Exception):
                await close()
