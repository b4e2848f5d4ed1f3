"""The command line of the terminal UI: the REPL's commands, and the views only a screen has.

Read-only views (``/status``, ``/votes``, ``/answers``, ``/timeline``, ``/inspect``,
``/metrics``, ``/cost``, ``/workspace``, ``/mcp``, ``/history``) are computed from the
run state, so they work the same on a replay. Steering (``/kill``, ``/restart``,
``/answer-now``, ``/cancel``, ``/timeout``, ``/note``) goes through the REPL's commands:
one typed message to the supervisor per command, as the Web UI sends.

The screen's table is its views in front of the REPL's table (``COMMANDS``): one description
of each command (``cli/slash_commands.py``), read, run, listed and completed the same way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Protocol

from massgen.cli.repl.commands import COMMANDS as REPL_COMMANDS
from massgen.cli.repl.commands import ReplControl
from massgen.cli.slash_commands import Command, help_text, in_front, run_line
from massgen.cli.text import counted
from massgen.cli.tui.state import MAX_ENTRIES, MAX_ENTRY_CHARS, AgentState, RunState
from massgen.cli.tui.view import ViewChoices


class TuiControl(ReplControl, Protocol):
    """What the screen's commands may use: the REPL's view of the app, and the screen's."""

    view: ViewChoices
    replay: bool

    @property
    def state(self) -> RunState: ...

    @property
    def runs(self) -> list[RunState]: ...


def _agent(app: TuiControl, name: str) -> AgentState | str:
    name = name.strip()
    state = app.state
    found = state.agent_named(name)
    if found is None:
        known = ", ".join(f"{a.label}={a.agent}" for a in state.agents.values()) or "none yet"
        return f"no agent {name!r}; agents: {known}"
    return found


def cmd_status(app: TuiControl, args: str) -> str:
    state = app.state
    if not state.agents:
        return "no turn yet; type a question"
    lines = [f"turn {state.turn} · round {state.round} · {state.phase} · {state.elapsed():.1f}s"]
    for a in state.agents.values():
        lines.append(f"  {a.label:<8} {a.agent:<16} {a.state:<11} answers {' '.join(a.answers) or '-'}"
                     f"  voted {a.voted_for or '-'}  calls {a.calls}")
    if state.finished is not None:
        lines.append(f"  {state.finished.status}: {state.finished.reason}")
    return "\n".join(lines)


def cmd_votes(app: TuiControl, args: str) -> str:
    state = app.state
    lines = [f"{v.voter_label} ({v.voter}) -> {v.target_label}: {v.reason}" for v in state.votes]
    if not lines:
        lines.append(f"no votes in round {state.round}")
    if state.tally:
        lines.append("tally: " + ", ".join(f"{state.label_of(a)} ({a}) {n}" for a, n in state.tally.items()))
    if state.withdrawn_votes:
        lines.append(f"({state.withdrawn_votes} earlier votes withdrawn by newer answers)")
    if state.decision():
        lines.append(state.decision())
    return "\n".join(lines)


def cmd_answers(app: TuiControl, args: str) -> str:
    return "\n".join(f"{a.label} ({a.agent}, round {a.round}):\n    " + a.content.strip().replace("\n", "\n    ")
                     for a in app.state.answers) or "no answers yet"


def cmd_timeline(app: TuiControl, args: str) -> str:
    items = app.state.timeline
    text = args.strip()
    if text and not (text.isdigit() and int(text) > 0):
        return "usage: /timeline [N]"
    count = int(text) if text else len(items)
    return "\n".join(f"{i.at:7.2f}s  {i.text}" for i in items[-count:]) or "nothing has happened yet"


# Upstream MassGen's words for /inspect's arguments (frontend/interactive_controller.py, _handle_inspect).
INSPECT_USAGE = "Invalid turn number. Usage: /inspect [turn_number|all]"
NO_TURN_YET = "No turns completed yet. Complete a turn first."


