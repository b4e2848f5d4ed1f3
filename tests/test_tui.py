"""The full-screen terminal UI, used as a person would: ``massgen`` on a real terminal (tmux),
keys typed into it, and the screen read back with capture-pane.

Each test checks what the screen showed and what the trace recorded. The teams are
scripted (no model, no key); ``slow`` streams a line and then thinks for 30 s in its
first incarnation, so steering lands while the turn runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from support import FACTOR, assert_trace_invariants, of_type, quick_and_slow, scripted, step
from tmux_screen import TmuxScreen, massgen_argv

from massgen.logs import read_trace

QUESTION = "Which is larger, 9.11 or 9.9?"


def slow_team(tmp_path: Path) -> Path:
    """``quick_and_slow`` as a config file for ``massgen --config``, its deadlines past slow's thinking."""
    config = {
        "agents": quick_and_slow(),
        "orchestrator": {"restart": {"backoff_base_seconds": 0.02, "backoff_max_seconds": 0.2}},
        "timeout_settings": {"orchestrator_timeout_seconds": 60 * FACTOR, "turn_timeout_seconds": 45 * FACTOR,
                             "idle_stream_timeout_seconds": 45 * FACTOR,
                             "straggler_grace_seconds": 45 * FACTOR},  # slow is steered, not left out
    }
    path = tmp_path / "slow_team.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def env(tmp_path: Path) -> dict[str, str]:
    return {"MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs"), "HOME": str(tmp_path)}


def turn_dirs(tmp_path: Path) -> list[Path]:
    return sorted(p.parent for p in (tmp_path / "logs").glob("**/trace.jsonl"))


@pytest.fixture
def screens() -> Iterator[list[TmuxScreen]]:
    opened: list[TmuxScreen] = []
    yield opened
    for screen in opened:
        screen.close()


def panel_rows(screen: str, width: int) -> list[str]:
    lines = screen.splitlines()
    assert all(len(line) <= width for line in lines), "a line is wider than the terminal"
    return lines


def test_a_three_agent_run_shows_a_panel_per_agent_the_votes_and_the_final_answer(
        tmp_path: Path, screens: list[TmuxScreen]) -> None:
    screen = TmuxScreen(tmp_path, massgen_argv("--config", "@examples/basic/scripted_three_agents", QUESTION),
                        env=env(tmp_path))
    screens.append(screen)
    shown = screen.expect("final answer (agent2.1, by agent_b)", "question>")
    for title in ("agent1 agent_a", "agent2 agent_b · winner", "agent3 agent_c"):
        assert title in shown
    assert "Comparing 9.11 and 9.9 digit by" in shown  # agent_a's streamed text
    assert "┆ Write both with two decimals" in shown  # agent_b's reasoning, marked as such
    assert "agent2 explains what I only stated" in shown  # agent_c's text before its vote
    assert "votes · round 3" in shown and "agent1 → agent2.1" in shown and "consensus: agent2" in shown
    assert "agent2   ██████████ 3" in shown  # the tally bar
    assert "9.9 is larger. Written with the same number of decimals" in shown
    assert "turn 1 · round 3 · finished" in shown and "calls 7" in shown

    screen.type("/votes")
    assert "tally: agent2 (agent_b) 3" in screen.expect("/votes · Esc closes")
    screen.type("/inspect agent2.1")
    assert "9.9 is larger: 9.9 = 9.90" in screen.expect("agent2.1 by agent_b")
    screen.type("/quit")
    assert screen.exit_code() == 0
    (log_dir,) = turn_dirs(tmp_path)
    trace = read_trace(log_dir)
    assert_trace_invariants(trace)
    finished = of_type(trace, "RunFinished")[0]["payload"]
    assert (finished["status"], finished["winner"]) == ("completed", "agent_b")
    assert "last answer (agent2.1): 9.9 is larger" in screen.err_file.read_text()


