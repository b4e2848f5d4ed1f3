"""Every error a MassGen user can catch, under one root: ``MassGenError``.

A leaf module of the bottom layer (``outcome/``): it imports nothing of ours, so every layer
(messages, configs, backends, files, actors, the face) can raise these without an upward import;
the face re-exports them (``massgen.ConfigError``, and ``massgen.errors`` for older imports). Lower layers' errors
(pydantic, YAML, OS, provider SDKs) are translated into these where they cross into
the face, as httpx's ``_exceptions.py`` does; ``translate`` is that boundary.

    MassGenError
    ├── ConfigError          a config, flag or argument that cannot be used
    │   ├── SessionError     a stored session that cannot be used (massgen.sessions)
    │   └── LogDirError      a log directory that cannot be made (also an OSError)
    ├── ResumeError          a log directory that cannot be resumed
    ├── BackendError         a model backend that cannot be built or started
    │   └── PermanentBackendError   one no restart can fix (missing key, model, CLI)
    ├── ToolError            a tool call the run refused
    ├── TraceError           a trace that cannot be read at all
    └── RunError             a finished run that gave no usable answer (``RunResult.raise_for_status``)
        ├── RunFailed        no agent produced any answer, or every agent failed (best answer so far kept)
        ├── RunTimeout       the run deadline passed (``result`` holds the best answer so far)
        ├── BudgetExhausted  the call or token budget ran out (best answer so far kept)
        └── RunInterrupted   the user cancelled the run (best answer so far kept)

A run that ends early is not an exception by default: ``run()`` returns its result with
``status`` and ``partial`` set, because a best-so-far answer is still worth having.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from massgen.outcome.result import RunResult


class MassGenError(Exception):
    """The root of every error MassGen raises for its users; catch this to catch them all."""


class ConfigError(MassGenError):
    """A config, flag or argument that cannot be used; the message names the field, file or flag."""


class LogDirError(ConfigError, OSError):
    """A log directory that cannot be made or written; also an ``OSError``, as it was before."""


class ResumeError(MassGenError):
    """A log directory that cannot be resumed; the message says why."""


class BackendError(MassGenError):
    """A backend that cannot be built or started, with a message fit for the user."""


class PermanentBackendError(BackendError):
    """A backend no restart can fix (a missing key, model or command): its agent fails at once."""


class ToolError(MassGenError):
    """A tool call that was refused or malformed; ``str()`` is what the model is told."""


class TraceError(MassGenError):
    """A trace that cannot be read at all (missing or unreadable file)."""


class RunError(MassGenError):
    """A run that ended without a usable answer; ``result`` is the run's result all the same."""

    def __init__(self, message: str, result: RunResult) -> None:
        super().__init__(message)
        self.result = result


class RunFailed(RunError):
    """No agent produced an answer (``failed``), or every agent failed (``partial``: best answer kept)."""


class RunTimeout(RunError):
    """The run deadline passed (status ``timeout``); ``result.final_answer`` is the best so far."""


class BudgetExhausted(RunError):
    """The call or token budget ran out (status ``budget``); ``result.final_answer`` is the best so far."""


class RunInterrupted(RunError):
    """The user cancelled the run (status ``interrupted``); ``result.final_answer`` is the best so far."""


RUN_ERRORS: dict[str, type[RunError]] = {
    "failed": RunFailed,
    "partial": RunFailed,
    "timeout": RunTimeout,
    "budget": BudgetExhausted,
    "interrupted": RunInterrupted,
}


@contextmanager
def translate(mapping: Mapping[type[BaseException], type[MassGenError]], what: str = "") -> Iterator[None]:
    """Re-raise a lower layer's error as ours (the first matching entry), chained to the original;
    ``what`` names the field or file the message is about. ``MassGenError`` passes unchanged."""
    try:
        yield
    except MassGenError:
        raise
    except Exception as exc:
        for source, target in mapping.items():
            if isinstance(exc, source):
                text = str(exc) or type(exc).__name__
                raise target(f"{what}: {text}" if what else text) from exc
        raise


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
