"""The ``massgen`` command: parse arguments and hand off to one mode.

Imports are deferred to the mode that needs them, so ``massgen --help`` and
``--validate`` start fast and never load a provider SDK.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from massgen.cli import exit_codes

from massgen import __version__

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
    parser.add_argument("--list-examples", action="store_true", help="list the shipped example configs")
    parser.add_argument("--version", action="version", version=f"massgen {__version__}")
    return parser


def _quiet_library_logs() -> None:
    # Pykka logs failures of actors we supervise; the trace has them, the terminal need not.
    logging.getLogger("pykka").setLevel(logging.CRITICAL)


def main(argv: Sequence[str] | None = None) -> int:
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
    if not args.question:
        print("massgen: give a question, e.g. massgen \"Which is larger, 9.11 or 9.9?\"", file=sys.stderr)
        return exit_codes.CONFIG_ERROR

    from massgen.cli.defaults import resolve
    from massgen.cli.oneshot import run_question

    try:
        config, _source = resolve(args.config)
    except ConfigError as exc:
        print(f"massgen: {exc}", file=sys.stderr)
        return exit_codes.CONFIG_ERROR
    return run_question(config, args.question, automation=args.automation, timeout=args.orchestrator_timeout)


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