def test_a_note_kill_and_answer_now_show_on_screen_and_in_the_trace(
        tmp_path: Path, screens: list[TmuxScreen]) -> None:
    screen = TmuxScreen(tmp_path, massgen_argv("--config", str(slow_team(tmp_path))), env=env(tmp_path),
                        cwd=tmp_path)
    screens.append(screen)
    screen.expect("question>")
    screen.type("What is 2+2?")
    screen.expect("✔ agent1.1", "thinking it through", "turn 1 (note, or /command)>")

    screen.type("please show the working")  # a line typed while the team works is a note
    shown = screen.expect("note sent to every agent", "note: please show the working")
    assert "note to every agent: please" in shown  # the timeline

    screen.keys("Escape")
    screen.type("/kill agent2")
    shown = screen.expect("killed by the user", "kill requested for agent2",
                          "final answer (agent2.1, by slow)")
    assert "2+2=4, shown" in shown

    screen.type("And three times that?")
    screen.expect("turn 2 · round", "thinking it through", "✔ agent1.1")
    screen.type("/answer-now")
    shown = screen.expect("answer now: vote on the", "final answer (agent1.1, by quick)")
    assert "asked the team to wrap up" in shown
    screen.type("/quit")
    assert screen.exit_code() == 0

    first, second = (read_trace(d) for d in turn_dirs(tmp_path))
    assert_trace_invariants(first)
    notes = of_type(first, "SendNote")
    assert [n["payload"]["text"] for n in notes] == ["please show the working"]
    assert notes[0]["sender"] == "user#0" and notes[0]["payload"]["to"] is None
    kills = of_type(first, "KillAgent")
    assert len(kills) == 1 and kills[0]["payload"]["name"] == "slow"
    assert of_type(first, "AgentRestarting")[0]["payload"]["reason"] == "killed by user"
    assert len(of_type(second, "AnswerNow")) == 1
    assert of_type(second, "RunFinished")[0]["payload"]["winner"] == "quick"


def test_every_panel_stays_readable_at_80x24_and_200x60(tmp_path: Path, screens: list[TmuxScreen]) -> None:
    screen = TmuxScreen(tmp_path, massgen_argv("--config", "@examples/basic/scripted_three_agents", QUESTION),
                        env=env(tmp_path))
    screens.append(screen)
    screen.expect("final answer (agent2.1, by agent_b)")
    for columns, rows in ((80, 24), (120, 36), (200, 60)):
        screen.resize(columns, rows)
        shown = screen.expect("votes · round 3", "timeline", "final answer", "question>", width=columns)
        lines = panel_rows(shown, columns)
        assert len(lines) <= rows
        for label, agent, state in (("agent1", "agent_a", "done"), ("agent2", "agent_b", "winner"),
                                    ("agent3", "agent_c", "done")):
            # narrow panels name the agent on their first line, wide ones in the title
            assert f"{label} · {state}" in shown or f"{label} {agent} · {state}" in shown, shown
            assert agent in shown, f"{agent} not readable at {columns}x{rows}:\n{shown}"
        assert "9.9 is larger. Written" in shown  # the final answer's text
        assert "consensus: agent2" in shown or "agent2   █" in shown  # the votes panel's content
        votes = [f"{voter} → agent2.1" for voter in ("agent1", "agent2", "agent3")]
        if columns >= 110:  # a side column: the votes box grows until every vote of the round is in it
            assert all(vote in shown for vote in votes), shown
        else:  # a strip under the panels: a line a vote, and what is cut off is said, not dropped silently
            assert "more above: /votes" in shown or all(vote in shown for vote in votes), shown
        assert "twice quits" in shown.splitlines()[-2]  # the key hints: whole ones only, never half of one
    screen.type("/quit")
    assert screen.exit_code() == 0


def test_a_replay_of_the_finished_trace_draws_the_same_final_screen(
        tmp_path: Path, screens: list[TmuxScreen]) -> None:
    live = TmuxScreen(tmp_path, massgen_argv("--config", "@examples/basic/scripted_three_agents", QUESTION),
                      env=env(tmp_path), name="live")
    screens.append(live)
    live_screen = live.expect("final answer (agent2.1, by agent_b)", "question>").split("\n")
    live.type("/quit")
    assert live.exit_code() == 0
    (log_dir,) = turn_dirs(tmp_path)

    replay = TmuxScreen(tmp_path, massgen_argv("logs", "show", str(log_dir), "--tui"), env=env(tmp_path),
                        name="replay")
    screens.append(replay)
    replay_screen = replay.expect("final answer (agent2.1, by agent_b)", "replay>").split("\n")
    # Everything above the command line is the same screen; only the prompt says which it is.
    prompt_row = next(i for i, line in enumerate(live_screen) if line.startswith("question>"))
    assert replay_screen[prompt_row].startswith("replay>")
    assert replay_screen[:prompt_row] == live_screen[:prompt_row]
    replay.type("/kill agent1")
    replay.expect("this is a replay: nothing can be steered")
    replay.type("/quit")
    assert replay.exit_code() == 0


