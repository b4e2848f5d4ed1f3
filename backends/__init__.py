"""Model providers behind one streaming interface.

Provider SDKs are imported only when a backend of that type is built, so the
command line starts fast and a missing optional extra fails only where it is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from massgen.backends.base import Backend, BackendContext, BackendError

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


def create(config: BackendConfig, context: BackendContext) -> Backend:
    """Build the backend for ``config.type``."""
    target = _FACTORIES.get(config.type)
    if target is None:
        raise BackendError(f"backend.type {config.type!r} is not supported here")
    module_name, func_name = target.split(":")
    factory = getattr(importlib.import_module(module_name), func_name)
    backend: Backend = factory(config, context)
    return backend


__all__ = ["Backend", "BackendContext", "BackendError", "create", "register"]
