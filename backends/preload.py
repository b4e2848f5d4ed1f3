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

# Modules an SDK only imports on first use (the client's resources), which the first call would pay for.
_FIRST_USE: dict[str, tuple[str, ...]] = {
    "massgen.backends.openai_responses": ("openai.resources.responses",),
    "massgen.backends.anthropic_messages": ("anthropic.resources.messages",),
}
# Backend modules with no SDK resources to warm up whose clients still need the shared SSL context.
_TLS_TOO = frozenset({"massgen.backends.gemini", "massgen.backends.openai_chat"})
_lock = threading.Lock()
_started: set[str] = set()
# One import of a backend module at a time, process-wide: two agent threads importing one SDK at once
# can see it partially initialized (``anthropic._base_client``), where the CLI's preload hid that.
IMPORTS = threading.RLock()


def modules_for(backend_types: Iterable[str]) -> list[str]:
    """The backend modules (then the SDK modules they use on first call) for these types."""
    from massgen.backends import factory_module

    modules: list[str] = []
    for backend_type in backend_types:
        module = factory_module(backend_type)
        if module is not None and module not in modules:
            modules.append(module)
    return modules + [extra for module in modules for extra in _FIRST_USE.get(module, ())]


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
    modules = modules_for(backend_types)
    with _lock:
        todo = [m for m in modules if m not in _started and m not in sys.modules]
        _started.update(todo)
    if not todo:
        return None
    tls = any(m in _FIRST_USE or m in _TLS_TOO for m in todo)
    thread = threading.Thread(target=_load, args=(todo, tls), name="massgen-preload", daemon=True)
    thread.start()
    return thread
