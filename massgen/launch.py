"""One way to run a team: ``new_team(config, question, ...)`` returns the run handle, not started.

The one-shot command, the REPL, ``massgen serve`` (API and Web UI), the Python API and
LiteLLM all build their ``Team`` here, so an override (the run deadline, context paths)
means the same thing on every surface and is written once; the log directory is chosen by
the ``Team`` itself (``log_dir``, or a new one under ``log_base``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from massgen.outcome.errors import ConfigError

if TYPE_CHECKING:
    from massgen.actors.record.resume import ResumePoint
    from massgen.actors.record.trace_writer import Subscriber
    from massgen.actors.run.team import Team
    from massgen.configs.schema import TeamConfig
    from massgen.messages import ToolSpec

ConfigLike: TypeAlias = "str | os.PathLike[str] | Mapping[str, Any] | TeamConfig | None"
History: TypeAlias = Sequence[tuple[str, str]]


def resolve_config(config: ConfigLike = None) -> TeamConfig:
    """Turn what a caller passed as ``config`` into a validated ``TeamConfig``.

    A path or ``@examples/NAME`` is loaded; a mapping is validated like YAML data;
    ``None`` finds the config the way the ``massgen`` command does (``./.massgen``,
    ``~/.config/massgen``, then the default team).
    """
    from massgen.configs import TeamConfig, load_config, validate_data
    from massgen.configs.defaults import environment, resolve

    if isinstance(config, TeamConfig):
        return config
    if config is None:
        return resolve(None)[0]  # the one place config discovery lives
    if isinstance(config, Mapping):  # ./.env under the process environment, as the command line sees it
        return validate_data(dict(config), "the config passed to massgen", environment())
    if isinstance(config, str | os.PathLike):
        return load_config(os.fspath(config), environment())[0]
    kind = type(config).__name__
    raise ConfigError(f"config must be a path, '@examples/NAME', a dict or a TeamConfig, not {kind}")


def check_deadline(seconds: float, name: str = "timeout") -> float:
    """``seconds`` if it can be a run's deadline, else a ``ConfigError`` naming ``name`` (the flag or argument).

    Every surface that takes a deadline asks here: inf would be no deadline at all, and nan passes every bound.
    """
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):  # a caller of the API passed "10"
        raise ConfigError(f"{name}: must be a number of seconds, not {type(seconds).__name__}")
    if not (math.isfinite(seconds) and seconds > 0):
        raise ConfigError(f"{name}: must be a positive, finite number of seconds, not {seconds!r}")
    return seconds


def with_run_timeout(config: TeamConfig, timeout: float | None) -> TeamConfig:
    """``config`` with the whole-run deadline set to ``timeout`` seconds (unchanged when None)."""
    if timeout is None:
        return config
    check_deadline(timeout)
    settings = config.timeout_settings.model_copy(update={"orchestrator_timeout_seconds": timeout})
    return config.model_copy(update={"timeout_settings": settings})


def new_team(
    config: ConfigLike,
    question: str,
    *,
    history: History = (),
    timeout: float | None = None,
    log_dir: str | os.PathLike[str] | None = None,
    log_base: str | os.PathLike[str] | None = None,
    run_root: str | os.PathLike[str] | None = None,
    subscribers: Sequence[Subscriber] = (),
    turn: int = 1,
    context_paths: bool = False,
    client_tools: tuple[ToolSpec, ...] = (),
    resume: ResumePoint | None = None,
) -> Team:
    """The handle of one run of the team on ``question``; call ``start()`` then ``wait()``.

    ``config``: a ``TeamConfig``, a YAML path, ``"@examples/NAME"`` or a dict (see
    ``resolve_config``). ``history``: earlier (question, answer) pairs the team sees.
    ``timeout``: the whole-run deadline in seconds (overrides ``timeout_settings``).
    ``log_dir``: this run's log directory; else a new one under ``log_base`` (default
    ``$MASSGEN_LOG_BASE_DIR`` or ``.massgen/massgen_logs``); ``run_root``: the folder of earlier
    turns of the same conversation, where this turn's ``turn_N/attempt_1`` goes. ``subscribers``: called with
    each trace record once it is on disk. ``context_paths``: apply ``@path`` / ``@path:w``
    in the question (``massgen/files``). ``client_tools``: tools the caller runs itself.
    ``resume``: continue a run from its trace (``resume_point``); its log directory is next
    to the old one. Raises ``ConfigError`` for an override that cannot be used.
    """
    from massgen.actors.run.question import check_text
    from massgen.actors.run.team import Team

    # What a script passed, checked before anything is built: never turned into text without a word.
    pairs = tuple(history) if isinstance(history, Iterable) and not isinstance(history, str) else history
    check_text(question, pairs)  # QuestionError (a ConfigError) naming the question or the history pair
    team_config = with_run_timeout(resolve_config(config), timeout)
    if context_paths:
        from massgen.files import with_context_paths

        team_config = with_context_paths(team_config, question)
    return Team(team_config, question, history=tuple((q, a) for q, a in pairs),
                log_dir=Path(log_dir) if log_dir is not None else None,
                log_base=Path(log_base) if log_base is not None else None,
                run_root=Path(run_root) if run_root is not None else None, subscribers=list(subscribers),
                turn=turn, client_tools=client_tools, resume=resume)
