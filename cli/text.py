"""Text at the terminal's edges: argv bytes that are not UTF-8, and output that is not Unicode.

Python decodes argv with ``surrogateescape``, so ``caf\\xe9`` (Latin-1 bytes) arrives as a
string with a lone surrogate that no UTF-8 file or provider accepts. Such bytes become a
visible escape (``caf\\\\xe9``) at the boundary; on the way out, text that still cannot
be encoded is written escaped instead of failing the run after the work is done.
"""

from __future__ import annotations

import os
import sys


def from_argv(arg: str) -> str:
    """``arg`` with bytes that were not UTF-8 written as ``\\xNN`` escapes."""
    try:
        arg.encode("utf-8")
        return arg
    except UnicodeEncodeError:
        return os.fsencode(arg).decode("utf-8", "backslashreplace")


def escape_unencodable_output() -> None:
    """Make stdout and stderr write what they cannot encode as escapes, never raise."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
