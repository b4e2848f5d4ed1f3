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
from massgen.backends.factories import IMPORTS, factory_module, register
from massgen.backends.factories import factory as factory_of
from massgen.configs import backend_types

if TYPE_CHECKING:
    from massgen.configs.schema import BackendConfig

def create(config: BackendConfig, context: BackendContext) -> Backend:
    """Build the backend for ``config.type``."""
    target = factory_of(config.type)
    if target is None:
        raise BackendError(f"backend.type {config.type!r} is not supported here")
    module_name, func_name = target.split(":")
    with IMPORTS:  # never beside another thread's import of the same SDK (see factories.IMPORTS)
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
    "default_model", "factory_module",
    "handles_mcp_servers", "native_file_tools", "register",
]
