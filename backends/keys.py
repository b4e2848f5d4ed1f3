"""API keys: where they come from, and keeping them out of every message.

Keys are looked up in the config, the context's extra environment, the process
environment and the ``.env`` files (``./.env``, ``./configs/.env``, ``~/.config/massgen/.env``,
``~/.massgen/.env``: configs/places.py), in that order. They never enter an error message: every
text a backend passes on goes through ``redact`` first.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

from massgen.backends.base import PermanentBackendError
from massgen.configs.defaults import read_dotenv

# Shapes of provider keys, masked even when we did not load them ourselves.
_KEY_SHAPES = re.compile(
    r"\b(?:sk-(?:ant-)?[A-Za-z0-9_\-]{12,}|xai-[A-Za-z0-9_\-]{12,}|AIza[A-Za-z0-9_\-]{20,})"
)


def lookup(names: Iterable[str], extra_env: Mapping[str, str] | None = None,
           dotenv: Mapping[str, str] | None = None) -> str | None:
    """The first non-empty value of ``names`` in extra env, process env, then the ``.env`` files."""
    names = tuple(names)
    sources: list[Mapping[str, str]] = [extra_env or {}, os.environ]
    for source in sources:
        for name in names:
            if source.get(name):
                return source[name]
    dotenv = read_dotenv() if dotenv is None else dotenv
    for name in names:
        if dotenv.get(name):
            return dotenv[name]
    return None


def require_key(backend_type: str, configured: str | None, names: tuple[str, ...],
                extra_env: Mapping[str, str] | None = None) -> str:
    """The key for a cloud backend, or a ``PermanentBackendError`` that names where to put it."""
    key = configured or lookup(names, extra_env)
    if not key:
        where = " or ".join(names)
        raise PermanentBackendError(
            f"backend {backend_type!r} needs an API key: set {where} in the environment, ./.env or"
            " ~/.massgen/.env (or api_key in the config)"
        )
    return key


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with every known secret and anything shaped like a provider key replaced by ***."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return _KEY_SHAPES.sub("***", text)
