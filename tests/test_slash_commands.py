"""One description of the slash commands, for the line REPL and the terminal UI.

The terminal UI's table is its screen views in front of the REPL's, so a REPL command is typed,
aliased, listed and completed the same way in both; a replay of a finished trace answers its
views from the trace and refuses, without writing anything, what needs a live session.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from support import run_team
from upstream_wheel import upstream_package

from massgen import LogProjection
from massgen.cli.repl.commands import COMMANDS as REPL_COMMANDS
from massgen.cli.repl.commands import run_command
from massgen.cli.repl.views import events_text, trace_text
from massgen.cli.slash_commands import REPLAY_REFUSAL, SCREEN_ONLY, UNOFFERED, parse_line
from massgen.cli.tui.app import TuiApp
from massgen.cli.tui.commands import (
    COMMANDS,
    INSPECT_USAGE,
    NO_TURN_YET,
    SCREEN_COMMANDS,
    agent_commands,
    command_names,
    run_screen_command,
)
from massgen.configs import load_config
from massgen.logs import read_trace


def test_a_line_is_read_the_same_way_in_both_aliases_and_case_folded() -> None:
    assert parse_line("/KILL  agent2") == ("kill", " agent2")
    assert parse_line("  /stop") == ("cancel", "")
    assert parse_line("/q") == ("quit", "")
    assert parse_line("/answernow now") == ("answer-now", "now")
    assert parse_line("/?") == ("help", "")


def test_every_repl_command_is_the_same_command_in_the_terminal_ui() -> None:
    for name, command in REPL_COMMANDS.items():
        assert COMMANDS[name] is (SCREEN_COMMANDS.get(name) or command), name
    assert list(COMMANDS)[:len(SCREEN_COMMANDS)] == list(SCREEN_COMMANDS)  # the screen's views listed first
    assert command_names() == {name: c.help for name, c in COMMANDS.items()}
    assert agent_commands() == {"inspect", "output", "zoom", "follow", "kill", "restart"}


def test_a_replay_answers_from_the_trace_and_refuses_what_needs_a_live_session(tmp_path: Path) -> None:
    config, _ = load_config("@examples/basic/scripted_three_agents")
    result = run_team(config, tmp_path, question="Which is larger, 9.11 or 9.9?")
    recorded = read_trace(result.log_dir)
    app = TuiApp(None, "replay", replay=recorded)

    refused = {"/kill agent1", "/restart agent2", "/note hi", "/answer-now", "/STOP", "/timeout 5", "/follow agent1",
               "/trace 3", "/events", "/context", "/reset"}
    for line in sorted(refused):
        assert run_screen_command(app, line)[1] == REPLAY_REFUSAL, line
    assert run_screen_command(app, "/stop") == ("/cancel", REPLAY_REFUSAL)
    assert {name for name, c in COMMANDS.items() if c.live_only} == {parse_line(line)[0] for line in refused}

    title, status = run_screen_command(app, "/status")
    assert title == "/status" and status.startswith("turn 1 · round") and "completed" in status
    assert result.final_answer is not None
    assert run_screen_command(app, "/inspect final")[1] == result.final_answer
    assert "agent_b" in run_screen_command(app, "/config")[1]  # the team the trace recorded
    assert "/kill <agent>" in run_screen_command(app, "/help")[1]
    assert run_screen_command(app, "/nonsense") == ("command", "unknown command /nonsense; /help lists them")
    assert read_trace(result.log_dir) == recorded  # nothing was sent to anyone


def test_events_and_trace_wrap_at_words_to_the_terminal_and_lose_no_word(tmp_path: Path) -> None:
    config, _ = load_config("@examples/basic/scripted_three_agents")
    result = run_team(config, tmp_path, question="Which is larger, 9.11 or 9.9?")
    trace = read_trace(result.log_dir)
    projection = LogProjection()
    for record in trace:
        projection.apply(record)
    for text, unwrapped in ((events_text(projection, width=72), events_text(projection)),
                            (trace_text(trace, 40, width=72), trace_text(trace, 40))):
        lines = text.splitlines()
        assert max(len(line) for line in lines) <= 72 and len(lines) > len(unwrapped.splitlines())
        assert "".join(text.split()) == "".join(unwrapped.split())  # nothing lost, nothing added
        # broken only between words: a word splits only when it is wider than the room for it (a path)
        words, kept = Counter(w for w in unwrapped.split() if len(w) <= 30), Counter(text.split())
        assert all(kept[word] >= n for word, n in words.items())
        # a continuation line is indented under the record's body, never flush with the next record
        assert all(line.startswith(("+", "#", " ")) for line in lines)


# What each of upstream's dispatch branches does, as our command of that meaning (None: not offered here).
UPSTREAM_MEANING = {
    "_handle_quit": "quit", "_handle_reset": "reset", "_handle_help": "help", "_handle_status": "status",
    "_handle_config": "config", "_handle_context": "context", "_handle_inspect": "inspect",
    "_handle_cancel": "cancel", "_handle_events": "events", "_handle_vote": "votes", "_handle_cost": "cost",
    "_handle_workspace": "workspace", "_handle_metrics": "metrics", "_handle_mcp": "mcp",
    "_handle_answers": "answers", "_handle_timeline": "timeline", "_handle_files": "workspace",
    "_handle_browser": None, "_handle_skills": None, "_handle_vim": "vi",
}


def upstream_commands() -> dict[str, str]:
    """Every name upstream MassGen 0.1.97's slash-command dispatcher answers -> the handler it runs,
    read from its source (``SlashCommandDispatcher.dispatch``), plus ``/output`` of its help text."""
    source = (upstream_package() / "frontend" / "interactive_controller.py").read_text(encoding="utf-8")
    dispatch = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef) and n.name == "dispatch")
    found: dict[str, str] = {}
    for branch in ast.walk(dispatch):
        if not isinstance(branch, ast.If) or not isinstance(branch.test, ast.Compare):
            continue
        names = [c.value for c in ast.walk(branch.test.comparators[0]) if isinstance(c, ast.Constant)]
        call = branch.body[0]
        if isinstance(call, ast.Return) and isinstance(call.value, ast.Call):
            handler = getattr(call.value.func, "attr", "")
            found.update({str(name).removeprefix("/"): handler for name in names})
    assert "/output [agent]" in source  # listed in upstream's help, though its dispatcher has no branch for it
    return {**found, "output": "output"}


def test_every_upstream_slash_command_and_alias_means_here_what_it_means_upstream(tmp_path: Path) -> None:
    upstream = upstream_commands()
    assert {"vote", "i", "h", "c", "w", "m", "p", "b", "clear", "v", "o", "t", "u", "k"} <= set(upstream)
    config, _ = load_config("@examples/basic/scripted_three_agents")
    result = run_team(config, tmp_path, question="Which is larger, 9.11 or 9.9?")
    app = TuiApp(None, "replay", replay=read_trace(result.log_dir))
    for name, handler in sorted(upstream.items()):
        meaning = UPSTREAM_MEANING.get(handler, handler)
        title, shown = run_screen_command(app, f"/{name}")
        if meaning is None:  # not offered: one line that says so and what to use instead
            assert title == "command" and shown == UNOFFERED[name] and "not offered" in shown, name
            assert "\n" not in shown
            continue
        assert parse_line(f"/{name}")[0] == meaning, name
        assert title == f"/{meaning}" and "unknown command" not in shown, (name, shown)
    assert run_screen_command(app, "/b")[1] == run_screen_command(app, "/answers")[1]
    assert "agent2.1 (agent_b, round 1)" in run_screen_command(app, "/b")[1]
    assert "agent1 (agent_a) -> agent2.1" in run_screen_command(app, "/vote")[1]
    assert "$" in run_screen_command(app, "/c")[1] and "logs:" in run_screen_command(app, "/w")[1]
    assert "/output [agent]" in run_screen_command(app, "/h")[1]
    assert "/b = /answers" in run_screen_command(app, "/h")[1]  # /help lists the aliases
    full = run_screen_command(app, "/output agent1")[1]
    assert full.startswith("agent1 (agent_a)") and "Comparing 9.11 and 9.9 digit by digit" in full


def test_inspect_answers_upstreams_arguments_in_upstreams_words(tmp_path: Path) -> None:
    source = (upstream_package() / "frontend" / "interactive_controller.py").read_text(encoding="utf-8")
    handler = next(n for n in ast.walk(ast.parse(source))
                   if isinstance(n, ast.FunctionDef) and n.name == "_handle_inspect")
    words = {str(c.value) for c in ast.walk(handler) if isinstance(c, ast.Constant) and isinstance(c.value, str)}
    assert {INSPECT_USAGE, NO_TURN_YET, "all"} <= words  # what upstream says, said the same
    assert run_screen_command(TuiApp(None, "no turn yet"), "/inspect")[1] == NO_TURN_YET
    config, _ = load_config("@examples/basic/scripted_three_agents")
    result = run_team(config, tmp_path, question="Which is larger, 9.11 or 9.9?")
    app = TuiApp(None, "replay", replay=read_trace(result.log_dir))
    current = run_screen_command(app, "/inspect")[1]
    assert current.startswith("turn 1: Which is larger, 9.11 or 9.9?") and "final answer (agent2.1" in current
    assert run_screen_command(app, "/i")[1] == run_screen_command(app, "/inspect 1")[1] == current
    assert "Which is larger, 9.11 or 9.9?" in run_screen_command(app, "/inspect all")[1]
    assert run_screen_command(app, "/inspect 2")[1] == "Turn 2 not found. Available: 1-1"  # upstream's words
    assert run_screen_command(app, "/inspect -1")[1] == INSPECT_USAGE
    assert run_screen_command(app, "/inspect agent2.1")[1].startswith("agent2.1 by agent_b")  # ours stays


def test_the_line_repl_names_where_a_screen_only_view_is() -> None:
    for name in SCREEN_ONLY:
        assert name in SCREEN_COMMANDS and name not in REPL_COMMANDS, name
    assert set(SCREEN_COMMANDS) - set(REPL_COMMANDS) - {"help", "status", "answers", "votes"} == set(SCREEN_ONLY)
    where = "/cost is a view of the full-screen display (massgen --display textual on a terminal)"
    assert run_command(None, "/c") == where  # type: ignore[arg-type]
    assert run_command(None, "/k") == UNOFFERED["k"]  # type: ignore[arg-type]
