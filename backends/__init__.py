"""Model providers behind one streaming interface.

Provider SDKs are imported only when a backend of that type is built, so the
command line starts fast and a missing optional extra fails only where it is used.
"""

from __future__ import annotations

import importlib
import inspect
from typing import TYPE_CHECKING

from massgen.backends.base import (
    PERMANENT_STATUSES,
    Backend,
    BackendContext,
    BackendError,
    PermanentBackendError,
)

if TYPE_CHECKING:
    from massgen.configs.schema import BackendConfig

# backend type -> "module:factory"; the factory takes (config, context) -> Backend.
_FACTORIES: dict[str, str] = {
    "scripted": "massgen.backends.scripted:create",
    "local": "massgen.backends.local:create",
    "openai": "massgen.backends.openai_responses:create",
    "claude": "massgen.backends.anthropic_messages:create",
    "gemini": "massgen.backends.gemini:create",
    "claude_code": "massgen.backends.claude_code:create",
    "antigravity_cli": "massgen.backends.antigravity:create",
    **{
        name: "massgen.backends.openai_chat:create"
        for name in ("chatcompletion", "grok", "azure_openai", "vllm", "sglang", "lmstudio", "ollama",
                     "llamacpp")
    },
}


def register(backend_type: str, target: str) -> None:
    """Make ``backend_type`` buildable by ``create``; ``target`` is ``module:function``."""
    _FACTORIES[backend_type] = target


def factory_module(backend_type: str) -> str | None:
    """The module that builds backends of this type (for ``backends.preload``); None if unknown."""
    target = _FACTORIES.get(backend_type)
    return target.split(":")[0] if target else None


def create(config: BackendConfig, context: BackendContext) -> Backend:
    """Build the backend for ``config.type``."""
    target = _FACTORIES.get(config.type)
    if target is None:
        raise BackendError(f"backend.type {config.type!r} is not supported here")
    module_name, func_name = target.split(":")
    factory = getattr(importlib.import_module(module_name), func_name)
    backend: Backend = factory(config, context)
    return backend


def handles_mcp_servers(backend_type: str) -> bool:
    """Whether a backend of this type is an MCP client itself (the agent CLIs).

    Its agent then gets no McpServer actors: the CLI is handed the config's ``mcp_servers``.
    Read, without building a backend, from ``handles_mcp_servers`` on the class that the
    type's factory is annotated to return, so the class attribute stays the one truth.
    """
    target = _FACTORIES.get(backend_type)
    if target is None:
        return False
    module_name, func_name = target.split(":")
    module = importlib.import_module(module_name)
    returned = inspect.signature(getattr(module, func_name)).return_annotation
    cls = getattr(module, returned, None) if isinstance(returned, str) else returned
    return bool(getattr(cls, "handles_mcp_servers", False))


__all__ = [
    "PERMANENT_STATUSES", "Backend", "BackendContext", "BackendError", "PermanentBackendError", "create",
    "handles_mcp_servers", "register",
]
