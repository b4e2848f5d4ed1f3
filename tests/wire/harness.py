"""Drive a backend through one or more calls and collect what it yielded and reported.

Backoff sleeps are recorded instead of slept (time we control), and every test gets
its own circuit-breaker registry so no state leaks between tests.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from massgen.backends.base import Backend, BackendContext
from massgen.backends.circuit import BreakerRegistry
from massgen.backends.retry import Retrier, RetryPolicy
from massgen.messages.stream import (
    ChatMessage,
    Finish,
    ModelRequest,
    ReasoningDelta,
    StreamError,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    ToolSpec,
    Usage,
)

# Multiply deadlines by this on a slow machine instead of editing tests (as tests/support.py does).
FACTOR = float(os.environ.get("MASSGEN_TEST_TIMEOUT_FACTOR", "1"))

# Backoff is recorded, not slept; deadlines are long enough never to fire where no fault is played.
FAST = RetryPolicy(
    max_attempts=3,
    base_delay_s=0.01,
    max_delay_s=0.05,
    retry_after_cap_s=5.0,
    first_byte_timeout_s=10.0 * FACTOR,
    idle_timeout_s=10.0 * FACTOR,
    breaker_threshold=50,
    breaker_cooldown_s=30.0,
)
# For hang and drip faults: each costs a test this long; no assertion depends on timing.
DEADLINE_S = 0.5 * FACTOR
SHORT = dataclasses.replace(FAST, first_byte_timeout_s=DEADLINE_S, idle_timeout_s=DEADLINE_S)

NEW_ANSWER = ToolSpec(
    name="new_answer",
    description="Give your answer.",
    parameters={"type": "object", "properties": {"content": {"type": "string"}}, "required": ["content"]},
)
VOTE = ToolSpec(
    name="vote",
    description="Vote for the best answer.",
    parameters={
        "type": "object",
        "properties": {"agent_id": {"type": "string"}, "reason": {"type": "string"}},
        "required": ["agent_id", "reason"],
    },
)


def request(
    text: str = "What is 2+2?",
    *,
    tools: bool = False,
    vote_targets: tuple[str, ...] = (),
    history: tuple[ChatMessage, ...] = (),
) -> ModelRequest:
    messages = (
        ChatMessage(role="system", content="Be brief."),
        ChatMessage(role="user", content=text),
        *history,
    )
    return ModelRequest(
        messages=messages, tools=(NEW_ANSWER, VOTE) if tools else (), vote_targets=vote_targets
    )


@dataclass
class Recorder:
    """The sleeps asked for and the events reported by the backend."""

    sleeps: list[float] = field(default_factory=list)
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        await asyncio.sleep(0)

    def on_event(self, name: str, info: dict[str, Any]) -> None:
        self.events.append((name, info))

    def attempts(self) -> list[dict[str, Any]]:
        return [info for name, info in self.events if name == "backend.attempt"]

    def outcomes(self) -> list[str]:
        return [info["outcome"] for info in self.attempts()]

    def retrier(self, policy: RetryPolicy = FAST, breakers: BreakerRegistry | None = None) -> Retrier:
        return Retrier(
            policy=policy, breakers=breakers or BreakerRegistry(), sleep=self.sleep, rand=lambda: 0.0
        )

    def context(self, env: dict[str, str] | None = None) -> BackendContext:
        return BackendContext(agent_id="agent1", env=env or {}, on_event=self.on_event)


def run_calls(
    backend: Backend, *requests: ModelRequest, between: Callable[[int], Awaitable[None] | None] | None = None
) -> list[list[StreamEvent]]:
    """Start the backend, stream each request to the end, close it; all on one event loop."""

    async def main() -> list[list[StreamEvent]]:
        results: list[list[StreamEvent]] = []
        await backend.start()
        try:
            for number, req in enumerate(requests):
                if between is not None and number:
                    maybe = between(number)
                    if maybe is not None:
                        await maybe
                results.append([event async for event in backend.stream(req)])
        finally:
            await backend.aclose()
        return results

    return asyncio.run(main())


def run_call(backend: Backend, req: ModelRequest) -> list[StreamEvent]:
    return run_calls(backend, req)[0]


def text_of(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def reasoning_of(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, ReasoningDelta))


def calls_of(events: list[StreamEvent]) -> list[ToolCall]:
    return [e.call for e in events if isinstance(e, ToolCallEvent)]


def usage_of(events: list[StreamEvent]) -> Usage:
    usages = [e for e in events if isinstance(e, Usage)]
    assert len(usages) == 1, events
    return usages[0]


def finish_of(events: list[StreamEvent]) -> str:
    finishes = [e for e in events if isinstance(e, Finish)]
    assert len(finishes) == 1, events
    assert events[-1] is finishes[0], "Finish must be the last event"
    return finishes[0].reason


def error_of(events: list[StreamEvent]) -> StreamError:
    assert events and isinstance(events[-1], StreamError), events
    return events[-1]
