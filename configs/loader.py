"""Finding, reading and validating config files.

Every failure is a ``ConfigError`` whose message names the file, the key path and
what was expected, so the command line can print it and exit 1 without a traceback.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from massgen.configs import compat, places, safe_yaml, upstream_examples
from massgen.configs.schema import MACHINE, TeamConfig
from massgen.messages.text import escape_value
from massgen.outcome.errors import ConfigError as ConfigError  # re-exported: the one class, also importable here

EXAMPLES_DIR = Path(__file__).resolve().parent / "examples"
EXAMPLE_PREFIX = "@examples/"
_VALIDATOR_NOISE = ("function-", "Scripted", "Local", "ClaudeCode", "Antigravity", "Azure")
_ENV_PATTERN = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def list_examples(examples_dir: Path = EXAMPLES_DIR) -> list[str]:
    """Names of the shipped example configs, usable as ``@examples/NAME``."""
    return sorted(str(p.relative_to(examples_dir).with_suffix("")) for p in examples_dir.rglob("*.yaml"))


_DESCRIPTION_CHARS = 100


def example_description(name: str, examples_dir: Path = EXAMPLES_DIR) -> str:
    """The whole sentences of an example's leading comment that fit in 100 characters (``--list-examples``);
    a first sentence longer than that is cut, with an ellipsis."""
    lines = []
    for line in (examples_dir / f"{name}.yaml").read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    text = " ".join(part for part in lines if part)
    sentences = re.split(r"(?<=[.!?])\s+", text)
    kept = sentences[0]
    for sentence in sentences[1:]:
        if len(kept) + 1 + len(sentence) > _DESCRIPTION_CHARS:
            break
        kept += " " + sentence
    return kept if len(kept) <= _DESCRIPTION_CHARS else kept[:_DESCRIPTION_CHARS - 1].rstrip() + "…"


def resolve_config_path(ref: str, examples_dir: Path = EXAMPLES_DIR) -> Path:
    """Turn ``@examples/NAME``, a file path or a named config (``~/.config/massgen/agents/NAME``) into an
    existing file.

    ``NAME`` is looked up as MassGen does: the exact name, then the file name alone, then
    any example whose name contains it; several matches or none are errors that list
    the candidates ("did you mean").
    """
    if not ref.startswith(EXAMPLE_PREFIX):
        path = Path(ref).expanduser()
        try:
            mode: int | None = path.stat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            mode = None  # nothing there: perhaps a named config
        except OSError as exc:  # a symlink loop, a folder on the way this user cannot enter
            raise ConfigError(f"{ref}: cannot be read ({exc.strerror or exc})") from None
        if mode is not None and stat.S_ISREG(mode):
            return path
        named = places.named_config(ref)  # upstream's named configs: ~/.config/massgen/agents/NAME[.yaml]
        if named is not None:
            return named
        if mode is not None and stat.S_ISDIR(mode):
            raise ConfigError(f"{ref}: is a directory, not a config file (give a YAML file)")
        if mode is not None:  # a FIFO would block the read, a device would never end it
            raise ConfigError(f"{ref}: is not a regular file (give a YAML file)")
        if path.is_absolute():  # never a named config: nothing else was looked at
            raise ConfigError(f"config file not found: {ref}")
        raise ConfigError(f"config file not found: {ref} (nor {places.user_config_dir() / 'agents' / ref}"
                          f"{'' if ref.endswith(('.yaml', '.yml')) else '[.yaml]'})")
    name = ref[len(EXAMPLE_PREFIX):].removesuffix(".yaml").strip("/")
    names = list_examples(examples_dir)
    name = upstream_examples.alias(name) or name  # a name upstream's docs use for one of ours
    if name in names:
        return examples_dir / f"{name}.yaml"
    matches = [n for n in names if n.rsplit("/", 1)[-1] == name] or [n for n in names if name and name in n]
    if len(matches) == 1:
        return examples_dir / f"{matches[0]}.yaml"
    if len(matches) > 1:
        listed = ", ".join(f"@examples/{m}" for m in matches)
        raise ConfigError(f"{ref} is ambiguous; it matches: {listed}")
    pointer = upstream_examples.pointer(name, names) if examples_dir == EXAMPLES_DIR else None
    if pointer is not None:
        raise ConfigError(pointer)
    raise ConfigError(f"no example named {ref}{_did_you_mean(name, names)} (see `massgen --list-examples`)")


def _did_you_mean(name: str, names: list[str]) -> str:
    """Close spellings, of the whole name or of its file name part."""
    by_base = {n.rsplit("/", 1)[-1]: n for n in names}
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    close += [by_base[b] for b in difflib.get_close_matches(name.rsplit("/", 1)[-1], list(by_base), n=3, cutoff=0.6)]
    unique = list(dict.fromkeys(close))[:3]
    return "; did you mean " + " or ".join(f"@examples/{n}" for n in unique) + "?" if unique else ""


def _expand_env(value: Any, path: str, env: dict[str, str], source: str, unset: list[str] | None) -> Any:
    """``${NAME}`` replaced by its value; an unset one is an error, or (``unset`` given) left as written and
    named there."""
    if isinstance(value, str):
        def substitute(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in env:
                problem = f"{path}: environment variable ${{{name}}} is not set"
                if unset is None:
                    raise ConfigError(f"{source}: {problem}")
                unset.append(problem)
                return match.group(0)
            return env[name]

        return _ENV_PATTERN.sub(substitute, value)
    if isinstance(value, dict):
        return {k: _expand_env(v, f"{path}.{k}" if path else str(k), env, source, unset) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand_env(v, f"{path}[{i}]", env, source, unset) for i, v in enumerate(value)]
    return value


def _format_location(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        elif str(part).startswith(_VALIDATOR_NOISE):
            continue  # pydantic's names for validators and union members, not config keys
        else:
            text += f".{part}" if text else str(part)
    return text or "(top level)"


def _describe(error: Any) -> str:
    if error["type"] == "extra_forbidden":
        return "unknown key"
    if error["type"] == "missing":
        return "required key is missing"
    message = str(error["msg"])
    return message.removeprefix("Value error, ")


def _backend_cwd_variables(data: dict[str, Any]) -> dict[str, Any]:
    """Upstream's ``${cwd}`` inside a backend: that backend's own ``cwd``, substituted before the environment."""
    listed = data.get("agents")
    agents: list[Any] = listed if isinstance(listed, list) else [data.get("agent")]
    if not any(isinstance(a, dict) and isinstance(a.get("backend"), dict) and a["backend"].get("cwd")
               for a in agents):
        return data

    def substitute(value: Any, cwd: str) -> Any:
        if isinstance(value, str):
            return value.replace("${cwd}", cwd)
        if isinstance(value, dict):
            return {k: substitute(v, cwd) for k, v in value.items()}
        if isinstance(value, list):
            return [substitute(v, cwd) for v in value]
        return value

    def agent(entry: Any) -> Any:
        if not (isinstance(entry, dict) and isinstance(entry.get("backend"), dict)):
            return entry
        cwd = entry["backend"].get("cwd")
        return {**entry, "backend": substitute(entry["backend"], cwd)} if isinstance(cwd, str) and cwd else entry

    if isinstance(data.get("agents"), list):
        return {**data, "agents": [agent(a) for a in data["agents"]]}
    return {**data, "agent": agent(data.get("agent"))}


def validate_data(data: Any, source: str, env: dict[str, str] | None = None, *,
                  machine_warnings: bool = False) -> TeamConfig:
    """Validate already-parsed YAML data; ``source`` names it in error messages.

    What depends on this machine (an unset ``${VAR}``, a missing context path or upload file, a missing
    sandbox or Docker) is an error, or with ``machine_warnings`` (``--validate`` without ``--strict``) one
    notice line each: the config is checked as its user, who has them, would run it.
    """
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping at the top level, got {type(data).__name__}")
    lacking: list[str] | None = [] if machine_warnings else None
    expanded = _expand_env(_backend_cwd_variables(data), "", dict(os.environ) if env is None else env, source,
                           lacking)
    translated, notices = compat.translate(expanded)
    # A lone surrogate or NUL (a YAML "\\ud800" escape, a dict from code) would fail every request that
    # carries it: escaped here, once, and said in a notice naming the field.
    escaped: list[str] = []
    translated = escape_value(translated, "", escaped)
    said = (*(n.line() for n in notices),
            *(f"{note.replace('/', '.')} (not valid text: no provider accepts it)" for note in escaped))
    try:
        config = TeamConfig.model_validate(translated, context=None if lacking is None else {MACHINE: lacking})
    except ValidationError as exc:
        lines = [f"{source}: invalid config"]
        for error in exc.errors():
            lines.append(f"  {_format_location(error['loc'])}: {_describe(error)}")
        # a ${VAR} left as written (--validate) may be what a field could not read: say so beside it
        lines += [f"  {problem}" for problem in lacking or ()]
        raise ConfigError("\n".join(lines)) from None
    machine = [f"{line} (this machine; an error when the config runs)" for line in lacking or ()]
    return config.with_notices((*said, *machine))


def load_config(ref: str, env: dict[str, str] | None = None, *,
                machine_warnings: bool = False) -> tuple[TeamConfig, Path]:
    """Load ``@examples/NAME`` or a YAML path into a validated ``TeamConfig`` (``machine_warnings``: as
    ``validate_data``).

    The file is read within bounds (size, encoding, nesting, alias expansion: see
    ``configs/safe_yaml.py``), so even a hostile file is a prompt ``ConfigError``."""
    path = resolve_config_path(ref)
    return validate_data(safe_yaml.read(path), str(path), env, machine_warnings=machine_warnings), path
