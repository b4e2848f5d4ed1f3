"""Tool calls for models and servers that cannot do them natively.

Two fallbacks, shared by the Chat Completions and local backends: a JSON-schema
response format with one object schema per action under ``oneOf`` (every field an
action needs is required, since small models drop what is optional), and a tolerant
parser of tool-call text as models write it (``<tool_call>{...}</tool_call>`` like
Qwen, a fenced JSON block, or a bare JSON object). Conversation history with tool
calls is flattened to plain text for such servers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

from massgen.messages.stream import ChatMessage, ToolCall, ToolSpec
from massgen.messages.workflow import AGENT_ID, CONTENT, NEW_ANSWER, REASON, VOTE

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCED = re.compile(r"```(?:json|tool_call|tool)?\s*\n?(.*?)```", re.DOTALL)
_NAME = re.compile(r'"(?:name|action)"\s*:\s*"([^"]+)"')


def strip_tool_calls(text: str) -> str:
    """The reply without the tool-call markup our parser reads: what is left is the model's prose."""
    return _FENCED.sub("", _TAGGED.sub("", text)).strip()


def parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """Parse a tool call's JSON arguments; on failure return ``({}, reason)`` instead of raising."""
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return {}, str(exc)
    if not isinstance(value, dict):
        return {}, f"arguments must be a JSON object, got {type(value).__name__}"
    return value, None


def action_schema(tools: Sequence[ToolSpec], vote_targets: Sequence[str] = ()) -> dict[str, Any]:
    """One object schema per tool under ``oneOf``, the tool named by a required ``action`` field.

    ``vote`` gets ``agent_id`` restricted to ``vote_targets`` (and is left out when there is
    nothing to vote for), so a grammar-constrained model cannot name a label not in view.
    """
    branches: list[dict[str, Any]] = []
    for tool in tools:
        params = tool.parameters or {}
        properties: dict[str, Any] = {"action": {"type": "string", "enum": [tool.name]}}
        properties.update(params.get("properties", {}))
        required = ["action", *params.get("required", [])]
        if tool.name == VOTE:
            if not vote_targets:
                continue
            properties[AGENT_ID] = {"type": "string", "enum": list(vote_targets)}
            properties.setdefault(REASON, {"type": "string"})
            required = ["action", AGENT_ID, REASON]
        elif tool.name == NEW_ANSWER and CONTENT in properties:
            required = ["action", CONTENT]  # a decision's new_answer has no content: the reply is the answer
        branches.append({
            "type": "object", "properties": properties,
            "required": list(dict.fromkeys(required)), "additionalProperties": False,
        })
    if len(branches) == 1:
        return branches[0]
    return {"oneOf": branches}


# The longest length bound a grammar for llama.cpp keeps. Its JSON-schema converter writes ``maxLength: N``
# as N nested optional rules, and its grammar parser recurses once per level: the 20,000-character bound of
# ``run_python``'s code crashed the model server on every check turn (measured: "server died mid-call"),
# where the calculator's 1,000 did not. A longer bound is left to the tool's own argument check, which
# validates every call against the schema the tool was offered with (actors/agent/tool_arguments.py).
GRAMMAR_MAX_BOUND = 1_000


