"""A model's tool arguments checked before any tool runs: hostile input gets a tool error.

Every call a turn runs is checked here first, whatever the tool (file tools, ``run_command``,
MCP tools): the arguments must be valid Unicode text throughout (a lone surrogate such as
``"\\ud800"`` cannot be written, encoded or sent anywhere) and must match the JSON schema the
tool was offered with (``jsonschema``). A schema that is not valid JSON Schema (an MCP
server's mistake) is not used to refuse calls: the server judges those itself. The problem
is one line the model is told, naming the argument.
"""

from __future__ import annotations

from typing import Any

import jsonschema
from jsonschema.exceptions import SchemaError

from massgen.messages import ToolSpec


def lone_surrogate(value: object) -> str | None:
    """The path (``content``, ``items/2``) of the first text that is not valid Unicode, or None."""
    pending: list[tuple[str, object]] = [("", value)]
    while pending:
        where, item = pending.pop()
        if isinstance(item, str):
            if not _encodes(item):
                return where or "(arguments)"
        elif isinstance(item, dict):
            for key, inner in item.items():
                name = str(key)
                if not _encodes(name):
                    return f"{where}/(a key)" if where else "(a key)"
                pending.append((f"{where}/{name}" if where else name, inner))
        elif isinstance(item, list | tuple):
            pending.extend((f"{where}/{index}" if where else str(index), inner) for index, inner in enumerate(item))
    return None


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def problem(spec: ToolSpec | None, arguments: dict[str, Any]) -> str | None:
    """Why these arguments cannot be passed to the tool, in words for the model; None when they can."""
    where = lone_surrogate(arguments)
    if where is not None:
        return f"argument {where} is not valid Unicode text (it holds a lone surrogate such as \\ud800)"
    if spec is None or not spec.parameters:
        return None
    try:
        validator_class = jsonschema.validators.validator_for(spec.parameters)
        validator_class.check_schema(spec.parameters)
        error = jsonschema.exceptions.best_match(validator_class(spec.parameters).iter_errors(arguments))
    except (SchemaError, RecursionError):
        return None
    if error is None:
        return None
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        takes = tuple((error.schema.get("properties") or {}) if isinstance(error.schema, dict) else ())
        unknown = [str(k) for k in error.instance if k not in takes]
        if unknown:
            where = "/".join(str(p) for p in error.absolute_path)
            return (f"{'argument ' + where + ' takes no key' if where else 'it takes no argument'} "
                    f"{', '.join(repr(k) for k in unknown)} (only {', '.join(takes) or 'none'}); "
                    "the call was not run")
    path = "/".join(str(p) for p in error.absolute_path)
    return f"argument {path}: {error.message}" if path else f"arguments: {error.message}"
