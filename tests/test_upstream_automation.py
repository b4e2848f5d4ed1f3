"""Upstream MassGen 0.1.97's automation contract and Python result, key for key from its own wheel.

The expected keys are read out of upstream's source (``upstream_wheel.py``): the lines its
``--automation`` run prints (``SilentDisplay``, ``cli/run.py``, ``cli/entrypoint.py``), every key of
``status.json`` (``CoordinationTracker.save_status_file`` and the helpers it fills it from), the
keys of ``massgen.run``'s dict (``run``, ``get_vote_results``, ``get_coordination_result``) and the
sections of ``build_config`` (``_generate_quickstart_config``). Our side is the real ``massgen``
command (a subprocess) and ``massgen.run_sync`` on scripted teams: one that calls a tool, gets a
correction, works in workspaces and has an agent that fails, so every optional key has a value.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import scripted, step
from upstream_wheel import Shape, dict_shapes, function_node, returned_shape, shape_of, upstream_package

import massgen
from massgen.logs import rebuild_from_trace

QUESTION = "What is 2+2?"
TEAM = {
    "agents": [
        # a tool call, then a reply with no workflow call (a correction), then its answer; then a vote
        scripted("agent_a", [step(tool="write_file", args={"path": "notes.txt", "content": "2+2=4"})],
                 [step(text="Let me think.")], [step(new_answer="4")],
                 [step(when_answers=["agent1", "agent2"]), step(vote="agent2", reason="It shows the working.")]),
        scripted("agent_b", [step(new_answer="2+2=4, so the answer is 4.")],
                 [step(when_answers=["agent1", "agent2"]), step(vote="agent2", reason="Mine shows why.")]),
        scripted("agent_c", [step(fault="raise")]),  # fails for good: upstream's "error" status
    ],
    "orchestrator": {"workspaces": True,
                     "restart": {"max_restarts": 1, "backoff_base_seconds": 0.02, "backoff_max_seconds": 0.1}},
}
# Upstream's automation lines that belong to modes this version does not have (each such flag exits 64,
# tests/test_upstream_cli.py), or to an orchestration restart, which this version does not do.
NOT_HERE = {"RUNTIME_INBOX": "--inbox-dir", "SESSION_DIR": "--step", "ACTION": "--step", "PLAN_DIR": "--plan",
            "PLAN_ID": "--plan", "SPEC_DIR": "--spec", "SPEC_ID": "--spec", "RESTART": "orchestration restarts"}
# The order upstream prints them in a single-question run: entrypoint (start), the silent display
# (its show_final_answer, then cleanup), cli/run.py (after the run), entrypoint (after run_single_question).
UPSTREAM_ORDER = ["LOG_DIR", "STATUS", "QUESTION", "WINNER", "ANSWER_FILE", "DURATION", "TIMELINE", "ANSWER_PREVIEW",
                  "COMPLETED", "ANSWER", "OUTPUT_FILE", "FINAL_DIR"]
_KEY = re.compile(r'(?:_automation_print|print)\(f?"(?:\\n)?([A-Z][A-Z_]+):')


def upstream_line_keys() -> set[str]:
    package = upstream_package()
    keys: set[str] = set()
    for file in ("frontend/displays/silent_display.py", "cli/run.py", "cli/entrypoint.py"):
        source = (package / file).read_text(encoding="utf-8")
        keys |= {k for k in _KEY.findall(source) if file == "frontend/displays/silent_display.py"
                 or "_automation_print(f\"" + k in source}
    return keys - set(NOT_HERE)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One ``massgen --automation`` run of TEAM: its lines (in order) and its folder."""
    folder = tmp_path_factory.mktemp("automation")
    (folder / "team.yaml").write_text(yaml.safe_dump(TEAM), encoding="utf-8")
    env = {**os.environ, "MASSGEN_LOG_BASE_DIR": str(folder / "logs"),
           "MASSGEN_WORKSPACE_BASE_DIR": str(folder / "workspaces")}
    done = subprocess.run([sys.executable, "-m", "massgen.cli.main", "--automation", "--output-file", "out.txt",
                           "--config", "team.yaml", QUESTION], capture_output=True, text=True, timeout=120,
                          cwd=folder, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line.split(": ", 1) if ": " in line else [line.rstrip(":"), ""] for line in done.stdout.splitlines()
             if line and not line.startswith(" ")]
    return {"folder": folder, "env": env, "order": [k for k, _ in lines], "lines": dict(lines),
            "stdout": done.stdout}


