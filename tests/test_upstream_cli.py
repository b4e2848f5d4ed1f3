"""Upstream MassGen 0.1.97's command line, used as its users and its own agent skills use it.

Each test runs the real ``massgen`` command (a subprocess, or ``main`` in-process where only the
exit code and output matter), on scripted teams (no model), and checks what the user sees and
what the trace recorded. Upstream's flag list comes from its own wheel (``upstream_wheel.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import scripted, step
from upstream_wheel import Flag, upstream_flags

from massgen.cli import upstream_flags as table
from massgen.cli.main import build_parser, main
from massgen.logs import read_trace

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = Path(__file__).parent / "configs"
EXAMPLE = "@examples/basic/scripted_three_agents"
QUESTION = "Which is larger, 9.11 or 9.9?"
# Upstream's own shell snippet (skills/massgen/references/evaluate/workflow.md), then the same for
# the other two lines its SKILL.md documents; $WORK_DIR is the test's folder.
UPSTREAM_SNIPPET = """\
LOG_DIR=$(grep -m1 '^LOG_DIR:' $WORK_DIR/output.log | cut -d' ' -f2)
STATUS=$(grep -m1 '^STATUS:' $WORK_DIR/output.log | cut -d' ' -f2)
ANSWER=$(grep -m1 '^ANSWER:' $WORK_DIR/output.log | cut -d' ' -f2)
printf '%s\\n%s\\n%s\\n' "$LOG_DIR" "$STATUS" "$ANSWER"
"""


def env_for(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs")}


def massgen(*args: str, tmp_path: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "massgen.cli.main", *args], capture_output=True, text=True,
                          env=env_for(tmp_path), timeout=timeout, cwd=tmp_path)


def fields(output: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in output.splitlines() if ": " in line)


def started(log_dir: str | Path) -> dict[str, Any]:
    record = read_trace(Path(log_dir))[0]
    assert record["type"] == "RunStarted"
    payload: dict[str, Any] = record["payload"]
    return payload


# -- automation -------------------------------------------------------------------------------


def test_upstreams_shell_snippet_finds_the_log_dir_the_live_status_and_the_answer(tmp_path: Path) -> None:
    command = (f"{sys.executable} -m massgen.cli.main --automation --config {EXAMPLE} '{QUESTION}' "
               "> $WORK_DIR/output.log 2>&1; echo $? > $WORK_DIR/rc; " + UPSTREAM_SNIPPET)
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**env_for(tmp_path), "WORK_DIR": str(tmp_path)})
    assert (tmp_path / "rc").read_text().strip() == "0", (tmp_path / "output.log").read_text()
    root, status_file, answer_file = map(Path, done.stdout.splitlines())
    log_dir = root / "turn_1" / "attempt_1"  # LOG_DIR is the run's log_<stamp> root, as upstream's
    assert root.is_absolute() and (log_dir / "trace.jsonl").is_file()
    assert status_file == log_dir / "status.json"
    assert answer_file == root / "turn_1" / "final" / "agent_b" / "answer.txt"  # upstream's turn-level copy
    assert answer_file.read_text().startswith("9.9 is larger.")
    status = json.loads(status_file.read_text())
    assert status["is_complete"] is True and status["finish_reason"] == "completed"
    assert status["results"]["winner"] == "agent_b" and status["results"]["votes"] == {"agent2.1": 3}
    assert status["results"]["final_answer_preview"].startswith("9.9 is larger.")
    assert status["coordination"]["completion_percentage"] == 100
    assert {a["error"] for a in status["agents"].values()} == {None}
    assert status["agents"]["agent_a"]["vote_cast"]["voted_for_agent"] == "agent_b"
    finished = read_trace(log_dir)[-1]
    assert finished["type"] == "RunFinished" and finished["payload"]["winner"] == "agent_b"
    out = fields((tmp_path / "output.log").read_text())
    assert out["WINNER"] == "agent_b" and out["ANSWER_FILE"] == str(log_dir / "final" / "agent_b" / "answer.txt")
    assert out["RUN_STATUS"] == "completed" and out["WINNER_LABEL"] == "agent2.1"
    assert out["COMPLETED"].startswith("3 agents, ") and out["QUESTION"] == QUESTION
    viewer = massgen("viewer", str(root), tmp_path=tmp_path)  # what upstream's snippet does next
    assert viewer.returncode == 0 and "9.9 is larger." in viewer.stdout


def test_status_json_says_in_progress_while_the_run_goes_on(tmp_path: Path) -> None:
    process = subprocess.Popen([sys.executable, "-m", "massgen.cli.main", "--automation", "--config",
                                str(CONFIGS / "slow_team.yaml"), "--orchestrator-timeout", "4", "q"],
                               stdout=subprocess.PIPE, text=True, env=env_for(tmp_path), cwd=tmp_path)
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        status_line = process.stdout.readline()
        assert first.startswith("LOG_DIR: ") and status_line.startswith("STATUS: ")
        status_file = Path(status_line.split(": ", 1)[1].strip())
        seen: dict[str, Any] = {}
        # quick's answer is in the trace long before the 4 s deadline; status.json follows within 0.25 s.
        # A file has no event to wait on: poll it, as upstream's users do.
        while process.poll() is None and not seen.get("rounds", {}).get("by_outcome", {}).get("answer"):
            if status_file.is_file():
                seen = json.loads(status_file.read_text() or "{}")
            time.sleep(0.05)
        assert seen["is_complete"] is False and seen["finish_reason"] == "in_progress"
        assert seen["results"]["winner"] is None and seen["coordination"]["phase"] == "initial_answer"
        assert seen["agents"]["slow"]["status"] == "streaming"  # upstream's word for an agent at work
        assert seen["agents"]["slow"]["round_history"][0]["outcome"] == ""  # its open round, as upstream's
        rest = process.communicate(timeout=60)[0]
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 3
    final = json.loads(status_file.read_text())
    assert final["is_complete"] is True and final["finish_reason"] == "timeout"
    assert "RUN_STATUS: timeout" in rest and "ANSWER: " in rest


def test_stream_events_with_automation_keeps_stdout_for_events(tmp_path: Path) -> None:
    done = massgen("--automation", "--stream-events", "--config", EXAMPLE, QUESTION, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[-1]["type"] == "final_answer" and events[-1]["final_answer"].startswith("9.9 is larger.")
    lines = fields(done.stderr)
    assert Path(lines["STATUS"]).is_file() and lines["RUN_STATUS"] == "completed"


# -- the flag table ---------------------------------------------------------------------------


def _sample(flag: Flag) -> list[str]:
    """The flag with a value upstream's parser would take."""
    shape = flag.shape
    if shape.get("action") in ("store_true", "store_false"):
        return [flag.name]
    if isinstance(shape.get("choices"), list):
        return [flag.name, str(shape["choices"][0])]
    if flag.name == "--backend":
        return [flag.name, "openai"]
    return [flag.name, "1" if shape.get("type") == "int" else "x"]


