"""massgen: a supervised team of models that answers one task together.

The public face only. Names are loaded on first use so that ``massgen --help``
and ``import massgen`` stay fast and never import a provider SDK.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "Team": "massgen.actors.team",
    "RunResult": "massgen.actors.team",
    "TeamConfig": "massgen.configs.schema",
    "ConfigError": "massgen.configs.loader",
    "load_config": "massgen.configs.loader",
    "rebuild_from_trace": "massgen.logs.files",
    "run": "massgen.api",
    "run_sync": "massgen.api",
    "stream": "massgen.api",
    "resolve_config": "massgen.api",
    "register_with_litellm": "massgen.litellm_provider",
    "AnswerEvent": "massgen.events",
    "ChunkEvent": "massgen.events",
    "DeadlineEvent": "massgen.events",
    "Event": "massgen.events",
    "FailureEvent": "massgen.events",
    "FinalAnswerEvent": "massgen.events",
    "RestartEvent": "massgen.events",
    "RunStartedEvent": "massgen.events",
    "VoteEvent": "massgen.events",
    "VotesInvalidatedEvent": "massgen.events",
}

if TYPE_CHECKING:
    from massgen.actors.team import RunResult, Team
    from massgen.api import resolve_config, run, run_sync, stream
    from massgen.configs.loader import ConfigError, load_config
    from massgen.configs.schema import TeamConfig
    from massgen.events import (
        AnswerEvent,
        ChunkEvent,
        DeadlineEvent,
        Event,
        FailureEvent,
        FinalAnswerEvent,
        RestartEvent,
        RunStartedEvent,
        VoteEvent,
        VotesInvalidatedEvent,
    )
    from massgen.litellm_provider import register_with_litellm
    from massgen.logs.files import rebuild_from_trace


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'massgen' has no attribute {name!r}")
    return getattr(import_module(module), name)


__all__ = [
    "AnswerEvent",
    "ChunkEvent",
    "ConfigError",
    "DeadlineEvent",
    "Event",
    "FailureEvent",
    "FinalAnswerEvent",
    "RestartEvent",
    "RunResult",
    "RunStartedEvent",
    "Team",
    "TeamConfig",
    "VoteEvent",
    "VotesInvalidatedEvent",
    "__version__",
    "load_config",
    "rebuild_from_trace",
    "register_with_litellm",
    "resolve_config",
    "run",
    "run_sync",
    "stream",
]
