"""``massgen --show-schema``: every config key, its type and its default, read off the pydantic models."""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from massgen.configs.backend_types import BACKEND_TYPES
from massgen.configs.loader import ConfigError
from massgen.configs.schema import AgentConfig, BackendConfig, TeamConfig


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation holds (``X``, ``list[X]``, ``X | None``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        found += _models_in(arg)
    return found


def _type_name(annotation: Any) -> str:
    if annotation is type(None):
        return "None"
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return annotation.__name__
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        return " | ".join(_type_name(a) for a in typing.get_args(annotation))
    text = str(annotation).replace("typing.", "")
    for model in _models_in(annotation):
        text = text.replace(f"{model.__module__}.{model.__qualname__}", model.__name__)
    return text


def _lines(model: type[BaseModel], indent: str, skip: frozenset[str] = frozenset()) -> list[str]:
    lines = []
    for name, info in model.model_fields.items():
        if name in skip:
            continue
        if info.default is not PydanticUndefined:
            default = f" = {info.default!r}"
        elif info.default_factory is not None:
            default = ""
        else:
            default = " (required)"
        nested = [m for m in _models_in(info.annotation) if m is not BackendConfig]
        if nested and len(nested) == 1:
            lines.append(f"{indent}{name}:{' (list)' if typing.get_origin(info.annotation) is list else ''}")
            lines += _lines(nested[0], indent + "  ")
        else:
            lines.append(f"{indent}{name}: {_type_name(info.annotation)}{default}")
    return lines


def schema_text(backend: str | None = None) -> str:
    """The whole config (the backend as its common keys), or one backend type's keys."""
    if backend is not None:
        described = BACKEND_TYPES.get(backend)
        if described is None:
            raise ConfigError(f"--schema-backend {backend!r} is not a backend type; known: "
                              f"{', '.join(sorted(BACKEND_TYPES))}")
        return "\n".join([f"backend (type: {backend}):", *_lines(described.options, "  ")]) + "\n"
    lines = ["agents (list; or agent: for one):", *_lines(AgentConfig, "  ", frozenset({"backend"})),
             "  backend:", *_lines(BackendConfig, "    "),
             f"    (each type adds its own keys: --show-schema --schema-backend TYPE; types: "
             f"{', '.join(sorted(BACKEND_TYPES))})"]
    lines += _lines(TeamConfig, "", frozenset({"agents"}))
    return "\n".join(lines) + "\n"
