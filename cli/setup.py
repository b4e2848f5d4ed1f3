"""``massgen --setup`` (API keys into a ``.env`` file) and ``massgen --quickstart`` (a team config).

Where keys go: ``--env-file PATH``; else, on a terminal, the user picks upstream's two places
(``~/.massgen/.env``, read in every directory and upstream's recommendation, or ``./.env``); else
(``--key`` flags, piped lines) ``./.env``. Every run reads both (configs/places.py).

Keys are secrets: they are read without echo, written to a file only its owner can
read (mode 600, replaced atomically so no reader ever sees a half-written file), and
never printed, not even in part. Both commands run without questions for scripts:
``--key NAME=VALUE``, ``--key NAME`` (the value comes from the environment) or
``NAME=VALUE`` lines on a piped stdin.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import yaml

from massgen import (
    PROVIDER_KEYS,
    MassGenError,
    default_model,
    default_team,
    global_dotenv,
    read_dotenv,
    validate_data,
)
from massgen import config_environment as environment
from massgen.cli import exit_codes

if TYPE_CHECKING:
    from massgen.cli.request import Request

KEY_NAMES = tuple(PROVIDER_KEYS)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_BARE_VALUE = re.compile(r"^[A-Za-z0-9_\-.:/+=@,]*$")

Ask = Callable[[str], str]


class SetupError(MassGenError):
    """Input the setup cannot use; the message never contains a key's value."""


def _line(name: str, value: str) -> str:
    if "\n" in value or "\r" in value:
        raise SetupError(f"the value of {name} contains a line break")
    if _BARE_VALUE.match(value):
        return f"{name}={value}"
    if '"' in value and "'" in value:
        raise SetupError(f"the value of {name} contains both kinds of quotes")
    quote = "'" if '"' in value else '"'
    return f"{name}={quote}{value}{quote}"


def merge_dotenv(text: str, updates: Mapping[str, str]) -> str:
    """Replace the lines that set the updated names, keep every other line, append the new names."""
    pending = dict(updates)
    out: list[str] = []
    for line in text.splitlines():
        stripped = line.strip().removeprefix("export ").lstrip()
        name = stripped.partition("=")[0].strip() if "=" in stripped and not stripped.startswith("#") else ""
        if name in pending:
            out.append(_line(name, pending.pop(name)))
        elif name in updates:
            continue  # a duplicate line for a name already written: drop it
        else:
            out.append(line)
    out.extend(_line(name, value) for name, value in pending.items())
    return "\n".join(out) + "\n"


