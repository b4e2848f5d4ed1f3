"""One agent turn: model calls until exactly one valid workflow call, on the agent's loop.

This is the part of an agent that talks to a model, kept apart from the actor so the
mailbox stays free (cancel, inject and stop are handled while a model streams). It
reports everything through ``TurnIO``: it never touches another actor.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from massgen.actors import client_tools, prompts
from massgen.actors.stream_guard import StreamLimits, guard
from massgen.backends import Backend
from massgen.messages import (
    AgentChunk,
    AnswerProposed,
    AnswerView,
    CallPermit,
    ChatMessage,
    FinalPresented,
    Message,
    ModelCallFinished,
    ModelCallStarted,
    ModelRequest,
    PresentFinal,
    ReasoningDelta,
    StartTurn,
    StreamError,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    ToolCallRequested,
    ToolCallResult,
    ToolSpec,
    TurnCorrection,
    TurnFailed,
    Usage,
    VoteProposed,
)

ToolExecutor = Callable[[str, dict[str, Any]], Awaitable[tuple[str, bool]]]


class ModelCallError(Exception):
    """The backend gave up on a call; the agent reports it as a failure of this incarnation."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status  # the provider's HTTP status, when it gave one


class BudgetDenied(Exception):
    """The supervisor refused a model call; the run is ending."""


@dataclass
class TurnIO:
    """How a turn reaches the outside world; all three are thread-safe."""

    emit: Callable[[type[Message], str, dict[str, Any]], None]
    permit: Callable[[int, str], CallPermit | None]
    call_tool: ToolExecutor | None = None
    extra_tools: tuple[ToolSpec, ...] = ()


@dataclass
class TurnSettings:
    system_message: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    max_attempts: int = 3
    max_tool_rounds: int = 8
    # Tools of an outside caller: offered to the model, never run here; calling one is an answer
    # (see actors/client_tools.py). Empty for ordinary runs.
    client_tools: tuple[ToolSpec, ...] = ()
    stream_limits: StreamLimits = field(default_factory=StreamLimits)  # see actors/stream_guard.py


@dataclass
class CallResult:
    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)


