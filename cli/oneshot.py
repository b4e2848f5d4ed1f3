"""``massgen "question"``: one run, the answer on stdout, progress on stderr.

Automation mode prints upstream MassGen's machine-readable lines (cli/automation.py) instead of a
display, and every mode
maps the run's status to the documented exit codes. Ctrl-C cancels the run and
keeps the best answer so far; a second Ctrl-C stops waiting.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING

from massgen import ConfigError, ResumeError, ResumePoint, RunResult, Subscriber, TeamConfig, new_team
from massgen.cli import automation as automation_lines
from massgen.cli import exit_codes, signals
from massgen.cli.progress import ProgressDisplay
from massgen.cli.run_options import RunOptions
from massgen.cli.text import for_terminal, unless_reader_gone

if TYPE_CHECKING:
    from massgen import Session
    from massgen.cli.run_config import RunConfig

__all__ = ["print_result", "run", "run_question", "run_resumed"]


def print_result(result: RunResult, automation: bool, out: IO[str], err: IO[str], *, show_logs: bool = True,
                 show_answer: bool = True, agents: int = 0, output_file: Path | None = None) -> int:
    code = exit_codes.for_status(result.status)
    if automation:
        automation_lines.print_end(result, agents, out, output_file)
        return code
    if result.final_answer is not None:
        if result.partial:
            err.write(for_terminal(f"[best answer so far ({result.winner_label}); "
                                   f"the run ended early: {result.reason}]") + "\n")
        if result.presentation_not_used:  # the user asked for a presentation: say why this is not it
            err.write(for_terminal(f"[final answer: the winning answer ({result.winner_label}) as written, not its "
                                   f"presentation: {result.presentation_not_used}]") + "\n")
        if show_answer:
            out.write(for_terminal(result.final_answer.rstrip("\n")) + "\n")
    else:
        err.write(for_terminal(f"massgen: no answer: {result.reason}") + "\n")
    if show_logs:
        err.write(f"logs: {result.log_dir}\n")
    out.flush()
    return code


def run_question(
    config: TeamConfig,
    question: str,
    *,
    automation: bool,
    timeout: float | None = None,
    out: IO[str] | None = None,
    err: IO[str] | None = None,
    resume: ResumePoint | None = None,
    options: RunOptions | None = None,
) -> int:
    out = out or sys.stdout
    options = options or RunOptions()
    err = err or sys.stderr
    subscribers: list[Subscriber] = options.subscribers(out)
    if not automation and options.shows_progress:
        subscribers.append(ProgressDisplay(err, live=err.isatty() and options.display == "rich"))
    try:  # the log directory is made here: one that cannot be is the user's to fix, not a traceback
        team = new_team(config, question, history=resume.history if resume else options.history, timeout=timeout,
                        subscribers=subscribers, resume=resume, log_base=options.log_base())
    except (ConfigError, ResumeError) as exc:  # ResumeError: the run is going in another process (its lock)
        err.write(for_terminal(f"massgen: {exc}") + "\n")
        return exit_codes.CONFIG_ERROR
    if resume is not None:  # said once this process holds the run: a refused resume says only why
        _say_resuming(resume, err)
    options.started(team)
    # With --stream-events stdout is the event stream: the automation lines go to stderr, as upstream's do.
    lines_out = err if options.stream_events else out
    if automation:
        with unless_reader_gone(lines_out):
            automation_lines.print_start(team.log_dir, question, lines_out)
    try:
        team.start()
    except ConfigError as exc:
        err.write(f"massgen: {exc}\n")
        return exit_codes.CONFIG_ERROR
    for line in team.warnings:  # said once, and recorded in the trace (RunStarted.warnings)
        err.write(f"massgen: warning: {line}\n")
    interrupts = 0
    while True:
        try:
            with signals.as_interrupts():  # SIGTERM and SIGHUP take the Ctrl-C path
                result = team.wait()
            break
        except KeyboardInterrupt as exc:
            with signals.held():  # another Ctrl-C meanwhile must not cut these lines short
                interrupts += 1
                if interrupts == 1:
                    err.write("\ninterrupted: stopping the team and keeping the best answer so far "
                              "(Ctrl-C again to stop waiting)\n")
                    team.cancel(f"interrupted by {signals.describe(exc)}")
                    continue
                err.write(f"\nstopped waiting; logs so far: {team.log_dir}\n")
                if automation:  # a script still gets every line it parses
                    automation_lines.print_abandoned(
                        f"stopped waiting after {signals.describe(exc)} twice; the team was still stopping "
                        "(its logs so far are in LOG_DIR)", lines_out)
                return exit_codes.INTERRUPTED
    with signals.held():
        # The file first, so that --automation names it only once it is written; a reader of stdout or
        # stderr that left ends only the printing: the session turn and the clean-up still happen.
        written = options.write_output(result, err)
        with unless_reader_gone(lines_out if automation else out, err):
            print_result(result, automation, lines_out if automation else out, err, show_logs=not options.no_logs,
                         show_answer=not options.stream_events, agents=len(config.agents), output_file=written)
        with unless_reader_gone(out, err):
            options.finished(result, out, err)
    return exit_codes.for_status(result.status)


def run_resumed(config: TeamConfig, point: ResumePoint, *, automation: bool, timeout: float | None) -> int:
    """``--resume``: the new attempt, once this process holds the run (``run_question`` says what it starts from)."""
    return run_question(config, point.question, automation=automation, timeout=timeout, resume=point)


def _say_resuming(point: ResumePoint, err: IO[str]) -> None:
    """What the trace held and what the new attempt starts from."""
    for note in point.lineage:  # a later attempt that stopped before it recorded its start
        err.write(for_terminal(f"massgen: note: {note}") + "\n")
    for note in point.notes:
        err.write(for_terminal(f"massgen: {point.log_dir}/trace.jsonl: {note}") + "\n")
    if point.finished_status is not None:
        err.write(for_terminal(f"massgen: note: {point.log_dir} had finished ({point.finished_status}); "
                               "the new attempt continues from its last state") + "\n")
    state = point.state
    mid_turn = sum(1 for a in state.agents.values() if a.replay and not a.voted and a.status == "live")
    err.write(f"massgen: resuming with {len(state.answers)} earlier answers, {len(state.votes)} votes of the current "
              f"round, {state.model_calls} model calls already made"
              + (f", {mid_turn} agents redoing their turn from recorded calls" if mid_turn else "") + "\n")


def run(resolved: RunConfig, question: str, config: TeamConfig) -> int:
    """``massgen "question"`` on the line display (or none): the one-shot flags as ``RunOptions``."""
    from massgen.cli import display

    request = resolved.request
    note = display.note_without_terminal(request)
    if note:
        print(note, file=sys.stderr)
    unsaved: list[str] = []  # why the session turn was not saved, once the run has ended
    options = _run_options(resolved, question, unsaved)
    problem = options.output_file_problem()
    if problem is not None:  # before the run: its answer must have somewhere to go
        print(for_terminal(f"massgen: {problem}"), file=sys.stderr)
        return exit_codes.CONFIG_ERROR
    if not config.ui.logging_enabled and not (request.automation or request.debug):
        options.no_logs = True  # upstream's ui.logging_enabled: false, as --no-logs
    code = run_question(config, question, automation=request.automation,
                        timeout=request.orchestrator_timeout, options=options)
    if unsaved and code == exit_codes.SUCCESS:  # the answer is printed, but the session lacks the turn (said)
        return exit_codes.CONFIG_ERROR
    return code


def _run_options(resolved: RunConfig, question: str, unsaved: list[str]) -> RunOptions:
    """The one-shot flags as ``RunOptions``; a session's turns are its history, and the turn is stored (why
    it could not be goes to ``unsaved``)."""
    from massgen.cli import display

    request, session = resolved.request, resolved.session
    options = RunOptions(stream_events=request.stream_events, debug=request.debug, no_logs=request.no_logs,
                         output_file=Path(request.output_file) if request.output_file else None,
                         display=display.line_mode(request))
    if session is not None:
        options.history = session.history()
        asked = request.question or question  # as typed (stored before any escaping), as sessions always were
        options.on_result = lambda result: _store_turn(session, asked, result, keep_log_dir=not request.no_logs,
                                                       unsaved=unsaved)
    return options


def _store_turn(session: Session, question: str, result: RunResult, *, keep_log_dir: bool,
                unsaved: list[str]) -> None:
    """The turn into its session; one that cannot be saved is said, and the run then exits 1 (docs/flags.md):
    a script must not take the conversation as stored."""
    from massgen import SessionError

    try:
        session.add_turn(question, result, keep_log_dir=keep_log_dir)
    except (SessionError, OSError) as exc:
        unsaved.append(str(exc))
        print(for_terminal(f"massgen: the turn was not saved to session {session.id}: {exc}"), file=sys.stderr)
        return
    print(f"session: {session.id} (turn {len(session.turns)}; continue with --session-id {session.id} "
          "or --continue)", file=sys.stderr)
