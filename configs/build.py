"""``massgen.build_config(...)``: a team config dict from model names, as upstream MassGen 0.1.97 builds one.

The same arguments as upstream's (``num_agents``, ``backend``, ``model``, ``models``, ``backends``,
``use_docker``, ``context_paths``), the same agent ids (``agent_a``, ``agent_b``, ...) and the same
model syntax (``gpt-5``, or ``provider/model`` such as ``groq/llama-3.3-70b``). The dict is shaped
like the YAML, so ``massgen.run(query, config_dict=...)`` and ``massgen --validate`` take it.
Its sections are upstream's: ``agents``, ``orchestrator``, ``timeout_settings`` and ``ui``, with
upstream's values for every key that means the same here (``UPSTREAM_TIMEOUTS``, ``UPSTREAM_UI``,
the answer cap). Upstream's quickstart extras (code-based tools, skills, fairness caps, checklist
voting, multimodal tools, Docker images) are left out, so running the dict applies all it says.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from massgen.configs.loader import ConfigError
from massgen.configs.quick import QUICK_TYPES, quick_backend

# Upstream's provider names that are another name for one of our backend types.
_ALIASES = {"anthropic": "claude", "xai": "grok", "google": "gemini", "response": "openai"}
DEFAULT_MODEL = "gpt-5.4"  # upstream's default: two agents of it
MAX_AGENTS = 10
# Upstream's quickstart sections (config_builder._generate_quickstart_config), as this schema takes them.
UPSTREAM_MAX_ANSWERS = 5  # orchestrator.max_new_answers_per_agent
UPSTREAM_TIMEOUTS = {
    "orchestrator_timeout_seconds": 3600,
    "initial_round_timeout_seconds": 1200,  # a first answer
    "subsequent_round_timeout_seconds": 900,  # a round with answers in view
    "round_timeout_grace_seconds": 300,
}
UPSTREAM_UI = {"display_type": "textual_terminal", "logging_enabled": True}


def backend_spec(provider: str | None, model: str) -> dict[str, Any]:
    """The ``backend:`` mapping of one agent: ``provider`` (or the model's prefix) picks the type."""
    if provider is None:
        head, slash, tail = model.partition("/")
        if slash and tail and (head in QUICK_TYPES or head in _ALIASES):
            provider, model = head, tail
        else:
            provider, model = quick_backend(model)
    provider = _ALIASES.get(provider, provider)
    if provider in QUICK_TYPES:
        return {"type": provider, "model": model}
    known = ", ".join(sorted({*QUICK_TYPES, *_ALIASES}))
    raise ConfigError(f"backend {provider!r} (for model {model!r}) is not one this version can talk to; "
                      f"known: {known}")


def upstream_context_paths(entries: Sequence[str | Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Upstream's forms: a path (write permission) or ``{"path": ..., "permission": "read"|"write"}``."""
    paths = []
    for entry in entries:
        if isinstance(entry, str):
            paths.append({"path": entry, "permission": "write"})
        elif isinstance(entry, Mapping) and isinstance(entry.get("path"), str):
            paths.append({"path": entry["path"], "permission": entry.get("permission", "write")})
        else:
            raise ConfigError(f"context_paths: {entry!r} is neither a path nor {{'path': ..., 'permission': ...}}")
    return paths


def build_config(
    num_agents: int | None = None,
    backend: str | None = None,
    model: str | None = None,
    models: Sequence[str] | None = None,
    backends: Sequence[str] | None = None,
    use_docker: bool = False,
    context_paths: Sequence[str | Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """A config dict for ``massgen.run(..., config_dict=...)``: one agent per entry of ``models``, else
    ``num_agents`` (default 2) agents of ``model`` (default gpt-5.4), ids ``agent_a``, ``agent_b``, ...

    ``backends[i]`` (or ``backend`` for all) names the provider where the model name does not;
    ``use_docker`` runs the agents' commands in Docker; ``context_paths`` as upstream takes them.
    """
    if models:
        specs = [backend_spec(backends[i] if backends and i < len(backends) else None,
                              name.split("/", 1)[-1] if backends and i < len(backends) else name)
                 for i, name in enumerate(models)]
    else:
        count = 2 if num_agents is None else num_agents
        if not 1 <= count <= MAX_AGENTS:  # before the list is built: 10**8 agents was minutes of memory
            raise ConfigError(f"num_agents: between 1 and {MAX_AGENTS} agents, not {count}")
        name = model or DEFAULT_MODEL
        specs = [backend_spec(backend, name.split("/", 1)[-1] if backend else name) for _ in range(count)]
    if not 1 <= len(specs) <= MAX_AGENTS:
        raise ConfigError(f"num_agents: between 1 and {MAX_AGENTS} agents, not {len(specs)}")
    orchestrator: dict[str, Any] = {
        "max_new_answers_per_agent": UPSTREAM_MAX_ANSWERS,
        "context_paths": upstream_context_paths(context_paths or []),
    }
    if use_docker:
        orchestrator["command_execution"] = "docker"
    return {
        # cwd "workspace", as upstream's: each agent gets its own file workspace (files/workspace.py)
        "agents": [{"id": f"agent_{chr(ord('a') + i)}", "backend": {**spec, "cwd": "workspace"}}
                   for i, spec in enumerate(specs)],
        "orchestrator": orchestrator,
        "timeout_settings": dict(UPSTREAM_TIMEOUTS),
        "ui": dict(UPSTREAM_UI),
    }