class TurnRunner:
    def __init__(self, backend: Backend, io: TurnIO, settings: TurnSettings) -> None:
        self.backend = backend
        self.io = io
        self.settings = settings
        self._pending_view: AnswerView | None = None
        self.calls_made = 0

    def inject(self, view: AnswerView) -> None:
        """Called on the loop thread; used at the next safe point of the running turn."""
        self._pending_view = view

    # -- one streamed call ----------------------------------------------------------------

    async def _call(self, turn_id: int, cause: str, request: ModelRequest) -> CallResult:
        permit = self.io.permit(turn_id, cause)
        if permit is None or not permit.granted:
            raise BudgetDenied(permit.reason if permit else "no reply from the supervisor")
        index = self.calls_made
        self.calls_made += 1
        prompt_chars = sum(len(m.content) for m in request.messages) + sum(
            len(str(t.parameters)) + len(t.description) for t in request.tools
        )
        self.io.emit(ModelCallStarted, cause, {
            "turn_id": turn_id, "call_index": index, "prompt_chars": prompt_chars,
            "messages": len(request.messages), "tools": tuple(t.name for t in request.tools),
        })
        result = CallResult()
        usage = Usage()
        finish = "stop"
        error: StreamError | None = None
        async for event in guard(self.backend.stream(request), self.settings.stream_limits):
            if isinstance(event, TextDelta):
                result.text += event.text
                self.io.emit(AgentChunk, cause, {"turn_id": turn_id, "kind": "text", "text": event.text})
            elif isinstance(event, ReasoningDelta):
                self.io.emit(AgentChunk, cause, {"turn_id": turn_id, "kind": "reasoning", "text": event.text})
            elif isinstance(event, ToolCallEvent):
                result.calls.append(event.call)
            elif isinstance(event, Usage):
                usage = event
            elif isinstance(event, StreamError):
                error = event
                break
            else:
                finish = event.reason
        self.io.emit(ModelCallFinished, cause, {
            "turn_id": turn_id, "call_index": index, "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens, "cost_usd": usage.cost_usd,
            "finish_reason": "error" if error else finish, "error": error.message if error else None,
        })
        if error is not None:
            raise ModelCallError(error.message, error.status)
        return result

    # -- a coordination turn ----------------------------------------------------------------

    async def run_turn(self, start: StartTurn) -> None:
        cause = start.msg_id
        view = start.view
        self._pending_view = None
        messages = prompts.turn_messages(
            start.task, view, start.own_label, start.vote_only, self.settings.system_message, start.history
        )
        attempts = 0
        tool_rounds = 0
        offered = () if start.vote_only else client_tools.offer(self.settings.client_tools)
        client_names = {t.name for t in offered}
        while True:
            tools = prompts.workflow_tools(view, start.vote_only) + self.io.extra_tools + offered
            request = ModelRequest(
                messages=tuple(messages), tools=tools, temperature=self.settings.temperature,
                max_tokens=self.settings.max_tokens, vote_targets=view.labels(),
            )
            result = await self._call(start.turn_id, cause, request)
            workflow = [c for c in result.calls if c.name in prompts.WORKFLOW_TOOLS]
            others = [c for c in result.calls if c.name not in prompts.WORKFLOW_TOOLS]
            client_calls = [c for c in others if c.name in client_names]
            if result.text or result.calls:
                messages.append(ChatMessage(role="assistant", content=result.text, tool_calls=tuple(others)))

            if self._pending_view is not None:  # safe point: new answers arrived mid-turn
                view, self._pending_view = self._pending_view, None
                if len(workflow) == 1 and workflow[0].name == prompts.VOTE:
                    workflow = []  # a vote cast on an outdated view is worthless
                messages.append(prompts.injection_message(view, start.own_label))
                if not workflow and not others:
                    continue

            if not workflow and client_calls:  # a client tool call is this turn's answer
                problem = client_tools.problem(client_calls)
                if problem is None:
                    self.io.emit(AnswerProposed, cause, {
                        "turn_id": start.turn_id, "content": client_tools.encode(client_calls),
                        "view_version": view.version,
                    })
                    return
                messages.extend(ChatMessage(role="tool", content=problem, tool_call_id=c.id, name=c.name)
                                for c in others)
            elif len(workflow) != 1 and others:
                tool_rounds += 1
                if tool_rounds > self.settings.max_tool_rounds:
                    problem = f"Tool limit reached ({self.settings.max_tool_rounds} rounds)."
                else:
                    for call in others:
                        messages.append(await self._run_tool(start.turn_id, cause, call))
                    continue
            else:
                problem = self._problem(workflow, view, start.vote_only, result.text)
                if problem is None:
                    self._propose(start.turn_id, cause, workflow[0], view)
                    return

            attempts += 1
            self.io.emit(TurnCorrection, cause, {"turn_id": start.turn_id, "attempt": attempts, "problem": problem})
            if attempts >= self.settings.max_attempts:
                self.io.emit(TurnFailed, cause, {
                    "turn_id": start.turn_id,
                    "reason": f"no valid workflow call after {attempts} attempts: {problem}",
                })
                return
            messages.append(prompts.correction_message(problem, start.vote_only))

    def _problem(self, workflow: list[ToolCall], view: AnswerView, vote_only: bool, text: str) -> str | None:
        if not workflow:
            return "You did not call new_answer or vote." if text else "Your reply was empty."
        if len(workflow) > 1:
            return f"You made {len(workflow)} workflow calls; make exactly one."
        call = workflow[0]
        if call.parse_error:
            return f"The arguments of your {call.name} call were not valid JSON ({call.parse_error})."
        if call.name == prompts.NEW_ANSWER:
            if vote_only:
                return "New answers are closed for you."
            content = call.arguments.get("content")
            if not isinstance(content, str) or not content.strip():
                return "new_answer needs a non-empty 'content' string."
            same = next((a for a in view.answers if _normalise(a.content) == _normalise(content)), None)
            if same is not None:
                # Small models re-submit an answer in view instead of voting; that never converges.
                return f"Your answer repeats {same.label}; vote for {same.agent} instead of answering again."
            return None
        target = _vote_target(call.arguments.get("agent_id"))
        if not view.answers:
            return "There are no answers to vote for yet."
        if target not in view.labels():
            return f"vote agent_id must be one of {', '.join(view.labels())}."
        return None

    def _propose(self, turn_id: int, cause: str, call: ToolCall, view: AnswerView) -> None:
        if call.name == prompts.NEW_ANSWER:
            self.io.emit(AnswerProposed, cause, {
                "turn_id": turn_id, "content": str(call.arguments["content"]).strip(),
                "view_version": view.version,
            })
        else:
            self.io.emit(VoteProposed, cause, {
                "turn_id": turn_id, "target": _vote_target(call.arguments.get("agent_id")),
                "reason": str(call.arguments.get("reason", "")), "view_version": view.version,
            })

    async def _run_tool(self, turn_id: int, cause: str, call: ToolCall) -> ChatMessage:
        self.io.emit(ToolCallRequested, cause, {
            "turn_id": turn_id, "call_id": call.id, "name": call.name, "arguments": call.arguments,
        })
        if call.parse_error:
            content, is_error = f"arguments were not valid JSON: {call.parse_error}", True
        elif self.io.call_tool is None:
            content, is_error = f"unknown tool {call.name!r}", True
        else:
            content, is_error = await self.io.call_tool(call.name, call.arguments)
        self.io.emit(ToolCallResult, cause, {
            "turn_id": turn_id, "call_id": call.id, "name": call.name, "content": content, "is_error": is_error,
        })
        return ChatMessage(role="tool", content=content, tool_call_id=call.id, name=call.name)

    # -- the final presentation ---------------------------------------------------------------

    async def present(self, msg: PresentFinal) -> None:
        own = next((a.content for a in msg.view.answers if a.agent == msg.own_label), None)
        if self.settings.client_tools and client_tools.decode(own) is not None:
            # A winning client tool call goes back as written: a presentation would turn it into prose.
            self.io.emit(FinalPresented, msg.msg_id, {"turn_id": msg.turn_id, "content": own})
            return
        messages = prompts.present_messages(
            msg.task, msg.view, msg.votes, msg.own_label, msg.strategy == "synthesize",
            self.settings.system_message, msg.history,
        )
        request = ModelRequest(
            messages=tuple(messages), kind="present", temperature=self.settings.temperature,
            max_tokens=self.settings.max_tokens,
        )
        result = await self._call(msg.turn_id, msg.msg_id, request)
        self.io.emit(FinalPresented, msg.msg_id, {"turn_id": msg.turn_id, "content": result.text.strip()})


def _normalise(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".!")


def _vote_target(value: object) -> str:
    """Accept ``agent2`` and, leniently, ``agent2.3``: a vote is for an agent's latest answer."""
    text = str(value or "").strip()
    head, _, tail = text.partition(".")
    return head if tail.isdigit() else text
