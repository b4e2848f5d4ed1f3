"""``massgen.errors``, as users have imported it: the errors are defined in ``massgen.outcome.errors``."""

from massgen.outcome.errors import (
    BackendError,
    BudgetExhausted,
    ConfigError,
    LogDirError,
    MassGenError,
    PermanentBackendError,
    ResumeError,
    RunError,
    RunFailed,
    RunInterrupted,
    RunTimeout,
    ToolError,
    TraceError,
)

__all__ = [
    "BackendError",
    "BudgetExhausted",
    "ConfigError",
    "LogDirError",
    "MassGenError",
    "PermanentBackendError",
    "ResumeError",
    "RunError",
    "RunFailed",
    "RunInterrupted",
    "RunTimeout",
    "ToolError",
    "TraceError",
]
