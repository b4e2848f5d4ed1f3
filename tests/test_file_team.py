"""File workflows in whole team runs: workspaces, snapshots, context paths and the presenter's diff."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp_support import stdio
from support import (
    FACTOR,
    assert_trace_invariants,
    of_type,
    records,
    run_team,
    scripted,
    step,
    team_config,
    unavailable,
)

from massgen import LogProjection, Team
from massgen.cli.progress import describe
from massgen.configs import ConfigError, validate_data
from massgen.files import PathDenied, RunFiles, with_context_paths
from massgen.messages import AnswerEntry, AnswerView


def _digest(root: Path) -> str:
    entries = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = path.relative_to(root).as_posix()
        entries.append(f"{relative}\0{hashlib.sha256(path.read_bytes()).hexdigest()}\n")
    return hashlib.sha256("".join(entries).encode()).hexdigest()


def test_agents_write_in_parallel_in_their_own_workspaces_and_read_each_others_snapshots(tmp_path: Path) -> None:
    after_b = {"when_answers": ["agent2"]}
    a = scripted(
        "a",
        [step(tool="write_file", args={"path": "same.txt", "content": "from a"})],
        [step(new_answer="a: {last_tool_result}")],
        [step(**after_b), step(tool="read_file", args={"path": "agent2.1/same.txt"})],
        [step(**after_b), step(tool="write_file", args={"path": "agent2.1/same.txt", "content": "overwritten"})],
        [step(**after_b), step(vote="agent1", reason="mine")],
    )
    b = scripted(
        "b",
        [step(tool="write_file", args={"path": "same.txt", "content": "from b"})],
        [step(new_answer="b: {last_tool_result}")],
        [step(when_answers=["agent1"]), step(vote="agent1", reason="fine")],
    )
    config = team_config(a, b, orchestrator={"workspaces": True})
    result = run_team(config, tmp_path)
    assert result.status == "completed", result.reason

    workspaces = tmp_path / "workspaces" / result.run_id
    assert (workspaces / "a" / "same.txt").read_text() == "from a"
    assert (workspaces / "b" / "same.txt").read_text() == "from b"
    snaps = result.log_dir / "snapshots"
    assert (snaps / "agent1.1" / "same.txt").read_text() == "from a"
    assert (snaps / "agent2.1" / "same.txt").read_text() == "from b"
    assert not stat.S_IMODE((snaps / "agent2.1" / "same.txt").stat().st_mode) & 0o222

    trace = records(result)
    assert_trace_invariants(trace)
    taken = {r["payload"]["label"]: r["payload"] for r in of_type(trace, "SnapshotTaken")}
    assert set(taken) == {"agent1.1", "agent2.1"}
    for label, info in taken.items():
        assert info["digest"] == _digest(snaps / label) and info["files"] == 1
    reads = [r["payload"] for r in of_type(trace, "ToolCallResult") if r["payload"]["name"] == "read_file"]
    assert reads and reads[0]["content"] == "from b" and not reads[0]["is_error"]
    denials = [r["payload"] for r in of_type(trace, "ToolDenied")]
    assert [(d["agent"], d["tool"], d["path"]) for d in denials] == [("a", "write_file", "agent2.1/same.txt")]
    assert "read-only" in denials[0]["reason"]
    failed_write = [r["payload"] for r in of_type(trace, "ToolCallResult") if r["payload"]["is_error"]]
    assert failed_write[0]["content"].startswith("Permission denied")
    metadata = yaml.safe_load((result.log_dir / "execution_metadata.yaml").read_text())
    assert {s["label"]: s["digest"] for s in metadata["snapshots"]} == {k: v["digest"] for k, v in taken.items()}


def test_workspace_paths_in_answers_are_rewritten_for_each_reader(tmp_path: Path) -> None:
    config = team_config(scripted("a"), scripted("b"), {"id": "c", "backend": {"type": "claude_code"}},
                         orchestrator={"workspaces": True})
    files = RunFiles.prepare(config, "run1", tmp_path / "logs")
    assert files is not None
    from massgen.actors.run.team import agent_specs, attach_files

    attach_files(files, agent_specs(config))
    a_file = files.workspace("a") / "src" / "x.py"
    view = AnswerView(version=1, answers=(AnswerEntry(agent="agent1", label="agent1.2", content=f"see {a_file}"),))
    assert files.rewrite(view, "a").answers[0].content == f"see {a_file}"  # its own path, as it wrote it
    assert files.rewrite(view, "b").answers[0].content == "see agent1.2/src/x.py"  # a path its tools resolve
    cli_view = files.rewrite(view, "c").answers[0].content  # a CLI reads the snapshot by absolute path
    assert cli_view == f"see {files.snapshots_dir / 'agent1.2' / 'src' / 'x.py'}"
    assert "/a/" not in cli_view.replace(str(files.log_dir), "")  # the author's id is not shown


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True, timeout=30)
    return done.stdout


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "project"
    repo.mkdir()
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (repo / "README.md").write_text("# calc\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "start")
    return repo


TEST_FILE = "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"


def test_only_the_presenter_writes_a_writable_context_path_leaving_a_clean_git_diff(
    tmp_path: Path, checkout: Path
) -> None:
    calc, readme, tests = str(checkout / "calc.py"), str(checkout / "README.md"), str(checkout / "test_calc.py")
    a = scripted(
        "a",
        [step(tool="read_file", args={"path": calc})],
        [step(tool="write_file", args={"path": tests, "content": "too early"})],
        [step(new_answer="Add test_calc.py with a test of add(); mention it in the README.")],
        present_script=[
            [step(tool="write_file", args={"path": tests, "content": TEST_FILE}),
             step(tool="edit_file", args={"path": readme, "old": "# calc\n", "new": "# calc\n\nRun `pytest`.\n"}),
             step(tool="edit_file", args={"path": calc, "old": "a + b", "new": "a - b"}),
             step(tool="write_file", args={"path": str(checkout / ".git" / "config"), "content": "x"})],
            [step(text="Added test_calc.py and a line in README.md.")],
        ],
    )
    b = scripted("b", [step(tool="write_file", args={"path": readme, "content": "b"})],
                 [step(new_answer="Add a test of add().")], [step(vote="agent1", reason="good plan")])
    context = {"path": str(checkout), "permission": "write", "protected_paths": ["calc.py"]}
    result = run_team(team_config(a, b, orchestrator={"context_paths": [context]}), tmp_path,
                      question="Add tests to this project")
    assert result.status == "completed", result.reason

    assert _git(checkout, "status", "--porcelain").splitlines() == [" M README.md", "?? test_calc.py"]
    assert _git(checkout, "diff").count("+Run `pytest`.") == 1
    assert (checkout / "test_calc.py").read_text() == TEST_FILE
    assert (checkout / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    done = subprocess.run(["python3", "-c", "import test_calc; test_calc.test_add()"], cwd=checkout, timeout=30)
    assert done.returncode == 0

    trace = records(result)
    assert_trace_invariants(trace)
    denied = {(d["payload"]["agent"], Path(d["payload"]["path"]).name): d["payload"]["reason"]
              for d in of_type(trace, "ToolDenied")}
    assert set(denied) == {("a", "test_calc.py"), ("b", "README.md"), ("a", "calc.py"), ("a", "config")}
    assert "only the final presenter may write" in denied[("a", "test_calc.py")]
    assert "only the final presenter may write" in denied[("b", "README.md")]
    assert "protected" in denied[("a", "calc.py")] and "protected" in denied[("a", "config")]

    changed = {(Path(f["path"]).name, f["change"]) for f in of_type(trace, "ContextChanged")[0]["payload"]["files"]}
    assert changed == {("README.md", "modified"), ("test_calc.py", "added")}
    diff = (result.log_dir / "context_changes.diff").read_text()
    assert "+++ b/test_calc.py" in diff and "+Run `pytest`." in diff and "calc.py\n" not in diff.split("test_")[0]
    assert result.final_answer is not None
    assert result.final_answer.startswith("Added test_calc.py")
    assert tests in result.final_answer and readme in result.final_answer
    metadata = yaml.safe_load((result.log_dir / "execution_metadata.yaml").read_text())
    assert {Path(f["path"]).name for f in metadata["files"]["changed_files"]} == {"README.md", "test_calc.py"}
    assert metadata["files"]["diff"] == str(result.log_dir / "context_changes.diff")


def test_a_large_workspace_snapshot_is_cut_with_a_note_and_copied_off_the_supervisors_thread(
    tmp_path: Path,
) -> None:
    # Issue 37: a 200 MB, 20,002-file workspace stalled the supervisor 15.4 s between AnswerAccepted
    # and SnapshotTaken (no tick, vote or user command handled meanwhile), and every answer copied
    # all of it into the logs. Here a 20,000-file workspace is cut at 15,000 files, and a user's kill
    # sent as the copy starts is handled while it runs, not after it (before: 18 s later).
    if shutil.which("bwrap") is None:
        unavailable("bubblewrap (bwrap) is not installed (Debian package bubblewrap)")
    make = "mkdir many && cd many && seq -w 1 20000 | xargs touch && echo done"
    a = scripted("a", [step(tool="run_command", args={"command": make})], [step(new_answer="4")],
                 [step(vote="agent1", reason="mine")])
    b = scripted("b", [step(delay=60 * FACTOR, incarnations=[1]), step(new_answer="4")], [step(vote="agent1")])
    config = team_config(a, b, orchestrator={"command_execution": "sandbox", "command_timeout_seconds": 60,
                                             "snapshot_max_files": 15_000},
                         run_timeout=120.0, turn_timeout=90.0, idle_timeout=80.0)
    killed = threading.Event()
    team: list[Team] = []

    def kill_b_when_a_answers(record: Any, _projection: Any) -> None:
        if record["type"] == "AnswerProposed" and record["sender"].startswith("a#") and not killed.is_set():
            killed.set()
            team[0].kill_agent("b")

    team.append(Team(config, "What is 2+2?", log_dir=tmp_path / "logs" / "run", tick_interval_s=0.02,
                     subscribers=[kill_b_when_a_answers]))
    result = team[0].run()
    trace = records(result)
    proposed = next(r for r in of_type(trace, "AnswerProposed") if r["sender"].startswith("a#"))
    snapshot = next(r for r in of_type(trace, "SnapshotTaken") if r["payload"]["agent"] == "a")
    kill_handled = next(r for r in of_type(trace, "ChildFailed") if r["payload"]["name"] == "b")
    copy_s, kill_s = snapshot["ts"] - proposed["ts"], kill_handled["ts"] - proposed["ts"]
    assert kill_handled["seq"] < snapshot["seq"], f"the kill waited {kill_s:.2f} s for a {copy_s:.2f} s copy"
    taken = snapshot["payload"]
    assert taken["files"] == 15_000 and taken["cut"].startswith("snapshot cut: 15,000 of 20,000 files (0 of 0 bytes)")
    folder = Path(taken["path"])
    assert folder == result.log_dir / "snapshots" / "agent1.1"
    assert (folder / "SNAPSHOT_CUT.txt").read_text().startswith(taken["cut"])
    assert sum(1 for _ in (folder / "many").iterdir()) == 15_000
    staging = result.log_dir / "snapshot_staging"
    assert not staging.exists() or not any(staging.iterdir())
    accepted = next(r for r in of_type(trace, "AnswerAccepted") if r["payload"]["agent"] == "a")
    assert accepted["seq"] < snapshot["seq"]  # recorded together, once the files are in place
    line = describe(snapshot, LogProjection())
    assert line == f"agent1.1's files: {taken['cut']}"
    assert result.status == "completed", result.reason


def test_a_missing_context_path_is_a_config_error_naming_context_paths(tmp_path: Path) -> None:
    data = {"agents": [scripted("a")], "orchestrator": {"context_paths": [{"path": str(tmp_path / "nope")}]}}
    with pytest.raises(ConfigError, match=r"orchestrator\.context_paths\[0\]\.path: .*not an existing directory"):
        validate_data(data, "team.yaml")


def test_a_context_path_naming_a_file_grants_that_file_alone_never_its_folder(tmp_path: Path) -> None:
    # Issue 37: `context_paths: [{path: /etc/hostname}]` granted all of /etc; then it was refused, which
    # failed upstream's examples that name one file (issue 38). Upstream grants that file alone: read by
    # everyone, rewritten by the presenter with permission: write; nothing else in its folder.
    folder = tmp_path / "etc"
    folder.mkdir()
    granted, sibling = folder / "hostname", folder / "shadow"
    granted.write_text("box\n")
    sibling.write_text("secret\n")
    a = scripted(
        "a",
        [step(tool="read_file", args={"path": str(granted)})],
        [step(tool="read_file", args={"path": str(sibling)}),
         step(tool="list_directory", args={"path": str(folder)}),
         step(tool="list_directory", args={"path": str(granted)}),
         step(tool="search_files", args={"pattern": "*", "path": str(folder)}),
         step(tool="write_file", args={"path": str(granted), "content": "too early"})],
        [step(new_answer="Call the host {last_tool_result}")],
        present_script=[
            [step(tool="edit_file", args={"path": str(granted), "old": "box", "new": "host"}),
             step(tool="write_file", args={"path": str(sibling), "content": "leaked"}),
             step(tool="write_file", args={"path": str(folder / "new.txt"), "content": "planted"}),
             step(tool="delete_file", args={"path": str(granted)})],
            [step(text="Renamed the host.")],
        ],
    )
    b = scripted("b", [step(new_answer="Keep it.")], [step(vote="agent1", reason="good")])
    context = {"path": str(granted), "permission": "write"}
    result = run_team(team_config(a, b, orchestrator={"context_paths": [context]}), tmp_path)
    assert result.status == "completed", result.reason

    trace = records(result)
    assert_trace_invariants(trace)
    calls = [(c["payload"]["name"], c["payload"]["content"], c["payload"]["is_error"])
             for c in of_type(trace, "ToolCallResult") if c["sender"].startswith("a#")]
    assert calls[0] == ("read_file", "box\n", False)
    refused = calls[1:6] + calls[7:]
    assert all(error and "Permission denied" in text for _, text, error in refused), "\n".join(map(str, calls))
    assert "secret" not in str(calls) and "shadow" not in str(calls[2:5])  # the sibling is neither read nor named
    assert "only the file hostname in this folder is granted" in calls[1][1]
    assert "only the final presenter may write" in calls[5][1]
    assert "never deleted or moved" in calls[-1][1]
    assert calls[6] == ("edit_file", f"Edited {granted}", False)

    assert granted.read_text() == "host\n" and sibling.read_text() == "secret\n"
    assert sorted(p.name for p in folder.iterdir()) == ["hostname", "shadow"]
    [changed] = of_type(trace, "ContextChanged")
    assert [(f["path"], f["change"]) for f in changed["payload"]["files"]] == [(str(granted), "modified")]
    assert "-box\n+host" in (result.log_dir / "context_changes.diff").read_text()


def test_an_agent_cli_confined_by_folders_is_refused_a_file_context_path_naming_the_field(tmp_path: Path) -> None:
    # claude_code is given context paths as --add-dir, which takes folders: it would get the whole folder.
    (tmp_path / "hostname").write_text("box\n")
    coder = {"id": "coder", "backend": {"type": "claude_code", "cli_path": "/bin/true"}}
    refused = (r"orchestrator\.context_paths\[0\]\.path: .*hostname is a file, and agent 'coder' \(claude_code\) is "
               r"given context paths as folders \(--add-dir\), so it would get the file's whole folder")
    data = {"agents": [coder], "orchestrator": {"context_paths": [{"path": str(tmp_path / "hostname")}]}}
    with pytest.raises(ConfigError, match=refused):
        validate_data(data, "team.yaml")
    # an @file mention joins after validation: the run's start refuses it the same way
    config = with_context_paths(team_config(coder), f"Read @{tmp_path / 'hostname'}")
    with pytest.raises(ConfigError, match=refused):
        RunFiles.prepare(config, "run1", tmp_path / "logs")


def test_an_agent_id_of_300_characters_gets_a_workspace_and_its_run_completes(tmp_path: Path) -> None:
    # Issue 37: the id passed --validate, then the run crashed making its workspace (ENAMETOOLONG).
    long_id = "a" * 300
    agent = scripted(long_id, [step(tool="write_file", args={"path": "note.txt", "content": "kept"})],
                     [step(new_answer="{last_tool_result}")])
    result = run_team(team_config(agent, orchestrator={"workspaces": True}), tmp_path)
    assert result.status == "completed", result.reason
    [workspace] = (tmp_path / "workspaces" / result.run_id).iterdir()
    assert len(workspace.name) <= 100 and (workspace / "note.txt").read_text() == "kept"
    snapshot = of_type(records(result), "SnapshotTaken")[0]["payload"]
    assert snapshot["files"] == 1 and snapshot["error"] is None


def test_a_missing_sandbox_is_a_config_error_never_a_fallback(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap, no docker
    for mode, needs in (("sandbox", "bubblewrap"), ("docker", "Docker")):
        data = {"agents": [scripted("a")], "orchestrator": {"command_execution": mode}}
        with pytest.raises(ConfigError, match=rf"orchestrator\.command_execution: .*{needs}"):
            validate_data(data, "team.yaml")


@pytest.mark.skipif(os.geteuid() != 0, reason="massgen run as root: these machines and CI run so")
def test_run_as_root_a_sandbox_without_setpriv_is_a_config_error(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        unavailable("bubblewrap (bwrap) is not installed (Debian package bubblewrap)")
    (tmp_path / "bwrap").symlink_to(bwrap)
    monkeypatch.setenv("PATH", str(tmp_path))  # bwrap, but no setpriv to drop root with
    data = {"agents": [scripted("a")], "orchestrator": {"command_execution": "sandbox"}}
    with pytest.raises(ConfigError, match=r"orchestrator\.command_execution: sandbox run as root needs setpriv.*"
                                          r"util-linux"):
        validate_data(data, "team.yaml")


def test_question_mentions_and_cwd_context_add_context_paths(
    tmp_path: Path, checkout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    question = f"Review @{checkout} and fix @{checkout / 'calc.py'}:w, then mail @someone"
    config = with_context_paths(team_config(scripted("a")), question, cwd_context="ro")
    files = RunFiles.prepare(config, "run2", tmp_path / "logs")
    assert files is not None
    # @file names that file alone, as upstream's prompt parser keeps it (not its folder: issue 37)
    assert [(c.path, c.writable, c.is_file) for c in files.contexts] == [
        (checkout, False, False), (checkout / "calc.py", True, True), (tmp_path, False, False)]
    assert list(files.baselines) == [checkout / "calc.py"]  # the writable one has a baseline to diff against


def test_the_massgen_command_edits_the_checkout_it_runs_in_with_cwd_context_rw(tmp_path: Path, checkout: Path) -> None:
    readme = str(checkout / "README.md")
    team = {
        "agents": [
            scripted("a", [step(tool="list_directory", args={"path": str(checkout)})],
                     [step(new_answer="Mention pytest in the README.")],
                     present_script=[[step(tool="edit_file", args={"path": readme, "old": "# calc\n",
                                                                   "new": "# calc\n\nTested with pytest.\n"})],
                                     [step(text="README.md now says how to test.")]]),
            scripted("b", [step(when_answers=["agent1"]), step(vote="agent1", reason="ok")]),
        ],
    }
    config = tmp_path / "team.yaml"
    config.write_text(yaml.safe_dump(team))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MASSGEN_")}  # the project's own .massgen/
    done = subprocess.run([sys.executable, "-m", "massgen.cli.main", "--automation", "--cwd-context", "rw",
                           "--config", str(config), "Say how to run the tests"], cwd=checkout, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "RUN_STATUS: completed" in done.stdout
    assert _git(checkout, "status", "--porcelain").splitlines() == [" M README.md"]  # .massgen/ ignores itself
    assert _git(checkout, "diff").count("+Tested with pytest.") == 1
    answer_file = Path(next(line.split(": ", 1)[1] for line in done.stdout.splitlines()
                            if line.startswith("ANSWER_FILE: ")))
    answer = (checkout / answer_file).read_text() if not answer_file.is_absolute() else answer_file.read_text()
    assert answer.startswith("README.md now says how to test.") and f"{readme} (modified)" in answer
    assert (checkout / ".massgen" / "workspaces").is_dir()


def test_run_state_inside_a_context_path_is_out_of_reach_of_the_file_tools(
    tmp_path: Path, checkout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MASSGEN_WORKSPACE_BASE_DIR", str(checkout / ".massgen" / "workspaces"))
    config = with_context_paths(team_config(scripted("a"), scripted("b")), cwd_context=None,
                                question=f"look at @{checkout}")
    files = RunFiles.prepare(config, "run3", checkout / ".massgen" / "logs" / "run3")
    assert files is not None
    (files.workspace("b") / "private.txt").write_text("b's draft")
    tools = files.agent("a", lambda *args: None)
    for path in (files.workspace("b") / "private.txt", files.log_dir, checkout / ".massgen"):
        with pytest.raises(PathDenied, match="run state"):
            tools.guard().check(str(path), "read")
    assert tools.guard().check(str(checkout / "calc.py"), "read").path == checkout / "calc.py"
    assert tools.guard().check("mine.txt", "write").path == files.workspace("a") / "mine.txt"


def test_file_tools_and_mcp_tools_share_the_tool_path_and_the_backends_tool_filters(tmp_path: Path) -> None:
    a = scripted(
        "a",
        [step(tool="write_file", args={"path": "w.txt", "content": "weather"}),
         step(tool="mcp__weather__forecast", args={"city": "Paris"})],
        [step(tool="delete_file", args={"path": "w.txt"})],
        [step(new_answer="{last_tool_result}")],
        mcp_servers=[stdio()], exclude_tools=["delete_file", "mcp__weather__admin_reset"],
    )
    result = run_team(team_config(a, orchestrator={"workspaces": True}), tmp_path)
    assert result.status == "completed", result.reason
    assert result.final_answer == "unknown tool 'delete_file'"  # excluded: neither offered nor run
    trace = records(result)
    offered = of_type(trace, "ModelCallStarted")[0]["payload"]["tools"]
    assert offered[:2] == ["new_answer", "read_file"] and "delete_file" not in offered
    assert offered.index("move_file") < offered.index("mcp__weather__forecast")  # file tools first
    results = {r["payload"]["name"]: r["payload"] for r in of_type(trace, "ToolCallResult")}
    assert results["mcp__weather__forecast"]["content"] == "Sunny in Paris, 21 C"
    assert results["write_file"]["content"].endswith("/a/w.txt") and not results["write_file"]["is_error"]
    assert (tmp_path / "workspaces" / result.run_id / "a" / "w.txt").read_text() == "weather"


def test_a_repl_question_may_name_paths_too(tmp_path: Path, checkout: Path) -> None:
    from massgen.cli.repl.session import Conversation

    conversation = Conversation(team_config(scripted("a")), "test config")
    team = conversation.new_team(f"Fix @{checkout}:w please", [])
    assert [(c.path, c.permission) for c in team.config.orchestrator.context_paths] == [(str(checkout), "write")]
    assert conversation.config.orchestrator.context_paths == []  # for this question only
