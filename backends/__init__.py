"""Model providers behind one streaming interface.

Provider SDKs are imported only when a backend of that type is built, so the
command line starts fast and a missing optional extra fails only where it is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from massgen.backends.base import (
    PERMANENT_STATUSES,
    Backend,
    BackendContext,
    BackendError,
    PermanentBackendError,
)
from massgen.configs import backend_types

if TYPE_CHECKING:
    from massgen.configs.schema import BackendConfig

# Factories registered at run time (``register``), over the registry's (configs/backend_types.py).
_REGISTERED: dict[str, str] = {}


def _factory(backend_type: str) -> str | None:
    if backend_type in _REGISTERED:
        return _REGISTERED[backend_type]
    described = backend_types.lookup(backend_type)
    return described.factory if described is not None and described.needs is None else None


def register(backend_type: str, target: str) -> None:
    """Make ``backend_type`` buildable by ``create``; ``target`` is ``module:function``."""
    _REGISTERED[backend_type] = target


def factory_module(backend_type: str) -> str | None:
    """The module that builds backends of this type (for ``backends.preload``); None if unknown."""
    target = _factory(backend_type)
    return target.split(":")[0] if target else None


def create(config: BackendConfig, context: BackendContext) -> Backend:
    """Build the backend for ``config.type``."""
    target = _factory(config.type)
    if target is None:
        raise BackendError(f"backend.type {config.type!r} is not supported here")
    module_name, func_name = target.split(":")
    from massgen.backends.preload import IMPORTS

    with IMPORTS:  # never beside another thread's import of the same SDK (see preload.IMPORTS)
        module = importlib.import_module(module_name)
    factory = getattr(module, func_name)
    backend: Backend = factory(config, context)
    return backend


def default_model(backend_type: str) -> str | None:
    """The model an agent of this type calls when its config names none (written out by ``--quickstart``)."""
    described = backend_types.lookup(backend_type)
    if described is None:
        return None
    if described.model is not None:
        return described.model
    module = importlib.import_module(described.factory.split(":")[0])  # the wire module's own default
    model = getattr(module, "DEFAULT_MODEL", None)
    return model if isinstance(model, str) else None


def handles_mcp_servers(backend_type: str) -> bool:
    """Whether a backend of this type is an MCP client itself (the agent CLIs).

    Its agent then gets no McpServer actors: the CLI is handed the config's ``mcp_servers``.
    """
    described = backend_types.lookup(backend_type)
    return described is not None and described.handles_mcp_servers


def native_file_tools(backend_type: str) -> bool:
    """Whether a backend of this type brings its own file tools (massgen's are then not offered)."""
    described = backend_types.lookup(backend_type)
    return described is not None and described.native_file_tools


__all__ = [
    "PERMANENT_STATUSES", "Backend", "BackendContext", "BackendError", "PermanentBackendError", "create",
    "default_model", "handles_mcp_servers", "native_file_tools", "register",
]
