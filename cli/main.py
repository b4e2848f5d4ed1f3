"""The ``massgen`` command: parse arguments and hand off to one mode.

Imports are deferred to the mode that needs them, so ``massgen --help`` and
``--validate`` start fast and never load a provider SDK.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from massgen import __version__
from massgen.cli import exit_codes

if TYPE_CHECKING:
    from massgen.configs import TeamConfig

EPILOG = """\
examples:
  massgen "Which is larger, 9.11 or 9.9?"
  massgen --config @examples/basic/scripted_three_agents "Which is larger, 9.11 or 9.9?"
  massgen --automation --config team.yaml "question"   # LOG_DIR/STATUS/WINNER/ANSWER_FILE lines
  massgen --validate team.yaml
  massgen --list-examples

exit codes: 0 success, 1 config error, 2 execution error, 3 timeout or budget, 4 interrupted
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="massgen",
        description="Several models answer in parallel, read each other's answers, vote, "
        "and hand back one answer the team checked.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("question", nargs="?", help="the task for the team (omit it for the interactive session)")
    parser.add_argument("--config", metavar="FILE", help="a YAML config file, or @examples/NAME")
    parser.add_argument("--automation", action="store_true",
                        help="no display; print LOG_DIR, STATUS, WINNER and ANSWER_FILE lines")
    parser.add_argument("--orchestrator-timeout", type=float, metavar="SECONDS",
                        help="deadline for the whole run (overrides timeout_settings)")
    parser.add_argument("--validate", metavar="FILE", help="check a config file and exit")
    parser.add_argument("--cwd-context", choices=("ro", "rw"),
                        help="let the agents read this directory (rw: the final presenter may also write it); "
                        "@path and @path:w in the question do the same for one path")
    parser.add_argument("--resume", metavar="LOG_DIR",
                        help="start a new attempt of a run from its log directory, keeping its answers")
    parser.add_argument("--ray", metavar="ADDRESS",
                        help="run the agents on a Ray cluster: auto or HOST:PORT (needs the [ray] extra)")
    parser.add_argument("--list-examples", action="store_true", help="list the shipped example configs")
    parser.add_argument("--vi", action="store_true", help="vi key bindings in the interactive session")
    parser.add_argument("--setup", action="store_true",
                        help="save API keys to ./.env (mode 600): asks on a terminal, else reads NAME=VALUE lines")
    parser.add_argument("--key", action="append", default=[], metavar="NAME[=VALUE]",
                        help="with --setup: save this key without asking; NAME alone takes it from the environment")
    parser.add_argument("--quickstart", action="store_true",
                        help="write .massgen/config.yaml for the providers whose keys are set (else the local team)")
    parser.add_argument("--force", action="store_true", help="with --quickstart: replace an existing config")
    parser.add_argument("--version", action="version", version=f"massgen {__version__}")
    return parser


def _quiet_library_logs() -> None:
    # Pykka logs failures of actors we supervise; the trace has them, the terminal need not.
    logging.getLogger("pykka").setLevel(logging.CRITICAL)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["serve"]:  # its own parser; loads the HTTP stack only when serving
        from massgen.cli.serve import main as serve_main

        return serve_main(argv[1:])
    args = build_parser().parse_args(argv)
    _quiet_library_logs()
    from massgen.configs import ConfigError, list_examples, load_config

    if args.list_examples:
        for name in list_examples():
            print(f"@examples/{name}")
        return exit_codes.SUCCESS
    if args.validate:
        try:
            config, path = load_config(args.validate)
        except ConfigError as exc:
            print(f"massgen: {exc}", file=sys.stderr)
            return exit_codes.CONFIG_ERROR
        print(f"{path}: valid ({len(config.agents)} agents: {', '.join(a.id for a in config.agents)})")
        return exit_codes.SUCCESS
    if args.orchestrator_timeout is not None and args.orchestrator_timeout <= 0:
        print("massgen: --orchestrator-timeout must be a positive number of seconds", file=sys.stderr)
        return exit_codes.CONFIG_ERROR
    if args.setup or args.quickstart:
        from massgen.cli.setup import run_quickstart, run_setup

        code = run_setup(args.key) if args.setup else exit_codes.SUCCESS
        return run_quickstart(args.force) if args.quickstart and code == exit_codes.SUCCESS else code
    if args.resume:
        return _resume(args)
    if not args.question:
        from massgen.cli.repl import can_run_interactively, run_repl

        if not can_run_interactively():
            print("massgen: give a question, e.g. massgen \"Which is larger, 9.11 or 9.9?\" "
                  "(the interactive session needs a terminal)", file=sys.stderr)
            return exit_codes.CONFIG_ERROR
        from massgen.configs.defaults import resolve

        try:
            config, source = resolve(args.config)
        except ConfigError as exc:
            print(f"massgen: {exc}", file=sys.stderr)
            return exit_codes.CONFIG_ERROR
        return run_repl(_with_paths(config, "", args), source, vi=args.vi, timeout=args.orchestrator_timeout)

    from massgen.cli.oneshot import run_question
    from massgen.configs.defaults import resolve

    try:
        config, _source = resolve(args.config)
    except ConfigError as exc:
        print(f"massgen: {exc}", file=sys.stderr)
        return exit_codes.CONFIG_ERROR
    try:
        return run_question(_with_paths(config, args.question, args), args.question, automation=args.automation,
                            timeout=args.orchestrator_timeout)
    except ConfigError as exc:  # e.g. runtime: ray with no cluster to join
        print(f"massgen: {exc}", file=sys.stderr)
        return exit_codes.CONFIG_ERROR


def _with_paths(config: TeamConfig, question: str, args: argparse.Namespace) -> TeamConfig:
    """Context paths named at the terminal (massgen/files): ``@path[:w]`` and ``--cwd-context``."""
    from massgen.files import with_context_paths

    if getattr(args, "ray", None):  # --ray ADDRESS: the agents run on that Ray cluster
        from pydantic import ValidationError

        from massgen.configs.schema import RuntimeConfig

        try:
            runtime = RuntimeConfig(**{**config.runtime.model_dump(), "type": "ray", "address": args.ray})
        except ValidationError:
            raise SystemExit(f"massgen: --ray {args.ray!r}: give auto or HOST:PORT") from None
        config = config.model_copy(update={"runtime": runtime})
    return with_context_paths(config, question, args.cwd_context)


def _resume(args: argparse.Namespace) -> int:
    """``--resume DIR``: a new attempt of a crashed or stopped run, starting with its answers."""
    from pathlib import Path

    from massgen.actors.resume import ResumeError, resume_point
    from massgen.cli.oneshot import run_question
    from massgen.configs import ConfigError, validate_data
    from massgen.configs.defaults import resolve

    if args.question:
        print("massgen: --resume continues the run's own question; give no question", file=sys.stderr)
        return exit_codes.CONFIG_ERROR
    try:
        point = resume_point(Path(args.resume))
        if args.config:
            config, _ = resolve(args.config)
        else:
            config = validate_data(point.config, f"{args.resume}/trace.jsonl (the run's config)")
    except (ResumeError, ConfigError) as exc:
        print(f"massgen: {exc}", file=sys.stderr)
        return exit_codes.CONFIG_ERROR
    if point.finished_status == "completed":
        print(f"massgen: note: {args.resume} had completed; resuming starts a new attempt", file=sys.stderr)
    print(f"massgen: resuming with {len(point.answers)} earlier answers", file=sys.stderr)
    return run_question(config, point.question, automation=args.automation, timeout=args.orchestrator_timeout,
                        resume=point)


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