def test_without_a_terminal_the_full_screen_never_starts(tmp_path: Path) -> None:
    import subprocess

    done = subprocess.run(massgen_argv("--config", "@examples/basic/scripted_three_agents", "--display", "textual",
                                       QUESTION), capture_output=True, text=True, env={**__import__("os").environ,
                                                                                        **env(tmp_path)},
                          timeout=60 * FACTOR, stdin=subprocess.DEVNULL)
    assert done.returncode == 0
    assert done.stdout.startswith("9.9 is larger")
    assert "--display textual needs a terminal" in done.stderr
    assert "agent_b answered" not in done.stderr or "\x1b[?1049h" not in done.stderr  # no alternate screen


def streaming_crowd(tmp_path: Path, agents: int = 64, deltas: int = 40) -> Path:
    """``agents`` scripted agents streaming ``deltas`` words each, then answering and voting for agent1;
    the last one streams without end in its first incarnation, so the run is still streaming when the
    test's keys arrive, and only finishes once the test kills it."""
    def words(i: int) -> list[dict[str, object]]:
        steps: list[dict[str, object]] = []
        for n in range(deltas):
            steps += [step(text=f"w{n} " + ("\n" if n % 10 == 9 else "")), step(delay=0.02)]
        return steps

    vote = [step(vote="agent1", reason="the first one")]
    crowd = [scripted(f"crowd_{i}", [*words(i), step(new_answer=f"answer of crowd_{i}")], vote)
             for i in range(1, agents)]
    endless = scripted(f"crowd_{agents}", [step(fault="stream_forever", incarnations=[1]),
                                           step(new_answer=f"answer of crowd_{agents}")], vote)
    config = {
        "agents": [*crowd, endless],
        "orchestrator": {"restart": {"backoff_base_seconds": 0.02, "backoff_max_seconds": 0.2}},
        "timeout_settings": {"orchestrator_timeout_seconds": 300 * FACTOR, "turn_timeout_seconds": 240 * FACTOR,
                             "idle_stream_timeout_seconds": 120 * FACTOR,
                             "straggler_grace_seconds": 240 * FACTOR},  # the endless one is killed, not left out
    }
    path = tmp_path / "crowd.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def test_keys_act_while_64_agents_stream_and_the_final_screen_keeps_up_with_the_run(
        tmp_path: Path, screens: list[TmuxScreen]) -> None:
    screen = TmuxScreen(tmp_path, massgen_argv("--config", str(streaming_crowd(tmp_path)), "Count with me"),
                        columns=200, rows=60, env=env(tmp_path), cwd=tmp_path)
    screens.append(screen)
    screen.expect("agents 1-12 of 64", "turn 1 (note, or /command)>")

    # Shift-Tab from the first panel pages to the last agent, still streaming; F2 zooms it, Esc un-zooms.
    screen.keys("BTab")
    shown = screen.expect("▶ agent64 crowd_64 · streaming", "agents 61-64 of 64")
    assert "and so on" in shown
    screen.keys("F2")
    screen.expect("agents 64-64 of 64", "▶ agent64 crowd_64 · streaming")
    screen.keys("Escape")
    screen.expect("agents 61-64 of 64")
    screen.type("/status")  # a command typed while the crowd streams answers at once
    shown = screen.expect("| /status · ", f"{'agent2':<8} {'crowd_2':<16}")
    assert "· finished" not in shown and "and so on" in shown  # all of it while the run streamed

    screen.keys("Escape")
    screen.type("/kill agent64")
    # Once the run ends the screen shows its end within the usual wait, however much the crowd streamed.
    shown = screen.expect("final answer (agent1.1, by crowd_1)", "· finished", "question>")
    (log_dir,) = turn_dirs(tmp_path)
    trace = read_trace(log_dir)
    assert_trace_invariants(trace)
    finished = of_type(trace, "RunFinished")[0]["payload"]
    assert (finished["status"], finished["winner"]) == ("completed", "crowd_1")
    assert f"calls {finished['model_calls']} ·" in shown  # the header agrees with the trace's totals
    assert "▶ agent64 crowd_64 · done" in shown  # the focused panel's last state is the trace's
    kills = of_type(trace, "KillAgent")
    assert len(kills) == 1 and kills[0]["payload"]["name"] == "crowd_64"
    screen.type("/quit")
    assert screen.exit_code() == 0


