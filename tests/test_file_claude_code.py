"""The real Claude Code CLI under the run's file rules, against a loopback Anthropic server.

The server plays a model that uses the CLI's own Read and Write tools: during coordination it
reads a key file in the home folder (outside every working directory; refused) and the project
(a context path; allowed), writes the project (refused) and its workspace (allowed), then
answers; presenting, it writes the project (allowed, the path is writable) and a protected path
(refused).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import assert_trace_invariants, of_type, records, run_team, scripted, step, team_config, unavailable
from wire.anthropic_tools import NEW_ANSWER_TOOL, VOTE_TOOL, AnthropicToolServer, prompt_text, tool_names
from wire.server import Recorded, Reply

ROOT = Path(__file__).resolve().parents[1]
CLAUDE = ROOT / "tests" / ".node" / "node_modules" / ".bin" / "claude"
TEST_FILE = "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"
SECRET = "ssh-key-marker-5f1c0e"  # in the home folder: no request to the model may ever hold it


def _tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for message in body.get("messages", []):
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, list):
            found += [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    return found


class FileWritingModel(AnthropicToolServer):
    """Decides each reply from how many tool results the conversation already holds."""

    def __init__(self, project: Path, secret: Path) -> None:
        super().__init__(answer="Add test_calc.py with a test of add().", final_text="Added test_calc.py.")
        self.project = project
        self.secret = secret
        self.results: list[tuple[str, str, bool]] = []  # (phase, result text, is_error) as the CLI reported

    def decide(self, request: Recorded) -> Reply:
        body = request.body if isinstance(request.body, dict) else {}
        names = tool_names(body)
        phase = "turn" if NEW_ANSWER_TOOL in names or VOTE_TOOL in names else "present"
        answered = phase == "turn" and "(yours)" in prompt_text(body)  # its answer is in view: vote as the base does
        if not request.path.endswith("/v1/messages") or "Write" not in names or answered:
            return super().decide(request)
        done = _tool_results(body)
        if done:
            last = done[-1]
            text = last.get("content")
            text = " ".join(b.get("text", "") for b in text) if isinstance(text, list) else str(text)
            self.results.append((phase, text, bool(last.get("is_error"))))
        if phase == "turn":
            plan = [("Read", {"file_path": str(self.secret)}),
                    ("Read", {"file_path": str(self.project / "calc.py")}),
                    ("Write", {"file_path": str(self.project / "test_calc.py"), "content": "too early"}),
                    ("Write", {"file_path": "draft_test.py", "content": TEST_FILE})]
            if len(done) < len(plan):
                return self._tool(body, *plan[len(done)])
            if len(done) == len(plan):
                return self._tool(body, NEW_ANSWER_TOOL, {"content": self.answer})
            return self._text(body, "Recorded.")
        plan = [("Write", {"file_path": str(self.project / "test_calc.py"), "content": TEST_FILE}),
                ("Write", {"file_path": str(self.project / "secrets" / "key.txt"), "content": "leaked"})]
        if len(done) < len(plan):
            return self._tool(body, *plan[len(done)])
        return self._text(body, self.final_text)


@pytest.fixture(scope="module")
def claude_cli() -> str:
    if not CLAUDE.exists() and shutil.which("npm"):
        subprocess.run([str(ROOT / "scripts" / "install_test_tools.sh")], capture_output=True, timeout=600)
    if not CLAUDE.exists():
        unavailable("the Claude Code CLI is not installed (scripts/install_test_tools.sh needs npm)")
    return str(CLAUDE)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    repo = tmp_path / "project"
    (repo / "secrets").mkdir(parents=True)
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "start"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, timeout=30)
    return repo


@pytest.fixture
def model(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FileWritingModel]:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(SECRET + "\n")
    monkeypatch.setenv("HOME", str(home))  # the CLI reads and writes no real settings
    with FileWritingModel(project, home / ".ssh" / "id_ed25519") as server:
        yield server


@pytest.mark.slow
def test_claude_code_reads_and_writes_only_its_folders_then_as_presenter_the_writable_project(
    claude_cli: str, model: FileWritingModel, project: Path, tmp_path: Path
) -> None:
    coder = {"id": "coder", "backend": {"type": "claude_code", "cli_path": claude_cli, "base_url": model.url,
                                        "api_key": "dummy-key"}}
    checker = scripted("checker", [step(new_answer="Write a test.")],
                       [step(when_answers=["agent1"]), step(vote="agent1", reason="good")])
    context = {"path": str(project), "permission": "write", "protected_paths": ["secrets"]}
    config = team_config(coder, checker, orchestrator={"context_paths": [context]}, run_timeout=180,
                         turn_timeout=90, idle_timeout=90, present_timeout=90)
    result = run_team(config, tmp_path, question="Add tests to this project")
    assert result.status == "completed" and result.winner == "coder", result.reason

    turn = [r for r in model.results if r[0] == "turn"]
    present = [r for r in model.results if r[0] == "present"]
    assert turn[0][2] and SECRET not in turn[0][1], f"a read outside the working directories must be refused: {turn[0]}"
    assert not turn[1][2] and "return a + b" in turn[1][1], f"the project is a context path: readable: {turn[1]}"
    assert turn[2][2] and "permission" in turn[2][1], f"a coordination write to the project must be refused: {turn[2]}"
    assert not turn[3][2], turn[3]
    assert not any(SECRET in str(r.body) for r in model.requests), "the key reached a request to the model"
    assert not present[0][2], present[0]
    assert present[1][2] and "denied by your permission settings" in present[1][1], present[1]

    workspace = tmp_path / "workspaces" / result.run_id / "coder"
    assert (workspace / "draft_test.py").read_text() == TEST_FILE
    git = subprocess.run(["git", "status", "--porcelain"], cwd=project, capture_output=True, text=True, timeout=30)
    assert git.stdout.splitlines() == ["?? test_calc.py"]
    assert (project / "test_calc.py").read_text() == TEST_FILE
    assert not (project / "secrets" / "key.txt").exists()

    trace = records(result)
    assert_trace_invariants(trace)
    [changed] = of_type(trace, "ContextChanged")
    assert [(Path(f["path"]).name, f["change"]) for f in changed["payload"]["files"]] == [("test_calc.py", "added")]
    assert "+++ b/test_calc.py" in (result.log_dir / "context_changes.diff").read_text()
    assert result.final_answer is not None and str(project / "test_calc.py") in result.final_answer
