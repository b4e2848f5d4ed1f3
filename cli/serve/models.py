"""Request bodies of ``POST /v1/chat/completions``, checked, and turned into a team's task.

Validation is strict about what we use and lenient about what we ignore: clients send
many optional parameters (``temperature``, ``user``, ``seed`` ...) that a team's config
decides instead, so unknown top-level keys are accepted and ignored, while a wrong type
for a key we read is a 422 naming the key. Semantic problems (no user message, a tool
result with no matching call, tool names that collide with the workflow tools) are 400s.

A team takes one task plus ``history=((question, answer), ...)``. So the conversation
is folded: system/developer messages become instructions at the head of the task, the
last user message is the task, earlier turns become history, and the assistant tool
calls and ``tool`` results after the last user message (a client tool round trip) are
written under the task so the agents continue from them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from massgen import WORKFLOW_TOOLS, ToolSpec, unsafe_for_terminal
from massgen.cli.serve import body_guard
from massgen.cli.serve.errors import ApiError

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class _Body(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")


class ContentPart(_Body):
    type: str
    text: str | None = None


class FunctionCall(_Body):
    name: str
    arguments: str = ""


class ToolCallIn(_Body):
    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class MessageIn(_Body):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[ContentPart] | None = None
    name: str | None = None
    tool_calls: list[ToolCallIn] | None = None
    tool_call_id: str | None = None


class FunctionDef(_Body):
    name: str
    description: str | None = None
    parameters: dict[str, Any] | None = None


class ToolDef(_Body):
    type: Literal["function"]
    function: FunctionDef


class StreamOptions(_Body):
    include_usage: bool = False


class ChatRequest(_Body):
    model: str | None = None
    messages: list[MessageIn] = Field(min_length=1)
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    tools: list[ToolDef] | None = None
    tool_choice: str | dict[str, Any] | None = None
    n: int | None = None


@dataclass(frozen=True)
class Limits:
    """Bounds on one request; anything past them is refused before a run starts."""

    max_body_bytes: int = 4 * 1024 * 1024
    max_messages: int = 512
    max_tools: int = 128
    max_depth: int = 64  # nesting of arrays/objects, counted before parsing (see body_guard.py)
    max_model_chars: int = 256
    body_timeout_s: float = 30.0  # the whole body must arrive within this, or 408


@dataclass(frozen=True)
class Conversation:
    """What a team run needs from a request."""

    task: str
    history: tuple[tuple[str, str], ...]
    client_tools: tuple[ToolSpec, ...]


_FIELDS = frozenset(name for body in (ChatRequest, MessageIn, ContentPart, ToolCallIn, FunctionCall, ToolDef,
                                      FunctionDef, StreamOptions) for name in body.model_fields)


def _place(loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    """``loc`` without pydantic's union-branch tags (``str``, ``list[ContentPart]``): no field of a body
    is named so, and a ``param`` must name a place in the client's JSON."""
    return tuple(part for part in loc if not isinstance(part, str) or part in _FIELDS)


def _invalid(exc: ValidationError) -> ApiError:
    """The 422 for the first wrong field. Where a union (``content``: a string or a list of parts) failed,
    pydantic reports every branch, the first being ``str``; the branch that got furthest is what the
    client meant (a part without ``type``), and when none got past the value itself each is named."""
    errors = exc.errors()
    first = errors[0]
    branch = next((i for i, part in enumerate(first["loc"]) if isinstance(part, str) and part not in _FIELDS), None)
    chosen, message = first, first["msg"]
    if branch is not None:
        union_at = _place(first["loc"][:branch])
        tried = [e for e in errors if _place(e["loc"])[:len(union_at)] == union_at]
        deepest = max(len(_place(e["loc"])) for e in tried)
        furthest = [e for e in tried if len(_place(e["loc"])) == deepest]
        chosen, message = furthest[0], furthest[0]["msg"]
        if deepest == len(union_at) and len(furthest) > 1:
            message = "Input should be " + " or ".join(e["msg"].removeprefix("Input should be ") for e in furthest)
    param = ".".join(str(part) for part in _place(chosen["loc"])) or None
    return ApiError(422, f"{param or 'body'}: {message}", code="invalid_value", param=param)


