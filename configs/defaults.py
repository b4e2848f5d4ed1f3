"""Which config a run uses when the user names none.

Order: ``./.massgen/config.yaml``, then ``~/.config/massgen/config.yaml``, then the
default team: providers whose API keys are set, or the local model team when none are.
Keys come from the environment and upstream's ``.env`` places (``configs/places.py``).
"""

from __future__ import annotations

import os
from pathlib import Path

from massgen.configs.backend_types import default_team_keys
from massgen.configs.loader import ConfigError, load_config, validate_data
from massgen.configs.places import dotenv_files, user_config_dir
from massgen.configs.schema import TeamConfig

# env var -> backend type for the default team built from keys present (the registry's
# ``default_team`` types); each backend's own default model is used, so the model names live in
# one place (the backend modules).
PROVIDER_KEYS: dict[str, str] = default_team_keys()


# Three agents on one local model server. The model is small and slow (about 4 tokens/s on
# two cores, and the agents queue on one server), so answers are capped, the winner's answer
# is used as written, and the deadlines allow for waiting in the server's queue; so does the
# straggler grace (a vote takes tens of seconds here, and a slow vote is not a hung agent).
# The first agent decodes greedily: one greedy call is the baseline the team must beat, so its
# independent answer is the judge's prior ("prior" rule, actors/coordination/judge.py), and the two sampling
# agents are the independent evidence that may make it check and change its mind. Checking means
# a calculator (``check_tools``) in the turns with answers in view: rereading, the small model
# restates an answer; computing, it finds which one is right, and the judge counts computed results
# first. First answers get no tools, so they stay independent and cost one call each. Measured in
# bench/results/ (python -m bench.quality, bench/results/check-tools-preregistered.md); see README.
LOCAL_TEAM_TEMPERATURES = (0.0, 0.4, 0.4)
LOCAL_TEAM: dict[str, object] = {
    "agents": [
        {"id": f"local_{i}", "backend": {"type": "local", "model": "default", "temperature": temp, "seed": seed,
                                           "check_tools": ["calculator"]}}
        for i, (temp, seed) in enumerate(zip(LOCAL_TEAM_TEMPERATURES, (11, 22, 33), strict=True), 1)
    ],
    # The winner's answer already carries its work; a small model's rewrite of it can only lose.
    # One answer each: after the independent first answers every turn checks and votes, so a team
    # problem costs 3 calls when the first answers agree and at most 9 when they do not.
    "orchestrator": {"max_new_answers_per_agent": 1, "final_answer_strategy": "winner_reuse",
                     "winner_rule": "prior"},
    # Waiting for the shared server is reported (local.queued), so the idle deadline covers one call's
    # own silence; a turn may wait behind the other agents' calls, so its deadline allows for that.
    "timeout_settings": {
        "orchestrator_timeout_seconds": 3600,
        "turn_timeout_seconds": 1800,
        "idle_stream_timeout_seconds": 400,
        "present_timeout_seconds": 600,
        "straggler_grace_seconds": 600,
    },
}


def discovered_config_paths() -> list[Path]:
    return [Path(".massgen") / "config.yaml", user_config_dir() / "config.yaml"]


def read_dotenv(path: Path | None = None) -> dict[str, str]:
    """``KEY=value`` lines of one ``.env`` file (optional ``export``, quotes, trailing comments); missing =
    empty. No path: every ``.env`` place upstream reads (``places.dotenv_files``), a nearer file winning.

    The one parser of ``.env`` for the command line, the API and the backends' key lookup.
    """
    if path is None:
        merged: dict[str, str] = {}
        for place in dotenv_files():
            merged.update(read_dotenv(place))
        return merged
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    values: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        name, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        values[name.strip()] = value
    return values


def environment() -> dict[str, str]:
    """The process environment with the ``.env`` files underneath it (the environment wins)."""
    return {**read_dotenv(), **os.environ}


def default_team(env: dict[str, str] | None = None) -> TeamConfig:
    env = environment() if env is None else env
    agents = [
        {"id": f"{backend}_agent", "backend": {"type": backend}}
        for key, backend in PROVIDER_KEYS.items()
        if env.get(key)
    ]
    if agents:
        return validate_data({"agents": agents}, "the default team", env)
    return validate_data(LOCAL_TEAM, "the default team", env)


def resolve(config_ref: str | None, env: dict[str, str] | None = None) -> tuple[TeamConfig, str]:
    """The config to use and a short description of where it came from (``env``: else ``environment()``)."""
    env = environment() if env is None else env
    if config_ref:
        config, path = load_config(config_ref, env)
        return config, str(path)
    for path in discovered_config_paths():
        if path.is_file():
            config, found = load_config(str(path), env)
            return config, str(found)
    try:
        return default_team(env), "the default team"
    except ConfigError:
        raise