def _turn_outputs(run: RunState) -> str:
    """One turn's outputs, as upstream's ``/inspect`` shows the current turn: the question, each agent's
    answers, vote and calls, and how the turn ended."""
    lines = [f"turn {run.turn}: {run.question.strip()}", f"logs: {run.log_dir}"]
    for agent in run.agents.values():
        vote = f"voted {agent.voted_for}" if agent.voted_for else "no vote"
        lines.append(f"  {agent.label:<8} {agent.agent:<16} {agent.state:<11} answers {' '.join(agent.answers) or '-'}"
                     f"  {vote}  {counted(agent.calls, 'call')}")
    end = run.finished
    if end is None:
        lines.append(f"  still running: {run.phase}, round {max(run.round, 1)}")
    else:
        lines.append(f"  {end.status}: {end.reason}")
        if end.final_answer:
            lines.append(f"final answer ({end.winner_label}, by {end.winner}):\n{end.final_answer.strip()}")
    lines.append("/inspect LABEL shows an agent (agent2) or an answer (agent2.1) in full; /inspect all lists the turns")
    return "\n".join(lines)


def _all_turns(runs: list[RunState]) -> str:
    """Upstream's ``/inspect all``: every turn of the session, its task and winner."""
    lines = [f"{'turn':<6}{'task':<62}winner"]
    for run in runs:
        task = run.question.strip().replace("\n", " ")
        task = task if len(task) <= 60 else task[:57] + "..."
        winner = run.finished.winner if run.finished is not None else "(running)"
        lines.append(f"{run.turn:<6}{task:<62}{winner or '-'}")
    lines.append("Use /inspect <turn_number> to view details")
    return "\n".join(lines)


def cmd_inspect(app: TuiControl, args: str) -> str:
    """Upstream's arguments: ``/inspect`` (the current turn), ``/inspect N`` (turn N), ``/inspect all`` (the
    turns); and ours: ``/inspect agent2`` (an agent), ``/inspect agent2.1`` (an answer), ``/inspect final``."""
    name = args.strip()
    runs = [run for run in app.runs if run.agents or run.finished is not None] or [app.state]
    if not name or name.lower() == "all" or name.isdigit():
        if not (app.state.agents or app.state.finished is not None):
            return NO_TURN_YET
        if not name:
            return _turn_outputs(runs[-1])
        if name.lower() == "all":
            return _all_turns(runs)
        turn = [run for run in runs if run.turn == int(name)]
        if not turn:
            return f"Turn {int(name)} not found. Available: 1-{runs[-1].turn}"
        return _turn_outputs(turn[-1])
    if name.lstrip("-").isdigit():
        return INSPECT_USAGE
    state = app.state
    if name == "final":
        end = state.finished
        return "the run has not finished" if end is None else (end.final_answer or f"no answer: {end.reason}")
    answer = next((a for a in state.answers if a.label == name), None)
    if answer is not None:
        votes = [v for v in state.votes if v.target_label == name]
        extra = "".join(f"\n  vote from {v.voter_label}: {v.reason}" for v in votes)
        return f"{answer.label} by {answer.agent} (round {answer.round}):\n{answer.content.strip()}{extra}"
    found = _agent(app, name)
    if isinstance(found, str):
        return found
    lines = [f"{found.label} ({found.agent}) · {found.state} · incarnation {found.incarnation} · "
             f"{found.restarts} restarts", f"answers: {' '.join(found.answers) or 'none'}",
             f"vote: {found.voted_for or 'none'}" + (f" ({found.vote_reason})" if found.vote_reason else ""),
             f"model calls {found.calls} · tokens {found.tokens} · ${found.cost_usd:.4f} · "
             f"{found.chars} chars streamed"]
    tools = [e.card for e in found.entries if e.card is not None]
    for card in tools:
        lines.append(f"tool {card.summary}: args {json.dumps(card.arguments, ensure_ascii=False, default=str)}")
        if card.result is not None:
            lines.append(("  error: " if card.is_error else "  result: ") + card.result[:400])
    return "\n".join(lines)