def check_model_text(model: str) -> None:
    """400 naming ``model`` and the code point when the name holds what a terminal must not be given as it is,
    or any control or format character (``unsafe_for_terminal`` of a name: ``messages/text.py``).

    No model name needs one, and each does harm: a NUL cannot be in a path, an 8-bit CSI (U+009B)
    drives a terminal as ESC [ does, and a bidi override (U+202E) makes a name read as another."""
    unprintable = unsafe_for_terminal(model, name=True)
    if unprintable:
        raise ApiError(400, f"model: holds {unprintable}; a model name is plain text", code="invalid_value",
                       param="model")


def parse_request(body: bytes, limits: Limits) -> ChatRequest:
    """JSON body -> ``ChatRequest``: 400 for bad JSON or limits, 422 for a wrong shape."""
    data = body_guard.json_object(body, limits.max_depth)
    model = data.get("model")
    if isinstance(model, str) and len(model) > limits.max_model_chars:
        raise ApiError(400, f"model: longer than {limits.max_model_chars} characters", code="invalid_value",
                       param="model")
    if isinstance(model, str):
        check_model_text(model)
    messages = data.get("messages")
    if isinstance(messages, list) and len(messages) > limits.max_messages:
        raise ApiError(400, f"too many messages: {len(messages)} (at most {limits.max_messages})",
                       code="too_many_messages", param="messages")
    tools = data.get("tools")
    if isinstance(tools, list) and len(tools) > limits.max_tools:
        raise ApiError(400, f"too many tools: {len(tools)} (at most {limits.max_tools})",
                       code="too_many_tools", param="tools")
    try:
        request = ChatRequest.model_validate(data)
    except ValidationError as exc:
        raise _invalid(exc) from None
    if request.n not in (None, 1):
        raise ApiError(400, "only n=1 is supported: a team gives one answer", code="unsupported_value",
                       param="n")
    if request.stream_options is not None and not request.stream:
        raise ApiError(400, "stream_options is only allowed with stream: true", param="stream_options")
    return request


def _text(message: MessageIn, index: int) -> str:
    if message.content is None:
        return ""
    if isinstance(message.content, str):
        return message.content
    parts = []
    for number, part in enumerate(message.content):
        if part.type != "text":
            raise ApiError(400, f"messages[{index}]: only text content parts are supported (got {part.type!r})",
                           code="unsupported_content", param=f"messages.{index}.content")
        if part.text is None:
            raise ApiError(400, f"messages[{index}].content[{number}]: a text part needs its 'text'",
                           code="invalid_value", param=f"messages.{index}.content.{number}.text")
        parts.append(part.text)
    return "\n".join(parts)


def _render_call(call: ToolCallIn) -> str:
    return f"{call.function.name}({call.function.arguments or '{}'})"


def _render_tools(calls: list[ToolCallIn], results: dict[str, str]) -> str:
    lines = []
    for call in calls:
        result = results.get(call.id, "(no result)")
        lines.append(f"- {_render_call(call)} returned:\n{result}")
    return "\n".join(lines)


def _check_tool_choice(request: ChatRequest) -> None:
    """400 unless ``tool_choice`` is one of OpenAI's: "none", "auto", "required", or a named function of
    ``tools``. A team decides for itself whether to call a tool, so only "none" changes anything; the rest
    are still checked, so a typo or a tool that was never sent is refused (as OpenAI does), not ignored."""
    choice = request.tool_choice
    if choice is None or choice in ("none", "auto", "required"):
        return
    if isinstance(choice, str):
        raise ApiError(400, f"tool_choice must be \"none\", \"auto\", \"required\" or a named function, "
                            f"not {choice[:40]!r}", code="invalid_value", param="tool_choice")
    function = choice.get("function")
    name = function.get("name") if isinstance(function, dict) else None
    if choice.get("type") != "function" or not isinstance(name, str):
        raise ApiError(400, 'tool_choice as an object must be {"type": "function", "function": {"name": ...}}',
                       code="invalid_value", param="tool_choice")
    if name not in {tool.function.name for tool in request.tools or ()}:
        raise ApiError(400, f"tool_choice names the function {name[:64]!r}, which is not in tools",
                       code="invalid_value", param="tool_choice.function.name")


