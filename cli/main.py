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
from massgen.cli.usage import UsageParser

if TYPE_CHECKING:
    from massgen import RunResult, Session
    from massgen.cli.run_options import RunOptions

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

exit codes: 0 success, 1 config error (or a missing API key), 2 execution error, 3 timeout or budget,
4 interrupted, 64 usage error (a flag that does not parse or clashes, or a MassGen 0.1.97 flag that is
not available in this version: docs/flags.md)
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
    parser.add_argument("--config", metavar="FILE", help="a YAML config file, or @examples/NAME")
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
    from massgen.cli import display, flags, upstream_flags

    flags.add_arguments(parser)
    display.add_arguments(parser)
    upstream_flags.add_arguments(parser)
    return parser


def _quiet_library_logs() -> None:
    # Pykka logs failures of actors we supervise; the trace has them, the terminal need not.
    logging.getLogger("pykka").setLevel(logging.CRITICAL)


def _subcommand(argv: list[str]) -> int | None:
    """``massgen serve|logs|export|viewer|shares ...``: each has its own parser; None for a question."""
    if argv[:1] == ["serve"]:  # loads the HTTP stack only when serving
        from massgen.cli.serve import main as serve_main

        return serve_main(argv[1:])
    if argv[:1] == ["logs"]:
        from massgen.cli.log_tools import main as logs_main

        return logs_main(argv[1:])
    if argv[:1] in (["export"], ["viewer"], ["shares"]):
        from massgen.cli import subcommands

        return subcommands.main(argv[0], argv[1:])
    return None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    code = _subcommand(argv)
    if code is not None:
        return code
    args = build_parser().parse_args(argv)
    _quiet_library_logs()
    from massgen import list_examples
    from massgen.cli import config_tools, display, flags, run_config, upstream_flags

    problem = flags.usage_problem(args) or upstream_flags.unavailable(args) or config_tools.usage_problem(args)
    if problem:
        from massgen.cli.usage import usage_error

        return usage_error(problem)
    if args.cwd_context in ("read", "write"):  # upstream's spelling of ro / rw
        args.cwd_context = "ro" if args.cwd_context == "read" else "rw"
    if args.list_backends:
        return flags.list_backends(sys.stdout)
    if args.list_sessions:
        return flags.list_sessions(sys.stdout)
    if args.list_examples:
        from massgen import example_description

        names = list_examples()
        width = max(len(name) for name in names) + len("@examples/")
        for name in names:
            print(f"{'@examples/' + name:<{width}}  {example_description(name)}")
        return exit_codes.SUCCESS
    if args.example or args.show_schema or args.generate_config:
        return config_tools.main(args)
    if args.validate:
        return config_tools.validate(args.validate, strict=args.strict, as_json=args.json_output)
    if args.orchestrator_timeout is not None and args.orchestrator_timeout <= 0:
        print("massgen: --orchestrator-timeout must be a positive number of seconds", file=sys.stderr)
        return exit_codes.CONFIG_ERROR
    if args.setup or args.quickstart or args.init:  # upstream's --init builds a config: here, --quickstart does
        from pathlib import Path

        from massgen.cli.setup import run_quickstart, run_setup

        env_file = Path(args.env_file).expanduser() if args.env_file else None
        code = run_setup(args.key, path=env_file) if args.setup else exit_codes.SUCCESS
        wants_config = args.quickstart or args.init
        return run_quickstart(args.force) if wants_config and code == exit_codes.SUCCESS else code
    if args.resume:
        return _resume(args)
    if args.web and not args.question:
        print("massgen: --web needs a question, e.g. massgen --web \"Which is larger, 9.11 or 9.9?\"", file=sys.stderr)
        return exit_codes.CONFIG_ERROR
    if not args.question:
        from massgen.cli.repl import can_run_interactively, run_repl

        if not can_run_interactively() and not display.full_screen(args):
            if isinstance(args.single_agent, str):  # the question may be what --single-agent took as its id
                from massgen.cli.usage import usage_error

                return usage_error(f"no question: --single-agent took {args.single_agent!r} as its agent id; "
                                   f"put the question after it: massgen --single-agent {args.single_agent} "
                                   "\"question\"")
            print("massgen: give a question, e.g. massgen \"Which is larger, 9.11 or 9.9?\" "
                  "(the interactive session needs a terminal)", file=sys.stderr)
            return exit_codes.CONFIG_ERROR
        resolved = run_config.resolve(args)
        if isinstance(resolved, int):
            return resolved
        if display.full_screen(args):
            from massgen.cli.tui import run_tui

            return run_tui(resolved.for_question(""), resolved.source, vi=args.vi, timeout=args.orchestrator_timeout,
                           session=resolved.session, session_config=flags.stored_config(args))
        return run_repl(resolved.for_question(""), resolved.source, vi=args.vi, timeout=args.orchestrator_timeout,
                        session=resolved.session, session_config=flags.stored_config(args))

    resolved = run_config.resolve(args)
    if isinstance(resolved, int):
        return resolved
    if args.web:
        from massgen.cli.serve import main as serve_main
        from massgen.cli.serve.catalog import served_name

        name = served_name(args.config) if args.config else ("default" if resolved.source == "the default team" else
                                                              served_name(resolved.source))
        address = ["--port", str(args.web_port or 0), "--host", args.web_host or "127.0.0.1"]
        # Ctrl-C stops the run at once, keeping its best answer, as it does a one-shot run's.
        return serve_main(["--ui", *address, "--log-level", "warning", "--shutdown-grace", "0"],
                          served_config=(name, resolved.for_question(args.question)), start_question=args.question)
    from massgen.cli import text
    from massgen.cli.oneshot import run_question

    text.escape_unencodable_output()
    question = text.from_argv(args.question)
    config = resolved.for_question(question)
    if display.full_screen(args):
        from massgen.cli.tui import run_tui

        return run_tui(config, resolved.source, vi=args.vi, timeout=args.orchestrator_timeout,
                       session=resolved.session, session_config=flags.stored_config(args), first_question=question)
    if display.note_without_terminal(args):
        print(display.note_without_terminal(args), file=sys.stderr)
    options = _run_options(args, resolved.session)
    if not config.ui.logging_enabled and not (args.automation or args.debug):
        options.no_logs = True  # upstream's ui.logging_enabled: false, as --no-logs
    return run_question(config, question, automation=args.automation,
                        timeout=args.orchestrator_timeout, options=options)


