"""Leaving the process without tearing the interpreter down.

Once ``main`` has returned, every run has closed its trace and stopped its actors and
child processes, so what normal interpreter shutdown still does (freeing every module
and object of the provider SDKs one by one) only costs time: about 0.05 s after a
scripted run and 0.25 s or more after one that loaded the ``openai`` SDK. We flush the
standard streams, run the ``atexit`` handlers (logging's flush, the local model server's
stop), then ``os._exit``. A non-daemon thread still running means someone expects to be
joined: then the ordinary ``sys.exit`` is used.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn


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
