"""A deterministic backend that plays a script through the real streaming interface.

Tests, demos and benchmarks drive whole teams with it: each model call plays the
next list of steps (text, reasoning, workflow calls, tool calls, delays, faults).
Every incarnation of an agent plays the script from the start; a step with
``incarnations`` runs only in those, which is how "crash once, then recover" is said.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
from collections.abc import AsyncIterator

from massgen.backends.base import BackendContext, BackendError
from massgen.configs.schema import BackendConfig, ScriptedBackendConfig, ScriptStep
from massgen.messages.stream import (
    Finish,
    ModelRequest,
    ReasoningDelta,
    StreamError,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    Usage,
)
from massgen.messages.workflow import AGENT_ID, CONTENT, NEW_ANSWER, REASON, VOTE

_HANG_SECONDS = 3600.0


# In a ``new_answer`` step, replaced by the content of the latest tool result the model was
# shown: a script cannot read results, but a test can then see one reach the answer.
LAST_TOOL_RESULT = "{last_tool_result}"


def _last_tool_result(request: ModelRequest) -> str:
    return next((m.content for m in reversed(request.messages) if m.role == "tool"), "")


class ScriptFault(RuntimeError):
    """Raised on purpose by a ``fault: raise`` step."""


def _applies(rule: bool | list[int] | None, incarnation: int) -> bool:
    if rule is None or rule is False:
        return False
    if rule is True:
        return True
    return incarnation in rule


class ScriptedBackend:
    def __init__(self, config: ScriptedBackendConfig, context: BackendContext) -> None:
        self.config = config
        self.context = context
        self._played: set[int] = set()
        self._presented = 0
        self._ids = itertools.count(1)

    @property
    def decides_separately(self) -> bool:
        return False

    async def start(self) -> None:
        incarnation = self.context.incarnation
        if _applies(self.config.hang_on_start, incarnation):
            # A blocked thread, not an awaitable: this is what a hung handler looks like.
            threading.Event().wait(_HANG_SECONDS)
        if _applies(self.config.crash_on_start, incarnation):
            raise BackendError(f"scripted crash on start (incarnation {incarnation})")

    async def aclose(self) -> None:
        return None

    def _steps_for_call(self, request: ModelRequest) -> list[ScriptStep]:
        script = self.config.script
        if request.kind == "present":
            if self.config.present_script:
                index = min(self._presented, len(self.config.present_script) - 1)
                self._presented += 1
                return self.config.present_script[index]
            present = self.config.present
            texts = [present] if isinstance(present, str) else present or []
            return [ScriptStep(text=text) for text in texts if text]
        in_view = set(request.vote_targets)
        for index, steps in enumerate(script):
            if index in self._played:
                continue
            guard = steps[0].when_answers if steps else None
            if guard is None or set(guard) <= in_view:
                self._played.add(index)
                return steps
        if self.config.on_exhausted == "repeat_last" and script:
            return script[-1]
        if self.config.on_exhausted == "vote_first" and request.vote_targets:
            return [ScriptStep(vote=request.vote_targets[0], reason="script exhausted")]
        return []

    def replayed(self, request: ModelRequest, tool_calls: int) -> None:
        """A resumed run continues this agent's script: mark the call played without playing it."""
        self._steps_for_call(request)
        for _ in range(tool_calls):
            next(self._ids)

    def _tool_call(self, name: str, arguments: dict[str, object]) -> ToolCallEvent:
        call_id = f"call_{self.context.agent_id}_{next(self._ids)}"
        return ToolCallEvent(
            call=ToolCall(id=call_id, name=name, arguments=arguments, raw_arguments=json.dumps(arguments))
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        prompt_chars = sum(len(m.content) for m in request.messages)
        emitted = 0
        for step in self._steps_for_call(request):
            if step.incarnations is not None and self.context.incarnation not in step.incarnations:
                continue
            if step.when_answers is not None:
                continue
            if step.delay is not None:
                await asyncio.sleep(step.delay)
            elif step.text is not None:
                emitted += len(step.text)
                yield TextDelta(text=step.text)
            elif step.reasoning is not None:
                emitted += len(step.reasoning)
                yield ReasoningDelta(text=step.reasoning)
            elif step.new_answer is not None:
                content = step.new_answer.replace(LAST_TOOL_RESULT, _last_tool_result(request))
                emitted += len(content)
                yield self._tool_call(NEW_ANSWER, {CONTENT: content})
            elif step.vote is not None:
                yield self._tool_call(VOTE, {AGENT_ID: step.vote, REASON: step.reason})
            elif step.tool is not None:
                yield self._tool_call(step.tool, dict(step.args))
            elif step.fault is not None:
                async for event in self._fault(step):
                    yield event
        tokens = self.config.usage_per_call
        yield Usage(
            input_tokens=prompt_chars // 4 if tokens is None else tokens,
            output_tokens=emitted // 4 if tokens is None else 0,
        )
        yield Finish(reason="tool_calls" if emitted else "stop")

    async def _fault(self, step: ScriptStep) -> AsyncIterator[StreamEvent]:
        if step.fault == "raise":
            raise ScriptFault(f"scripted fault in {self.context.agent_id}")
        if step.fault == "hang":
            await asyncio.Event().wait()
        elif step.fault == "stream_forever":
            while True:
                yield TextDelta(text="and so on ")
                await asyncio.sleep(0.01)
        elif step.fault == "block_thread":
            threading.Event().wait(step.seconds or _HANG_SECONDS)
        elif step.fault == "malformed_tool_call":
            raw = '{"content": "unterminated'
            yield ToolCallEvent(
                call=ToolCall(
                    id=f"call_bad_{next(self._ids)}",
                    name=NEW_ANSWER,
                    raw_arguments=raw,
                    parse_error="Unterminated string starting at: line 1 column 13 (char 12)",
                )
            )
        elif step.fault == "error_event":
            yield StreamError(message="scripted provider error", status=500, retryable=False)


def create(config: BackendConfig, context: BackendContext) -> ScriptedBackend:
    if not isinstance(config, ScriptedBackendConfig):
        raise BackendError("scripted backend needs a scripted config")
    return ScriptedBackend(config, context)
