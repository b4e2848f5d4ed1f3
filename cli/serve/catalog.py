"""Which team a request's ``model`` names.

- the served config: its name (``--config`` file stem) or the ``--config`` text itself;
- ``massgen/<example>``: a shipped example (as ``@examples/<example>``);
- ``massgen/path:<file>``: a config file on the server, only inside the allowed roots,
  because a config can expand ``${ENV}`` secrets and point them at any URL;
- any other name: a quick team of that model, ``quick_agents`` agents on the provider
  backend the name implies (``claude-*`` -> claude, ``gemini-*`` -> gemini, ``grok-*`` ->
  grok, ``gpt-*``/``o1``/``o3``/``o4`` -> openai, ``<backend type>/<model>`` -> that backend,
  ``chatcompletion/<model>`` -> an OpenAI-compatible server).

What a request may start: teams whose agents call model APIs (and scripted ones). A team that
starts a program on this machine (the bundled local model's llama.cpp server, an agent CLI such
as Claude Code, with its file tools) runs only when the operator chose it: the served config,
``--default-model``, or a ``massgen/path:`` file the operator put under the config roots. A quick
team or shipped example that would start one is a 403 ``model_not_allowed``, and ``/v1/models``
lists only the examples a request may run. A model name that is a file path (``local//etc/passwd``,
``x/../y``) is a 400 ``invalid_model`` before anything looks at the file system, so the answer
never tells whether a file exists.

Any other name matches no team: a 404 ``model_not_found``, as are unknown ``massgen/...``
names; a config that does not validate is a 400. For ``massgen/path:`` the 400 says only
that the file is not a valid config, never what is in it: a client may name any file
under the roots, and its lines (``ANTHROPIC_API_KEY=...``) must not come back in an error.
Loading is bounded (``configs/safe_yaml.py``) and the routes call ``resolve`` off the
event loop, so no file, however hostile, holds up ``/health`` or a shutdown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from massgen import BACKENDS, ConfigError, TeamConfig, list_examples, load_config, quick_backend, validate_data
from massgen.cli.serve.errors import ApiError
from massgen.cli.serve.models import check_model_text

PREFIX = "massgen/"
PATH_PREFIX = "massgen/path:"
# Backends that only call a model API (or play a script): a request may run teams of these.
REQUEST_WIRES = frozenset({"chat", "responses", "anthropic", "gemini", "scripted"})
# A path, a parent step, a home or drive prefix, a backslash: no model is named so. (Control and
# format characters are refused by ``models.check_model_text``, which knows all of Unicode's.)
_PATH_LIKE = re.compile(r"^[/~\\]|(^|/)\.\.?(/|$)|\\|^[A-Za-z]:")


def starts_programs(config: TeamConfig) -> list[str]:
    """The backend types of ``config`` that start a program on this machine (sorted, unique)."""
    return sorted({a.backend.type for a in config.agents
                   if a.backend.type not in BACKENDS or BACKENDS[a.backend.type].wire not in REQUEST_WIRES})


def served_name(config_ref: str) -> str:
    """The model name of ``--config``: ``massgen/<example>`` for an example, else the file stem."""
    if config_ref.startswith("@examples/"):
        return PREFIX + config_ref.removeprefix("@examples/").removesuffix(".yaml")
    return Path(config_ref).stem


@dataclass
class Catalog:
    served: tuple[str, TeamConfig] | None = None
    served_ref: str | None = None
    default_model: str | None = None
    path_roots: tuple[Path, ...] = ()
    quick_agents: int = 3
    env: Mapping[str, str] | None = None
    _examples: dict[str, TeamConfig] = field(default_factory=dict)

    def model_ids(self) -> list[str]:
        """What ``GET /v1/models`` lists: the served config first, then every shipped example a request may run."""
        ids = [self.served[0]] if self.served else []
        ids += [PREFIX + name for name in self._runnable_examples() if PREFIX + name not in ids]
        return ids

    def _runnable_examples(self) -> list[str]:
        runnable = []
        for name in list_examples():
            try:
                config = self._example(name)
            except ApiError:  # an example this environment cannot load is not offered
                continue
            if not starts_programs(config):
                runnable.append(name)
        return runnable

    def resolve(self, model: str | None) -> tuple[str, TeamConfig]:
        """(model name, config) for a request; raises ``ApiError`` 400/404."""
        name = (model or "").strip() or self.default_model or (self.served[0] if self.served else "")
        if not name:
            raise ApiError(400, "no model given and the server has no --default-model", param="model",
                           code="model_required")
        if self.served and name in (self.served[0], self.served_ref):
            return self.served[0], self.served[1]
        if name.startswith(PATH_PREFIX):
            return name, self._from_path(name.removeprefix(PATH_PREFIX))
        config = self._example(name.removeprefix(PREFIX)) if name.startswith(PREFIX) else self._quick(name)
        programs = starts_programs(config)
        if programs and name != self.default_model:  # the operator's own choice may start them
            raise ApiError(403, f"the model {name!r} would start a program on the server ({', '.join(programs)}); "
                                "a request may run only teams of model APIs: serve such a team with --config "
                                "or --default-model", code="model_not_allowed", param="model")
        return name, config

    def _example(self, example: str) -> TeamConfig:
        if example not in list_examples():
            raise ApiError(404, f"the model 'massgen/{example}' does not exist; GET /v1/models lists them",
                           code="model_not_found", param="model")
        if example not in self._examples:
            self._examples[example] = self._load(f"@examples/{example}")
        return self._examples[example]

    def _from_path(self, path_text: str) -> TeamConfig:
        path = Path(path_text).expanduser()
        if not path.is_absolute():  # relative to the first root (the server's working directory)
            path = (self.path_roots[0] if self.path_roots else Path.cwd()) / path
        resolved = path.resolve()
        if not any(resolved.is_relative_to(root.resolve()) for root in self.path_roots):
            raise ApiError(404, f"the model 'massgen/path:{path_text}' does not exist here: config files "
                                "must lie inside the server's config roots", code="model_not_found",
                           param="model")
        if not resolved.is_file():
            raise ApiError(404, f"the model 'massgen/path:{path_text}' does not exist: no such config file",
                           code="model_not_found", param="model")
        return self._load(str(resolved), shown=f"massgen/path:{path_text}")

    def _load(self, ref: str, shown: str | None = None) -> TeamConfig:
        """``shown``: the name to give instead of the loader's message (which may quote the file)."""
        try:
            config, _path = load_config(ref, None if self.env is None else dict(self.env))
        except ConfigError as exc:
            detail = str(exc) if shown is None else (
                f"{shown} is not a valid team config (details are not sent over HTTP, as the file may hold "
                "secrets; run `massgen --validate FILE` on the server to see them)")
            raise ApiError(400, f"the team config is not valid: {detail}", code="invalid_config",
                           param="model") from None
        return config

    def _quick(self, model: str) -> TeamConfig:
        backend, model_name = quick_backend(model)
        check_model_text(model_name)  # also for names that came from no request (--default-model)
        if _PATH_LIKE.search(model_name):  # refused before anything reads the file system
            raise ApiError(400, "a model name may not be a file path; GET /v1/models lists the teams",
                           code="invalid_model", param="model")
        if backend == "chatcompletion" and not model.startswith("chatcompletion/"):
            raise ApiError(404, f"the model {model!r} matches no config here and no known provider; GET /v1/models "
                                "lists the teams, and a quick team needs a provider model name (gpt-*, claude-*, "
                                "gemini-*, grok-*) or <backend>/<model> (e.g. vllm/<model>)",
                           code="model_not_found", param="model")
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", model_name).strip("_") or "model"
        agents = [{"id": f"{slug}_{i}", "backend": {"type": backend, "model": model_name}}
                  for i in range(1, self.quick_agents + 1)]
        try:
            return validate_data({"agents": agents}, f"quick team of {model}",
                                 None if self.env is None else dict(self.env))
        except ConfigError as exc:
            raise ApiError(400, str(exc), code="invalid_model", param="model") from None