def test_automation_prints_every_line_upstream_prints_in_its_order(run: dict[str, Any]) -> None:
    expected = upstream_line_keys()
    assert expected == set(UPSTREAM_ORDER)  # upstream's wheel names no line this test does not know
    ours = [k for k in run["order"] if k in expected]
    assert ours == UPSTREAM_ORDER, run["stdout"]
    # its TIMELINE block, as its SilentDisplay._print_timeline prints it
    assert "\nTIMELINE:\n  [VOTE] " in run["stdout"]
    assert "  [VOTE] agent_a -> agent_b\n         Reason: It shows the working.\n" in run["stdout"]
    assert "  [VOTE] agent_b -> agent_b\n         Reason: Mine shows why.\n" in run["stdout"]
    assert "  [RESULTS]\n    agent_b: 2 votes (winner)\n" in run["stdout"]
    # this version's own lines come after upstream's, with no clash
    last_upstream = max(run["order"].index(k) for k in UPSTREAM_ORDER if k in run["order"])
    assert run["order"].index("RUN_STATUS") > last_upstream and "ATTEMPT_DIR" in run["order"]
    assert run["order"].index("WINNER_LABEL") == run["order"].index("RUN_STATUS") + 1


def test_automation_paths_are_upstreams_layout(run: dict[str, Any]) -> None:
    package = upstream_package()
    entrypoint = (package / "cli/entrypoint.py").read_text(encoding="utf-8")
    after_run = (package / "cli/run.py").read_text(encoding="utf-8")
    # upstream's meanings, read where it prints them: LOG_DIR the session root, STATUS and FINAL_DIR in the
    # attempt, ANSWER in the turn's copy of the attempt's final/
    assert "log_dir = get_log_session_root()" in entrypoint and "get_log_session_dir() / \"final\"" in entrypoint
    assert "_answer_final_dir = _get_lsd_base() / \"final\"" in after_run
    lines = run["lines"]
    root = Path(lines["LOG_DIR"])
    attempt = root / "turn_1" / "attempt_1"
    assert root.is_absolute() and root.name.startswith("log_") and root.parent == run["folder"] / "logs"
    assert Path(lines["STATUS"]) == attempt / "status.json" and Path(lines["ATTEMPT_DIR"]) == attempt
    assert Path(lines["ANSWER_FILE"]) == attempt / "final" / "agent_b" / "answer.txt"
    assert Path(lines["FINAL_DIR"]) == attempt / "final"
    assert Path(lines["ANSWER"]) == root / "turn_1" / "final" / "agent_b" / "answer.txt"
    answer = "2+2=4, so the answer is 4.\n"
    assert Path(lines["ANSWER"]).read_text() == Path(lines["ANSWER_FILE"]).read_text() == answer
    assert Path(lines["OUTPUT_FILE"]).read_text().strip() == answer.strip()
    # $LOG_DIR/status.json, as upstream's skills and review_watcher.sh read it, is the live status
    assert (root / "status.json").read_text() == Path(lines["STATUS"]).read_text()


def test_resume_takes_the_log_dir_automation_printed(run: dict[str, Any], tmp_path: Path) -> None:
    root = Path(run["lines"]["LOG_DIR"])
    done = subprocess.run([sys.executable, "-m", "massgen.cli.main", "--automation", "--resume", str(root)],
                          capture_output=True, text=True, timeout=120, cwd=run["folder"], env=run["env"])
    assert done.returncode == 0, done.stdout + done.stderr
    lines = dict(line.split(": ", 1) for line in done.stdout.splitlines() if ": " in line and line[0] != " ")
    assert Path(lines["LOG_DIR"]) == root  # the same run, its next attempt
    assert Path(lines["STATUS"]) == root / "turn_1" / "attempt_2" / "status.json"
    assert Path(lines["ANSWER"]) == root / "turn_1" / "final" / "agent_b" / "answer.txt"
    assert os.path.realpath(root / "status.json") == str(root / "turn_1" / "attempt_2" / "status.json")