def cmd_output(app: TuiControl, args: str) -> str:
    """``/output [agent]`` (upstream's "full agent output"): everything the panel holds, scrollable."""
    state = app.state
    if not state.agents:
        return "no turn yet; type a question"
    if args.strip():
        found = _agent(app, args)
        if isinstance(found, str):
            return found
    else:
        agents = list(state.agents.values())
        found = agents[min(app.view.focus, len(agents) - 1)]
    lines = [f"{found.label} ({found.agent}) · {found.state} · {found.calls} calls · {found.chars} chars streamed"]
    for entry in found.entries:
        if entry.kind == "text":
            lines.append(entry.text.strip("\n"))
        elif entry.kind == "reasoning":
            lines += ["┆ " + line for line in entry.text.strip("\n").split("\n")]
        elif entry.kind == "mark":
            lines.append("• " + entry.text)
        elif entry.card is not None:
            card = entry.card
            lines.append(f"⚙ {card.summary} args {json.dumps(card.arguments, ensure_ascii=False, default=str)}")
            if card.result is not None:
                lines.append(("  error: " if card.is_error else "  result: ") + card.result)
    if len(found.entries) >= MAX_ENTRIES or any(len(e.text) >= MAX_ENTRY_CHARS for e in found.entries):
        lines.append(f"(the screen keeps {MAX_ENTRIES} entries of {MAX_ENTRY_CHARS} characters; the trace "
                     f"has all of it: {state.log_dir or 'the run log'})")
    return "\n".join(lines)


def cmd_metrics(app: TuiControl, args: str) -> str:
    state = app.state
    lines = [f"{state.events} events · {state.calls} model calls · {state.input_tokens} in / "
             f"{state.output_tokens} out tokens · {len(state.answers)} answers · round {state.round} · "
             f"{state.elapsed():.1f}s"]
    for a in state.agents.values():
        lines.append(f"  {a.label:<8} calls {a.calls:<4} tokens {a.tokens:<8} streamed {a.chars:<8} chars "
                     f"restarts {a.restarts} tools {sum(1 for e in a.entries if e.card is not None)}")
    return "\n".join(lines)


def cmd_cost(app: TuiControl, args: str) -> str:
    state = app.state
    lines = [f"${state.cost_usd:.4f} for {state.calls} calls ({state.input_tokens} in, {state.output_tokens} out)"]
    lines += [f"  {a.label:<8} ${a.cost_usd:.4f}  ({a.calls} calls, {a.tokens} tokens)" for a in state.agents.values()]
    earlier = sum(r.cost_usd for r in app.runs[:-1])
    if earlier:
        lines.append(f"earlier turns of this session: ${earlier:.4f}")
    return "\n".join(lines)


def cmd_workspace(app: TuiControl, args: str) -> str:
    state = app.state
    lines = [f"logs: {state.log_dir or '(none yet)'}"]
    if state.snapshots:
        lines += [f"  {s.label:<10} {s.files} files, {s.bytes} bytes: {s.path}" for s in state.snapshots]
    else:
        lines.append("  no workspace snapshots (the agents have no workspaces, or no answer yet)")
    if state.log_dir:
        diff = Path(state.log_dir) / "context_changes.diff"
        if diff.is_file():
            lines.append(f"  context changes: {diff}")
    return "\n".join(lines)


def cmd_mcp(app: TuiControl, args: str) -> str:
    return "\n".join(f"{app.state.label_of(s.agent)} {s.server}: {s.state}"
                     + (f" ({', '.join(s.tools)})" if s.tools else "") + (f": {s.detail}" if s.detail else "")
                     for s in app.state.mcp.values()) or "no MCP servers in this run"


def cmd_history(app: TuiControl, args: str) -> str:
    runs = [r for r in app.runs if r.question]
    if not runs:
        return "no turns yet"
    lines = []
    for run in runs:
        end = run.finished
        outcome = f"{end.status}, {end.winner_label or 'no winner'}" if end else "running"
        answer = " ".join(((end.final_answer or "") if end else "").split())
        lines.append(f"turn {run.turn}: {run.question[:80]}  [{outcome}]"
                     + (f"\n    {answer[:160]}" if answer else ""))
    return "\n".join(lines)


def cmd_note(app: TuiControl, args: str) -> str:
    """``/note TEXT`` to every agent, ``/note @agent2 TEXT`` to one."""
    text = args.strip()
    to: str | None = None
    if text.startswith("@"):
        name, _, text = text[1:].partition(" ")
        agent = app.conversation.resolve_agent(name)
        if agent is None:
            return f"no agent {name!r}; agents: {', '.join(app.conversation.agent_ids)}"
        to = agent
    if not text.strip():
        return "usage: /note [@agent] TEXT"
    turn = app.current
    if turn is None or turn.team is None or not turn.running:
        return "no turn is running"
    note_id = turn.team.send_note(text.strip(), to)
    if note_id is None:
        return "the turn is ending; nothing was sent"
    return f"note sent to {to or 'every agent'}; each gets it before its next model call"


