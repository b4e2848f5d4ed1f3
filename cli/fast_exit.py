"""Leaving the process without tearing the interpreter down.

Once ``main`` has returned, every run has closed its trace and stopped its actors and
child processes, so what normal interpreter shutdown still does (freeing every module
and object of the provider SDKs one by one) only costs time: about 0.05 s after a
scripted run and 0.25 s or more after one that loaded the ``openai`` SDK. We flush the
standard streams, run the ``atexit`` handlers (logging's flush, the local model server's
stop), then ``os._exit``. A non-daemon thread still running means someone expects to be
joined: then the ordinary ``sys.exit`` is used. ``exit_after(main)`` is the command's way out: it
runs ``main`` with its output streams made safe to write to whatever the shell made of them.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from collections.abc import Callable
from typing import NoReturn


def exit_after(main: Callable[[], int]) -> NoReturn:
    """Run the command, then leave with its exit code. Its output may go where nobody reads it (a C
    locale, a stream the shell closed, a pipe whose reader left: ``massgen viewer | head -1``), and a
    Ctrl-C may come before a run's own handling is in place: none of them is a traceback."""
    from massgen.cli import exit_codes
    from massgen.cli.text import escape_unencodable_output, unless_reader_gone

    escape_unencodable_output()
    code = exit_codes.SUCCESS  # what is left when the reader of the output left
    try:
        with unless_reader_gone(sys.stdout, sys.stderr):
            code = main()
    except KeyboardInterrupt:  # nothing has started that there would be work to keep from
        print("\nmassgen: interrupted", file=sys.stderr)
        code = exit_codes.INTERRUPTED
    exit_now(code)


def exit_now(code: int) -> NoReturn:
    others = [t for t in threading.enumerate() if t is not threading.current_thread() and not t.daemon]
    if others:
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing left to say to it
            pass
    atexit._run_exitfuncs()
    os._exit(code)
