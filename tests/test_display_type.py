"""Upstream's ``ui.display_type`` picks the display, on a real terminal (tmux), as upstream MassGen 0.1.97
does: ``simple`` prints plain lines and exits, ``textual_terminal`` and ``rich_terminal`` (which upstream runs
as its Textual view) open the full screen; a flag (``--display``, ``--no-display``) wins over the config.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from tmux_screen import TmuxScreen, massgen_argv

from massgen.configs.loader import EXAMPLES_DIR

QUESTION = "Which is larger, 9.11 or 9.9?"


@pytest.fixture
def screens() -> Iterator[list[TmuxScreen]]:
    opened: list[TmuxScreen] = []
    yield opened
    for screen in opened:
        screen.close()


def team_with_display(tmp_path: Path, display_type: str, key: str = "display_type") -> Path:
    data = yaml.safe_load((EXAMPLES_DIR / "basic" / "scripted_three_agents.yaml").read_text())
    data["ui"] = {key: display_type, "logging_enabled": True}
    path = tmp_path / f"team_{display_type}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def env(tmp_path: Path) -> dict[str, str]:
    return {"MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs"), "HOME": str(tmp_path)}


@pytest.mark.parametrize("key", ["display_type", "type"])
def test_display_type_simple_prints_plain_lines_and_exits_on_a_terminal(
        tmp_path: Path, screens: list[TmuxScreen], key: str) -> None:
    screen = TmuxScreen(tmp_path, massgen_argv("--config", str(team_with_display(tmp_path, "simple", key)), QUESTION),
                        env=env(tmp_path))
    screens.append(screen)
    assert screen.exit_code() == 0
    shown = screen.text()
    assert "9.9 is larger" in shown
    assert "question>" not in shown and "votes · round" not in shown  # no full screen, no prompt
    assert "warning" not in screen.err_file.read_text()


@pytest.mark.parametrize("display_type", ["textual_terminal", "rich_terminal"])
def test_display_type_textual_and_rich_terminal_open_the_full_screen(
        tmp_path: Path, screens: list[TmuxScreen], display_type: str) -> None:
    screen = TmuxScreen(tmp_path, massgen_argv("--config", str(team_with_display(tmp_path, display_type)), QUESTION),
                        env=env(tmp_path))
    screens.append(screen)
    screen.expect("final answer (agent2.1, by agent_b)", "question>")


def test_a_display_flag_wins_over_the_config(tmp_path: Path, screens: list[TmuxScreen]) -> None:
    screen = TmuxScreen(tmp_path, massgen_argv("--config", str(team_with_display(tmp_path, "simple")),
                                               "--display", "textual", QUESTION), env=env(tmp_path))
    screens.append(screen)
    screen.expect("final answer (agent2.1, by agent_b)", "question>")


def test_strict_validate_passes_a_display_type_because_it_is_applied(tmp_path: Path) -> None:
    import subprocess
    import sys

    for display_type in ("simple", "rich_terminal", "textual_terminal", "none", "silent"):
        done = subprocess.run([sys.executable, "-m", "massgen.cli.main", "--strict", "--validate",
                               str(team_with_display(tmp_path, display_type))], capture_output=True, text=True,
                              timeout=60, cwd=tmp_path)
        assert done.returncode == 0 and "warning" not in done.stderr, (display_type, done.stderr)