def _run_options(args: argparse.Namespace, session: Session | None) -> RunOptions:
    """The one-shot flags as ``RunOptions``; a session's turns are its history, and the turn is stored."""
    from pathlib import Path

    from massgen.cli import display
    from massgen.cli.run_options import RunOptions

    options = RunOptions(stream_events=args.stream_events, debug=args.debug, no_logs=args.no_logs,
                         output_file=Path(args.output_file) if args.output_file else None,
                         display=display.line_mode(args))
    if session is not None:
        options.history = session.history()
        options.on_result = lambda result: _store_turn(session, args, result)
    return options


def _store_turn(session: Session, args: argparse.Namespace, result: RunResult) -> None:
    from massgen import SessionError

    try:
        session.add_turn(args.question, result, keep_log_dir=not args.no_logs)
    except (SessionError, OSError) as exc:
        print(f"massgen: the turn was not saved to session {session.id}: {exc}", file=sys.stderr)
        return
    print(f"session: {session.id} (turn {len(session.turns)}; continue with --session-id {session.id} "
          "or --continue)", file=sys.stderr)


def _resume(args: argparse.Namespace) -> int:
    """``--resume DIR``: continue a crashed or stopped run from its trace, as a new attempt."""
    from pathlib import Path

    from massgen import ConfigError, ResumeError, resume_point, validate_data
    from massgen import discover_config as resolve
    from massgen.cli.oneshot import run_question

    if args.question:
        print("massgen: --resume continues the run's own question; give no question", file=sys.stderr)
        return exit_codes.CONFIG_ERROR
    try:
        point = resume_point(Path(args.resume))
        if args.config:
            config, _ = resolve(args.config)
        elif point.redacted:
            print(f"massgen: {point.log_dir}: the trace holds the run's config with its secrets redacted "
                  f"({', '.join(point.redacted)}); give the run's config again with --config FILE",
                  file=sys.stderr)
            return exit_codes.CONFIG_ERROR
        else:
            config = validate_data(point.config, f"{point.log_dir}/trace.jsonl (the run's config)")
    except (ResumeError, ConfigError) as exc:
        print(f"massgen: {exc}", file=sys.stderr)
        return exit_codes.CONFIG_ERROR
    for note in point.notes:
        print(f"massgen: {point.log_dir}/trace.jsonl: {note}", file=sys.stderr)
    if point.finished_status is not None:
        print(f"massgen: note: {point.log_dir} had finished ({point.finished_status}); "
              "the new attempt continues from its last state", file=sys.stderr)
    state = point.state
    mid_turn = sum(1 for a in state.agents.values() if a.replay and not a.voted and a.status == "live")
    print(f"massgen: resuming with {len(state.answers)} earlier answers, {len(state.votes)} votes of the current "
          f"round, {state.model_calls} model calls already made"
          + (f", {mid_turn} agents redoing their turn from recorded calls" if mid_turn else ""), file=sys.stderr)
    return run_question(config, point.question, automation=args.automation, timeout=args.orchestrator_timeout,
                        resume=point)


def entry() -> None:
    from massgen.cli.fast_exit import exit_now

    exit_now(main())


if __name__ == "__main__":
    entry()
