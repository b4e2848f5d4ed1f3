"""The session's slash commands. Steering ones become typed messages to the supervisor (through
``Team``'s control methods), so every one of them is in the trace; read-only ones read
the live projection of the current turn, or of the last one when none is running.
What a command is, and how a line is read, is ``cli/slash_commands.py`` (the terminal UI's too).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from typing import Protocol

from massgen import ConfigError, check_deadline, read_trace
from massgen.cli.repl.live import LiveTurn
from massgen.cli.repl.session import Conversation
from massgen.cli.repl.views import (
    answers_text,
    config_text,
    context_text,
    events_text,
    trace_text,
    votes_text,
)
from massgen.cli.slash_commands import Command, help_text, run_line


class ReplControl(Protocol):
    """What commands may use of the REPL application."""

    conversation: Conversation
    current: LiveTurn | None
    last: LiveTurn | None
    follow: str | None

    def toggle_vi(self) -> str: ...

    def request_quit(self) -> None: ...


def _turn(app: ReplControl) -> LiveTurn | None:
    return app.current or app.last


def _running(app: ReplControl) -> LiveTurn | None:
    turn = app.current
    return turn if turn is not None and turn.team is not None and turn.running else None


def _agent(app: ReplControl, args: str) -> str | tuple[None, str]:
    name = args.strip()
    if not name:
        return None, f"name an agent: {', '.join(app.conversation.agent_ids)}"
    agent = app.conversation.resolve_agent(name)
    if agent is None:
        known = ", ".join(f"{label}={a}" for label, a in app.conversation.labels().items())
        return None, f"no agent {name!r}; agents: {known}"
    return agent


# -- read-only --------------------------------------------------------------------------------


def cmd_status(app: ReplControl, args: str) -> str:
    turn = _turn(app)
    if turn is None:
        return f"no turn yet · {len(app.conversation.agent_ids)} agents · /config shows them"
    state = "running" if turn.running else f"finished: {turn.result.status if turn.result else '?'}"
    lines = [f"turn {turn.number} ({state}): {turn.question[:100]}", *turn.agent_lines(), "  " + turn.summary()]
    if turn.result is not None:
        lines.append(f"  {turn.result.reason}")
    return "\n".join(lines)


def _projection_view(app: ReplControl, render: Callable[[LiveTurn], str]) -> str:
    turn = _turn(app)
    if turn is None or turn.projection is None:
        return "no turn has started yet"
    return render(turn)


def cmd_answers(app: ReplControl, args: str) -> str:
    return _projection_view(app, lambda t: answers_text(t.projection) if t.projection else "")


def cmd_votes(app: ReplControl, args: str) -> str:
    return _projection_view(app, lambda t: votes_text(t.projection) if t.projection else "")


def _count(args: str, default: int) -> int | None:
    text = args.strip()
    if not text:
        return default
    return int(text) if text.isdigit() and int(text) > 0 else None


def cmd_events(app: ReplControl, args: str) -> str:
    count = _count(args, 0)
    if count is None:
        return "usage: /events [N]"
    width = shutil.get_terminal_size().columns
    return _projection_view(app, lambda t: events_text(t.projection, count or None, width) if t.projection else "")


def cmd_trace(app: ReplControl, args: str) -> str:
    count = _count(args, 10)
    if count is None:
        return "usage: /trace [N]"
    turn = _turn(app)
    if turn is None or turn.team is None:
        return "no turn has started yet"
    return trace_text(read_trace(turn.team.log_dir), count, shutil.get_terminal_size().columns)


def cmd_follow(app: ReplControl, args: str) -> str:
    if args.strip() in ("", "off", "none"):
        app.follow = None
        if app.current is not None:
            app.current.set_follow(None)
        return "following no agent"
    found = _agent(app, args)
    if isinstance(found, tuple):
        return found[1]
    app.follow = found
    if app.current is not None:
        app.current.set_follow(found)
    return f"following {found}: its streamed text is shown as it arrives (/follow off to stop)"


def cmd_config(app: ReplControl, args: str) -> str:
    return config_text(app.conversation.config, app.conversation.source, app.conversation.timeout)


def cmd_context(app: ReplControl, args: str) -> str:
    root = app.conversation.root
    where = f"\nsession logs: {root}" if root else ""
    return context_text(app.conversation.history) + where


def cmd_reset(app: ReplControl, args: str) -> str:
    if _running(app):
        return "a turn is running; /cancel it or wait, then /reset"
    dropped = app.conversation.reset()
    return f"context cleared ({dropped} earlier turn{'s' if dropped != 1 else ''} dropped); logs are kept"


def cmd_help(app: ReplControl, args: str) -> str:
    return help_text(("Type a question to run the team on it; earlier answers are context for the next.",
                      'Multi-line: paste it, start with """ and end with """, or Esc then Enter for a new line.',
                      "Ctrl-C during a turn cancels it (keeping the best answer so far); twice quits."),
                     COMMANDS.values())


def cmd_vi(app: ReplControl, args: str) -> str:
    return app.toggle_vi()


def cmd_quit(app: ReplControl, args: str) -> str:
    app.request_quit()
    return "stopping the running turn and writing its logs..." if _running(app) else "bye"


# -- steering: each one is a message to the supervisor, so it is in the trace ----------------------


def _steer(app: ReplControl, action: Callable[[LiveTurn], bool], done: str) -> str:
    turn = _running(app)
    if turn is None:
        return "no turn is running"
    return done if action(turn) else "the turn is ending; nothing was sent"


def cmd_answer_now(app: ReplControl, args: str) -> str:
    return _steer(app, lambda t: t.team is not None and t.team.answer_now(),
                  "asked the team to wrap up: vote on the answers there are, then present")


def cmd_cancel(app: ReplControl, args: str) -> str:
    def cancel(turn: LiveTurn) -> bool:
        turn.cancel_requested = True
        return turn.team is not None and turn.team.cancel("cancelled by user (/cancel)")

    return _steer(app, cancel, "cancelling; the best answer so far will be kept")


def cmd_timeout(app: ReplControl, args: str) -> str:
    try:
        seconds = float(args.strip())
    except ValueError:
        return "usage: /timeout <seconds>"
    try:
        check_deadline(seconds, "/timeout")
    except ConfigError as error:
        return str(error)
    if _running(app) is None:
        app.conversation.timeout = seconds
        return f"the next turns get a run deadline of {seconds:g} s"
    return _steer(app, lambda t: t.team is not None and t.team.set_timeout(seconds),
                  f"the run deadline is now {seconds:g} s after the turn started")


def cmd_kill(app: ReplControl, args: str) -> str:
    found = _agent(app, args)
    if isinstance(found, tuple):
        return found[1]
    return _steer(app, lambda t: t.team is not None and t.team.kill_agent(found),
                  f"killing {found}; the supervisor restarts it under its restart policy")


def cmd_restart(app: ReplControl, args: str) -> str:
    found = _agent(app, args)
    if isinstance(found, tuple):
        return found[1]
    return _steer(app, lambda t: t.team is not None and t.team.restart_agent(found), f"restarting {found}")


# live_only: what a replay in the terminal UI refuses: it has no team to steer and no conversation to read
# (its /config is the team the trace recorded).
COMMANDS: dict[str, Command[ReplControl]] = {c.name: c for c in (
    Command("status", "/status", "each agent's state, the vote tally, time, calls and tokens", cmd_status),
    Command("answers", "/answers", "every answer so far, labelled agentN.M", cmd_answers),
    Command("votes", "/votes", "the votes of the current round and the tally", cmd_votes),
    Command("events", "/events [N]", "the coordination timeline (last N events)", cmd_events, live_only=True),
    Command("trace", "/trace [N]", "the last N trace records (default 10)", cmd_trace, live_only=True),
    Command("follow", "/follow <agent|off>", "stream one agent's text as it arrives", cmd_follow,
            takes_agent=True, live_only=True),
    Command("answer-now", "/answer-now", "wrap up: vote on the existing answers and present", cmd_answer_now,
            live_only=True),
    Command("cancel", "/cancel", "stop the turn, keep the best answer so far", cmd_cancel, live_only=True),
    Command("timeout", "/timeout <seconds>", "change the run deadline (or the next turns')", cmd_timeout,
            live_only=True),
    Command("kill", "/kill <agent>", "kill an agent of the running team (it is restarted)", cmd_kill,
            takes_agent=True, live_only=True),
    Command("restart", "/restart <agent>", "restart an agent of the running team", cmd_restart,
            takes_agent=True, live_only=True),
    Command("config", "/config", "the team: agents, backends, deadlines", cmd_config),
    Command("context", "/context", "the earlier turns the next question will see", cmd_context, live_only=True),
    Command("reset", "/reset", "forget earlier turns (start a new conversation)", cmd_reset, live_only=True),
    Command("vi", "/vi", "switch between vi and Emacs key bindings", cmd_vi),
    Command("help", "/help", "this list", cmd_help),
    Command("quit", "/quit", "leave (a running turn is cancelled, its logs completed)", cmd_quit),
)}


def run_command(app: ReplControl, line: str) -> str:
    """Run one ``/command args`` line and return what to show."""
    return run_line(app, line, COMMANDS)[1]
