"""``massgen --setup`` and ``--quickstart``: keys into a private ./.env, a config from the keys."""

from __future__ import annotations

import io
import re
import stat
from pathlib import Path

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from massgen.cli.main import main
from massgen.cli.setup import KEY_NAMES, run_setup
from massgen.configs import load_config

SECRET = "sk-test-0123456789abcdefSECRET"


@pytest.fixture(autouse=True)
def _clean_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run in an empty directory with no provider keys in the environment, and a HOME of its own."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    for name in KEY_NAMES:
        monkeypatch.delenv(name, raising=False)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_setup_with_a_key_flag_writes_a_private_dotenv_and_never_prints_the_key(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--setup", "--key", f"OPENAI_API_KEY={SECRET}"]) == 0
    env = tmp_path / ".env"
    assert mode(env) == 0o600
    assert env.read_text() == f"OPENAI_API_KEY={SECRET}\n"
    out = capsys.readouterr()
    assert "OPENAI_API_KEY" in out.out and SECRET not in out.out + out.err


def test_setup_merges_into_an_existing_dotenv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = tmp_path / ".env"
    env.write_text("# my settings\nexport OPENAI_API_KEY=old\nOTHER=keep me\nOPENAI_API_KEY=older\n")
    env.chmod(0o644)
    monkeypatch.setenv("XAI_API_KEY", "xai-from-env")
    assert main(["--setup", "--key", "OPENAI_API_KEY=new value", "--key", "XAI_API_KEY"]) == 0
    assert env.read_text() == '# my settings\nOPENAI_API_KEY="new value"\nOTHER=keep me\nXAI_API_KEY=xai-from-env\n'
    assert mode(env) == 0o600


def test_setup_reads_name_value_lines_from_a_pipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(f"# keys\nANTHROPIC_API_KEY={SECRET}\n\n"))
    assert main(["--setup"]) == 0
    assert (tmp_path / ".env").read_text() == f"ANTHROPIC_API_KEY={SECRET}\n"
    assert SECRET not in capsys.readouterr().out


def test_setup_rejects_bad_input_without_showing_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--setup", "--key", "GEMINI_API_KEY"]) == 1  # not in the environment
    assert main(["--setup", "--key", "bad name=x"]) == 1
    assert not (tmp_path / ".env").exists()
    assert "GEMINI_API_KEY is not set" in capsys.readouterr().err


def test_interactive_setup_hides_what_is_typed(tmp_path: Path) -> None:
    screen = io.StringIO()
    out = io.StringIO()
    output = Vt100_Output(screen, lambda: Size(rows=24, columns=100), term="xterm", enable_cpr=False)
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=output):
        # Where: this directory; then one line per provider key: type the first, skip the others.
        pipe.send_text("2\r" + f"{SECRET}\r" + "\r" * (len(KEY_NAMES) - 1))
        assert run_setup([], out=out, interactive=True) == 0
    assert (tmp_path / ".env").read_text() == f"{KEY_NAMES[0]}={SECRET}\n"
    assert mode(tmp_path / ".env") == 0o600
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue()) + out.getvalue()
    assert SECRET not in shown and SECRET[:6] not in shown
    assert "*" * 8 in shown and KEY_NAMES[1] in shown


def test_quickstart_writes_a_config_for_the_keys_present(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--setup", "--quickstart", "--key", f"OPENAI_API_KEY={SECRET}",
                 "--key", f"GEMINI_API_KEY={SECRET}g"]) == 0
    path = tmp_path / ".massgen" / "config.yaml"
    text = path.read_text()
    assert SECRET not in text
    config, _ = load_config(str(path), {})
    # Three agents, as upstream's quickstart recommends; the providers take turns.
    assert [(a.id, a.backend.type) for a in config.agents] == [
        ("openai_agent_1", "openai"), ("gemini_agent", "gemini"), ("openai_agent_2", "openai")]
    assert "a team of 3 (openai_agent_1, gemini_agent, openai_agent_2)" in capsys.readouterr().out

    assert main(["--quickstart"]) == 1  # an existing config is not replaced without --force
    assert "--force" in capsys.readouterr().err
    (tmp_path / ".env").unlink()
    assert main(["--quickstart", "--force"]) == 0
    config, _ = load_config(str(path), {})
    assert {a.backend.type for a in config.agents} == {"local"}  # no keys: the local team
    assert main(["--validate", str(path)]) == 0


def test_interactive_setup_saves_to_the_global_dotenv_by_default_as_upstream_recommends(tmp_path: Path) -> None:
    out = io.StringIO()
    output = Vt100_Output(io.StringIO(), lambda: Size(rows=24, columns=100), term="xterm", enable_cpr=False)
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=output):
        pipe.send_text("\r" + f"{SECRET}\r" + "\r" * (len(KEY_NAMES) - 1))  # Enter: the default place
        assert run_setup([], out=out, interactive=True) == 0
    saved = tmp_path / "home" / ".massgen" / ".env"
    assert saved.read_text() == f"{KEY_NAMES[0]}={SECRET}\n" and mode(saved) == 0o600
    assert not (tmp_path / ".env").exists()
    assert "[1] " + str(saved) in out.getvalue() and "[2] ./.env" in out.getvalue()


def test_quickstart_with_one_key_writes_a_team_of_three_each_with_its_model(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    assert main(["--quickstart"]) == 0
    config, _ = load_config(str(tmp_path / ".massgen" / "config.yaml"), {})
    assert [a.id for a in config.agents] == ["claude_agent_1", "claude_agent_2", "claude_agent_3"]
    assert {(a.backend.type, a.backend.model) for a in config.agents} == {("claude", "claude-sonnet-4-6")}


def test_quickstart_without_keys_says_the_local_team_needs_the_local_extra(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--quickstart"]) == 0
    said = capsys.readouterr().out
    assert "the team runs the local model; it needs the [local] extra" in said
    assert "massgen --setup" in said
    # ... and what else would do: an API key, named
    assert ("set an API key, one of OPENAI_API_KEY (openai), ANTHROPIC_API_KEY (claude), GEMINI_API_KEY (gemini), "
            "XAI_API_KEY (grok)") in said
    written = (tmp_path / ".massgen" / "config.yaml").read_text()
    assert "pip install 'massgen-actors[local]'" in written and "OPENAI_API_KEY" in written
