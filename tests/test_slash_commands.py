"""One description of the slash commands, for the line REPL and the terminal UI.

The terminal UI's table is its screen views in front of the REPL's, so a REPL command is typed,
aliased, listed and completed the same way in both; a replay of a finished trace answers its
views from the trace and refuses, without writing anything, what needs a live session.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from support import run_team

from massgen import LogProjection
from massgen.cli.repl.commands import COMMANDS as REPL_COMMANDS
from massgen.cli.repl.views import events_text, trace_text
from massgen.cli.slash_commands import REPLAY_REFUSAL, parse_line
from massgen.cli.tui.app import TuiApp
from massgen.cli.tui.commands import COMMANDS, SCREEN_COMMANDS, agent_commands, command_names, run_screen_command
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
    assert agent_commands() == {"inspect", "zoom", "follow", "kill", "restart"}


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
