"""Which function builds each backend type, and the lock every backend module is imported under.

The registry (``configs/backend_types.py``) names each type's factory as a ``module:function``
string, so no provider SDK is imported before a config names it; ``register`` puts a factory over
the registry's at run time. Read by ``backends.create`` and by ``preload``, which both sit above it.
"""

from __future__ import annotations

import threading

from massgen.configs import backend_types

# Factories registered at run time (``register``), over the registry's.
_REGISTERED: dict[str, str] = {}
# One import of a backend module at a time, process-wide: two agent threads importing one SDK at once
# can see it partially initialized (``anthropic._base_client``), where the CLI's preload hid that.
IMPORTS = threading.RLock()


def factory(backend_type: str) -> str | None:
    """The ``module:function`` that builds this type; None if unknown or not buildable here."""
    if backend_type in _REGISTERED:
        return _REGISTERED[backend_type]
    described = backend_types.lookup(backend_type)
    return described.factory if described is not None and described.needs is None else None


def register(backend_type: str, target: str) -> None:
    """Make ``backend_type`` buildable by ``create``; ``target`` is ``module:function``."""
    _REGISTERED[backend_type] = target


def factory_module(backend_type: str) -> str | None:
    """The module that builds backends of this type (for ``backends.preload``); None if unknown."""
    target = factory(backend_type)
    return target.split(":")[0] if target else None