def _client_tools(request: ChatRequest) -> tuple[ToolSpec, ...]:
    _check_tool_choice(request)
    if not request.tools or request.tool_choice == "none":
        return ()
    specs: list[ToolSpec] = []
    seen: set[str] = set()
    for index, tool in enumerate(request.tools):
        name = tool.function.name
        param = f"tools.{index}.function.name"
        if name in WORKFLOW_TOOLS:
            raise ApiError(400, f"tool name {name!r} is reserved for the team's workflow "
                                f"({', '.join(WORKFLOW_TOOLS)}); rename the tool", code="reserved_tool_name",
                           param=param)
        if not _TOOL_NAME.match(name):
            raise ApiError(400, f"tool name {name!r} must match ^[A-Za-z0-9_-]{{1,64}}$", param=param)
        if name in seen:
            raise ApiError(400, f"tool name {name!r} appears twice", param=param)
        seen.add(name)
        parameters = tool.function.parameters or {"type": "object", "properties": {}}
        specs.append(ToolSpec(name=name, description=tool.function.description or "", parameters=parameters))
    return tuple(specs)


def to_conversation(request: ChatRequest) -> Conversation:
    """Fold the messages into (task, history); see the module docstring for the rules."""
    messages = request.messages
    users = [i for i, m in enumerate(messages) if m.role == "user"]
    if not users:
        raise ApiError(400, "messages must contain a user message: the last one is the team's task",
                       param="messages")
    last = users[-1]
    instructions = [_text(m, i) for i, m in enumerate(messages) if m.role in ("system", "developer")]
    task = _text(messages[last], last).strip()
    if not task:
        raise ApiError(400, f"messages[{last}]: the task (the last user message) is empty",
                       param=f"messages.{last}.content")

    # After the task: only the assistant's tool calls and the client's tool results may follow.
    calls: list[ToolCallIn] = []
    results: dict[str, str] = {}
    for index in range(last + 1, len(messages)):
        message = messages[index]
        if message.role == "assistant" and message.tool_calls:
            calls.extend(message.tool_calls)
        elif message.role == "tool":
            if message.tool_call_id not in {c.id for c in calls}:
                raise ApiError(400, f"messages[{index}]: tool message answers no earlier tool call "
                                    f"(tool_call_id {message.tool_call_id!r})", param=f"messages.{index}")
            results[message.tool_call_id] = _text(message, index)
        elif message.role not in ("system", "developer"):
            raise ApiError(400, f"messages[{index}]: after the last user message only assistant tool calls "
                                "and tool results may follow", param=f"messages.{index}")
    if calls:
        task += ("\n\nTools you called for this task, and their results (continue from them):\n"
                 + _render_tools(calls, results))

    history, unanswered = _history(messages[:last])
    if unanswered:  # user messages with no reply yet belong to the task
        task = "\n\n".join([*unanswered, task])
    if instructions:
        task = "\n\n".join([*(t for t in instructions if t.strip()), task])
    return Conversation(task=task, history=history, client_tools=_client_tools(request))


def _history(messages: list[MessageIn]) -> tuple[tuple[tuple[str, str], ...], list[str]]:
    """Earlier turns as (question, answer) pairs, and trailing user text that got no answer."""
    history: list[tuple[str, str]] = []
    question: list[str] = []
    answer: list[str] = []
    pending: list[ToolCallIn] = []
    results: dict[str, str] = {}
    for index, message in enumerate(messages):
        if message.role == "user":
            if answer:
                history.append(("\n".join(question), "\n".join(answer)))
                question, answer = [], []
            question.append(_text(message, index))
        elif message.role == "assistant":
            pending.extend(message.tool_calls or ())
            text = _text(message, index)
            if text:
                answer.append(text)
        elif message.role == "tool":
            results[message.tool_call_id or ""] = _text(message, index)
            if pending and all(c.id in results for c in pending):
                answer.append("Tool calls:\n" + _render_tools(pending, results))
                pending = []
    if pending:
        answer.append("Tool calls:\n" + _render_tools(pending, results))
    if answer:
        history.append(("\n".join(question), "\n".join(answer)))
        question = []
    return tuple(history), question