def cmd_zoom(app: TuiControl, args: str) -> str:
    if args.strip():
        found = _agent(app, args)
        if isinstance(found, str):
            return found
        app.view.focus = list(app.state.agents).index(found.agent)
        app.view.zoomed = True
    else:
        app.view.zoomed = not app.view.zoomed
    return ""


def cmd_search(app: TuiControl, args: str) -> str:
    if not args.strip():
        return "usage: /search TEXT (Esc stops searching)"
    app.view.search = args.strip()
    return ""


def cmd_tools(app: TuiControl, args: str) -> str:
    choice = args.strip()
    if choice not in ("", "open", "closed"):
        return "usage: /tools [open|closed]"
    app.view.open_tools = choice == "open" if choice else not app.view.open_tools
    return ""


def cmd_help(app: TuiControl, args: str) -> str:
    return help_text(("Type a question and press Enter; while a turn runs, a line of text is a note to every agent.",
                      "Keys: Tab/Shift-Tab switch panels, F2 zoom, PgUp/PgDn scroll (Home/End), Ctrl-F search,",
                      "F3 open or close tool cards, F4 the whole final answer, Esc closes this, Ctrl-C cancels "
                      "the turn (twice quits), Ctrl-D quits.",
                      "A long output like this one scrolls: PgUp/PgDn, ↑/↓ on an empty line, Home/End."),
                     COMMANDS.values())


SCREEN_COMMANDS: dict[str, Command[TuiControl]] = {c.name: c for c in (
    Command("status", "/status", "each agent's state, answers, vote and calls", cmd_status),
    Command("votes", "/votes", "the votes of the current round and the tally", cmd_votes),
    Command("answers", "/answers", "every answer so far, labelled agentN.M", cmd_answers),
    Command("timeline", "/timeline [N]", "what happened, in order (last N)", cmd_timeline),
    Command("inspect", "/inspect [N|all|LABEL]", "this turn's outputs, turn N's, all turns, or an agent "
            "(agent2), an answer (agent2.1) or final, in full",
            cmd_inspect, takes_agent=True),
    Command("output", "/output [agent]", "everything an agent's panel holds (the focused one's), scrollable",
            cmd_output, takes_agent=True),
    Command("metrics", "/metrics", "events, calls, tokens, streamed text and tools per agent", cmd_metrics),
    Command("cost", "/cost", "what the run cost, per agent", cmd_cost),
    Command("workspace", "/workspace", "the log directory and the answers' workspace snapshots",
            cmd_workspace),
    Command("mcp", "/mcp", "MCP servers: tools listed, failures, withdrawn", cmd_mcp),
    Command("history", "/history", "the turns of this session and their answers", cmd_history),
    Command("note", "/note [@agent] TEXT", "a note for every agent (or one), read at its next call",
            cmd_note, live_only=True),
    Command("zoom", "/zoom [agent]", "one panel on the whole screen (again: all panels)", cmd_zoom,
            takes_agent=True),
    Command("search", "/search TEXT", "highlight TEXT in every panel (Esc stops)", cmd_search),
    Command("tools", "/tools [open|closed]", "open or close the tool cards", cmd_tools),
    Command("help", "/help", "this list", cmd_help),
)}

COMMANDS: dict[str, Command[TuiControl]] = in_front(SCREEN_COMMANDS, REPL_COMMANDS)


def run_screen_command(app: TuiControl, line: str) -> tuple[str, str]:
    """Run one ``/command args`` line: (title, text to show); empty text shows nothing."""
    name, shown = run_line(app, line, COMMANDS, replay=app.replay)
    return (f"/{name}" if name else "command"), shown


def command_names() -> dict[str, str]:
    """Every command the line completes: name -> what it does."""
    return {name: c.help for name, c in COMMANDS.items()}


def agent_commands() -> set[str]:
    return {name for name, c in COMMANDS.items() if c.takes_agent}
