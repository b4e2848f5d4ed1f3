"""The flags MassGen users type, turned into a config, a key check and a session.

- ``--model``/``--backend``/``--base-url``/``--system-message``: a quick single agent, or,
  with ``--config``, the same settings on every agent of that team;
- ``--session-id ID`` / ``--continue``: unless flags say otherwise, the session's config (the session
  itself is chosen in ``cli/run_config``);
- the key check: an agent whose provider key is missing stops the run before any model
  call, naming the key (exit 1).
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import IO, TYPE_CHECKING, Any

from massgen.cli import exit_codes
from massgen.cli.text import for_terminal
from massgen.cli.usage import given

if TYPE_CHECKING:  # the rest loads after parsing, so ``massgen --help`` stays fast
    from massgen import Session, TeamConfig
    from massgen.cli.request import Request

QUICK_FLAGS = ("model", "backend", "base_url", "system_message")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of this module, added to the ``massgen`` parser."""
    quick = parser.add_argument_group("a quick team (MassGen's flags)")
    quick.add_argument("--model", metavar="MODEL", type=given,
                       help="one agent of this model (gpt-5-mini, claude-sonnet-4-5, gemini-2.5-flash, vllm/NAME, "
                            "...); with --config, every agent uses it")
    quick.add_argument("--backend", metavar="TYPE", type=given,
                       help="the backend type for --model (see --list-backends)")
    quick.add_argument("--base-url", metavar="URL", type=given, help="the server of an OpenAI-compatible backend")
    quick.add_argument("--system-message", metavar="TEXT", help="the system message of every agent")
    quick.add_argument("--list-backends", action="store_true", help="list the backend types and the keys they need")
    output = parser.add_argument_group("output")
    output.add_argument("--stream-events", action="store_true",
                        help="print the run's events as JSON lines on stdout (the last is final_answer)")
    output.add_argument("--output-file", metavar="FILE", type=given, help="also write the final answer to FILE")
    output.add_argument("--debug", action="store_true", help="write a debug log into the run's log directory")
    output.add_argument("--no-logs", action="store_true",
                        help="keep no log directory after the run (one-shot runs only)")
    session = parser.add_argument_group("sessions (.massgen/sessions/)")
    session.add_argument("--session-id", metavar="ID", type=given,
                         help="continue (or start) this session: earlier turns are the team's context")
    session.add_argument("--continue", dest="continue_session", action="store_true",
                         help="continue the most recent session (with a question, or interactively)")
    session.add_argument("--list-sessions", action="store_true", help="list the stored sessions")


def usage_problem(args: argparse.Namespace) -> str | None:
    """Flags that cannot go together, as a usage error message; None when they can."""
    if args.question is not None and not args.question.strip():
        return "the question is empty (only whitespace); give the task for the team, e.g. massgen \"What is 2+2?\""
    eaten = question_read_as_agent_id(args)
    if eaten:
        return eaten
    if args.session_id and args.continue_session:
        return "--session-id and --continue: give one (--continue takes the latest session)"
    if args.resume and (args.session_id or args.continue_session):
        return "--resume starts a new attempt of one run; it does not join a session"
    one_shot = [f for f, on in (("--stream-events", args.stream_events), ("--output-file", args.output_file),
                                ("--no-logs", args.no_logs)) if on]
    if one_shot and not args.question and not args.resume:
        return f"{one_shot[0]} needs a question (it is for one-shot runs)"
    if args.no_logs and (args.automation or args.debug or args.resume):
        clash = "--automation" if args.automation else "--debug" if args.debug else "--resume"
        return f"--no-logs and {clash}: {clash} needs the log directory"
    return None


# An agent id, as configs/schema.py's AgentConfig.id pattern allows one (tests hold the two equal).
AGENT_ID = re.compile(r"^[A-Za-z0-9_.-]+$")


def question_read_as_agent_id(args: argparse.Namespace) -> str | None:
    """``--single-agent "question"``: the parser takes the word after the flag as its agent id, as
    upstream's does, so the question is gone; say so when that word cannot be an agent id."""
    chosen = getattr(args, "single_agent", None)
    if not isinstance(chosen, str) or AGENT_ID.match(chosen):
        return None
    shown = chosen if len(chosen) <= 40 else chosen[:37] + "..."
    return (f"--single-agent takes an agent id: {shown!r} was read as the agent id (an id is letters, digits, "
            f"'_', '.' and '-'); put the question after --single-agent ID, e.g. massgen --single-agent agent_a "
            f"\"question\", or give the question first for the config's first agent: massgen \"question\" "
            f"--single-agent")