def upstream_status_shape() -> Shape:
    tracker = function_node("coordination_tracker.py", "CoordinationTracker.save_status_file")
    tools = returned_shape(function_node("backend/base_with_custom_tool_and_mcp.py", "get_tool_metrics_summary"),
                           {"by_tool": "tool_stats"})
    rounds = {"[]": returned_shape(function_node("token_manager/token_manager.py", "RoundTokenUsage.to_dict"))}
    reliability = returned_shape(function_node("coordination_tracker.py", "get_agent_reliability"))
    return shape_of(tracker, "status_data", {"tool_metrics": tools, "round_history": rounds,
                                             "reliability": reliability})


def missing_keys(shape: Shape | None, ours: Any, path: str, seen: set[str]) -> list[str]:
    """Upstream's key paths not in ``ours``; ``seen`` collects the paths that had a value to look into."""
    if shape is None or ours is None:
        return []
    seen.add(path)
    if "*" in shape:
        return [m for key, value in ours.items() for m in missing_keys(shape["*"], value, f"{path}.*", seen)]
    if "[]" in shape:
        return [m for item in ours for m in missing_keys(shape["[]"], item, f"{path}[]", seen)]
    missing = [f"{path}.{key}" for key in shape if key not in ours]
    return missing + [m for key, sub in shape.items() if key in ours
                      for m in missing_keys(sub, ours[key], f"{path}.{key}", seen)]


def nested_paths(shape: Shape | None, path: str) -> set[str]:
    """Every path of upstream's shape whose value is a dict (or a list of them), as missing_keys names them."""
    if shape is None:
        return set()
    step = {"*": ".*", "[]": "[]"}
    return {path} | {p for key, sub in shape.items() for p in nested_paths(sub, f"{path}{step.get(key, '.' + key)}")}


def test_status_json_has_every_key_upstreams_tracker_writes(run: dict[str, Any]) -> None:
    shape = upstream_status_shape()
    assert {"round_history", "round_timing", "tool_metrics", "reliability", "workspace_paths"} <= set(
        shape["agents"]["*"]) and "orchestrator_paths" in shape["meta"]
    status = json.loads(Path(run["lines"]["STATUS"]).read_text())
    seen: set[str] = set()
    assert missing_keys(shape, status, "status", seen) == []
    # every nested dict of upstream's had a value here to compare (the run exercises each of them)
    assert nested_paths(shape, "status") <= seen, nested_paths(shape, "status") - seen


