"""Whatever a model sends to the file tools and the sandbox: no escape, no crash, nothing silently dropped.

Each test is one scripted team run (or one direct call) for an item of issue 21, and checks
what the user sees, what the trace records, and that nothing appeared outside the workspace.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from support import assert_trace_invariants, of_type, records, run_team, scripted, step, team_config, unavailable

from massgen.configs import ConfigError
from massgen.files import RunFiles
from massgen.files.tree import DIR_FLAGS

if shutil.which("bwrap") is None:
    unavailable("bubblewrap (bwrap) is not installed (Debian package bubblewrap)", module=True)

SANDBOX = {"command_execution": "sandbox", "command_timeout_seconds": 20}


@pytest.fixture(autouse=True)
def _remove_deep_trees(tmp_path: Path) -> Iterator[None]:
    """These tests make trees deeper than Python's recursive rmtree takes; rm(1) removes them."""
    yield
    subprocess.run(["rm", "-rf", "--", *map(str, tmp_path.iterdir())], check=False, timeout=60)


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True,
                          timeout=30).stdout


def _tree(root: Path) -> dict[str, bytes]:
    """Every entry below ``root`` (a link by its target), for 'nothing else changed' checks."""
    found: dict[str, bytes] = {}
    for top, dirs, names in os.walk(root):
        for name in dirs + names:
            path = Path(top) / name
            found[str(path.relative_to(root))] = (os.readlink(path).encode() if path.is_symlink()
                                                  else b"<dir>" if path.is_dir() else path.read_bytes())
    return found


