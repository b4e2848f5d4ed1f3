"""Provider SDKs loaded once per process, ahead of the agents that need them.

Importing an SDK is the largest part of a cloud run's start (``openai`` alone takes
0.45 s of CPU, ``anthropic`` and ``google-genai`` are alike; the Chat Completions
backends need none, see ``chat_wire``). ``preload`` starts those
imports on a daemon thread as soon as a config is known, for the backend types it
uses and no others, so they proceed while the rest of the run starts; an agent that
gets there first simply waits on the import lock. A failed import is ignored here: the
backend that needs it reports it, with its own message, when it is built. The SSL
context the SDKs' HTTP clients share (``http_base.shared_ssl_context``) is made on the
same thread.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import threading
from collections.abc import Iterable

from massgen.backends.factories import IMPORTS, factory_module
from massgen.configs.backend_types import lookup

_lock = threading.Lock()
_started: set[str] = set()


def modules_for(backend_types: Iterable[str]) -> tuple[list[str], bool]:
    """The backend modules (then the SDK modules they use on first call) for these types, and whether
    any of them talks through the shared SSL context."""
    modules: list[str] = []
    first_use: list[str] = []
    tls = False
    for backend_type in backend_types:
        module = factory_module(backend_type)
        if module is not None and module not in modules:
            modules.append(module)
        described = lookup(backend_type)
        if described is not None:
            first_use += [m for m in described.wire_type.first_use_modules if m not in first_use]
            tls = tls or described.wire_type.shared_tls
    return modules + first_use, tls


def _load(modules: list[str], tls: bool) -> None:
    for name in modules:
        with contextlib.suppress(Exception), IMPORTS:
            importlib.import_module(name)
    if tls:
        with contextlib.suppress(Exception):
            from massgen.backends.http_base import shared_ssl_context

            shared_ssl_context()


def preload(backend_types: Iterable[str]) -> threading.Thread | None:
    """Start importing what these backend types need; None when all of it is loaded or loading already."""
    modules, tls = modules_for(backend_types)
    with _lock:
        todo = [m for m in modules if m not in _started and m not in sys.modules]
        _started.update(todo)
    if not todo:
        return None
    thread = threading.Thread(target=_load, args=(todo, tls), name="massgen-preload", daemon=True)
    thread.start()
    return thread
