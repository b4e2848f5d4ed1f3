"""The terminal UI's reducer, without a terminal: view events of real runs folded into ``RunState``.

A live subscriber and a replay of the finished trace must reach the same state (the screen is a
function of it), and what each panel shows must follow from the trace alone.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from prompt_toolkit.utils import get_cwidth
from support import run_team, scripted, step, team_config

from massgen import LogProjection, Team
from massgen.cli.tui.layout import BoxControl, fit, grid_for, panel_lines, wrap, wrap_tail
from massgen.cli.tui.state import RunState, TraceFolder
from massgen.configs import load_config
from massgen.logs import read_trace


def _plain(state: RunState) -> dict[str, Any]:
    return asdict(state)


def test_a_live_subscriber_and_a_replay_of_the_trace_reach_the_same_state(tmp_path: Path) -> None:
    config, _ = load_config("@examples/basic/scripted_three_agents")
    live = TraceFolder()

    def subscriber(record: dict[str, Any], projection: LogProjection) -> None:
        live.on_record(record, projection)

    team = Team(config, "Which is larger, 9.11 or 9.9?", log_dir=tmp_path / "run", subscribers=[subscriber],
                tick_interval_s=0.02)
    result = team.run()
    replayed = TraceFolder().replay(read_trace(result.log_dir))
    assert _plain(live.state) == _plain(replayed)

    state = replayed
    assert [a.label for a in state.agents.values()] == ["agent1", "agent2", "agent3"]
    b = state.agents["agent_b"]
    assert (b.state, b.answers, b.voted_for) == ("winner", ["agent2.1"], "agent2.1")
    assert [e.kind for e in b.entries][:2] == ["mark", "reasoning"]  # its turn, then its reasoning
    assert "Write both with two decimals" in b.entries[1].text
    assert [v.voter for v in state.votes] == ["agent_b", "agent_a", "agent_c"]
    assert state.tally == {"agent_b": 3} and state.converged and state.leader == "agent_b"
    assert state.finished is not None and state.finished.status == "completed"
    assert state.finished.final_answer == result.final_answer
    assert (state.calls, state.phase, state.deadline_s) == (result.usage["model_calls"], "finished", 60.0)
    assert state.elapsed() == result.elapsed_s
    assert state.timeline[-1].text == "finished: completed, agent2.1 wins"


def test_tool_calls_become_cards_with_their_arguments_and_result(tmp_path: Path) -> None:
    config = team_config(
        scripted("reader", [step(tool="list_directory", args={"path": "."})], [step(new_answer="done")],
                 [step(vote="agent1", reason="only one")]),
        orchestrator={"workspaces": True},
    )
    result = run_team(config, tmp_path)
    state = TraceFolder().replay(read_trace(result.log_dir))
    cards = [e.card for e in state.agents["reader"].entries if e.card is not None]
    assert len(cards) == 1
    card = cards[0]
    assert card.name == "list_directory" and card.arguments == {"path": "."} and card.result is not None
    closed = panel_lines(state.agents["reader"], 40, 30, 0, "", open_tools=False)
    opened = panel_lines(state.agents["reader"], 40, 30, 0, "", open_tools=True)
    assert any("▸ ⚙ list_directory" in "".join(t for _s, t in line) for line in closed)
    assert any('"path": "."' in "".join(t for _s, t in line) for line in opened)


def test_a_panel_shows_its_newest_lines_and_scrolls_back_to_its_oldest() -> None:
    from massgen import ChunkEvent, RunStartedEvent

    state = RunState()
    state.apply(RunStartedEvent(run_id="r", question="q", log_dir=Path("/tmp"), agents={"a": "agent1"}), 1.0)
    for i in range(50):
        state.apply(ChunkEvent(agent="a", label="agent1", text=f"line {i}\n"), 1.0 + i)
    panel = state.agents["a"]
    text = ["".join(t for _s, t in line) for line in panel_lines(panel, 30, 5, 0, "", False)]
    assert text[-1] == "line 49" and len(text) == 5
    top = ["".join(t for _s, t in line) for line in panel_lines(panel, 30, 5, 10**6, "", False)]
    assert top[0] == "• new turn, sees no answers yet" or top[0] == "line 0"
    hits = panel_lines(panel, 30, 5, 0, "49", False)
    assert ("class:search", "49") in hits[-1]


def test_the_grid_pages_through_many_agents_and_zooms_on_one() -> None:
    assert grid_for(3, 0, 80, 10, False).columns == 3  # three panels side by side at 80 columns
    many = grid_for(64, 40, 160, 40, False)
    assert many.count < 64 and many.first <= 40 < many.first + many.count
    zoomed = grid_for(64, 40, 160, 40, True)
    assert (zoomed.first, zoomed.count) == (40, 1)
    assert all(len(line) <= 12 for line in wrap("a long line of words that must wrap somewhere", 12))


def test_a_panel_wraps_only_its_newest_paragraphs_and_shows_exactly_what_a_full_wrap_would() -> None:
    text = "\n".join(f"paragraph {i}: " + "word " * (i % 7 * 5) for i in range(400))
    full = wrap(text, 23)
    for need in (1, 5, 40):
        tail = wrap_tail(text, 23, need)
        assert len(tail) >= need and full[-len(tail):] == tail
    assert wrap_tail(text, 23, None) == full


def test_a_box_keeps_every_line_inside_its_border_at_its_exact_width() -> None:
    control = BoxControl(lambda w, h: [[("", "wide 漢字漢字漢字 text that runs past the edge")], [("", "short")]],
                         lambda: "a title far too long for so narrow a box")
    content = control.create_content(20, 5)
    rows = ["".join(t for _s, t, *_ in content.get_line(i)) for i in range(content.line_count)]
    assert content.line_count == 5
    assert all(get_cwidth(row) == 20 for row in rows), rows
    assert rows[0].startswith("┌| a title far") and rows[0].endswith("|┐")
    assert rows[1].startswith("│wide 漢字") and rows[1].endswith("│")
    assert rows[2] == "│short" + " " * 13 + "│"
    assert rows[4] == "└" + "─" * 18 + "┘"
    assert fit([("", "漢字")], 3) == [("", "漢"), ("", " ")]  # a wide character never straddles the edge


def test_the_decision_says_whether_every_vote_most_votes_or_the_judges_rule_chose_the_winner(
        tmp_path: Path) -> None:
    everyone = ["agent1", "agent2", "agent3"]

    def decided(votes: tuple[str, str, str], name: str) -> RunState:
        agents = [scripted(f"v{n}", [step(new_answer=f"{n + 3}")],
                           [step(when_answers=everyone), step(vote=target, reason="r")])
                  for n, target in enumerate(votes, 1)]
        result = run_team(team_config(*agents), tmp_path / name)
        return TraceFolder().replay(read_trace(result.log_dir))

    assert decided(("agent2", "agent2", "agent2"), "all").decision() == "consensus: agent2 (3 of 3 votes)"
    assert decided(("agent1", "agent1", "agent3"), "most").decision() == "majority: agent1 (2 of 3 votes)"
    split = decided(("agent1", "agent2", "agent3"), "split")
    assert split.decision() == "no majority (1-1-1): tie broken for agent1 by winner_rule support"
    assert [i.text for i in split.timeline if "withdrawn" in i.text] == []  # nobody had voted to withdraw
    assert all(a.calling_since is None for a in split.agents.values())  # no call is out once the run is over
