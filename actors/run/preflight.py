"""Before any model call: a team none of whose agents can work is a config error.

Each agent's backend is built (which reads keys, models and commands, and opens no
connection) and dropped again. An agent whose backend cannot be built for a reason no
restart can fix (``PermanentBackendError``) is unusable; when every agent is, the run
would only fail later and slower, so the team is refused with every cause named.
Other build errors are left to the run, which reports and retries them as usual.
"""

from __future__ import annotations

from massgen import backends
from massgen.configs import ConfigError, TeamConfig


def unusable_agents(config: TeamConfig) -> dict[str, str]:
    """Agent id -> why its backend can never work, for the agents that cannot."""
    found: dict[str, str] = {}
    for agent in config.agents:
        try:
            backends.create(agent.backend, backends.BackendContext(agent_id=agent.id))
        except backends.PermanentBackendError as exc:
            found[agent.id] = str(exc)
        except Exception:  # the run reports these, with its restarts
            continue
    return found


def check(config: TeamConfig) -> None:
    """Raise ``ConfigError`` naming each cause when no agent of ``config`` can work."""
    unusable = unusable_agents(config)
    if unusable and len(unusable) == len(config.agents):
        causes = "; ".join(f"agent {agent!r}: {why}" for agent, why in unusable.items())
        raise ConfigError(f"no agent of the team can run: {causes}")
