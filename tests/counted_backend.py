"""The scripted backend, counting its builds: each build is one line ``agent incarnation`` in a file.

A wrapping factory registered over ``scripted`` (``massgen.backends.register``, as bench/revote.py
does), so a count is taken where backends are really built, in whichever process builds them:
``install()`` in the process itself (or a Ray worker's setup hook), or, as a script,
``python tests/counted_backend.py ARGS`` runs ``massgen ARGS`` with it installed. The file is named
by ``$MASSGEN_TEST_BUILDS``.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

BUILDS_FILE = "MASSGEN_TEST_BUILDS"
_WRAPPED: dict[str, str] = {}  # "scripted" -> the factory it had before install ("module:function")


def install() -> None:
    """Count every build of a ``scripted`` backend in this process."""
    from massgen.backends import register
    from massgen.configs import backend_types

    if "scripted" not in _WRAPPED:
        described = backend_types.lookup("scripted")
        assert described is not None
        _WRAPPED["scripted"] = described.factory
        register("scripted", f"{__name__}:counted")


def counted(config: Any, context: Any) -> Any:
    import importlib

    with open(os.environ[BUILDS_FILE], "a", encoding="utf-8") as builds:  # one short write: whole lines
        builds.write(f"{context.agent_id} {context.incarnation}\n")
    module, function = _WRAPPED["scripted"].split(":")
    return getattr(importlib.import_module(module), function)(config, context)


def builds(path: Path) -> Counter[str]:
    """How many backends were built for each ``agent#incarnation``."""
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return Counter("#".join(line.split()) for line in lines)


if __name__ == "__main__":
    install()
    from massgen.cli.main import main

    sys.exit(main(sys.argv[1:]))