def list_backends(out: IO[str]) -> int:
    from massgen import BACKENDS

    out.write(f"{'backend':<16} {'key':<34} what\n")
    for name, info in BACKENDS.items():
        keys = " or ".join(info.keys) if info.keys else "-"
        if info.keys and not info.key_always:
            keys += " (api.openai.com only)"
        where = f" ({info.default_base_url})" if info.default_base_url else ""
        out.write(f"{name:<16} {keys:<34} {info.what}{where}\n")
    return exit_codes.SUCCESS


def list_sessions(out: IO[str]) -> int:
    from massgen import sessions

    skipped: list[str] = []
    found = sessions.list_sessions(skipped=skipped)
    for why in skipped:
        print(for_terminal(f"massgen: skipped {why}"), file=sys.stderr)
    if not found:
        out.write(f"no sessions in {sessions.sessions_dir()}\n")
        return exit_codes.SUCCESS
    for session in reversed(found):
        first = session.turns[0]["question"] if session.turns else "(no turns yet)"
        flat = " ".join(str(first).split())
        out.write(for_terminal(f"{session.id:<34} {len(session.turns):>3} turns  {session.updated_at[:19]}  "
                               f"{flat[:60] + ('...' if len(flat) > 60 else '')}") + "\n")  # a question's escapes
    out.write("continue one: massgen --session-id ID \"question\"   (the latest: massgen --continue)\n")
    return exit_codes.SUCCESS


def team_config(args: Request, session: Session | None = None,
                env: dict[str, str] | None = None) -> tuple[TeamConfig, str]:
    """The config the flags (or the continued session) ask for, and where it came from; ``env``: the
    environment with ``./.env`` (read here when not given)."""
    from massgen import config_environment as environment
    from massgen import discover_config as resolve
    from massgen import override_agents, override_notes, quick_team
    from massgen.cli import modes

    choice = args.stored_config()
    if session is not None and not args.config and not any(getattr(args, n) for n in QUICK_FLAGS):
        choice = {"config": None, **session.config}
    quick: dict[str, Any] = {name: choice.get(name) for name in QUICK_FLAGS}
    env = environment() if env is None else env
    with modes.config_warnings(strict=args.strict_validation):
        if not choice.get("config") and (quick["model"] or quick["backend"]):
            config = quick_team(env=env, **quick)
            source = f"--model {quick['model'] or '(default)'} on {config.agents[0].backend.type}"
        else:
            config, source = resolve(choice.get("config"), env)
            for note in override_notes(config, model=quick["model"], base_url=quick["base_url"],
                                       backend=quick["backend"]):
                print(f"massgen: note: {note}", file=sys.stderr)
            config = override_agents(config, **quick)
    return with_runtime(modes.apply(config, args), args), source


def with_runtime(config: TeamConfig, args: Request) -> TeamConfig:
    """``--ray ADDRESS``: the agents run on that Ray cluster."""
    address = args.ray
    if not address:
        return config
    from pydantic import ValidationError

    from massgen import ConfigError, RuntimeConfig

    try:
        runtime = RuntimeConfig(**{**config.runtime.model_dump(), "type": "ray", "address": address})
    except ValidationError:
        raise ConfigError(f"--ray {address!r}: give auto or HOST:PORT") from None
    return config.model_copy(update={"runtime": runtime})


def say_notices(config: TeamConfig, source: str, err: IO[str] | None = None) -> None:
    """One warning line per upstream MassGen key the config names that is not applied as upstream applies it."""
    for line in config.notices:
        (err or sys.stderr).write(f"massgen: warning: {source}: {line}\n")


def check_keys(config: TeamConfig, err: IO[str] | None = None, env: dict[str, str] | None = None) -> int | None:
    """``CONFIG_ERROR`` after naming every missing key, or None when every agent has what it needs."""
    from massgen import config_environment as environment
    from massgen import describe_missing, missing_keys

    missing = missing_keys(config, environment() if env is None else env)
    if not missing:
        return None
    (err or sys.stderr).write("massgen: missing API key\n" + describe_missing(missing) + "\n")
    return exit_codes.CONFIG_ERROR


def key_note(config: TeamConfig) -> str:
    """For ``--validate``: the keys this config's agents need that are not set, if any."""
    from massgen import config_environment as environment
    from massgen import missing_keys

    missing = missing_keys(config, environment())
    names = sorted({" or ".join(keys) for _agent, _backend, keys in missing})
    return f"; to run it, set {', '.join(names)}" if names else ""
