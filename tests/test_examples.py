"""The example library: MassGen's names resolve, every example validates, and one that needs a
key says which before any model is called."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from massgen.cli.main import main
from massgen.configs import EXAMPLES_DIR, ConfigError, list_examples, resolve_config_path

KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "XAI_API_KEY",
        "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT")
_KEY_NAME = re.compile(r"\b[A-Z]+(?:_[A-Z]+)*_API_KEY\b")


@pytest.fixture
def no_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no ./.env here


def keys_named_in_header(name: str) -> set[str]:
    """The keys an example's opening comment says it needs (its "Needs ..." lines)."""
    header = []
    for line in (EXAMPLES_DIR / f"{name}.yaml").read_text().splitlines():
        if not line.startswith("#"):
            break
        header.append(line)
    text = " ".join(header)
    needs = text[text.find("Needs"):] if "Needs" in text else ""
    return set(_KEY_NAME.findall(needs))


def test_the_names_massgen_users_type_are_shipped() -> None:
    names = set(list_examples())
    assert {"basic/multi/three_agents_default", "basic/single/single_gpt5nano", "basic/single/single_claude",
            "basic/single/single_gemini2.5pro", "basic/single/single_grok",
            "basic/multi/three_agents_winner_reuse", "basic/multi/three_agents_synthesize",
            "basic/multi/two_agents_gemini", "providers/cli/claude_code", "tools/mcp/stdio_fetch",
            "tools/mcp/streamable_http", "basic/scripted_three_agents", "faults/crash_and_recover"} <= names
    local_types = {"vllm", "sglang", "lmstudio", "ollama", "llamacpp", "local"}
    assert {f"providers/local/{t}" for t in local_types} <= names


@pytest.mark.parametrize("name", list_examples())
def test_every_example_passes_validate(name: str, no_keys: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--validate", f"@examples/{name}"]) == 0
    out = capsys.readouterr().out
    assert ": valid (" in out
    for key in keys_named_in_header(name):
        assert key in out  # --validate also says which keys a run will need


@pytest.mark.parametrize("name", [n for n in list_examples() if keys_named_in_header(n)])
def test_an_example_needing_a_key_names_it_and_exits_1_before_any_model_call(
        name: str, no_keys: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", f"@examples/{name}", "q"]) == 1
    err = capsys.readouterr().err
    assert "missing API key" in err and "Traceback" not in err
    assert set(_KEY_NAME.findall(err)) == keys_named_in_header(name)
    assert not (tmp_path / "massgen_logs").exists()  # no run was started, so no model was called


def test_the_default_team_example_without_keys_as_a_user_runs_it(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    done = subprocess.run([sys.executable, "-m", "massgen.cli.main", "--config",
                           "@examples/basic/multi/three_agents_default", "分析可再生能源的利弊"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    for key in ("GEMINI_API_KEY", "OPENAI_API_KEY", "XAI_API_KEY"):
        assert key in done.stderr


def test_exact_names_win_then_the_file_name_then_a_substring() -> None:
    exact = resolve_config_path("@examples/basic/multi/three_agents_default")
    assert exact == EXAMPLES_DIR / "basic" / "multi" / "three_agents_default.yaml"
    assert resolve_config_path("@examples/three_agents_default") == exact
    assert resolve_config_path("@examples/three_agents_default.yaml") == exact
    assert resolve_config_path("@examples/multi/three_agents_default") == exact
    assert resolve_config_path("@examples/gpt5_claude").name == "two_agents_gpt5_claude.yaml"


def test_several_matches_are_listed(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as ambiguous:
        resolve_config_path("@examples/winner_reuse")
    message = str(ambiguous.value)
    assert "ambiguous" in message
    assert "@examples/basic/multi/three_agents_winner_reuse" in message
    assert "@examples/basic/multi/two_agents_winner_reuse" in message


def test_a_misspelt_name_gets_a_did_you_mean() -> None:
    with pytest.raises(ConfigError) as typo:
        resolve_config_path("@examples/basic/multi/three_agents_defualt")
    message = str(typo.value)
    assert message.startswith("no example named @examples/basic/multi/three_agents_defualt; did you mean ")
    assert "@examples/basic/multi/three_agents_default" in message and "massgen --list-examples" in message
    with pytest.raises(ConfigError) as nothing:
        resolve_config_path("@examples/zzzzqqq")
    assert "did you mean" not in str(nothing.value)
