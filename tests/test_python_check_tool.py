"""``check_tools: [python]``: a checking turn may run a short program, confined, and read its output.

Offered only in turns with answers in view (first answers stay the model's own work), beside the
calculator; the result is the program's output and exit status; a computed output equal to an
answer's result is agreement with it. Where no sandbox can be had the tool is not offered and
the run says so once: a warning line to the user and ``RunStarted.warnings`` in the trace.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import FACTOR, of_type, records, run_team, scripted, step, team_config, without_any_sandbox

from massgen.actors.agent.check_tools import PYTHON_SPEC, CheckTools
from massgen.configs import ConfigError, validate_data

CHECK = "print(sum(x * x for x in range(1, 4)))"  # 14


def checking_team() -> list[dict[str, Any]]:
    """a answers 14, b answers 15; each then checks with run_python (and would vote for its own answer)."""
    return [
        scripted("a", [step(new_answer="1 + 4 + 9 = 14.\nAnswer: 14")],
                 [step(when_answers=["agent1", "agent2"]), step(tool="run_python", args={"code": CHECK})],
                 [step(vote="agent1", reason="mine")], check_tools=["calculator", "python"]),
        scripted("b", [step(new_answer="1 + 4 + 9 = 15.\nAnswer: 15")],
                 [step(when_answers=["agent1", "agent2"]), step(tool="run_python", args={"code": CHECK})],
                 [step(vote="agent2", reason="mine")], check_tools=["calculator", "python"]),
    ]


def rules() -> dict[str, Any]:
    return {"max_new_answers_per_agent": 1, "final_answer_strategy": "winner_reuse"}


def question() -> str:
    return "What is 1*1 + 2*2 + 3*3?"


def test_the_python_tool_is_offered_only_with_answers_in_view_and_its_output_is_agreement(tmp_path: Path) -> None:
    result = run_team(team_config(*checking_team(), orchestrator=rules(), turn_timeout=30), tmp_path, question())
    assert result.status == "completed", result.reason
    trace = records(result)
    tools_by_call = [r["payload"]["tools"] for r in of_type(trace, "ModelCallStarted")]
    assert len(tools_by_call) == 4, tools_by_call  # one first answer and one check each
    firsts, checks = [t for t in tools_by_call if "vote" not in t], [t for t in tools_by_call if "vote" in t]
    assert len(firsts) == 2 and not any("run_python" in t or "calculate" in t for t in firsts)
    assert len(checks) == 2 and all("run_python" in t and "calculate" in t for t in checks)
    ran = [r["payload"] for r in of_type(trace, "ToolCallResult")]
    assert [(r["name"], r["content"], r["is_error"]) for r in ran] == [("run_python", "[exit code 0]\n14", False)] * 2
    votes = [r["payload"] for r in of_type(trace, "VoteProposed")]
    # the program printed 14, agent1.1's result: both agree with it, b against its own answer
    assert sorted((v["target"], v["own_result"], v["checked"]) for v in votes) == [("agent1", "14", True)] * 2
    assert result.winner == "a"


def test_a_program_that_fails_is_a_tool_error_with_its_output_and_checks_nothing(tmp_path: Path) -> None:
    agents = checking_team()
    for agent in agents:
        agent["backend"]["script"][1][1]["args"] = {"code": "import socket\nsocket.create_connection(('1.1.1.1', 53))"}
    result = run_team(team_config(*agents, orchestrator=rules(), turn_timeout=30), tmp_path, question())
    trace = records(result)
    ran = [r["payload"] for r in of_type(trace, "ToolCallResult") if r["payload"]["name"] == "run_python"]
    assert ran and all(r["is_error"] and r["content"].startswith("[exit code 1]\nstderr:\nTraceback") for r in ran)
    # no network in the sandbox: no name lookup, no socket that connects
    assert all(any(w in r["content"] for w in ("OSError", "unreachable", "getaddrinfo")) for r in ran)
    assert not any(r["payload"]["checked"] for r in of_type(trace, "VoteProposed"))


def test_the_tool_runs_a_program_in_the_sandbox() -> None:
    import asyncio

    tools = CheckTools(["python"])
    assert tools.specs() == (PYTHON_SPEC,)
    code = "import os\nprint(sorted(os.environ), os.path.exists('/etc'))"
    text, is_error = asyncio.run(tools.chain(None)("run_python", {"code": code}))
    # nothing of the host: only the sandbox's own variables, no /etc
    assert (text, is_error) == ("[exit code 0]\n['HOME', 'PYTHONDONTWRITEBYTECODE', 'PYTHONHASHSEED', 'PYTHONTZPATH', "
                                "'PYTHONUNBUFFERED', 'TMPDIR'] False", False)


def test_a_check_tool_name_the_config_does_not_know_is_refused_and_python_is_known() -> None:
    validate_data({"agents": [{"id": "a", "backend": {"type": "scripted", "check_tools": ["python"]}}]}, "team.yaml")
    with pytest.raises(ConfigError, match="check_tools"):
        validate_data({"agents": [{"id": "a", "backend": {"type": "scripted", "check_tools": ["bash"]}}]}, "t.yaml")


def test_without_a_sandbox_the_tool_is_not_offered_and_the_run_says_so_once(tmp_path: Path) -> None:
    """A real ``massgen`` run with no sandbox at all: one warning line, a trace record, no tool offered."""
    config = tmp_path / "team.yaml"
    config.write_text(yaml.safe_dump({"agents": checking_team(), "orchestrator": rules(),
                                      "timeout_settings": {"orchestrator_timeout_seconds": 60 * FACTOR}}))
    env = without_any_sandbox(tmp_path)
    done = subprocess.run([sys.executable, "-m", "massgen.cli.main", "--config", str(config), question()],
                          capture_output=True, text=True, env=env, timeout=120 * FACTOR, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if "check_tools" in line]
    assert warned == ["massgen: warning: check_tools: python not applied for a, b: the Python sandbox for programs is "
                      "not installed here; add it with: pip install 'massgen-actors[sandbox]'"], done.stderr
    trace = next((tmp_path / "logs").glob("**/trace.jsonl"))
    from massgen.logs import read_trace

    found = read_trace(trace.parent)
    started = of_type(found, "RunStarted")[0]["payload"]
    assert started["warnings"] == [warned[0].removeprefix("massgen: warning: ")]
    tools = [r["payload"]["tools"] for r in of_type(found, "ModelCallStarted")]
    assert tools and not any("run_python" in t for t in tools)
    assert any("calculate" in t for t in tools)  # the calculator needs no sandbox: still offered


def test_a_grammar_constrained_model_runs_a_program_as_a_json_action(tmp_path: Path) -> None:
    """Chat Completions in json_schema mode (how the local team's backend decides): the check turn is one
    JSON call whose actions include run_python beside vote; the program's output 4 agrees with agent1.1."""
    import json

    from test_answer_quality import TeamServer, chat_agent
    from wire.protocols import chat_text

    def model(body: dict[str, Any]) -> list[bytes]:
        last = body["messages"][-1]["content"]
        if "response_format" not in body:
            first = "2 + 2 = 4.\nAnswer: 4" if "agent_a" in body["messages"][0]["content"] else "2 + 2 = 5.\nAnswer: 5"
            return chat_text(first)
        if "Result of tool run_python" in last:
            return chat_text(json.dumps({"action": "vote", "agent_id": "agent2.1", "reason": "it holds"}))
        return chat_text(json.dumps({"action": "run_python", "code": "print(2 + 2)"}))

    with TeamServer(model) as server:
        agents = [{**chat_agent(name, server, tool_mode="json_schema", check_tools=["python"]),
                   "system_message": f"You are {name}."} for name in ("agent_a", "agent_b")]
        result = run_team(team_config(*agents, orchestrator=rules(), turn_timeout=30), tmp_path)
        bodies = server.bodies()
    assert result.status == "completed", result.reason
    checks = [b for b in bodies if "response_format" in b]
    assert checks and all("run_python" in json.dumps(b["response_format"]) for b in checks)
    trace = records(result)
    ran = [(r["payload"]["name"], r["payload"]["content"]) for r in of_type(trace, "ToolCallResult")]
    assert ran == [("run_python", "[exit code 0]\n4")] * 2
    votes = [r["payload"] for r in of_type(trace, "VoteProposed")]
    assert [(v["target"], v["own_result"], v["checked"]) for v in votes] == [("agent1", "4", True)] * 2
    assert result.winner == "agent_a"
