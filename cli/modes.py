"""Upstream MassGen's mode flags, applied to the team config before a run.

- ``--single-agent [ID]``: only that agent of the config (the first when no id is given);
- ``--quick``: one answer per agent, then one vote; the winner's answer is the final answer as
  written, with no final presentation (upstream's "refinement off");
- ``--coordination-mode parallel`` and ``--personas off`` are how every run works here already
  (their other values are refused in cli/upstream_flags.py);
- ``--strict-validation``: a warning while the config is read is an error (``config_warnings``).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING

from massgen import ConfigError

if TYPE_CHECKING:
    from massgen import TeamConfig
    from massgen.cli.request import Request


def single_agent(config: TeamConfig, agent_id: str | bool) -> TeamConfig:
    if agent_id is True:
        return config.model_copy(update={"agents": config.agents[:1]})
    chosen = [agent for agent in config.agents if agent.id == agent_id]
    if not chosen:
        listed = ", ".join(agent.id for agent in config.agents)
        raise ConfigError(f"--single-agent {agent_id}: the config has no agent {agent_id!r} (its agents: {listed})")
    return config.model_copy(update={"agents": chosen})


def quick(config: TeamConfig) -> TeamConfig:
    rules = config.orchestrator.model_copy(update={"max_new_answers_per_agent": 1,
                                                   "final_answer_strategy": "winner_reuse"})
    return config.model_copy(update={"orchestrator": rules})


def apply(config: TeamConfig, request: Request) -> TeamConfig:
    """``config`` with the mode flags of ``request`` applied."""
    if request.single_agent is not None:
        config = single_agent(config, request.single_agent)
    if request.quick:
        config = quick(config)
    return config


@contextlib.contextmanager
def config_warnings(*, strict: bool) -> Iterator[None]:
    """With ``strict``, a warning raised while the config is read stops the run (ConfigError)."""
    if not strict:
        yield
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    if caught:
        said = "; ".join(str(w.message) for w in caught)
        raise ConfigError(f"--strict-validation: the config has warnings: {said}")
