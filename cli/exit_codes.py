"""Exit codes of the ``massgen`` command, shared by every mode."""

from __future__ import annotations

SUCCESS = 0
CONFIG_ERROR = 1
EXECUTION_ERROR = 2
TIMEOUT = 3
INTERRUPTED = 4
# A command line that does not parse (unknown flag, missing value, clashing flags): sysexits' EX_USAGE,
# so it never reads as an execution error (2).
USAGE_ERROR = 64

_BY_STATUS = {
    "completed": SUCCESS,
    "partial": EXECUTION_ERROR,  # every agent failed: the answer so far is printed, marked, but the run failed
    "failed": EXECUTION_ERROR,
    "timeout": TIMEOUT,
    "budget": TIMEOUT,
    "interrupted": INTERRUPTED,
}


def for_status(status: str) -> int:
    return _BY_STATUS.get(status, EXECUTION_ERROR)