UPSTREAM = upstream_flags()


def test_upstreams_parser_is_read_whole() -> None:
    names = [f.name for f in UPSTREAM]
    assert len(names) == len(set(names)) == 78
    assert {"--quick", "--quickstart", "--web-port", "--plan", "--personas", "--rate-limit"} <= set(names)


@pytest.mark.parametrize("flag", UPSTREAM, ids=lambda f: f.name)
def test_every_upstream_flag_is_in_the_table_and_parses(flag: Flag) -> None:
    entry = table.BY_FLAG.get(flag.name)
    assert entry is not None, f"{flag.name} is missing from cli/upstream_flags.py"
    assert f"| `{flag.name}` |" in (ROOT / "docs" / "flags.md").read_text()
    parser = build_parser()
    if entry.status == "terminal UI" and flag.name not in parser._option_string_actions:
        pytest.skip(f"{flag.name} comes with the terminal UI (issue 23)")
    parsed = parser.parse_args([*_sample(flag), "q"])
    assert parsed.question == "q"


def test_the_docs_table_is_the_code_table() -> None:
    assert table.markdown_table() in (ROOT / "docs" / "flags.md").read_text()


def test_quick_is_its_own_flag_and_no_flag_is_abbreviated(capsys: pytest.CaptureFixture[str]) -> None:
    parsed = build_parser().parse_args(["--quick", "q"])
    assert parsed.quick is True and parsed.quickstart is False
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(["--orchestrator", "5", "q"])  # no longer short for --orchestrator-timeout
    assert stopped.value.code == 64