def upstream_status_words() -> set[str]:
    """The words upstream's tracker assigns to an agent's ``status``, and those its skill documents."""
    tracker = function_node("coordination_tracker.py", "CoordinationTracker.save_status_file")
    written: set[str] = set()
    for node in ast.walk(tracker):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "status" for t in node.targets):
            values = (node.value.body, node.value.orelse) if isinstance(node.value, ast.IfExp) else (node.value,)
            written |= {v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)}
    skill = (upstream_package() / "skills/massgen-develops-massgen/SKILL.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"`(\w+)`", re.search(r"\*\*Agent status values:\*\*(.*)", skill)[1]))  # type: ignore[index]
    return written | documented


def test_agent_status_words_are_upstreams(run: dict[str, Any]) -> None:
    from massgen.logs.upstream_status import UPSTREAM_WORDS

    words = upstream_status_words()
    assert set(UPSTREAM_WORDS.values()) <= words
    agents = json.loads(Path(run["lines"]["STATUS"]).read_text())["agents"]
    assert {a: v["status"] for a, v in agents.items()} == {"agent_a": "voted", "agent_b": "voted", "agent_c": "error"}
    assert {a: v["state"] for a, v in agents.items()} == {"agent_a": "done", "agent_b": "done", "agent_c": "failed"}
    assert agents["agent_c"]["error"]["type"] == "error" and "scripted fault" in agents["agent_c"]["error"]["message"]


def test_status_json_values_mean_what_upstreams_do(run: dict[str, Any]) -> None:
    status = json.loads(Path(run["lines"]["STATUS"]).read_text())
    a = status["agents"]["agent_a"]
    assert [(r["round_number"], r["round_type"], r["outcome"]) for r in a["round_history"]] == [
        (0, "initial_answer", "answer"), (1, "voting", "vote")]
    assert a["round_history"][0]["tool_calls_count"] == 1 and a["round_history"][0]["api_calls_count"] == 3
    assert a["round_timing"] == {"round_number": 1, "round_start_time": a["round_history"][1]["start_time"]}
    assert a["tool_metrics"]["by_tool"]["write_file"]["success_count"] == 1
    assert a["reliability"]["enforcement_attempts"][0]["reason"] == "no_workflow_tool"
    assert a["reliability"]["total_enforcement_retries"] == 1 and status["agents"]["agent_b"]["reliability"] is None
    snapshots = Path(run["lines"]["ATTEMPT_DIR"]) / "snapshots"
    assert a["workspace_paths"]["snapshot_storage"] == str(snapshots) == status["meta"]["orchestrator_paths"][
        "snapshot_storage"]
    assert Path(a["workspace_paths"]["workspace"], "notes.txt").read_text() == "2+2=4"
    assert status["rounds"]["by_outcome"]["presentation"] == 1 and status["rounds"]["total_rounds"] == sum(
        len(v["round_history"]) for v in status["agents"].values())


def upstream_round_types() -> dict[str, str]:
    """The words upstream's orchestrator starts a round with (``round_type = "voting" if answers else
    "initial_answer"``, outside decomposition mode), and its final presentation's: condition -> word."""
    coordinate = function_node("orchestrator.py", "Orchestrator._stream_agent_execution")
    words = [n.value for n in ast.walk(coordinate) if isinstance(n, ast.Assign) and isinstance(n.value, ast.IfExp)
             and any(isinstance(t, ast.Name) and t.id == "round_type" for t in n.targets)]
    plain = next(w for w in words if "decomposition" not in ast.unparse(w))
    assert isinstance(plain.test, ast.Name) and plain.test.id == "answers"  # the answers the agent is shown
    presenting = ast.parse((upstream_package() / "orchestrator_collaborators/final_presentation_runner.py").read_text(
        encoding="utf-8"))
    presentation = {k.value.value for c in ast.walk(presenting) if isinstance(c, ast.Call)
                    for k in c.keywords if k.arg == "round_type" and isinstance(k.value, ast.Constant)}
    assert isinstance(plain.body, ast.Constant) and isinstance(plain.orelse, ast.Constant)
    return {"shown answers": plain.body.value, "shown none": plain.orelse.value,
            "presentation": presentation.pop()}


def test_round_types_are_the_words_upstreams_orchestrator_writes(run: dict[str, Any]) -> None:
    words = upstream_round_types()
    assert words == {"shown answers": "voting", "shown none": "initial_answer", "presentation": "presentation"}
    status = json.loads(Path(run["lines"]["STATUS"]).read_text())
    rounds = [r for agent in status["agents"].values() for r in agent["round_history"]]
    assert {r["round_type"] for r in rounds} <= set(words.values())
    # agent_a's first turn saw no answers, its second saw both: upstream's initial_answer, then voting
    assert [r["round_type"] for r in status["agents"]["agent_a"]["round_history"]] == [
        words["shown none"], words["shown answers"]]
    assert [r["round_type"] for r in rounds if r["outcome"] == "presentation"] == [words["presentation"]]


def test_orchestrator_paths_is_upstreams_dict_even_without_workspaces(tmp_path: Path) -> None:
    tracker = function_node("coordination_tracker.py", "CoordinationTracker.save_status_file")
    assigned, _, _, _ = dict_shapes(tracker)
    keys = {k.value for k in assigned["orchestrator_paths"].keys if isinstance(k, ast.Constant)}
    assert keys == {"snapshot_storage", "temp_workspace_parent"}
    team = {"agents": [scripted("x", [step(new_answer="4")], [step(vote="x", reason="only one")])]}
    result = massgen.run_sync(QUESTION, config_dict=team)
    status = json.loads((Path(result["log_directory"]) / "status.json").read_text())
    assert status["meta"]["orchestrator_paths"] == dict.fromkeys(keys)  # upstream's dict, its values None
    assert status["meta"]["orchestrator_paths"]["snapshot_storage"] is None


def test_rebuilt_files_equal_the_live_ones(run: dict[str, Any]) -> None:
    attempt = Path(run["lines"]["ATTEMPT_DIR"])
    rebuilt = rebuild_from_trace(attempt, write=False)
    assert {name: (attempt / name).read_text() for name in rebuilt} == rebuilt


def upstream_result_shape() -> Shape:
    api = function_node("__init__.py", "run")
    reporter = "orchestrator_collaborators/final_result_reporter.py"
    votes = returned_shape(function_node(reporter, "get_vote_results"))
    coordination = function_node(reporter, "get_coordination_result")
    _, _, appended, _ = dict_shapes(coordination)
    answers: Shape = {"[]": {k.value: None for k in appended["answers"].keys if isinstance(k, ast.Constant)}}
    usage = shape_of(coordination, "total_usage")
    return shape_of(api, "result", {"vote_results": votes, "answers": answers, "usage": usage})


def test_python_result_has_upstreams_keys_and_meanings(tmp_path: Path) -> None:
    shape = upstream_result_shape()
    assert {"config_used", "vote_results", "final_answer_path", "log_directory"} <= set(shape)
    assert {"voter_details", "is_tie", "total_votes"} <= set(shape["vote_results"])
    config = tmp_path / "team.yaml"
    config.write_text(yaml.safe_dump(TEAM), encoding="utf-8")
    result = massgen.run_sync(QUESTION, str(config), output_file=tmp_path / "out.txt")
    data = result.as_dict()
    seen: set[str] = set()
    assert missing_keys(shape, data, "result", seen) == []
    assert nested_paths(shape, "result") <= seen
    assert data["config_used"] == str(config.resolve())
    votes = data["vote_results"]
    assert votes["vote_counts"] == {"agent_b": 2} and votes["total_votes"] == 2 and votes["is_tie"] is False
    assert sorted(votes["voter_details"]["agent_b"], key=lambda v: v["voter"]) == [
        {"voter": "agent_a", "reason": "It shows the working."}, {"voter": "agent_b", "reason": "Mine shows why."}]
    assert votes["agent_mapping"] == {"agent1": "agent_a", "agent2": "agent_b", "agent3": "agent_c"}
    assert sorted((a["label"], a["agent_id"]) for a in data["answers"]) == [("agent1.1", "agent_a"),
                                                                           ("agent2.1", "agent_b")]
    assert Path(data["log_directory"]) == result.log_dir.parent.parent  # the log_<stamp> root, as upstream's
    assert Path(data["final_answer_path"], "agent_b", "answer.txt").is_file()
    assert data["usage"]["total_tokens"] == data["usage"]["prompt_tokens"] + data["usage"]["completion_tokens"] > 0


def test_a_split_vote_is_a_tie_and_a_dict_config_is_named_config_dict() -> None:
    team = {"agents": [scripted("x", [step(new_answer="4")], [step(when_answers=["agent1", "agent2"]),
                                                              step(vote="agent1", reason="mine")]),
                       scripted("y", [step(new_answer="four")], [step(when_answers=["agent1", "agent2"]),
                                                                 step(vote="agent2", reason="mine too")])]}
    result = massgen.run_sync(QUESTION, config_dict=team)
    assert result["config_used"] == "config_dict"
    assert result["vote_results"]["is_tie"] is True and result["vote_results"]["vote_counts"] == {"x": 1, "y": 1}
    assert massgen.run_sync(QUESTION, team)["config_used"] == "config_dict"


def test_build_config_has_upstreams_sections_with_its_values() -> None:
    quickstart = function_node("config_builder.py", "ConfigBuilder._generate_quickstart_config")
    assigned, _, _, _ = dict_shapes(quickstart)
    upstream = assigned["config"]
    sections = {k.value: v for k, v in zip(upstream.keys, upstream.values, strict=True) if isinstance(k, ast.Constant)}
    built = massgen.build_config(num_agents=2, model="gpt-5", context_paths=["/srv/project"])
    assert list(built) == list(sections)  # agents, orchestrator, timeout_settings, ui
    assert built["timeout_settings"] == ast.literal_eval(sections["timeout_settings"])
    assert built["ui"] == ast.literal_eval(sections["ui"])
    upstream_orchestrator = {k.value for k in assigned["orchestrator_config"].keys if isinstance(k, ast.Constant)}
    assert set(built["orchestrator"]) <= upstream_orchestrator | {"context_paths"}  # upstream sets it after
    assert built["orchestrator"]["context_paths"] == [{"path": "/srv/project", "permission": "write"}]
    values = {k.value: v for k, v in zip(assigned["orchestrator_config"].keys, assigned["orchestrator_config"].values,
                                         strict=True) if isinstance(k, ast.Constant)}
    assert built["orchestrator"]["max_new_answers_per_agent"] == ast.literal_eval(values["max_new_answers_per_agent"])
    assert massgen.build_config()["orchestrator"]["context_paths"] == []  # always set, as upstream's
    # and everything it says is applied here: no "not applied" notice when it is loaded
    assert massgen.resolve_config(massgen.build_config(num_agents=2, model="gpt-5")).notices == ()
