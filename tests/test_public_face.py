"""The public face: every surface goes through ``massgen``, and every error users catch has one root."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from support import scripted, step, team_config

import massgen
from massgen import errors

CLI = Path(__file__).resolve().parent.parent / "cli"


def _our_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import of a ``massgen`` module in one file, at any depth."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] == "massgen":
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name.split(".")[0] == "massgen"]
    return found


def test_cli_imports_nothing_of_ours_but_the_face_and_itself() -> None:
    files = sorted(CLI.rglob("*.py"))
    assert len(files) > 20  # the walk found the package
    outside = [f"{path.relative_to(CLI.parent)}:{line}: {module}"
               for path in files for line, module in _our_imports(path)
               if module != "massgen" and module != "massgen.cli" and not module.startswith("massgen.cli.")]
    assert outside == []


def test_the_contract_check_sees_deferred_and_nested_imports(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    if True:\n        from massgen.actors.run.team import Team\n"
                      "import massgen.logs\nfrom massgen import Team\nfrom massgen.cli import flags\n")
    assert sorted(_our_imports(sample)) == [(3, "massgen.actors.run.team"), (4, "massgen.logs"), (5, "massgen"),
                                    (6, "massgen.cli")]


def test_every_exported_name_resolves() -> None:
    optional = {"register_with_litellm"}  # needs the [litellm] extra
    missing = [name for name in massgen.__all__ if name not in optional and not hasattr(massgen, name)]
    assert missing == []


def test_every_name_the_face_reaches_resolves_the_stable_api_and_the_plumbing_alike() -> None:
    optional = {"register_with_litellm"}  # needs the [litellm] extra
    reachable = set(massgen._read_exports())
    assert set(massgen.__all__) - {"__version__"} < reachable  # the plumbing is reachable, not in __all__
    assert [name for name in reachable - optional if not hasattr(massgen, name)] == []


def test_all_is_the_stable_block_written_out_and_holds_no_plumbing() -> None:
    """``__all__`` is a literal list (a reader sees the promise), equal to the first TYPE_CHECKING block."""
    tree = ast.parse(Path(massgen.__file__).read_text(encoding="utf-8"))
    blocks = [node for node in tree.body if isinstance(node, ast.If) and isinstance(node.test, ast.Name)
              and node.test.id == "TYPE_CHECKING"]
    stable = {alias.asname for node in blocks[0].body if isinstance(node, ast.ImportFrom) for alias in node.names}
    written = next(node.value for node in tree.body if isinstance(node, ast.Assign)
                   and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets))
    assert isinstance(written, ast.List)
    assert set(ast.literal_eval(written)) == stable | {"__version__"}
    for plumbing in ("config_environment", "missing_keys", "LogProjection", "open_session", "ViewEvent"):
        assert plumbing not in massgen.__all__ and hasattr(massgen, plumbing)


def test_the_names_the_docs_show_as_massgen_names_resolve() -> None:
    import re

    root = Path(massgen.__file__).resolve().parent.parent
    docs = "".join(path.read_text(encoding="utf-8") for path in [root / "README.md", *(root / "docs").glob("*.md")])
    shown = set(re.findall(r"\bmassgen\.([A-Za-z_]\w*)\b(?!\.py|/)", docs))
    # massgen.actors, massgen.configs ... and the face's own modules (massgen.api, massgen.events)
    modules = {path.stem for path in [*root.iterdir(), *Path(massgen.__file__).parent.iterdir()]} | {"cli"}
    missing = sorted(name for name in shown - modules - {"register_with_litellm"} if not hasattr(massgen, name))
    assert missing == []


def test_the_face_names_each_export_once_and_star_import_gives_them_all() -> None:
    from massgen.configs import defaults

    names = massgen.__all__
    assert len(names) == len(set(names)) and {"run", "TeamConfig", "messages", "__version__"} <= set(names)
    # A name the face gives under its own name is the very object, not a copy.
    assert massgen.config_environment is defaults.environment and massgen.discover_config is defaults.resolve
    assert "resolve" not in names and not hasattr(massgen, "resolve")  # imported to be renamed, not exported
    namespace: dict[str, object] = {}
    exec("from massgen import *", namespace)
    assert set(names) <= set(namespace)


def test_importing_the_face_loads_no_provider_sdk_and_no_actor() -> None:
    code = ("import json, sys, massgen; from massgen import MassGenError, ConfigError, RunTimeout; "
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('openai', 'anthropic', 'google', 'pykka', 'pydantic') or m.startswith('massgen.actors'))))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                       check=True).stdout)
    assert loaded == []


def test_errors_users_catch_share_one_root() -> None:
    from massgen.actors.record.resume import ResumeError
    from massgen.backends.base import BackendError, PermanentBackendError
    from massgen.configs import ConfigError
    from massgen.files import PathDenied
    from massgen.files.file_tools import ToolArgumentError
    from massgen.logs import TraceReadError
    from massgen.sessions import SessionError

    # The names where they always were are the face's classes, not copies.
    assert (ConfigError, ResumeError, BackendError, PermanentBackendError) == (
        massgen.ConfigError, massgen.ResumeError, massgen.BackendError, massgen.PermanentBackendError)
    for cls in (SessionError, PathDenied, ToolArgumentError, TraceReadError, massgen.RunTimeout):
        assert issubclass(cls, massgen.MassGenError), cls
    assert issubclass(SessionError, massgen.ConfigError)
    assert issubclass(PathDenied, massgen.ToolError) and issubclass(ToolArgumentError, massgen.ToolError)
    assert issubclass(TraceReadError, massgen.TraceError)
    for name in errors.__all__:
        cls = getattr(errors, name)
        assert issubclass(cls, massgen.MassGenError) and getattr(massgen, name) is cls
        assert cls.__doc__ and "\n" not in cls.__doc__.strip(), f"{name}: a one-line docstring"


def one_agent() -> massgen.TeamConfig:
    return team_config(scripted("solo", [step(new_answer="4")], [step(vote="agent1", reason="mine")]))


def test_a_bad_timeout_is_a_config_error_naming_the_argument() -> None:
    with pytest.raises(massgen.ConfigError, match="timeout"):
        massgen.new_team(one_agent(), "q", timeout=0)


def test_raise_for_status_maps_each_ending_to_its_error(tmp_path: Path) -> None:
    def result(status: str) -> massgen.RunResult:
        return massgen.RunResult(status=status, reason="why", final_answer="4" if status != "failed" else None,
                                 winner=None, winner_label=None, partial=status != "completed", log_dir=tmp_path,
                                 run_id="r")

    assert result("completed").raise_for_status().status == "completed"
    for status, error in (("failed", massgen.RunFailed), ("partial", massgen.RunFailed),
                          ("timeout", massgen.RunTimeout),
                          ("budget", massgen.BudgetExhausted), ("interrupted", massgen.RunInterrupted)):
        with pytest.raises(error) as caught:
            result(status).raise_for_status()
        assert isinstance(caught.value, massgen.RunError) and caught.value.result.status == status
        assert "why" in str(caught.value)


def test_one_function_builds_every_surface_s_team(tmp_path: Path) -> None:
    team = massgen.new_team(one_agent(), "What is 2+2?", history=[("q0", "a0")], timeout=7.5,
                            log_base=tmp_path, turn=3)
    assert team.config.timeout_settings.orchestrator_timeout_seconds == 7.5
    assert team.history == (("q0", "a0"),)
    assert team.log_dir.parent.name == "turn_3" and team.log_dir.name == "attempt_1"
    assert team.log_dir.is_relative_to(tmp_path)
    result = team.run()
    assert result.status == "completed"
    assert massgen.LogLayout(result.log_dir).final_answer(result.winner).read_text(encoding="utf-8").strip() \
        == result.final_answer


def test_a_log_directory_that_cannot_be_made_is_a_config_error_and_still_an_os_error(tmp_path: Path) -> None:
    in_the_way = tmp_path / "a_file"
    in_the_way.write_text("not a directory")
    with pytest.raises(massgen.LogDirError, match="the log directory") as caught:
        massgen.new_team(one_agent(), "q", log_base=in_the_way)
    assert isinstance(caught.value, massgen.ConfigError) and isinstance(caught.value, OSError)
    assert isinstance(caught.value.__cause__, OSError)