NOT_AVAILABLE = [e for e in table.TABLE if e.status == "not available"]


def _entry_args(entry: table.UpstreamFlag) -> list[str]:
    shape = entry.shape
    if shape.get("action") in ("store_true",):
        return [entry.flag]
    if "choices" in shape:
        return [entry.flag, shape["choices"][0]]
    return [entry.flag, "1" if shape.get("type") is int else "x"]


@pytest.mark.parametrize("entry", NOT_AVAILABLE, ids=lambda e: e.flag)
def test_a_flag_that_is_not_available_exits_64_and_says_why(entry: table.UpstreamFlag,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*_entry_args(entry), "--config", EXAMPLE, "q"]) == 64
    err = capsys.readouterr().err
    assert f"{entry.flag}: not available in this version: {entry.what}" in err


@pytest.mark.parametrize("args, says", [
    (["--coordination-mode", "decomposition"], "--coordination-mode decomposition: not available"),
    (["--personas", "perspective"], "--personas perspective: not available"),
])
def test_a_value_that_is_not_available_exits_64(args: list[str], says: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*args, "--config", EXAMPLE, "q"]) == 64
    assert says in capsys.readouterr().err


# -- flags that work --------------------------------------------------------------------------


def test_system_message_model_and_base_url_keep_a_scripted_teams_scripts(tmp_path: Path) -> None:
    done = massgen("--automation", "--config", EXAMPLE, "--system-message", "Be brief.", "--model", "gpt-5",
                   "--base-url", "http://127.0.0.1:9/v1", QUESTION, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    out = fields(done.stdout)
    assert Path(out["ANSWER"]).read_text().startswith("9.9 is larger.")
    assert "--model and --base-url: not applied to agent 'agent_a' (backend scripted calls no model)" in done.stderr
    agents = started(out["ATTEMPT_DIR"])["config"]["agents"]
    assert {a["system_message"] for a in agents} == {"Be brief."}
    assert all(a["backend"]["script"] and a["backend"].get("base_url") is None for a in agents)
    assert "Your reply was empty" not in (Path(out["ATTEMPT_DIR"]) / "trace.jsonl").read_text()


def test_quick_gives_one_answer_per_agent_and_no_presentation(tmp_path: Path) -> None:
    done = massgen("--automation", "--quick", "--config", EXAMPLE, QUESTION, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    trace = read_trace(Path(fields(done.stdout)["ATTEMPT_DIR"]))
    rules = trace[0]["payload"]["config"]["orchestrator"]
    assert rules["max_new_answers_per_agent"] == 1 and rules["final_answer_strategy"] == "winner_reuse"
    answers = [r["payload"]["agent"] for r in trace if r["type"] == "AnswerAccepted"]
    assert sorted(answers) == ["agent_a", "agent_b", "agent_c"]
    assert not [r for r in trace if r["type"] == "PresentFinal"]


def test_single_agent_keeps_the_named_agent_or_says_which_exist(tmp_path: Path) -> None:
    done = massgen("--automation", "--single-agent", "agent_b", "--config", EXAMPLE, QUESTION, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert started(fields(done.stdout)["ATTEMPT_DIR"])["agents"] == ["agent_b"]
    first = massgen("--automation", "--single-agent", "--config", EXAMPLE, QUESTION, tmp_path=tmp_path)
    assert started(fields(first.stdout)["ATTEMPT_DIR"])["agents"] == ["agent_a"]
    wrong = massgen("--single-agent", "agent_z", "--config", EXAMPLE, QUESTION, tmp_path=tmp_path)
    assert wrong.returncode == 1
    assert "--single-agent agent_z: the config has no agent 'agent_z' (its agents: agent_a, agent_b, agent_c)" \
        in wrong.stderr


def test_cwd_context_read_and_no_parse_at_references(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    done = massgen("--automation", "--cwd-context", "read", "--no-parse-at-references", "--config", EXAMPLE,
                   "Summarise @notes please", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    paths = started(fields(done.stdout)["ATTEMPT_DIR"])["config"]["orchestrator"]["context_paths"]
    assert paths == [{"path": str(tmp_path), "permission": "read", "protected_paths": []}]
    parsed = massgen("--automation", "--config", EXAMPLE, "Summarise @notes please", tmp_path=tmp_path)
    paths = started(fields(parsed.stdout)["ATTEMPT_DIR"])["config"]["orchestrator"]["context_paths"]
    assert [p["path"] for p in paths] == [str(tmp_path / "notes")]


def test_example_show_schema_generate_config_and_validate_json(tmp_path: Path) -> None:
    example = massgen("--example", "basic_multi", tmp_path=tmp_path)
    assert example.returncode == 0
    ours = ROOT / "configs" / "examples" / "basic" / "multi" / "three_agents_default.yaml"
    assert example.stdout == ours.read_text()
    schema = massgen("--show-schema", "--with-examples", tmp_path=tmp_path)
    assert schema.returncode == 0 and "final_answer_strategy: Literal" in schema.stdout
    assert "  basic/scripted_three_agents\n" in schema.stdout
    scripted_keys = massgen("--show-schema", "--schema-backend", "scripted", tmp_path=tmp_path)
    assert "  script: (list)" in scripted_keys.stdout or "  script:" in scripted_keys.stdout
    target = tmp_path / "made" / "team.yaml"
    made = massgen("--generate-config", str(target), "--config-backend", "openai", "--config-model", "gpt-5-mini",
                   "--config-agents", "2", tmp_path=tmp_path)
    assert made.returncode == 0, made.stderr
    made_config = yaml.safe_load(target.read_text())
    assert made_config["agents"] == [  # upstream's quickstart gives each agent a file workspace too
        {"id": f"agent_{c}", "backend": {"type": "openai", "model": "gpt-5-mini", "cwd": "workspace"}} for c in "ab"]
    assert list(made_config) == ["agents", "orchestrator", "timeout_settings", "ui"]  # upstream's quickstart sections
    checked = massgen("--validate", str(target), "--json", tmp_path=tmp_path)
    assert checked.returncode == 0
    assert json.loads(checked.stdout) == {"config": str(target), "valid": True, "errors": [], "warnings": [],
                                          "agents": ["agent_a", "agent_b"]}
    broken = tmp_path / "broken.yaml"
    broken.write_text("agents: []\n")
    refused = massgen("--validate", str(broken), "--json", tmp_path=tmp_path)
    assert refused.returncode == 1 and json.loads(refused.stdout)["valid"] is False


def test_init_writes_the_quickstart_config(tmp_path: Path) -> None:
    done = massgen("--init", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".massgen" / "config.yaml").is_file()


def test_upstream_example_names_resolve_or_point_to_ours(tmp_path: Path) -> None:
    shipped_upstream = massgen("--validate", "@examples/tools/mcp/claude_mcp_example", tmp_path=tmp_path)
    assert shipped_upstream.returncode == 1
    assert ("@examples/tools/mcp/claude_mcp_example is an example of upstream MassGen 0.1.97 "
            "(tools/mcp/claude_mcp_example.yaml) that this version does not ship; the nearest here: "
            "@examples/tools/mcp/stdio_fetch") in shipped_upstream.stderr
    same_name = massgen("--validate", "@examples/basic/multi/two_agents_gemini", tmp_path=tmp_path)
    assert same_name.returncode == 0 and "2 agents" in same_name.stdout


# -- subcommands ------------------------------------------------------------------------------


def _tool_team(tmp_path: Path) -> Path:
    team = tmp_path / "tools.yaml"
    team.write_text(yaml.safe_dump({
        "agents": [scripted("a", [step(tool="write_file", args={"path": "x.txt", "content": "hi"})],
                            [step(tool="read_file", args={"path": "missing.txt"})],
                            [step(new_answer="done")], [step(vote="agent1.1")])],
        "orchestrator": {"workspaces": True}}))
    return team


def test_logs_tools_counts_the_calls_from_the_trace(tmp_path: Path) -> None:
    run = massgen("--automation", "--config", str(_tool_team(tmp_path)), "q", tmp_path=tmp_path)
    assert run.returncode == 0, run.stderr
    listed = massgen("logs", "tools", "--sort", "calls", "--json", tmp_path=tmp_path)
    assert listed.returncode == 0, listed.stderr
    rows = {row["tool"]: row for row in json.loads(listed.stdout)}
    assert rows["write_file"]["call_count"] == 1 and rows["write_file"]["success_count"] == 1
    assert rows["read_file"]["failure_count"] == 1
    status = json.loads(Path(fields(run.stdout)["STATUS"]).read_text())
    assert status["tools"]["total_calls"] == 2 and status["tools"]["total_failures"] == 1
    text = massgen("logs", "tools", tmp_path=tmp_path)
    assert "write_file" in text.stdout and "read_file" in text.stdout


def test_logs_analyze_prints_a_prompt_or_has_a_team_write_the_report(tmp_path: Path) -> None:
    run = massgen("--automation", "--config", EXAMPLE, QUESTION, tmp_path=tmp_path)
    log_dir = Path(fields(run.stdout)["ATTEMPT_DIR"])
    prompt = massgen("logs", "analyze", tmp_path=tmp_path)
    assert prompt.returncode == 0
    assert f"write your findings to {log_dir / 'ANALYSIS_REPORT.md'}" in prompt.stdout
    assert "Winner: agent_b; answers 3, votes 3" in prompt.stdout and str(log_dir / "trace.jsonl") in prompt.stdout
    analyst = tmp_path / "analyst.yaml"
    analyst.write_text(yaml.safe_dump({"agents": [scripted("analyst", [step(new_answer="The run went well.")],
                                                           [step(vote="agent1.1")])]}))
    report = massgen("logs", "analyze", str(log_dir), "--mode", "self", "--config", str(analyst), "--ui",
                     "automation", tmp_path=tmp_path)
    assert report.returncode == 0, report.stderr
    assert (log_dir / "ANALYSIS_REPORT.md").read_text() == "The run went well.\n"
    analysed = read_trace(Path(fields(report.stdout)["ATTEMPT_DIR"]))[0]["payload"]
    assert analysed["config"]["orchestrator"]["context_paths"][0]["path"] == str(log_dir.resolve())
    again = massgen("logs", "analyze", str(log_dir), "--mode", "self", "--config", str(analyst),
                    tmp_path=tmp_path)
    assert again.returncode == 1 and "--force replaces it" in again.stderr
    listed = massgen("logs", "list", "--analyzed", "--json", tmp_path=tmp_path)
    assert [row["log_dir"] for row in json.loads(listed.stdout)] == [str(log_dir)]


def test_export_writes_the_run_as_an_archive(tmp_path: Path) -> None:
    run = massgen("--automation", "--config", EXAMPLE, QUESTION, tmp_path=tmp_path)
    root = Path(fields(run.stdout)["LOG_DIR"])  # the run's log_<stamp> root
    dry = massgen("export", "--dry-run", "--json", tmp_path=tmp_path)
    assert dry.returncode == 0 and json.loads(dry.stdout)["archive"] is None
    assert not list(tmp_path.glob("*.tar.gz"))
    done = massgen("export", root.name, "--yes", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    with tarfile.open(tmp_path / f"{root.name}.tar.gz") as archive:
        names = archive.getnames()
    assert f"{root.name}/turn_1/attempt_1/trace.jsonl" in names
    assert f"{root.name}/turn_1/attempt_1/final/agent_b/answer.txt" in names
    bad = massgen("export", "--turns", "x-y", tmp_path=tmp_path)
    assert bad.returncode == 1 and '--turns \'x-y\': give "all", "latest", "N" or "N-M"' in bad.stderr


def test_export_never_replaces_a_file_unless_told_to(tmp_path: Path) -> None:
    massgen("--automation", "--config", EXAMPLE, QUESTION, tmp_path=tmp_path)
    config = tmp_path / "team.yaml"
    config.write_text("agents: []  # the user's work\n", encoding="utf-8")
    refused = massgen("export", "-o", "team.yaml", tmp_path=tmp_path)
    assert refused.returncode == 1 and "team.yaml exists; --yes replaces it" in refused.stderr
    assert config.read_text(encoding="utf-8") == "agents: []  # the user's work\n"
    assert massgen("export", "-o", "team.yaml", "--yes", tmp_path=tmp_path).returncode == 0
    assert tarfile.is_tarfile(config)


def test_export_archives_a_workspace_snapshot_nested_1500_folders_deep(tmp_path: Path) -> None:
    # Issue 37: an agent's one `mkdir -p` made a 1,500-deep workspace; `massgen export` then ended in
    # RecursionError (Path.rglob recurses once per level).
    run = massgen("--automation", "--config", EXAMPLE, QUESTION, tmp_path=tmp_path)
    attempt = Path(fields(run.stdout)["ATTEMPT_DIR"])
    root = attempt.parents[1]
    deep = attempt / "snapshots" / "agent1.1" / os.path.join(*["d"] * 1500)
    subprocess.run(["mkdir", "-p", str(deep)], check=True)  # as an agent would; os.makedirs recurses
    (deep / "bottom.txt").write_text("the bottom\n")
    try:
        done = massgen("export", root.name, "--yes", "--workspace-limit", "1MB", tmp_path=tmp_path)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
        with tarfile.open(tmp_path / f"{root.name}.tar.gz") as archive:
            bottom = next(m for m in archive.getmembers() if m.name.endswith("/bottom.txt"))
            assert bottom.name.split("/").count("d") == 1500
            extracted = archive.extractfile(bottom)
            assert extracted is not None and extracted.read() == b"the bottom\n"
    finally:
        subprocess.run(["rm", "-rf", str(attempt / "snapshots")], check=True)  # shutil.rmtree recurses too


@pytest.mark.parametrize("args, says", [
    (["shares", "list"], "massgen shares: not available in this version"),
    (["viewer", "--web"], "--web: not available in this version"),
])
def test_subcommands_that_are_not_available_exit_64_and_never_run_a_team(
        args: list[str], says: str, tmp_path: Path) -> None:
    done = massgen(*args, tmp_path=tmp_path)
    assert done.returncode == 64 and says in done.stderr
    assert not (tmp_path / "logs").exists()


def test_viewer_and_export_without_runs_say_so(tmp_path: Path) -> None:
    for command in ("viewer", "export"):
        done = massgen(command, tmp_path=tmp_path)
        assert done.returncode == 1 and "no runs logged in" in done.stderr and "Traceback" not in done.stderr


def test_the_flags_table_covers_every_parser_dest() -> None:
    """Each upstream flag added here reads back from the parsed namespace under upstream's dest."""
    parsed = build_parser().parse_args(["q"])
    for entry in table.TABLE:
        if entry.ours or entry.status == "terminal UI":
            continue
        assert isinstance(parsed, argparse.Namespace) and hasattr(parsed, table._dest(entry)), entry.flag
