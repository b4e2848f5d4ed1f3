"""The flags that run no team: ``--list-backends``, ``--list-sessions``, ``--list-examples`` (``answer``),
and the config flags ``--validate`` (``--strict``, ``--json``), ``--example NAME``,
``--show-schema`` (``--schema-backend``, ``--with-examples``) and ``--generate-config PATH``
(``--config-backend``, ``--config-model``, ``--config-agents``, ``--config-agent-id``,
``--config-context-path``), as upstream MassGen 0.1.97 names them.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

import massgen
from massgen import (
    ConfigError,
    build_config,
    config_environment,
    example_path,
    list_examples,
    load_config,
    schema_text,
    validate_data,
)
from massgen.cli import exit_codes, flags
from massgen.cli.flags import key_note

if TYPE_CHECKING:
    from massgen.cli.request import Request

__all__ = ["answer", "main", "usage_problem", "validate"]

# A flag that only means something beside another: (flag, its dest, the flag it needs, that dest).
_PARTNERS = (
    ("--strict", "strict", "--validate", "validate"),
    ("--json", "json_output", "--validate", "validate"),
    ("--schema-backend", "schema_backend", "--show-schema", "show_schema"),
    ("--with-examples", "with_examples", "--show-schema", "show_schema"),
    ("--config-backend", "config_backend", "--generate-config", "generate_config"),
    ("--config-model", "config_model", "--generate-config", "generate_config"),
    ("--config-agents", "config_agents", "--generate-config", "generate_config"),
    ("--config-agent-id", "config_agent_id", "--generate-config", "generate_config"),
    ("--config-context-path", "config_context_path", "--generate-config", "generate_config"),
    ("--env-file", "env_file", "--setup", "setup"),
    ("--web-port", "web_port", "--web", "web"),
    ("--web-host", "web_host", "--web", "web"),
)


def usage_problem(args: argparse.Namespace) -> str | None:
    """A flag given without the flag it belongs to, as a usage error message (read while parsing)."""
    for flag, dest, partner, partner_dest in _PARTNERS:
        value = getattr(args, dest, None)
        if value not in (None, False) and not getattr(args, partner_dest, None):
            return f"{flag} goes with {partner}; without it, it would do nothing"
    if args.config_agent_id and (args.config_agents or 1) != 1:
        return "--config-agent-id names the one agent; it goes with --config-agents 1"
    return None


def validate(ref: str, *, strict: bool, as_json: bool) -> int:
    """``--validate FILE``: 0 valid, 1 invalid; with ``--strict`` a warning is an error too.

    What this machine lacks (an unset ``${VAR}``, a missing context path or upload file, no sandbox) is a
    warning: the file is checked as its user would run it. ``--strict`` and a run make it an error."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            config, path = load_config(ref, config_environment(), machine_warnings=not strict)
            error = None
        except ConfigError as exc:
            config, path, error = None, Path(ref), str(exc)
    said = [str(w.message) for w in caught]
    if config is not None:  # the upstream keys not applied here, one line each (configs/compat.py)
        said += [f"{path}: {line}" for line in config.notices]
        # what needs the Python sandbox, where this machine has none: the run would say the same once
        said += [f"{path}: {line}" for line in massgen.withheld_check_tools(config)]
    valid = error is None and not (strict and said)
    if as_json:
        print(json.dumps({"config": str(path), "valid": valid, "errors": [error] if error else [],
                          "warnings": said, "agents": [a.id for a in config.agents] if config else []}, indent=2))
        return exit_codes.SUCCESS if valid else exit_codes.CONFIG_ERROR
    for message in said:
        print(f"massgen: warning: {message}", file=sys.stderr)
    if error is not None:
        print(f"massgen: {error}", file=sys.stderr)
        return exit_codes.CONFIG_ERROR
    assert config is not None
    if strict and said:
        print(f"massgen: {path}: {len(said)} warning(s), and --strict makes them errors", file=sys.stderr)
        return exit_codes.CONFIG_ERROR
    count = len(config.agents)
    print(f"{path}: valid ({count} agent{'' if count == 1 else 's'}: {', '.join(a.id for a in config.agents)})"
          f"{key_note(config)}")
    return exit_codes.SUCCESS


class _PlaceholderEnv(dict[str, str]):
    """An environment in which every variable is set, so ``${NAME}`` expands to a placeholder."""

    def __contains__(self, name: object) -> bool:
        return True

    def __missing__(self, name: str) -> str:
        return f"<{name}>"


def _generate(args: Request) -> int:
    if not args.config_model and not args.config_backend:
        print("massgen: --generate-config needs --config-model (and --config-backend where the model name "
              "does not say it), e.g. --config-backend openai --config-model gpt-5-mini", file=sys.stderr)
        return exit_codes.CONFIG_ERROR
    try:  # 0 is not "the default": build_config refuses it, as every count out of range
        data = build_config(num_agents=1 if args.config_agents is None else args.config_agents,
                            backend=args.config_backend, model=args.config_model,
                            context_paths=[args.config_context_path] if args.config_context_path else None)
    except ConfigError as exc:  # the rule is build_config's; the user typed the flag, not the argument
        raise ConfigError(str(exc).replace("num_agents:", "--config-agents:", 1)) from None
    if args.config_agent_id:
        data["agents"][0]["id"] = args.config_agent_id
    target = Path(args.generate_config or "")  # given: main() comes here only with --generate-config
    # Checked before it is written; a key named as ${NAME} need not be set yet (it is read at run time).
    validate_data(data, f"the config for {target}", _PlaceholderEnv())
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    print(f"wrote {target} ({len(data['agents'])} agents); run it: massgen --config {target} \"question\"")
    return exit_codes.SUCCESS


def answer(request: Request) -> int | None:
    """The exit code of a request that runs no team, after answering it; None for one that runs a team."""
    if request.list_backends:
        return flags.list_backends(sys.stdout)
    if request.list_sessions:
        return flags.list_sessions(sys.stdout)
    if request.list_examples:
        from massgen import example_description

        names = list_examples()
        width = max(len(name) for name in names) + len("@examples/")
        for name in names:
            print(f"{'@examples/' + name:<{width}}  {example_description(name)}")
        return exit_codes.SUCCESS
    if request.example or request.show_schema or request.generate_config:
        return main(request)
    if request.validate:
        return validate(request.validate, strict=request.strict, as_json=request.json_output)
    return None


def main(args: Request) -> int:
    """``--example``, ``--show-schema`` or ``--generate-config``."""
    try:
        if args.example:
            ref = args.example if args.example.startswith("@examples/") else f"@examples/{args.example}"
            sys.stdout.write(example_path(ref).read_text(encoding="utf-8"))
            return exit_codes.SUCCESS
        if args.show_schema:
            sys.stdout.write(schema_text(args.schema_backend))
            if args.with_examples:
                sys.stdout.write("examples (--config @examples/NAME, --example NAME):\n")
                sys.stdout.writelines(f"  {name}\n" for name in list_examples())
            return exit_codes.SUCCESS
        return _generate(args)
    except (ConfigError, OSError) as exc:
        print(f"massgen: {exc}", file=sys.stderr)
        return exit_codes.CONFIG_ERROR