def write_private(path: Path, text: str) -> None:
    """Write ``path`` with mode 600, atomically; the file is never readable by others, even briefly."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")  # mkstemp creates it 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_keys(updates: Mapping[str, str], path: Path = Path(".env")) -> list[str]:
    """Merge ``updates`` into the dotenv file; returns the names written."""
    for name in updates:
        if not _NAME.match(name):
            raise SetupError(f"not a valid variable name: {name!r}")
    existing = path.read_text(encoding="utf-8") if path.is_file() else ""
    write_private(path, merge_dotenv(existing, updates))
    return list(updates)


def keys_from_flags(flags: Iterable[str], env: Mapping[str, str]) -> dict[str, str]:
    """``NAME=VALUE`` as given, ``NAME`` alone takes the value of that environment variable."""
    keys: dict[str, str] = {}
    for flag in flags:
        name, sep, value = flag.partition("=")
        name = name.strip()
        if not sep:
            if not env.get(name):
                raise SetupError(f"--key {name}: the environment variable {name} is not set")
            value = env[name]
        if not value:
            raise SetupError(f"--key {name}: empty value")
        keys[name] = value
    return keys


def keys_from_lines(stream: IO[str]) -> dict[str, str]:
    """``NAME=VALUE`` lines from a pipe; blank lines and comments are skipped."""
    keys: dict[str, str] = {}
    for raw in stream:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, value = line.removeprefix("export ").partition("=")
        if not sep or not value.strip():
            raise SetupError("expected NAME=VALUE lines on stdin")
        keys[name.strip()] = value.strip().strip("'\"")
    return keys


def _hidden_prompt(prompt: str) -> str:
    from prompt_toolkit import prompt as pt_prompt

    return pt_prompt(prompt, is_password=True)


def _visible_prompt(prompt: str) -> str:
    from prompt_toolkit import prompt as pt_prompt

    return pt_prompt(prompt)


def ask_place(ask: Ask, out: IO[str]) -> Path:
    """Upstream's question: the global ``~/.massgen/.env`` (the default) or this directory's ``./.env``."""
    out.write(f"Where to save API keys:\n  [1] {global_dotenv()} (every directory; recommended)\n"
              "  [2] ./.env (this directory only)\n")
    out.flush()
    while True:
        answer = ask("Choose 1 or 2 [1]: ").strip()
        if answer in ("", "1"):
            return global_dotenv()
        if answer == "2":
            return Path(".env")
        out.write("type 1 or 2\n")


def ask_keys(ask: Ask, existing: Mapping[str, str], out: IO[str], path: Path) -> dict[str, str]:
    """One hidden prompt per provider key; Enter keeps what is there (or skips)."""
    out.write(f"API keys are stored in {path} (readable only by you). Press Enter to skip a key.\n")
    out.flush()
    keys: dict[str, str] = {}
    for name in KEY_NAMES:
        note = " (set; Enter keeps it)" if existing.get(name) else ""
        value = ask(f"{name}{note}: ").strip()
        if value:
            keys[name] = value
    return keys


def run_setup(flags: list[str], *, path: Path | None = None, stdin: IO[str] | None = None,
              out: IO[str] | None = None, err: IO[str] | None = None, interactive: bool | None = None) -> int:
    """``--setup``: flags first, else hidden prompts on a terminal, else NAME=VALUE lines from a pipe;
    ``path`` (``--env-file``): where they go, else asked on a terminal, else ``./.env``."""
    stdin = stdin or sys.stdin
    if interactive is None:
        interactive = stdin.isatty()
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        if flags:
            keys = keys_from_flags(flags, os.environ)
        elif not interactive:
            keys = keys_from_lines(stdin)
        else:
            path = path or ask_place(_visible_prompt, out)
            keys = ask_keys(_hidden_prompt, read_dotenv(path), out, path)
        path = path or Path(".env")
        if not keys:
            out.write(f"no keys given; {path} left as it was\n")
            return exit_codes.SUCCESS
        names = save_keys(keys, path)
    except SetupError as exc:
        err.write(f"massgen --setup: {exc}\n")
        return exit_codes.CONFIG_ERROR
    except (EOFError, KeyboardInterrupt):
        err.write("\nmassgen --setup: cancelled; nothing written\n")
        return exit_codes.INTERRUPTED
    out.write(f"saved {', '.join(names)} to {path} (mode 600)\n")
    return exit_codes.SUCCESS


# Upstream's quickstart recommends three agents; with fewer providers than that, they take turns.
QUICKSTART_AGENTS = 3
LOCAL_EXTRA = "pip install 'massgen-actors[local]'"
# What the [local] extra's first install needs: it compiles llama.cpp.
LOCAL_BUILD = "a C and C++ compiler (Debian: apt-get install build-essential); about 10 minutes on two cores"


def _key_choices() -> str:
    """The provider keys a team can use instead of the local model, and what each picks."""
    return ", ".join(f"{key} ({backend})" for key, backend in PROVIDER_KEYS.items())


def _provider_team(providers: list[str]) -> dict[str, Any]:
    """At least ``QUICKSTART_AGENTS`` agents over the providers with keys, each with its model written out."""
    count = max(QUICKSTART_AGENTS, len(providers))
    backends = [providers[i % len(providers)] for i in range(count)]
    agents: list[dict[str, Any]] = []
    for i, backend in enumerate(backends):
        same = backends.count(backend)
        number = backends[:i + 1].count(backend)
        spec: dict[str, object] = {"type": backend}
        model = default_model(backend)
        if model is not None:
            spec["model"] = model
        agents.append({"id": f"{backend}_agent" + (f"_{number}" if same > 1 else ""), "backend": spec})
    return {"agents": agents}


def quickstart_yaml(env: Mapping[str, str]) -> tuple[str, list[str]]:
    """The config text for the team the keys allow, and its agent ids. Keys stay in the environment."""
    keys = [k for k in PROVIDER_KEYS if env.get(k)]
    if keys:
        data = _provider_team([PROVIDER_KEYS[k] for k in keys])
        validate_data(data, "the quickstart team", dict(env))  # written only if it loads
    else:
        team = default_team(dict(env))
        data = team.model_dump(mode="json", exclude_defaults=True, serialize_as_any=True)
        for agent, config in zip(data["agents"], team.agents, strict=True):
            agent["backend"] = {"type": config.backend.type, **agent.get("backend", {})}  # a default, but needed
    header = ("# Written by `massgen --quickstart`. API keys are read from the environment or a .env file\n"
              "# (./.env, ~/.massgen/.env), never from this file. Edit freely; `massgen --validate\n"
              "# .massgen/config.yaml` checks it.\n")
    header += (f"# Providers with keys: {', '.join(keys)}\n" if keys
               else f"# No provider key was found, so this team runs the local model: it needs the [local]\n"
                    f"# extra ({LOCAL_EXTRA}; its build needs {LOCAL_BUILD}).\n"
                    f"# Or set an API key, one of {_key_choices()},\n"
                    "# with `massgen --setup` (or in the environment or a .env file), and run\n"
                    "# --quickstart --force again.\n")
    return header + yaml.safe_dump(data, sort_keys=False), [a["id"] for a in data["agents"]]


def _local_extra_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("llama_cpp") is not None


def run_quickstart(force: bool, *, path: Path = Path(".massgen") / "config.yaml",
                   env: Mapping[str, str] | None = None, out: IO[str] | None = None,
                   err: IO[str] | None = None) -> int:
    """``--quickstart``: write the config without questions; ``--force`` replaces an existing one."""
    out = out or sys.stdout
    err = err or sys.stderr
    if path.exists() and not force:
        err.write(f"massgen --quickstart: {path} exists; add --force to replace it\n")
        return exit_codes.CONFIG_ERROR
    text, agents = quickstart_yaml(environment() if env is None else env)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    out.write(f"wrote {path}: a team of {len(agents)} ({', '.join(agents)})\n")
    if agents and all(a.startswith("local_") for a in agents):
        installed = "installed" if _local_extra_installed() else f"not installed here: {LOCAL_EXTRA}"
        build = "" if _local_extra_installed() else f"; its build needs {LOCAL_BUILD}"
        out.write(f"no provider key was found, so the team runs the local model; it needs the [local] extra "
                  f"({installed}{build}).\nTo use a provider instead, set an API key, one of {_key_choices()}: "
                  "massgen --setup saves one to ./.env (or set it in the environment); "
                  "then massgen --quickstart --force\n")
    return exit_codes.SUCCESS


def main(request: Request) -> int:
    """``--setup`` (keys to a .env file), then ``--quickstart``/``--init`` (a config) if the keys were saved."""
    env_file = Path(request.env_file).expanduser() if request.env_file else None
    code = run_setup(list(request.key), path=env_file) if request.setup else exit_codes.SUCCESS
    wants_config = request.quickstart or request.init  # upstream's --init builds a config: here, --quickstart does
    return run_quickstart(request.force) if wants_config and code == exit_codes.SUCCESS else code