def grammar_safe(schema: Any) -> Any:
    """``schema`` with ``maxLength``/``maxItems``/``maxProperties`` above ``GRAMMAR_MAX_BOUND`` left out."""
    if isinstance(schema, list):
        return [grammar_safe(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {key: grammar_safe(value) for key, value in schema.items()
            if not (key in ("maxLength", "maxItems", "maxProperties") and isinstance(value, int)
                    and value > GRAMMAR_MAX_BOUND)}


def response_format(schema: dict[str, Any], style: Literal["llamacpp", "openai"]) -> dict[str, Any]:
    """The ``response_format`` field: llama.cpp's ``json_object`` + schema, or OpenAI's ``json_schema``; either
    way with bounds a grammar can compile (a Chat Completions server may be llama.cpp's too)."""
    schema = grammar_safe(schema)
    if style == "llamacpp":
        return {"type": "json_object", "schema": schema}
    return {"type": "json_schema", "json_schema": {"name": "action", "schema": schema, "strict": False}}


def _describe(tools: Sequence[ToolSpec]) -> str:
    return "\n".join(
        f"- {t.name}: {t.description}\n  arguments schema: {json.dumps(t.parameters, sort_keys=True)}"
        for t in tools
    )


def json_mode_instructions(tools: Sequence[ToolSpec], vote_targets: Sequence[str] = ()) -> str:
    """System text for JSON-schema mode: reply with one object whose ``action`` names the tool."""
    targets = f"\nYou may vote for: {', '.join(vote_targets)}." if vote_targets else ""
    return (
        "Reply with exactly one JSON object and nothing else. Its \"action\" field names one of these"
        " actions and the other fields are that action's arguments:\n" + _describe(tools) + targets
    )


def text_mode_instructions(tools: Sequence[ToolSpec]) -> str:
    """System text for text mode: the tags our parser reads."""
    return (
        "You can call these tools:\n" + _describe(tools) + "\nTo call a tool, end your reply with"
        ' <tool_call>{"name": "TOOL", "arguments": {...}}</tool_call> and nothing after it.'
    )


def _loads_lenient(text: str) -> Any:
    """``json.loads``, then again on the outermost ``{...}`` (models add prose around JSON)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        start, end = text.find("{"), text.rfind("}")
        if start == -1 or end <= start:
            raise
        return json.loads(text[start:end + 1])


def _as_call(value: Any, names: set[str] | None) -> tuple[str, dict[str, Any], str | None] | None:
    """Recognise the shapes models use for a call; ``(name, arguments, error)`` or None."""
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("function"), dict):
        value = value["function"]
    name = value.get("name")
    if isinstance(name, str) and ("arguments" in value or "parameters" in value):
        args: Any = value.get("arguments", value.get("parameters"))
        error = None
        if isinstance(args, str):
            args, error = parse_arguments(args)
        elif not isinstance(args, dict):
            args, error = {}, "arguments must be a JSON object"
    elif isinstance(value.get("action"), str):
        name = value["action"]
        args, error = {k: v for k, v in value.items() if k != "action"}, None
    else:
        return None
    if names is not None and name not in names:
        return None
    return name, args, error


def parse_action_object(text: str, new_id: Callable[[], str],
                        tool_names: Iterable[str] | None = None) -> list[ToolCall]:
    """The reply of JSON-schema mode as tool calls; falls back to the text parser."""
    names = set(tool_names) if tool_names is not None else None
    try:
        found = _as_call(_loads_lenient(text.strip()), names)
    except json.JSONDecodeError:
        found = None
    if found is not None:
        name, args, error = found
        return [ToolCall(id=new_id(), name=name, arguments=args, raw_arguments=json.dumps(args),
                         parse_error=error)]
    return parse_tool_calls(text, new_id, tool_names)


def parse_tool_calls(text: str, new_id: Callable[[], str],
                     tool_names: Iterable[str] | None = None) -> list[ToolCall]:
    """Tool calls written as text, tolerant of tags, fences and bare JSON.

    A ``<tool_call>`` whose JSON is broken is still reported (with ``parse_error``) so the
    model can be corrected; a broken fenced block is ignored, since it may be plain code.
    """
    names = set(tool_names) if tool_names is not None else None
    calls: list[ToolCall] = []
    tagged = [m.group(1) for m in _TAGGED.finditer(text) if m.group(1).strip()]
    candidates = [(c, True) for c in tagged] or [(c, False) for c in _FENCED.findall(text)]
    if not candidates and text.strip().startswith("{"):
        candidates = [(text.strip(), False)]
    for raw, strict in candidates:
        try:
            found = _as_call(_loads_lenient(raw), names)
        except json.JSONDecodeError as exc:
            if strict:
                match = _NAME.search(raw)
                calls.append(ToolCall(id=new_id(), name=match.group(1) if match else "",
                                      raw_arguments=raw, parse_error=str(exc)))
            continue
        if found is not None:
            name, args, error = found
            calls.append(ToolCall(id=new_id(), name=name, arguments=args,
                                  raw_arguments=json.dumps(args), parse_error=error))
    return calls


def flatten_messages(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """History for servers without tool roles: calls become tagged text, results user text."""
    flat: list[ChatMessage] = []
    for message in messages:
        if message.role == "tool":
            flat.append(ChatMessage(role="user", content=f"Result of tool {message.name or ''}:\n"
                                                         f"{message.content}"))
        elif message.role == "assistant" and message.tool_calls:
            calls = "".join(
                "<tool_call>" + json.dumps({"name": c.name, "arguments": c.arguments}) + "</tool_call>"
                for c in message.tool_calls
            )
            flat.append(ChatMessage(role="assistant", content=(message.content + "\n" + calls).strip()))
        else:
            flat.append(message)
    return flat
