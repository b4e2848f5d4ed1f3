"""Before any model call: a team none of whose agents can work is a config error.

Each agent's backend is built (which reads keys, models and commands, and opens no
connection). An agent whose backend cannot be built for a reason no restart can fix
(``PermanentBackendError``) is unusable; when every agent is, the run would only fail
later and slower, so the team is refused with every cause named. Other build errors are
left to the run, which reports and retries them as usual. The run handle keeps what was
built for the agents' first incarnations (``build``), so each backend is built once. Where the
agents build their own in other processes (Ray), nothing is built here: ``refuse_keyless_team`` refuses a
team none of whose agents has its API key, read from the config alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import massgen.backends as backends
from massgen.configs import ConfigError, TeamConfig
from massgen.configs.quick import missing_keys
from massgen.configs.schema import BackendConfig


def build(agents: Iterable[tuple[str, BackendConfig, backends.BackendContext]]) -> dict[str, backends.Backend]:
    """Agent id -> its built backend, for each (agent id, backend config, context) whose build succeeds.

    Raises ``ConfigError`` naming each cause when every agent's build failed for a permanent reason."""
    built: dict[str, backends.Backend] = {}
    unusable: dict[str, str] = {}
    count = 0
    for agent_id, config, context in agents:
        count += 1
        try:
            built[agent_id] = backends.create(config, context)
        except backends.PermanentBackendError as exc:
            unusable[agent_id] = str(exc)
        except Exception:  # the run reports these, with its restarts
            continue
    if unusable and len(unusable) == count:
        causes = "; ".join(f"agent {agent!r}: {why}" for agent, why in unusable.items())
        raise ConfigError(f"no agent of the team can run: {causes}")
    return built


def refuse_keyless_team(config: TeamConfig, env: Mapping[str, str]) -> None:
    """Raise ``ConfigError`` naming each agent when none of ``config``'s agents has its API key in ``env``.

    The check that builds nothing, for agents that build their backends elsewhere."""
    missing = missing_keys(config, env)
    if missing and len(missing) == len(config.agents):
        causes = "; ".join(f"agent {agent!r}: backend {backend!r} needs an API key: set {' or '.join(keys)}"
                           for agent, backend, keys in missing)
        raise ConfigError(f"no agent of the team can run: {causes}")