def _no_failures(trace: list[dict[str, object]]) -> None:
    assert not of_type(trace, "ChildFailed", "AgentRestarting", "AgentMarkedFailed", "TurnFailed")


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git checkout holding a nested repository (vendor/lib) and a plain folder (sub)."""
    repo = tmp_path / "project"
    (repo / "sub").mkdir(parents=True)
    (repo / "sub" / "keep.txt").write_text("keep\n")
    (repo / "README.md").write_text("# project\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "start")
    nested = repo / "vendor" / "lib"
    nested.mkdir(parents=True)
    (nested / "lib.py").write_text("x = 1\n")
    _git(nested, "init", "-q")
    return repo


# -- item 1: any .git is protected, and the change report is what is on disk ---------------------------


def test_no_git_metadata_at_any_depth_or_spelling_is_written_and_the_report_lists_only_real_changes(
    tmp_path: Path, checkout: Path
) -> None:
    nested_config = checkout / "vendor" / "lib" / ".git" / "config"
    before = nested_config.read_text()
    attempts = [
        ("edit_file", {"path": str(nested_config), "old": "[core]", "new": '[core]\n\tfsmonitor = "touch pwned"'}),
        ("write_file", {"path": str(checkout / "sub" / ".git" / "hooks" / "post-checkout"), "content": "touch pwned"}),
        ("write_file", {"path": str(checkout / "sub" / ".git"), "content": "gitdir: /tmp/elsewhere\n"}),
        ("write_file", {"path": str(checkout / "vendor" / "lib" / ".GIT" / "config"), "content": "x"}),
        ("write_file", {"path": str(checkout / "sub" / ".git." / "config"), "content": "x"}),
        ("write_file", {"path": str(checkout / "sub" / ".g\u200cit" / "config"), "content": "x"}),
        ("move_file", {"source": str(checkout / "sub" / "keep.txt"), "destination": str(checkout / "sub" / ".Git")}),
    ]
    present = [[step(tool=name, args=args) for name, args in attempts]
               + [step(tool="write_file", args={"path": str(checkout / "NOTES.md"), "content": "notes\n"})],
               [step(text="Wrote NOTES.md.")]]
    a = scripted("a", [step(new_answer="Add NOTES.md.")], present_script=present)
    context = {"path": str(checkout), "permission": "write"}
    result = run_team(team_config(a, orchestrator={"context_paths": [context]}), tmp_path)
    assert result.status == "completed", result.reason

    trace = records(result)
    assert_trace_invariants(trace)
    _no_failures(trace)
    denied = [d["payload"] for d in of_type(trace, "ToolDenied")]
    assert len(denied) == len(attempts)
    assert all(".git (repository metadata)" in d["reason"] for d in denied), denied
    assert nested_config.read_text() == before
    assert not (checkout / "sub" / ".git").exists() and not (checkout / "vendor" / "lib" / ".GIT").exists()
    assert _git(checkout / "vendor" / "lib", "status", "--porcelain") == "?? lib.py\n"
    assert not list(tmp_path.rglob("pwned"))
    changed = of_type(trace, "ContextChanged")[0]["payload"]["files"]
    assert [(f["path"], f["change"]) for f in changed] == [(str(checkout / "NOTES.md"), "added")]
    assert result.final_answer is not None and str(checkout / "NOTES.md") in result.final_answer


def test_the_change_report_lists_whatever_changed_on_disk_whoever_wrote_it(tmp_path: Path, checkout: Path) -> None:
    """Writes no file tool made (an agent CLI, a hook, a sandboxed tool) are in the list and the diff."""
    (checkout / "node_modules" / "pkg").mkdir(parents=True)
    (checkout / "node_modules" / "pkg" / "index.js").write_text("module.exports = 1\n")
    config = team_config(scripted("a"), orchestrator={"context_paths": [{"path": str(checkout),
                                                                         "permission": "write"}]})
    files = RunFiles.prepare(config, "run1", tmp_path / "logs" / "run1")
    assert files is not None
    assert not os.stat(files.baselines[checkout]).st_mode & 0o077  # the copy may hold secrets: private

    (checkout / "vendor" / "lib" / ".git" / "config").write_text('[core]\n\tfsmonitor = "touch pwned"\n')
    (checkout / "node_modules" / "pkg" / "index.js").write_text("module.exports = 2\n")
    (checkout / "sub" / "planted").symlink_to("/etc")
    os.close(os.open(os.fsencode(checkout) + b"/caf\xe9.txt", os.O_CREAT | os.O_WRONLY, 0o644))
    (checkout / "README.md").write_text("# project\n\nchanged\n")
    changed = files.changed()
    assert changed is not None
    listed = {(f["path"].removeprefix(f"{checkout}/"), f["change"]) for f in changed["files"]}
    assert listed == {("vendor/lib/.git/config", "modified"), ("node_modules/pkg/index.js", "modified"),
                      ("sub/planted", "added"), ("caf\\xe9.txt", "added"), ("README.md", "modified")}
    diff = Path(changed["diff_path"]).read_text(encoding="utf-8")
    assert "+++ b/sub/planted\n@@ -0,0 +1 @@\n+(symbolic link to /etc)" in diff and "+changed" in diff
    assert "b/caf\\xe9.txt" in diff and "+(tooling state, not copied: 34 bytes, modified 20" in diff


# -- item 2: any bytes a file system allows, any depth ----------------------------------------------------


def test_names_that_are_not_utf8_and_1500_nested_folders_are_snapshotted_without_a_crash(tmp_path: Path) -> None:
    deep = "d/" * 1500 + "leaf.txt"
    a = scripted(
        "a",
        [step(tool="run_command", args={"command": "touch \"$(printf 'caf\\351.txt')\"; "
                                                   "mkdir -p $(printf 'n/%.0s' $(seq 1500)) && echo x > n/x"}),
         step(tool="write_file", args={"path": deep, "content": "deep\n"}),
         step(tool="write_file", args={"path": "\udcff.txt", "content": "x"}),
         step(tool="list_directory", args={"path": "."}),
         step(tool="search_files", args={"pattern": "leaf.txt"})],
        [step(new_answer="{last_tool_result}")],
        [step(when_answers=["agent2"]), step(vote="agent1", reason="mine")],
    )
    b = scripted("b", [step(new_answer="b")], [step(when_answers=["agent1"]),
                                               step(tool="read_file", args={"path": "agent1.1/" + deep}),
                                               step(vote="agent1", reason="fine")])
    result = run_team(team_config(a, b, orchestrator=SANDBOX, straggler_grace=30), tmp_path)
    assert result.status == "completed", result.reason
    assert result.final_answer == deep

    trace = records(result)
    assert_trace_invariants(trace)
    _no_failures(trace)
    taken = {r["payload"]["label"]: r["payload"] for r in of_type(trace, "SnapshotTaken")}
    # 4: the name "\udcff.txt" was escaped where the (scripted) model's text entered and is written as such
    assert taken["agent1.1"]["error"] is None and taken["agent1.1"]["files"] == 4
    snapshot = os.fsencode(result.log_dir / "snapshots" / "agent1.1")
    assert b"caf\xe9.txt" in os.listdir(snapshot)
    results = {r["payload"]["name"]: r["payload"] for r in of_type(trace, "ToolCallResult")}
    assert "[FILE] caf\\xe9.txt" in results["list_directory"]["content"]
    assert results["read_file"]["content"] == "deep\n" and not results["read_file"]["is_error"]
    escaped = [r["payload"] for r in of_type(trace, "ToolCallResult")
               if r["payload"]["content"].endswith("\\udcff.txt")]
    assert len(escaped) == 1 and not escaped[0]["is_error"]


# -- item 3: malformed arguments are tool errors, never a crash --------------------------------------------


def test_malformed_tool_arguments_are_tool_errors_naming_the_argument(tmp_path: Path) -> None:
    # Lone surrogates and NUL never reach a tool: they are escaped where a model's text enters
    # (tests/test_hostile_text.py).
    bad = [
        ("read_file", {"path": "f.txt", "offset": "a"}, "offset"),
        ("read_file", {"path": "f.txt", "limit": []}, "limit"),
        ("read_file", {"path": "f.txt", "offset": {}}, "offset"),
        ("read_file", {"path": "f.txt", "limit": 0}, "limit"),
        ("edit_file", {"path": "bin.dat", "old": "a", "new": "b"}, "not UTF-8 text"),
        ("write_file", {"path": 7, "content": "x"}, "path"),
        ("move_file", {"source": "f.txt"}, "destination"),
    ]
    a = scripted(
        "a",
        [step(tool="write_file", args={"path": "f.txt", "content": "one\ntwo\n"}),
         step(tool="run_command", args={"command": "printf 'a\\377' > bin.dat"})],
        [step(tool=name, args=args) for name, args, _ in bad],
        [step(tool="read_file", args={"path": "f.txt", "offset": 1, "limit": 1})],
        [step(new_answer="{last_tool_result}")],
    )
    result = run_team(team_config(a, orchestrator=SANDBOX), tmp_path)
    assert result.status == "completed", result.reason
    assert result.final_answer == "two"

    trace = records(result)
    assert_trace_invariants(trace)
    _no_failures(trace)
    outcomes = [r["payload"] for r in of_type(trace, "ToolCallResult")][2:-1]
    assert len(outcomes) == len(bad)
    for outcome, (name, _args, named) in zip(outcomes, bad, strict=True):
        assert outcome["name"] == name and outcome["is_error"], outcome
        assert named in outcome["content"], outcome
    workspace = tmp_path / "workspaces" / result.run_id / "a"
    assert sorted(os.listdir(workspace)) == ["bin.dat", "f.txt"]
    assert (workspace / "bin.dat").read_bytes() == b"a\xff"


# -- item 4: tool calls beside new_answer run first, traced --------------------------------------------------


def test_tool_calls_in_the_same_message_as_new_answer_run_first_and_a_failed_one_holds_the_answer(
    tmp_path: Path
) -> None:
    a = scripted(
        "a",
        [step(tool="write_file", args={"path": "../escape.txt", "content": "x"}),
         step(new_answer="I wrote escape.txt")],
        [step(tool="write_file", args={"path": "notes.txt", "content": "notes\n"}),
         step(new_answer="I wrote notes.txt")],
    )
    result = run_team(team_config(a, orchestrator={"workspaces": True}), tmp_path)
    assert result.status == "completed", result.reason
    assert result.final_answer == "I wrote notes.txt"
    assert (tmp_path / "workspaces" / result.run_id / "a" / "notes.txt").read_text() == "notes\n"
    assert not (tmp_path / "workspaces" / result.run_id / "escape.txt").exists()

    trace = records(result)
    assert_trace_invariants(trace)
    kinds = [(r["type"], r["payload"].get("name")) for r in of_type(
        trace, "ToolCallRequested", "ToolCallResult", "TurnCorrection", "AnswerProposed")]
    assert kinds == [("ToolCallRequested", "write_file"), ("ToolCallResult", "write_file"), ("TurnCorrection", None),
                     ("ToolCallRequested", "write_file"), ("ToolCallResult", "write_file"), ("AnswerProposed", None)]
    correction = of_type(trace, "TurnCorrection")[0]["payload"]["problem"]
    assert "new_answer was not recorded" in correction and "write_file" in correction
    proposed = [r["payload"]["content"] for r in of_type(trace, "AnswerProposed")]
    assert proposed == ["I wrote notes.txt"]


# -- item 5: run_command with a context path that has no .massgen folder --------------------------------------


def test_run_command_works_beside_a_context_path_without_a_massgen_folder(tmp_path: Path) -> None:
    context = tmp_path / "ctx"
    context.mkdir()
    (context / "data.txt").write_text("context data\n")
    a = scripted("a", [step(tool="run_command", args={"command": f"cat {context}/data.txt"})],
                 [step(new_answer="{last_tool_result}")])
    config = team_config(a, orchestrator={**SANDBOX, "context_paths": [{"path": str(context)}]})
    result = run_team(config, tmp_path)
    assert result.status == "completed", result.reason
    assert result.final_answer == "[exit code 0]\ncontext data"
    assert os.listdir(context) == ["data.txt"]  # nothing made in the user's folder
    calls = [r["payload"] for r in of_type(records(result), "ToolCallResult")]
    assert [(c["name"], c["is_error"]) for c in calls] == [("run_command", False)]


# -- item 8: the context copy is bounded ------------------------------------------------------------------


def test_a_writable_context_path_of_the_whole_machine_is_refused_naming_the_path_and_the_limit(tmp_path: Path) -> None:
    team = {"agents": [scripted("a", [step(new_answer="x")])],
            "orchestrator": {"context_paths": [{"path": "/", "permission": "write"}]}}
    (tmp_path / "team.yaml").write_text(yaml.safe_dump(team))
    done = subprocess.run([sys.executable, "-m", "massgen.cli.main", "--config", str(tmp_path / "team.yaml"), "q"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs")})
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("massgen: orchestrator.context_paths[0].path: / holds more than")
    assert "512 MiB" in done.stderr and "context_copy_limit_mb" in done.stderr and "Traceback" not in done.stderr
    copied = sum(p.stat().st_size for p in (tmp_path / "logs").rglob("*") if p.is_file() and not p.is_symlink())
    assert copied < 1 << 20  # a scan, not a copy of the machine
    assert not list((tmp_path / "logs").rglob("shadow"))


def test_the_copy_limit_is_a_setting(tmp_path: Path, checkout: Path) -> None:
    (checkout / "big.bin").write_bytes(b"\0" * (2 << 20))
    rules = {"context_paths": [{"path": str(checkout), "permission": "write"}], "context_copy_limit_mb": 1}
    with pytest.raises(ConfigError, match=r"context_paths\[0\]\.path: .*project holds more than 1 MiB of files"):
        RunFiles.prepare(team_config(scripted("a"), orchestrator=rules), "run1", tmp_path / "logs" / "run1")
    rules["context_copy_limit_mb"] = 4
    assert RunFiles.prepare(team_config(scripted("a"), orchestrator=rules), "run2", tmp_path / "logs" / "run2")


# -- item 9: a folder move carries nothing protected and plants no link ------------------------------------------


def test_a_folder_move_never_carries_a_protected_file_a_git_folder_or_a_symlink(tmp_path: Path, checkout: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (checkout / "conf").mkdir()
    (checkout / "conf" / "prod.env").write_text("KEY=1\n")
    (checkout / "docs").mkdir()
    (checkout / "docs" / "a.md").write_text("a\n")
    a = scripted(
        "a",
        [step(tool="run_command", args={"command": f"mkdir -p planted gitted/.git && ln -s {outside} planted/inner "
                                                   "&& echo x > planted/x && echo h > gitted/.git/HEAD"})],
        [step(new_answer="Move the docs into guide/.")],
        present_script=[
            [step(tool="move_file", args={"source": str(checkout / "conf"), "destination": str(checkout / "c2")}),
             step(tool="move_file", args={"source": str(checkout / "vendor"), "destination": str(checkout / "v2")}),
             step(tool="move_file", args={"source": str(checkout / "docs"), "destination": str(checkout / "conf/d")}),
             step(tool="move_file", args={"source": "planted", "destination": str(checkout / "planted")}),
             step(tool="move_file", args={"source": "gitted", "destination": str(checkout / "gitted")}),
             step(tool="move_file", args={"source": str(checkout / "docs"), "destination": str(checkout / "guide")})],
            [step(text="Moved docs to guide/.")],
        ],
    )
    context = {"path": str(checkout), "permission": "write", "protected_paths": ["conf"]}
    before_outside = _tree(outside)
    result = run_team(team_config(a, orchestrator={**SANDBOX, "context_paths": [context]}), tmp_path)
    assert result.status == "completed", result.reason

    trace = records(result)
    assert_trace_invariants(trace)
    _no_failures(trace)
    moves = [r["payload"] for r in of_type(trace, "ToolCallResult") if r["payload"]["name"] == "move_file"]
    assert [m["is_error"] for m in moves] == [True, True, True, True, True, False]
    reasons = [m["content"] for m in moves]
    assert "protected path" in reasons[0] and ".git (repository metadata)" in reasons[1]
    assert "protected path" in reasons[2]
    assert "planted/inner" in reasons[3] and "symbolic link" in reasons[3]
    assert "gitted/.git" in reasons[4]
    assert (checkout / "conf" / "prod.env").read_text() == "KEY=1\n"
    assert not (checkout / "planted").exists() and not (checkout / "gitted").exists()
    assert (checkout / "guide" / "a.md").read_text() == "a\n"
    assert _tree(outside) == before_outside
    changed = {(Path(f["path"]).relative_to(checkout).as_posix(), f["change"])
               for f in of_type(trace, "ContextChanged")[0]["payload"]["files"]}
    assert changed == {("docs/a.md", "deleted"), ("guide/a.md", "added")}


# -- item 10: the sandbox's user and its /etc ---------------------------------------------------------------------


def test_the_sandbox_runs_as_nobody_with_only_what_programs_need_of_etc(tmp_path: Path) -> None:
    probe = ("id -u; id -un; cat /etc/shadow; cat /etc/gshadow; ls /etc/ssl/private; "
             "echo 'a b' | awk '{print $2}'; python3 -c 'import ssl; print(\"python ok\")'; echo /etc:; ls /etc")
    a = scripted("a", [step(tool="run_command", args={"command": probe})], [step(new_answer="{last_tool_result}")])
    result = run_team(team_config(a, orchestrator=SANDBOX), tmp_path)
    assert result.status == "completed", result.reason
    output = result.final_answer or ""
    lines = output.splitlines()
    assert lines[1:3] == ["65534", "nobody"], output
    assert "cat: /etc/shadow: No such file or directory" in output
    assert "cat: /etc/gshadow: No such file or directory" in output
    assert "ls: cannot access '/etc/ssl/private': No such file or directory" in output
    assert "b" in lines and "python ok" in lines  # alternatives and Python's own /etc still there
    etc = set(lines[lines.index("/etc:") + 1:])
    assert {"passwd", "alternatives", "ld.so.cache"} <= etc
    assert not etc & {"shadow", "gshadow", "sudoers", "ssh", "pip.conf", "npmrc"}
    workspace_file = tmp_path / "workspaces" / result.run_id / "a"
    assert os.listdir(workspace_file) == []
    trace = records(result)
    _no_failures(trace)
    assert of_type(trace, "ToolCallResult")[0]["payload"]["content"].startswith("[exit code 0]")


@pytest.mark.skipif(os.geteuid() != 0, reason="massgen run as root: these machines and CI run so")
def test_run_as_root_agents_work_their_workspaces_as_nobody_and_read_each_others_snapshots(tmp_path: Path) -> None:
    snapshot = tmp_path / "logs" / "run" / "snapshots" / "agent1.1"
    a = scripted(
        "a",
        [step(tool="write_file", args={"path": "plan.md", "content": "plan\n"}),  # written by massgen, as root
         step(tool="run_command", args={"command": "echo step >> plan.md && mkdir out && echo r > out/r.txt && "
                                                   "chmod 600 out/r.txt && cat /proc/self/status"})],
        [step(new_answer="a")],
        [step(when_answers=["agent2"]), step(vote="agent1", reason="mine")],
    )
    b = scripted("b", [step(new_answer="b")],
                 [step(when_answers=["agent1"]),
                  step(tool="run_command", args={"command": f"cat {snapshot}/plan.md {snapshot}/out/r.txt"}),
                  step(vote="agent1", reason="fine")])
    result = run_team(team_config(a, b, orchestrator=SANDBOX, straggler_grace=30), tmp_path)
    assert result.status == "completed", result.reason

    trace = records(result)
    assert_trace_invariants(trace)
    _no_failures(trace)
    commands = [r["payload"] for r in of_type(trace, "ToolCallResult") if r["payload"]["name"] == "run_command"]
    assert [c["is_error"] for c in commands] == [False, False], commands
    status = dict(line.split(":", 1) for line in commands[0]["content"].splitlines() if ":" in line)
    assert status["Uid"].split() == ["65534"] * 4 and status["CapEff"].strip() == "0000000000000000"
    assert commands[1]["content"] == "[exit code 0]\nplan\nstep\nr\n"  # b reads a's snapshot, 0600 file too
    taken = {r["payload"]["label"]: r["payload"] for r in of_type(trace, "SnapshotTaken")}
    assert taken["agent1.1"]["error"] is None and taken["agent1.1"]["files"] == 2
    assert (snapshot / "plan.md").read_text() == "plan\nstep\n"
    workspace = tmp_path / "workspaces" / result.run_id / "a"
    for path in (workspace / "plan.md", workspace / "out" / "r.txt"):
        assert path.stat().st_uid == 65534, path  # the host's nobody, not root


def test_a_deep_tree_walks_with_few_descriptors(tmp_path: Path) -> None:
    from massgen.files.tree import walk

    top = tmp_path / "t"
    os.makedirs(top)
    fd = os.open(top, DIR_FLAGS)
    try:
        here = fd
        for _ in range(3000):
            os.mkdir("n", dir_fd=here)
            child = os.open("n", DIR_FLAGS, dir_fd=here)
            if here != fd:
                os.close(here)
            here = child
        os.close(os.open("end", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=here))
        os.close(here)
        before = len(os.listdir("/proc/self/fd"))
        most = 0
        count = 0
        for entry in walk(fd):  # noqa: B007 (the last entry is checked below)
            count += 1
            most = max(most, len(os.listdir("/proc/self/fd")) - before)
        assert count == 3001 and entry.name == "end" and len(entry.parts) == 3001
        assert most <= 4
    finally:
        os.close(fd)