# -- long text, a sign of life, and saying what happened (issue 38) ------------------------------------

LONG_ANSWER = "\n".join(f"line {n} of the long answer" for n in range(1, 41))


def write_team(tmp_path: Path, name: str, agents: list[dict[str, object]], **orchestrator: object) -> Path:
    config = {
        "agents": agents,
        "orchestrator": {"restart": {"backoff_base_seconds": 0.02, "backoff_max_seconds": 0.2}, **orchestrator},
        "timeout_settings": {"orchestrator_timeout_seconds": 60 * FACTOR, "turn_timeout_seconds": 45 * FACTOR,
                             "idle_stream_timeout_seconds": 45 * FACTOR, "straggler_grace_seconds": 45 * FACTOR},
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def box_text(screen: str, title: str) -> str:
    """The lines of the box whose top border holds ``title``, up to its bottom border."""
    lines = screen.splitlines()
    top = next(i for i, line in enumerate(lines) if title in line and "┌" in line)
    column = lines[top].index("┌")
    box: list[str] = []
    for line in lines[top + 1:]:
        if line[column:column + 1] == "└":
            break
        box.append(line[column:])
    return "\n".join(box)


def position(screen: str) -> tuple[int, int]:
    """The first and last line an output box shows, from its title ("lines 3-24 of 40")."""
    found = re.search(r"· lines (\d+)-(\d+) of \d+", screen)
    assert found is not None, screen
    return int(found.group(1)), int(found.group(2))


def long_answer_team(tmp_path: Path) -> Path:
    both = ["agent1", "agent2"]
    return write_team(tmp_path, "long", [
        {**scripted("long", [step(new_answer="the long one")],
                    [step(when_answers=both), step(vote="agent1", reason="it is complete")]), },
        scripted("short", [step(new_answer="short")],
                 [step(when_answers=both), step(vote="agent1", reason="it has every line")]),
    ], final_answer_strategy="winner_present")


def test_long_help_and_a_40_line_final_answer_scroll_to_their_last_line(
        tmp_path: Path, screens: list[TmuxScreen]) -> None:
    team = long_answer_team(tmp_path)
    team_data = yaml.safe_load(team.read_text())
    team_data["agents"][0]["backend"]["present"] = LONG_ANSWER
    team.write_text(yaml.safe_dump(team_data), encoding="utf-8")
    screen = TmuxScreen(tmp_path, massgen_argv("--config", str(team), "Write forty lines"), columns=160, rows=48,
                        env=env(tmp_path))
    screens.append(screen)
    # The box's last line is a needle too: a capture can fall between two writes of one redraw (seen once under
    # a loaded machine: the title and the prompt drawn, the box's end not yet).
    final = box_text(screen.expect("final answer (agent1.1, by long)", "question>",
                                   "more lines: F4 shows the whole answer"), "final answer (")
    assert "line 1 of the long answer" in final and "line 40 of the long answer" not in final
    assert "more lines: F4 shows the whole answer" in final

    # F4: the answer view; the page keys reach its last line, and the title says where the view is.
    screen.keys("F4")
    shown = screen.expect("final answer (agent1.1, by long) · completed", "lines 1-", "of 40 · PgUp/PgDn")
    assert "line 40 of the long answer" not in box_text(shown, "lines 1-")
    screen.keys("End")
    shown = screen.expect("-40 of 40 · PgUp/PgDn")
    assert "line 40 of the long answer" in box_text(shown, "-40 of 40")
    screen.keys("Home")
    shown = screen.expect("lines 1-")
    first, last = position(shown)
    screen.keys("PageDown")  # a page down: the view starts where the last one ended (or at the last page)
    shown = screen.expect("-40 of 40")
    down = position(shown)
    assert (down[0] > first and down[0] >= last - 1) or down[1] == 40
    screen.keys("Up")  # one line back
    shown = screen.expect(f"· lines {down[0] - 1}-{down[1] - 1} of 40")
    assert "line 40 of the long answer" not in box_text(shown, f"· lines {down[0] - 1}-")

    # /inspect final scrolls the same way.
    screen.keys("Escape")
    screen.type("/inspect final")
    screen.expect("/inspect · lines 1-")
    screen.keys("End")
    assert "line 40 of the long answer" in box_text(screen.expect("-40 of 40 · PgUp"), "/inspect")

    # /help is longer than its box: PgDn reaches its last line (the aliases), PgUp comes back.
    screen.keys("Escape")
    screen.type("/help")
    shown = screen.expect("/help · lines 1-", "Type a question and press Enter")
    assert "Aliases (upstream MassGen's too)" not in shown
    for _ in range(4):
        screen.keys("PageDown")
    shown = screen.expect("Aliases (upstream MassGen's too)", "/b = /answers")
    assert "Type a question and press Enter" not in shown
    screen.keys("Home")
    screen.expect("/help · lines 1-", "Type a question and press Enter")
    screen.keys("Escape")
    screen.type("/quit")
    assert screen.exit_code() == 0


def test_a_panel_shows_a_sign_of_life_while_its_model_works_on_a_tool_call_only_reply(
        tmp_path: Path, screens: list[TmuxScreen]) -> None:
    team = write_team(tmp_path, "mute", [
        scripted("quick", [step(new_answer="4")], [step(when_answers=["agent1", "agent2"]), step(vote="agent2")]),
        # streams nothing: 30 s on its model, then a reply of one tool call (its answer)
        scripted("mute", [step(delay=30, incarnations=[1]), step(new_answer="2+2=4")],
                 [step(when_answers=["agent2"]), step(vote="agent2", reason="mine")]),
    ])
    screen = TmuxScreen(tmp_path, massgen_argv("--config", str(team), "What is 2+2?"), env=env(tmp_path))
    screens.append(screen)
    panel = box_text(screen.expect("agent2 mute", "model working"), "agent2 mute")
    assert "no answer yet · 0 calls · " in panel and "model working" in panel
    # nothing arrives, yet the seconds count up
    later = box_text(screen.expect("model working 3s", timeout=30 * FACTOR), "agent2 mute")
    assert "model working 3s" in later
    screen.type("/kill agent2")
    shown = screen.expect("final answer (agent2.", "question>")
    assert "model working" not in shown  # no call is out once the run is over
    screen.type("/quit")
    assert screen.exit_code() == 0


def test_a_split_vote_says_how_it_was_decided_and_no_vote_is_withdrawn_that_was_never_cast(
        tmp_path: Path, screens: list[TmuxScreen]) -> None:
    everyone = ["agent1", "agent2", "agent3"]
    team = write_team(tmp_path, "split", [
        scripted(f"self_{n}", [step(new_answer=f"{n + 3}")],
                 [step(when_answers=everyone), step(vote=f"agent{n}", reason="mine")]) for n in (1, 2, 3)
    ])
    screen = TmuxScreen(tmp_path, massgen_argv("--config", str(team), "Pick a number"), env=env(tmp_path))
    screens.append(screen)
    shown = screen.expect("final answer (agent1.1, by self_1)", "question>")
    votes = " ".join(box_text(shown, "votes · round").replace("│", " ").split())
    assert "no majority (1-1-1): tie broken for agent1 by winner_rule support" in votes
    assert "consensus" not in shown
    screen.type("/votes")
    assert "no majority (1-1-1): tie broken for agent1" in screen.expect("/votes · Esc closes")
    screen.keys("Escape")
    screen.type("/timeline")
    timeline = screen.expect("/timeline · Esc closes")
    assert "round 3: no majority (1-1-1): tie broken for agent1 by winner_rule support" in timeline
    assert "round 1 begins (new answer agent" in timeline
    assert "withdrawn" not in timeline  # nobody had voted when the answers came
    screen.type("/quit")
    assert screen.exit_code() == 0


def test_a_turn_cancelled_before_any_answer_shows_why_it_has_none(
        tmp_path: Path, screens: list[TmuxScreen]) -> None:
    team = write_team(tmp_path, "idle", [
        scripted("slow", [step(text="thinking it through\n"), step(delay=30), step(new_answer="late")]),
    ])
    screen = TmuxScreen(tmp_path, massgen_argv("--config", str(team)), env=env(tmp_path))
    screens.append(screen)
    screen.expect("question>")
    screen.type("What is 2+2?")
    screen.expect("thinking it through", "turn 1 (note, or /command)>")
    screen.type("/cancel")
    final = box_text(screen.expect("no answer · interrupted", "question>"), "no answer · interrupted")
    assert "no answer (interrupted): cancelled by user (/cancel)" in final, final
    screen.type("/quit")
    assert screen.exit_code() == 0


def test_inspect_takes_upstreams_arguments_this_turn_a_turn_number_and_all(
        tmp_path: Path, screens: list[TmuxScreen]) -> None:
    """Upstream's ``/inspect`` shows the current turn, ``/inspect N`` turn N, ``/inspect all`` the turns.
    Before, no argument printed a usage line and ``/inspect 1`` answered "no agent '1'"."""
    screen = TmuxScreen(tmp_path, massgen_argv("--config", "@examples/basic/scripted_three_agents"),
                        env=env(tmp_path))
    screens.append(screen)
    screen.expect("question>")
    screen.keys("Escape")
    screen.type("/inspect")
    screen.expect("No turns completed yet. Complete a turn first.")
    screen.keys("Escape")
    screen.type(QUESTION)
    screen.expect("final answer (agent2.1, by agent_b)", "question>")
    screen.type("What is 2+2?")
    screen.expect("turn 2 · round", "finished", "question>")

    screen.type("/i")
    current = screen.expect("/inspect · Esc closes", "turn 2: What is 2+2?")
    assert "agent2   agent_b          winner" in current and "completed: the team converged" in current
    screen.keys("Escape")
    screen.type("/inspect 1")
    first = screen.expect("turn 1: Which is larger, 9.11 or 9.9?")
    assert "agent1   agent_a" in first and "no agent" not in first
    screen.keys("Escape")
    screen.type("/inspect all")
    listed = screen.expect("Use /inspect <turn_number> to view details")
    assert re.search(r"1 +Which is larger, 9.11 or 9.9\? +agent_b", listed)
    assert re.search(r"2 +What is 2\+2\? +agent_b", listed)
    screen.keys("Escape")
    screen.type("/inspect 3")
    screen.expect("Turn 3 not found. Available: 1-2")
    screen.keys("Escape")
    screen.type("/quit")
    assert screen.exit_code() == 0


def test_on_a_terminal_single_agent_followed_by_the_question_names_what_the_parser_did(
        tmp_path: Path, screens: list[TmuxScreen]) -> None:
    """``massgen --single-agent "question"`` on a real terminal: the question was read as the agent id, and
    the error says so (exit 64) instead of opening a session that fails on an unknown agent."""
    screen = TmuxScreen(tmp_path, massgen_argv("--config", "@examples/basic/scripted_three_agents",
                                               "--single-agent", QUESTION), env=env(tmp_path))
    screens.append(screen)
    assert screen.exit_code() == 64
    said = screen.err_file.read_text()
    assert f"--single-agent takes an agent id: {QUESTION!r} was read as the agent id" in said
    assert "Traceback" not in said


def panel_body_rows(screen: str, title: str) -> int:
    """How many lines of text the box titled ``title`` has room for."""
    return len(box_text(screen, title).splitlines())


def test_at_80x24_an_open_view_leaves_the_panels_their_lines_and_its_title_its_key_hints(
        tmp_path: Path, screens: list[TmuxScreen]) -> None:
    """Before, an open view (F4, /votes, /help) at 80x24 squeezed each agent's panel to one line, and the
    answer view's title was cut in its key hints ("· Pg"). Now the view takes the place of the final answer's
    box and the votes strip (Esc brings them back), and its title keeps its hints whole, cutting its head."""
    team = long_answer_team(tmp_path)
    team_data = yaml.safe_load(team.read_text())
    team_data["agents"][0]["backend"]["present"] = LONG_ANSWER
    team.write_text(yaml.safe_dump(team_data), encoding="utf-8")
    screen = TmuxScreen(tmp_path, massgen_argv("--config", str(team), "Write forty lines"), columns=80, rows=24,
                        env=env(tmp_path))
    screens.append(screen)
    screen.expect("final answer (agent1.1, by long)", "question>")
    screen.keys("F4")
    shown = screen.expect("· PgUp/PgDn · Esc closes", width=80)
    title = next(line for line in shown.splitlines() if "Esc closes" in line)
    assert re.search(r"final answer \(agent1\.1, by long\).* · 1-\d+/40 · PgUp/PgDn · Esc closes", title), title
    assert panel_body_rows(shown, "agent1 long") >= 4 and panel_body_rows(shown, "agent2 short") >= 4, shown
    assert len(shown.splitlines()) <= 24
    for command, title_part in (("/votes", "/votes · Esc closes"), ("/help", "/help · lines 1-")):
        screen.keys("Escape")
        screen.type(command)
        shown = screen.expect(title_part, width=80)
        assert panel_body_rows(shown, "agent1 long") >= 4, (command, shown)
    screen.keys("Escape")
    shown = screen.expect("votes · round 2", "final answer (agent1.1, by long) · completed")  # back, whole
    screen.type("/quit")
    assert screen.exit_code() == 0


def test_a_panel_counts_one_call_in_the_singular(tmp_path: Path, screens: list[TmuxScreen]) -> None:
    team = write_team(tmp_path, "decide", [scripted(f"solo_{n}", [step(new_answer="4")]) for n in (1, 2)],
                      after_first_answers="decide", final_answer_strategy="winner_reuse")
    screen = TmuxScreen(tmp_path, massgen_argv("--config", str(team), "What is 2+2?"), env=env(tmp_path))
    screens.append(screen)
    shown = screen.expect("final answer (agent1.1", "question>")
    assert "✔ agent1.1 · 1 call" in shown and "1 calls" not in shown, shown
    screen.type("/quit")
    assert screen.exit_code() == 0


def test_screen_commands_with_an_argument_they_do_not_take_say_their_usage(
        tmp_path: Path, screens: list[TmuxScreen]) -> None:
    """As ``/events abc`` does: ``/tools maybe`` opened the tool cards, ``/search`` alone did nothing and
    ``/timeline abc`` showed the whole timeline, each without a word."""
    screen = TmuxScreen(tmp_path, massgen_argv("--config", "@examples/basic/scripted_three_agents"), env=env(tmp_path))
    screens.append(screen)
    screen.expect("question>")
    for command, usage in (("/tools maybe", "usage: /tools [open|closed]"), ("/search", "usage: /search TEXT"),
                           ("/timeline abc", "usage: /timeline [N]"), ("/timeline 0", "usage: /timeline [N]"),
                           ("/events abc", "usage: /events [N]")):
        screen.type(command)
        screen.expect(usage)
        screen.keys("Escape")
    screen.type("/quit")
    assert screen.exit_code() == 0


def test_a_second_ctrl_c_with_no_turn_running_quits_with_exit_4_as_the_line_repl_does(
        tmp_path: Path, screens: list[TmuxScreen]) -> None:
    """docs/interactive.md: Ctrl-C twice quits, exit code 4, whether a turn runs or not (the TUI said 0 when none
    did)."""
    screen = TmuxScreen(tmp_path, massgen_argv("--config", "@examples/basic/scripted_three_agents"), env=env(tmp_path))
    screens.append(screen)
    screen.expect("question>")
    screen.keys("C-c")
    screen.expect("Ctrl-C again, /quit or Ctrl-D leaves")
    screen.keys("C-c")
    assert screen.exit_code() == 4
