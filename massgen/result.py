"""``massgen.result``, as users have imported it: ``RunResult`` is defined in ``massgen.outcome.result``."""

from massgen.outcome.result import RunResult

__all__ = ["RunResult"]
