"""Teams from a model name, and what each backend type needs before its first call.

``massgen --model gpt-5-mini "q"`` and a served request for ``model: gpt-5-mini`` build
the same quick team; ``--backend``, ``--base-url`` and ``--system-message`` set the rest.
``missing_keys`` checks API keys without importing any provider SDK, so a run that
cannot start says which key to set before any model is called.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from massgen.configs.backend_types import BackendType, buildable, quick_types
from massgen.configs.loader import ConfigError, validate_data
from massgen.configs.schema import TeamConfig

# Backend types a model name may name explicitly as ``<type>/<model>``.
QUICK_TYPES = quick_types()
# Every type a config may name and run, as ``--list-backends`` shows it (the registry's entries).
BACKENDS: dict[str, BackendType] = buildable()
# Backend types that call no model: --model and --base-url on a whole team leave them as they are.
MODEL_FREE_TYPES = frozenset({"scripted"})


def quick_backend(model: str) -> tuple[str, str]:
    """(backend type, model) for a plain model name: ``claude-*`` -> claude, ``<type>/<model>`` -> type, ..."""
    head, slash, tail = model.partition("/")
    if slash and head in QUICK_TYPES and tail:
        return head, tail
    lowered = model.lower()
    named = next((t.name for t in BACKENDS.values() if any(lowered.startswith(p) for p in t.model_prefixes)), None)
    return named or "chatcompletion", model


def quick_team(*, model: str | None, backend: str | None = None, base_url: str | None = None,
               system_message: str | None = None, agents: int = 1,
               env: Mapping[str, str] | None = None) -> TeamConfig:
    """A team of ``agents`` agents of one model (``--model``/``--backend``/``--base-url``/``--system-message``)."""
    if backend is None:
        if model is None:
            raise ConfigError("--model or --backend is needed for a quick team")
        backend, model = quick_backend(model)
    if backend not in BACKENDS:
        raise ConfigError(f"--backend {backend!r} is not a backend type; see `massgen --list-backends`")
    spec: dict[str, Any] = {"type": backend}
    if model:
        spec["model"] = model
    if base_url:
        spec["base_url"] = base_url
    slug = "".join(c if c.isalnum() or c in "_.-" else "_" for c in (model or backend)).strip("_") or "agent"
    ids = [slug] if agents == 1 else [f"{slug}_{i}" for i in range(1, agents + 1)]
    data = {"agents": [{"id": agent_id, "backend": dict(spec), **({"system_message": system_message}
                                                                    if system_message else {})}
                       for agent_id in ids]}
    return validate_data(data, "the team from --model/--backend", dict(env or {}))


def override_agents(config: TeamConfig, *, model: str | None = None, backend: str | None = None,
                    base_url: str | None = None, system_message: str | None = None) -> TeamConfig:
    """``config`` with every agent given these settings: ``--model X --config team.yaml`` is a same-model team."""
    if not any((model, backend, base_url, system_message)):
        return config
    if backend is not None and backend not in BACKENDS:
        raise ConfigError(f"--backend {backend!r} is not a backend type; see `massgen --list-backends`")
    # serialize_as_any: each backend as its own type, or a scripted agent's script would be dropped.
    data = config.model_dump(mode="json", exclude_defaults=True, serialize_as_any=True)
    for original, agent in zip(config.agents, data["agents"], strict=True):
        spec = {**agent["backend"], "type": original.backend.type}  # a defaulted type is left out of the dump
        if backend is not None and backend != spec["type"]:
            allowed = BACKENDS[backend].options.model_fields
            spec = {k: v for k, v in spec.items() if k in allowed}
            spec["type"] = backend
        if spec["type"] not in MODEL_FREE_TYPES:  # a scripted agent calls no model and no server
            if model is not None:
                spec["model"] = model
            if base_url is not None:
                spec["base_url"] = base_url
        agent["backend"] = spec
        if system_message is not None:
            agent["system_message"] = system_message
    return validate_data(data, "the config with --model/--backend/--base-url/--system-message", {})


def override_notes(config: TeamConfig, *, model: str | None = None, base_url: str | None = None,
                   backend: str | None = None) -> list[str]:
    """What ``override_agents`` leaves alone, one line each: a scripted agent takes no model or server."""
    if backend is not None:
        return []
    given = [flag for flag, value in (("--model", model), ("--base-url", base_url)) if value is not None]
    if not given:
        return []
    return [f"{' and '.join(given)}: not applied to agent {agent.id!r} (backend {agent.backend.type} "
            "calls no model); its script plays as written"
            for agent in config.agents if agent.backend.type in MODEL_FREE_TYPES]


def missing_keys(config: TeamConfig, env: Mapping[str, str]) -> list[tuple[str, str, tuple[str, ...]]]:
    """(agent id, backend type, key names) for each agent whose backend has no key to use."""
    missing = []
    for agent in config.agents:
        backend = agent.backend
        info = BACKENDS.get(backend.type)
        if info is None or not info.keys or backend.api_key:
            continue
        if not info.key_always and backend.base_url and "api.openai.com" not in backend.base_url:
            continue  # a provider key is never sent to another host, so none is needed
        if not any(env.get(name) for name in info.keys):
            missing.append((agent.id, backend.type, info.keys))
        elif backend.type == "azure_openai" and not (backend.base_url or env.get("AZURE_OPENAI_ENDPOINT")):
            missing.append((agent.id, backend.type, ("AZURE_OPENAI_ENDPOINT",)))
    return missing


def describe_missing(missing: list[tuple[str, str, tuple[str, ...]]]) -> str:
    """One line per agent: which key to set, and where."""
    lines = [f"agent {agent_id!r} (backend {backend}) needs {' or '.join(keys)}"
             for agent_id, backend, keys in missing]
    return ("\n".join(lines) + "\nset it in the environment, ./.env or ~/.massgen/.env (`massgen --setup` saves keys), "
            "or put api_key in the config")
