"""The command line, parsed once: ``parse(argv)`` -> ``Request``, the one value every mode receives.

The parser is gathered here (our flags, ``cli/flags``, ``cli/display``, ``cli/upstream_flags``), and so
are the checks that need only the command line (flags that clash, upstream flags not available here):
each is a usage error (exit 64). After this module nothing reads ``argv`` or an ``argparse.Namespace``;
the modes read the fields of one frozen ``Request``.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from massgen import __version__
from massgen.cli import display, flags, upstream_flags
from massgen.cli.display import Display
from massgen.cli.usage import UsageParser, given, usage_error

__all__ = ["EPILOG", "Request", "build_parser", "parse"]


@dataclass(frozen=True)
class Request:
    """What the command line asks for, field names as argparse's dests (``--continue``: ``continue_session``)."""

    question: str | None = None
    config: str | None = None
    web: bool = False
    web_port: int | None = None
    web_host: str | None = None
    automation: bool = False
    orchestrator_timeout: float | None = None
    cwd_context: str | None = None  # ro | rw (upstream's read / write are read as these)
    parse_at_references: bool = True
    resume: str | None = None
    ray: str | None = None
    vi: bool = False
    # the quick-team flags (cli/flags.py)
    model: str | None = None
    backend: str | None = None
    base_url: str | None = None
    system_message: str | None = None
    # the mode flags (cli/modes.py)
    single_agent: str | bool | None = None
    quick: bool = False
    strict_validation: bool = False
    # output
    stream_events: bool = False
    output_file: str | None = None
    debug: bool = False
    no_logs: bool = False
    display: Display | None = None
    no_display: bool = False
    config_display: Display | None = None  # the config's ui.display_type, set once it is read (run_config)
    # sessions
    session_id: str | None = None
    continue_session: bool = False
    # the flags that run no team (cli/config_tools.py, cli/setup.py)
    list_backends: bool = False
    list_sessions: bool = False
    list_examples: bool = False
    validate: str | None = None
    strict: bool = False
    json_output: bool = False
    example: str | None = None
    show_schema: bool = False
    schema_backend: str | None = None
    with_examples: bool = False
    generate_config: str | None = None
    config_agents: int | None = None
    config_backend: str | None = None
    config_model: str | None = None
    config_agent_id: str | None = None
    config_context_path: str | None = None
    setup: bool = False
    env_file: str | None = None
    key: tuple[str, ...] = ()
    quickstart: bool = False
    init: bool = False
    force: bool = False

    def stored_config(self) -> dict[str, Any]:
        """What a session remembers of how its config was chosen (never a secret)."""
        return {"config": self.config, **{name: getattr(self, name) for name in flags.QUICK_FLAGS
                                          if getattr(self, name)}}

    def with_config_display(self, display_type: str | None) -> Request:
        """The request with the display a config's ``ui.display_type`` asks for (a flag still wins)."""
        return dataclasses.replace(self, config_display=display.CONFIG_DISPLAYS.get(display_type or ""))


EPILOG = """\
examples:
  massgen "Which is larger, 9.11 or 9.9?"
  massgen --config @examples/basic/scripted_three_agents "Which is larger, 9.11 or 9.9?"
  massgen --automation --config team.yaml "question"   # LOG_DIR, STATUS (status.json), ANSWER lines
  massgen --validate team.yaml
  massgen --list-examples
  massgen --model gpt-5-mini "question"                # one agent; --backend/--base-url for others
  massgen --session-id work "question"; massgen --continue "follow-up"
  massgen logs summary                                 # the latest run: list|summary|show|tools|analyze|open
  massgen export                                       # the latest run's log directory as a .tar.gz

exit codes: 0 success, 1 config error (or a missing API key), 2 execution error (also a deadline or budget
that ends a run before any answer), 3 timeout or budget (the best answer so far kept), 4 interrupted,
64 usage error (a flag that does not parse or clashes, no question where one is needed, or a MassGen 0.1.97
flag that is not available in this version: docs/flags.md)
"""


def build_parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        prog="massgen",
        description="Several models answer in parallel, read each other's answers, vote, "
        "and hand back one answer the team checked.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,  # --quick is a flag of its own, never short for --quickstart
    )
    parser.add_argument("question", nargs="?", help="the task for the team (omit it for the interactive session)")
    parser.add_argument("--config", metavar="FILE", type=given, help="a YAML config file, or @examples/NAME")
    parser.add_argument("--web", action="store_true",
                        help="watch the run in a browser: starts `massgen serve --ui` on a free local port and "
                             "prints the run's URL")
    parser.add_argument("--automation", action="store_true",
                        help="no display; print LOG_DIR (the run's log_<stamp> folder), STATUS (the status.json "
                             "path) and ANSWER (the answer file) lines, as upstream MassGen does")
    parser.add_argument("--orchestrator-timeout", type=float, metavar="SECONDS",
                        help="deadline for the whole run (overrides timeout_settings)")
    parser.add_argument("--validate", metavar="FILE", help="check a config file and exit")
    parser.add_argument("--cwd-context", choices=("ro", "rw", "read", "write"),
                        help="let the agents read this directory (rw: the final presenter may also write it); "
                        "@path and @path:w in the question do the same for one path")
    parser.add_argument("--resume", metavar="LOG_DIR",
                        help="start a new attempt of a run, keeping its answers: its LOG_DIR (the newest attempt) "
                             "or one attempt directory (turn_N/attempt_M)")
    parser.add_argument("--ray", metavar="ADDRESS",
                        help="run the agents on a Ray cluster: auto or HOST:PORT (needs the [ray] extra)")
    parser.add_argument("--list-examples", action="store_true", help="list the shipped example configs")
    parser.add_argument("--vi", action="store_true", help="vi key bindings in the interactive session")
    parser.add_argument("--setup", action="store_true",
                        help="save API keys to a .env file (mode 600): asks on a terminal (~/.massgen/.env or "
                             "./.env), else reads NAME=VALUE lines into ./.env")
    parser.add_argument("--env-file", metavar="PATH",
                        help="with --setup: the .env file the keys go to (e.g. ~/.massgen/.env, read in every "
                             "directory)")
    parser.add_argument("--key", action="append", default=[], metavar="NAME[=VALUE]",
                        help="with --setup: save this key without asking; NAME alone takes it from the environment")
    parser.add_argument("--quickstart", action="store_true",
                        help="write .massgen/config.yaml for the providers whose keys are set (else the local team)")
    parser.add_argument("--force", action="store_true", help="with --quickstart: replace an existing config")
    parser.add_argument("--version", action="version", version=f"massgen {__version__}")
    flags.add_arguments(parser)
    display.add_arguments(parser)
    upstream_flags.add_arguments(parser)
    return parser


def parse(argv: Sequence[str]) -> Request | int:
    """The ``Request`` of ``argv``, or the usage error's exit code (64) after saying why; argparse's own
    errors, ``--help`` and ``--version`` exit inside the parser."""
    args = build_parser().parse_args(list(argv))
    from massgen.cli import config_tools  # after parsing: --help stays fast

    problem = flags.usage_problem(args) or upstream_flags.unavailable(args) or config_tools.usage_problem(args)
    if problem:
        return usage_error(problem)
    if args.cwd_context in ("read", "write"):  # upstream's spelling of ro / rw
        args.cwd_context = "ro" if args.cwd_context == "read" else "rw"
    given = {field.name: getattr(args, field.name) for field in dataclasses.fields(Request)
             if field.name != "config_display"}
    return Request(**{**given, "key": tuple(args.key)})
