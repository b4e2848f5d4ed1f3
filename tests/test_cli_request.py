"""Issue 50: the command line is parsed once into one ``Request``; ``cli/main`` is a dispatcher; ``Team``
chooses every run's folder, a conversation's turns included."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from massgen import Team, resolve_config
from massgen.cli.request import Request, parse

MAIN = Path(__file__).resolve().parent.parent / "cli" / "main.py"


def test_main_imports_at_most_eight_cli_modules() -> None:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(MAIN.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("massgen.cli"):
            if node.module == "massgen.cli":
                modules.update(f"massgen.cli.{alias.name}" for alias in node.names)
            else:
                modules.add(node.module)
        elif isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names if alias.name.startswith("massgen.cli"))
    assert len(modules) <= 8, sorted(modules)


def test_the_command_line_becomes_one_frozen_request() -> None:
    request = parse(["--cwd-context", "read", "--quick", "--single-agent", "a", "q"])
    assert isinstance(request, Request)
    assert (request.question, request.cwd_context, request.quick, request.single_agent) == ("q", "ro", True, "a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.question = "other"  # type: ignore[misc]
    assert request.with_config_display("simple").config_display == "simple"
    assert parse(["--strict", "q"]) == 64  # a usage error is an exit code, said once


def test_a_conversation_turn_gets_its_folder_from_team(tmp_path: Path) -> None:
    config = resolve_config("@examples/basic/scripted_three_agents")
    first = Team(config, "q", log_base=tmp_path, turn=1)
    root = first.log_dir.parent.parent
    second = Team(config, "q", run_root=root, turn=2)
    assert first.log_dir == root / "turn_1" / "attempt_1"
    assert second.log_dir == root / "turn_2" / "attempt_1" and second.log_dir.is_dir()


def test_resume_goes_through_the_key_check_as_a_question_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    import massgen
    from massgen.cli import run_config

    class Point:  # what resume_point reads from a trace, as far as resolving the config needs
        redacted: tuple[str, ...] = ()
        log_dir = tmp_path / "log_x" / "turn_1" / "attempt_1"
        config = {"agents": [{"id": "a", "backend": {"type": "openai", "model": "gpt-5-mini"}}]}

    monkeypatch.chdir(tmp_path)  # no ./.env
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setattr(massgen, "resume_point", lambda path: Point())
    assert run_config.resolve(Request(resume=str(Point.log_dir))) == 1
    assert "missing API key" in capsys.readouterr().err


def test_main_routes_every_subcommand() -> None:
    from massgen.cli import subcommands

    assert all(f'"{name}"' in MAIN.read_text(encoding="utf-8") for name in subcommands.NAMES)
