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


# Three agents on one local model server, one call each, no vote round. The model is small and slow (a few
# tokens/s on two cores, and the agents queue on one server), so answers are capped, the winner's answer is
# used as written, and the deadlines allow for waiting in the server's queue.
# Issue 36 (docs/benchmarks.md, "Every kind of answer"; where measured: docs/architecture.md, local team): `local_1` and
# `local_2` answer with a short program, run confined (PAL: at T 0 and T 0.4), `local_3` is the bare greedy
# call (the question alone, T 0: what one call of the model gives). Under `after_first_answers: decide` the
# first answers decide: results a program printed first, then agreement, then the agent listed first; a
# yes/no from the first listed answer stating one; a code answer by its behaviour on the task's examples
# (`code_examples`); and a question whose bare answer states no result (a haiku, an explanation) is answered
# in writing. The small model's vote rounds restated the answer listed to it; a program computes. Measured:
# 173/175 over issue 20's eight arithmetic sets (the calculator team before it: 151), 117-119/160 on
# reasoning-gym and HumanEval problems against one greedy call's 75, and the twenty-four probes.
# Where no sandbox can be had the program agents answer with the team's prompt, and the run says so once.
# Issue 48 (bench/results/plain-127/RULE.md): execution outranks agreement, agreement outranks listing order; a
# program that failed, printed prose or printed a literal of its source is no evidence, so a question whose answer
# is prose or a fact gets the written answer; and disagreement buys evidence: `local_4` and `local_5` (programs at
# T 0.7) are reserve agents, asked one at a time only while the first answers have not settled.
LOCAL_TEAM_TEMPERATURES = (0.0, 0.4, 0.0, 0.7, 0.7)
LOCAL_TEAM_FIRST_ANSWERS = ("program", "program", "bare", "program", "program")
LOCAL_TEAM_RESERVE = ("local_4", "local_5")
LOCAL_TEAM: dict[str, object] = {
    "agents": [
        {"id": f"local_{i}", "backend": {"type": "local", "model": "default", "temperature": temp, "seed": seed,
                                           "first_answer": first, "check_tools": ["code_examples"]}}
        for i, (temp, seed, first) in enumerate(
            zip(LOCAL_TEAM_TEMPERATURES, (11, 22, 33, 44, 55), LOCAL_TEAM_FIRST_ANSWERS, strict=True), 1)
    ],
    # The winner's answer already carries its work (a program and what it printed); a small model's rewrite
    # of it can only lose.
    "orchestrator": {"max_new_answers_per_agent": 1, "final_answer_strategy": "winner_reuse",
                     "after_first_answers": "decide", "reserve_agents": list(LOCAL_TEAM_RESERVE)},
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
