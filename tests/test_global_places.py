"""Keys and configs where upstream MassGen 0.1.97 keeps them: ``~/.massgen/.env``, ``~/.config/massgen/.env``,
``./configs/.env`` and ``./.env`` (``massgen/cli/env.py``), named configs in ``~/.config/massgen/agents/``
(``cli/config_loading.py``). Each test runs ``massgen`` as a user would, with a HOME of its own and no key in
the environment; a key is seen by the loopback server it is sent to.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from wire.team_chat import TeamChatServer

from massgen.cli.setup import KEY_NAMES
from massgen.configs.loader import EXAMPLES_DIR

QUESTION = "What is 2+2?"


def massgen(*args: str, home: Path, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in KEY_NAMES and k != "XDG_CONFIG_HOME"}
    env.update(HOME=str(home), MASSGEN_LOG_BASE_DIR=str(home / "logs"))
    return subprocess.run([sys.executable, "-m", "massgen.cli.main", *args], capture_output=True, text=True,
                          env=env, timeout=timeout, cwd=cwd)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "project").mkdir()
    return tmp_path / "project"


def grok_team(project: Path, url: str) -> Path:
    """One agent of a keyed provider type (grok: XAI_API_KEY), pointed at the loopback server."""
    path = project / "team.yaml"
    path.write_text(yaml.safe_dump({
        "agents": [{"id": "solo", "backend": {"type": "grok", "model": "healthy", "base_url": url + "/v1"}}],
        "orchestrator": {"final_answer_strategy": "winner_reuse"},
    }))
    return path


def bearer_seen(server: TeamChatServer) -> set[str]:
    return {r.headers.get("authorization", "") for r in server.requests}


@pytest.mark.parametrize("place", [".massgen/.env", ".config/massgen/.env"])
def test_a_key_in_a_global_dotenv_reaches_the_provider_from_any_directory(home: Path, project: Path,
                                                                          place: str) -> None:
    (home / place).parent.mkdir(parents=True)
    (home / place).write_text("XAI_API_KEY=xai-from-home\n")
    with TeamChatServer() as server:
        done = massgen("--config", str(grok_team(project, server.url)), "--automation", QUESTION,
                       home=home, cwd=project)
        assert done.returncode == 0, done.stderr
        assert "missing API key" not in done.stderr
        assert bearer_seen(server) == {"Bearer xai-from-home"}


def test_the_nearest_dotenv_file_wins_over_a_global_one(home: Path, project: Path) -> None:
    (home / ".massgen").mkdir()
    (home / ".massgen" / ".env").write_text("XAI_API_KEY=xai-global\n")
    (project / "configs").mkdir()
    (project / "configs" / ".env").write_text("XAI_API_KEY=xai-project-configs\n")
    with TeamChatServer() as server:
        team = str(grok_team(project, server.url))
        assert massgen("--config", team, "--automation", QUESTION, home=home, cwd=project).returncode == 0
        assert bearer_seen(server) == {"Bearer xai-project-configs"}
        (project / ".env").write_text("XAI_API_KEY=xai-here\n")
        server.requests.clear()
        assert massgen("--config", team, "--automation", QUESTION, home=home, cwd=project).returncode == 0
        assert bearer_seen(server) == {"Bearer xai-here"}


def test_validate_counts_a_global_key_as_set(home: Path, project: Path) -> None:
    team = grok_team(project, "http://127.0.0.1:9")
    assert "to run it, set XAI_API_KEY" in massgen("--validate", str(team), home=home, cwd=project).stdout
    (home / ".massgen").mkdir()
    (home / ".massgen" / ".env").write_text("XAI_API_KEY=xai-from-home\n")
    assert "to run it" not in massgen("--validate", str(team), home=home, cwd=project).stdout


@pytest.mark.parametrize("name", ["myteam", "myteam.yaml"])
def test_config_by_name_is_found_in_the_user_agents_folder(home: Path, project: Path, name: str) -> None:
    agents = home / ".config" / "massgen" / "agents"
    agents.mkdir(parents=True)
    shutil.copy(EXAMPLES_DIR / "basic" / "scripted_three_agents.yaml", agents / "myteam.yaml")
    done = massgen("--config", name, "--automation", "Which is larger, 9.11 or 9.9?", home=home, cwd=project)
    assert done.returncode == 0, done.stderr
    assert "WINNER: agent_b" in done.stdout


def test_a_config_name_found_nowhere_names_both_places_looked(home: Path, project: Path) -> None:
    done = massgen("--config", "nosuchteam", QUESTION, home=home, cwd=project)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "config file not found: nosuchteam" in done.stderr
    assert str(home / ".config" / "massgen" / "agents" / "nosuchteam") in done.stderr


def test_setup_env_file_saves_keys_where_every_directory_reads_them(home: Path, project: Path) -> None:
    saved = massgen("--setup", "--key", "XAI_API_KEY=xai-saved-globally", "--env-file",
                    str(home / ".massgen" / ".env"), home=home, cwd=project)
    assert saved.returncode == 0, saved.stderr
    assert (home / ".massgen" / ".env").read_text() == "XAI_API_KEY=xai-saved-globally\n"
    assert not (project / ".env").exists()
    elsewhere = project / "elsewhere"
    elsewhere.mkdir()
    with TeamChatServer() as server:
        done = massgen("--config", str(grok_team(project, server.url)), "--automation", QUESTION,
                       home=home, cwd=elsewhere)
        assert done.returncode == 0, done.stderr
        assert bearer_seen(server) == {"Bearer xai-saved-globally"}
