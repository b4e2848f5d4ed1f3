"""The user's own Python functions as tools (``backend.custom_tools``), run in the agent's process.

Each entry names a Python file and one or more functions in it, as upstream MassGen's
``custom_tools`` do. A function's signature becomes the tool's JSON schema (through a
pydantic model, so the model's arguments are checked and coerced the same way), its
docstring's first paragraph the description; ``preset_args`` are passed on every call
and hidden from the model. A function may be plain, async, or an async generator (the
last item it yields is its result); a result with upstream's ``output_blocks`` shape is
read as the text of its blocks. A bad call or a raising function is a tool error the
model sees, never a crash of the turn. A file that cannot be loaded fails the agent's
start with a message naming the file.
"""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from massgen.actors.agent.turn_io import ToolExecutor
from massgen.configs.schema import CustomToolConfig
from massgen.messages import ToolSpec
from massgen.outcome.errors import PermanentBackendError

RESULT_LIMIT_CHARS = 100_000


class CustomToolError(PermanentBackendError):
    """A custom tool's file or function cannot be loaded: no restart can fix it."""


@dataclass(frozen=True)
class _Tool:
    spec: ToolSpec
    function: Callable[..., Any]
    arguments: type[BaseModel]
    preset: dict[str, Any]


def _load_module(path: Path) -> Any:
    name = f"massgen_custom_tool_{abs(hash(str(path)))}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CustomToolError(f"custom tool file {path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise CustomToolError(f"custom tool file {path} failed to import: {type(exc).__name__}: {exc}") from exc
    sys.modules[name] = module
    return module


def _description(function: Callable[..., Any], configured: str | None) -> str:
    if configured:
        return configured
    doc = inspect.getdoc(function) or ""
    return doc.split("\n\n", 1)[0].strip() or f"Runs {function.__name__}."


def _arguments_model(name: str, function: Callable[..., Any], hidden: set[str]) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    for parameter in inspect.signature(function).parameters.values():
        if parameter.name in hidden or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        annotation = Any if parameter.annotation is inspect.Parameter.empty else parameter.annotation
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        fields[parameter.name] = (annotation, default)
    model: type[BaseModel] = create_model(f"{name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    return model


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


def _text(result: Any) -> str:
    blocks = getattr(result, "output_blocks", None)
    if isinstance(blocks, list):  # upstream's ExecutionResult: text blocks
        return "\n".join(str(getattr(b, "data", b)) for b in blocks)
    if isinstance(result, str):
        return result
    try:
        return json.dumps(result, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(result)


class CustomTools:
    """The custom tools of one agent."""

    def __init__(self, entries: Sequence[CustomToolConfig], base: Path | None = None) -> None:
        self._tools: dict[str, _Tool] = {}
        for entry in entries:
            if entry.path is None:
                raise CustomToolError(f"custom tool {entry.function!r} needs 'path', the Python file it is in")
            path = (base or Path.cwd()) / Path(entry.path).expanduser()
            if not path.is_file():
                raise CustomToolError(f"custom tool file {entry.path} was not found (relative paths start at "
                                      f"{base or Path.cwd()})")
            module = _load_module(path.resolve())
            descriptions = entry.description if isinstance(entry.description, list) else None
            preset = {**entry.default_params, **entry.preset_args}
            for index, (tool_name, function_name) in enumerate(entry.functions()):
                function = getattr(module, function_name, None)
                if not callable(function):
                    raise CustomToolError(f"custom tool file {entry.path} has no function {function_name!r}")
                described = descriptions[index] if descriptions and index < len(descriptions) else (
                    entry.description if isinstance(entry.description, str) else None)
                arguments = _arguments_model(tool_name, function, set(preset))
                spec = ToolSpec(name=tool_name, description=_description(function, described),
                                parameters=_schema(arguments))
                self._tools[tool_name] = _Tool(spec, function, arguments, preset)

    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(t.spec for t in self._tools.values())

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        tool = self._tools[name]
        try:
            checked = tool.arguments.model_validate(arguments)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                                 for e in exc.errors())
            return f"invalid arguments for {name}: {problems}", True
        kwargs = {**dict(checked), **tool.preset}
        try:
            result = await _invoke(tool.function, kwargs)
        except Exception as exc:  # the user's code: its failure is the model's tool result
            return f"{name} failed: {type(exc).__name__}: {exc}", True
        text = _text(result)
        return (text[:RESULT_LIMIT_CHARS] + "\n[truncated]") if len(text) > RESULT_LIMIT_CHARS else text, False

    def chain(self, other: ToolExecutor | None) -> ToolExecutor:
        """One executor: these tools here, every other name to ``other``."""

        async def execute(name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
            if name in self._tools:
                return await self.call(name, arguments)
            if other is None:
                return f"unknown tool {name!r}", True
            return await other(name, arguments)

        return execute


async def _invoke(function: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    if inspect.isasyncgenfunction(function):
        last: Any = None
        async for item in function(**kwargs):
            last = item
        return last
    if inspect.iscoroutinefunction(function):
        return await function(**kwargs)
    result = await asyncio.to_thread(function, **kwargs)  # a blocking function must not stall the loop
    if inspect.isawaitable(result):
        return await result
    return result
