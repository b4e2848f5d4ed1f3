"""Which surface runs a request: ``--resume``, the one-shot run, ``--web``, the line REPL or the full screen.

``refusal`` says, before any config is read, why a request cannot run where it was typed (a question
where none is taken, none where one is needed, no terminal for the interactive session); no question
where one is needed is a usage error (64), as an empty one is;
``run`` hands the resolved request (``cli/run_config``) to the one surface it asks for. Each surface
is imported only when chosen, so a one-shot run never loads the full screen or the HTTP stack.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from massgen.cli import display, exit_codes

if TYPE_CHECKING:
    from massgen.cli.request import Request
    from massgen.cli.run_config import RunConfig

__all__ = ["refusal", "run"]


def refusal(request: Request) -> int | None:
    """The exit code after saying why this request cannot run; None when it can."""
    if request.resume:
        if request.question:
            print("massgen: --resume continues the run's own question; give no question", file=sys.stderr)
            return exit_codes.CONFIG_ERROR
        return None
    if request.web and not request.question:  # a missing positional is a usage error (64), as an empty one is
        print("massgen: --web needs a question, e.g. massgen --web \"Which is larger, 9.11 or 9.9?\"", file=sys.stderr)
        return exit_codes.USAGE_ERROR
    if not request.question:
        from massgen.cli.repl import can_run_interactively

        if not can_run_interactively() and not display.full_screen(request):
            if isinstance(request.single_agent, str):  # the question may be what --single-agent took as its id
                from massgen.cli.usage import usage_error

                return usage_error(f"no question: --single-agent took {request.single_agent!r} as its agent id; "
                                   f"put the question after it: massgen --single-agent {request.single_agent} "
                                   "\"question\"")
            print("massgen: give a question, e.g. massgen \"Which is larger, 9.11 or 9.9?\" "
                  "(the interactive session needs a terminal)", file=sys.stderr)
            return exit_codes.USAGE_ERROR
    return None


def run(resolved: RunConfig) -> int:
    """Run the request on its surface; the exit code."""
    request = resolved.request
    if resolved.resume is not None:  # --resume: a new attempt of the run, on the one-shot path
        from massgen.cli.oneshot import run_resumed

        return run_resumed(resolved.config, resolved.resume, automation=request.automation,
                           timeout=request.orchestrator_timeout)
    if not request.question:
        return _interactive(resolved, "")
    if request.web:
        return _web(resolved, request.question)
    from massgen.cli import text
    from massgen.cli.oneshot import run as run_one_shot

    text.escape_unencodable_output()
    question = text.from_argv(request.question)
    if display.full_screen(request):
        return _interactive(resolved, question)
    return run_one_shot(resolved, question, resolved.for_question(question))


def _interactive(resolved: RunConfig, first_question: str) -> int:
    """The full screen (asking ``first_question`` at once, if there is one), else the line REPL."""
    request = resolved.request
    config = resolved.for_question(first_question)
    if display.full_screen(request):
        from massgen.cli.tui import run_tui

        return run_tui(config, resolved.source, vi=request.vi, timeout=request.orchestrator_timeout,
                       session=resolved.session, session_config=request.stored_config(),
                       first_question=first_question or None)
    from massgen.cli.repl import run_repl

    return run_repl(config, resolved.source, vi=request.vi, timeout=request.orchestrator_timeout,
                    session=resolved.session, session_config=request.stored_config())


def _web(resolved: RunConfig, question: str) -> int:
    """``--web``: ``massgen serve --ui`` on a local port, started on this question."""
    from massgen.cli.serve import main as serve_main
    from massgen.cli.serve.catalog import served_name

    request = resolved.request
    name = served_name(request.config) if request.config else (
        "default" if resolved.source == "the default team" else served_name(resolved.source))
    address = ["--port", str(request.web_port or 0), "--host", request.web_host or "127.0.0.1"]
    # Ctrl-C stops the run at once, keeping its best answer, as it does a one-shot run's.
    return serve_main(["--ui", *address, "--log-level", "warning", "--shutdown-grace", "0"],
                      served_config=(name, resolved.for_question(question)), start_question=question)
