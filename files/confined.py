"""A Python program a model wrote, run confined: the one place that picks how.

Why: checking an answer by running code (a program as a first answer, the ``python`` check tool, a
code answer against the task's examples, the HumanEval scoring in ``bench/``) runs model output,
hence hostile text. Two confinements can run it:

- ``wasm`` (the default): CPython compiled to WebAssembly (``files/wasm_python.py``), installed by
  ``pip`` with the project's extras on Linux, macOS and Windows: no host files, no environment, no
  network, no processes, one capped memory for the whole run;
- ``bubblewrap``: the system ``python3`` in Debian's bubblewrap (``files/bwrap_python.py``), on Linux
  where that package is installed; chosen with ``MASSGEN_PYTHON_SANDBOX=bubblewrap`` (the benchmarks
  compare the two on the same problems).

Where the chosen one cannot run, ``unavailable()`` says why and the one command that adds it, and
the caller does not offer what needs it; nothing here ever runs code unconfined.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Literal

from massgen.files import bwrap_python, wasm_python
from massgen.files.limits import Limits, ProgramRun

__all__ = ["SANDBOX_ENV", "Limits", "ProgramRun", "prepare", "run_python", "runner", "unavailable"]

SANDBOX_ENV = "MASSGEN_PYTHON_SANDBOX"
Runner = Literal["wasm", "bubblewrap"]
log = logging.getLogger("massgen.sandbox")


def runner() -> Runner:
    """The confinement this process uses: ``$MASSGEN_PYTHON_SANDBOX`` (``wasm`` or ``bubblewrap``), else ``wasm``."""
    return "bubblewrap" if os.environ.get(SANDBOX_ENV, "").strip().lower() == "bubblewrap" else "wasm"


def _say(line: str) -> None:
    # A warning, so a caller that set up no logging still sees it on stderr (logging's last resort).
    log.warning("massgen: %s", line)


def prepare(progress: Callable[[str], None] | None = None) -> str | None:
    """Make the confinement ready, with progress while its one-time setup runs (the WebAssembly runtime's
    first compile: about a minute); None when programs can run, else why not, with the command that fixes it."""
    if runner() == "bubblewrap":
        return bwrap_python.unavailable()
    return wasm_python.prepare(progress or _say)


def unavailable() -> str | None:
    """Why no confined Python can be had here, or None when it can (the first call prepares it, see ``prepare``)."""
    return prepare()


async def run_python(code: str, limits: Limits | None = None) -> ProgramRun:
    """Run ``code`` confined; raises ``RuntimeError`` only when the confinement cannot run here (see
    ``unavailable``), never for what the program does."""
    limits = limits or Limits()
    if runner() == "bubblewrap":
        return await bwrap_python.run_python(code, limits)
    if (why := prepare()) is not None:
        raise RuntimeError(why)
    return await wasm_python.run_python(code, limits)
