"""Teams whose agents use MCP tools: calls, results, kills, hangs, withdrawal, no orphans.

Real MCP servers as subprocesses (``tests/mcp_servers/weather.py``); the conftest guard
checks the process table after every test, grandchildren included.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest
from mcp_support import (
    SERVER,
    stdio,
    wait_until,
)
from support import FACTOR, assert_trace_invariants, of_type, records, run_team, scripted, step, team_config

from massgen.actors.run.team import Team
from massgen.cli.progress import describe
from massgen.logs import LogProjection

# -- a team whose agent uses the tools ------------------------------------------------------------------


def mcp_invariants(trace: list[dict[str, Any]]) -> None:
    """Every call an agent made got one result (none if that agent incarnation was given up on);
    nothing reached a server incarnation that was given up on."""
    gone = {f"{r['payload']['name']}#{r['payload']['incarnation']}"
            for r in of_type(trace, "AgentRestarting", "AgentMarkedFailed")}
    calls = [r for r in of_type(trace, "McpCallTool") if not r["sender"].startswith("supervisor")]
    results = [r for r in of_type(trace, "McpToolResult") if r["sender"].startswith("supervisor")]
    for call in calls:
        answered = [r for r in results if r["payload"]["call_id"] == call["payload"]["call_id"]]
        expected = {0, 1} if call["sender"] in gone else {1}
        assert len(answered) in expected, f"call {call['payload']['call_id']} answered {len(answered)} times"
    given_up: set[str] = set()
    for r in trace:
        if r["type"] == "McpServerRestarting" or (r["type"] == "McpServerFailed" and r["payload"]["permanent"]):
            given_up.add(f"{r['payload']['name']}#{r['payload']['incarnation']}")
        elif r["kind"] == "tell" and r["to"] in given_up:
            raise AssertionError(f"{r['type']} (seq {r['seq']}) sent to {r['to']} after it was given up")


def tool_agent(*calls: list[dict[str, Any]], server: dict[str, Any], **backend: Any) -> dict[str, Any]:
    return scripted("a", *calls, mcp_servers=[server], **backend)


def tools_offered(trace: list[dict[str, Any]]) -> list[list[str]]:
    return [[n for n in r["payload"]["tools"] if n.startswith("mcp__")] for r in of_type(trace, "ModelCallStarted")
            if r["payload"]["tools"]]


@pytest.mark.parametrize("transport", ["stdio", "streamable-http"])
def test_an_agent_calls_a_tool_and_answers_with_its_result(
    transport: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    server = stdio() if transport == "stdio" else {
        "name": "weather", "type": "streamable-http", "url": request.getfixturevalue("http_url")}
    config = team_config(tool_agent(
        [step(tool="mcp__weather__forecast", args={"city": "Paris"})],
        [step(new_answer="Tomorrow: {last_tool_result}")],
        server=server, exclude_tools=["mcp__weather__admin_reset"],
    ))
    result = run_team(config, tmp_path)

    assert result.status == "completed" and result.final_answer == "Tomorrow: Sunny in Paris, 21 C"
    trace = records(result)
    assert_trace_invariants(trace)
    mcp_invariants(trace)
    first = tools_offered(trace)[0]
    assert "mcp__weather__forecast" in first and "mcp__weather__admin_reset" not in first
    [done] = of_type(trace, "ToolCallResult")
    assert done["payload"]["content"] == "Sunny in Paris, 21 C" and not done["payload"]["is_error"]
    hops = [(r["sender"], r["to"]) for r in of_type(trace, "McpCallTool", "McpToolResult")]
    assert hops == [("a#1", "supervisor#1"), ("supervisor#1", "mcp:a:weather#1"),
                    ("mcp:a:weather#1", "supervisor#1"), ("supervisor#1", "a#1")]


def test_a_server_killed_mid_call_fails_that_call_and_is_restarted_for_the_next(tmp_path: Path) -> None:
    config = team_config(tool_agent(
        [step(tool="mcp__weather__die")],
        [step(tool="mcp__weather__forecast", args={"city": "Oslo"})],  # made while the server restarts
        [step(new_answer="{last_tool_result}")],
        server=stdio(),
    ))
    result = run_team(config, tmp_path)

    assert result.status == "completed" and result.final_answer == "Sunny in Oslo, 21 C"
    trace = records(result)
    assert_trace_invariants(trace)
    mcp_invariants(trace)
    died, retried = of_type(trace, "ToolCallResult")
    assert died["payload"]["is_error"] and "killed by SIGKILL" in died["payload"]["content"]
    assert "being restarted" in died["payload"]["content"]
    assert not retried["payload"]["is_error"]
    [failed] = of_type(trace, "McpServerFailed")
    assert (failed["sender"], failed["payload"]["where"]) == ("mcp:a:weather#1", "exited")
    assert [r["payload"]["incarnation"] for r in of_type(trace, "McpServerRestarting")] == [1]
    listed = [r["sender"] for r in of_type(trace, "McpToolsListed") if r["sender"].startswith("mcp:")]
    assert listed == ["mcp:a:weather#1", "mcp:a:weather#2"]


def test_a_server_that_fails_too_often_is_withdrawn_and_the_run_goes_on(tmp_path: Path) -> None:
    config = team_config(
        tool_agent(
            [step(tool="mcp__weather__die")],
            [step(tool="mcp__weather__forecast", args={"city": "Oslo"})],
            [step(new_answer="{last_tool_result}")],
            server=stdio(),
        ),
        orchestrator={"restart": {"max_restarts": 0}},
    )
    result = run_team(config, tmp_path)

    assert result.status == "completed"
    assert result.final_answer is not None and "mcp__weather__forecast is unavailable" in result.final_answer
    trace = records(result)
    assert_trace_invariants(trace)
    mcp_invariants(trace)
    offered = tools_offered(trace)
    assert offered[0] and offered[1] == []  # the agent stopped offering them right after the failure
    [withdrawn] = of_type(trace, "McpToolsWithdrawn")
    assert "too many failures" in withdrawn["payload"]["reason"]
    assert describe(withdrawn, LogProjection()) == "a: tools of MCP server weather withdrawn"  # on the terminal
    assert not of_type(trace, "McpServerRestarting")


def test_a_server_that_exits_at_start_is_withdrawn_and_the_agent_answers_without_it(tmp_path: Path) -> None:
    config = team_config(
        tool_agent([step(new_answer="no tools needed")],
                   server=stdio(env={"WEATHER_EXIT_AT_START": "3"})),
        orchestrator={"restart": {"max_restarts": 1, "backoff_base_seconds": 0.01}},
    )
    result = run_team(config, tmp_path)

    assert result.status == "completed" and result.final_answer == "no tools needed"
    trace = records(result)
    assert_trace_invariants(trace)
    mcp_invariants(trace)
    failures = of_type(trace, "McpServerFailed")
    assert [f["sender"] for f in failures] == ["mcp:a:weather#1", "mcp:a:weather#2"]
    assert all("exited with code 3" in f["payload"]["error"] for f in failures)
    assert len(of_type(trace, "McpToolsWithdrawn")) == 1
    assert all(offered == [] for offered in tools_offered(trace))  # the first call waited for the verdict


def test_a_server_that_exits_at_start_is_reported_whole_on_the_command_line_and_nothing_stray(
        tmp_path: Path) -> None:
    """``massgen`` prints the failure with the server's stderr after "its stderr ended with:" (it was cut
    at 100 characters, just after "its stderr"), and asyncio's child watcher reaps the server while its
    loop still runs (reaped after, it printed "Loop ... that handles pid ... is closed"). Three runs:
    the stray line came in about half of them."""
    import yaml

    agent = tool_agent([step(new_answer="no tools needed")], [step(vote="agent1", reason="ok")],
                       server=stdio(env={"WEATHER_EXIT_AT_START": "3"}))
    config = tmp_path / "team.yaml"
    config.write_text(yaml.safe_dump({"agents": [agent], "orchestrator": {"restart": {"max_restarts": 1}}}))
    for attempt in range(3):
        done = subprocess.run([sys.executable, "-m", "massgen.cli.main", "--config", str(config), "q"],
                              capture_output=True, text=True, timeout=120 * FACTOR, stdin=subprocess.DEVNULL,
                              env={**__import__("os").environ, "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs")})
        assert done.returncode == 0 and done.stdout.startswith("no tools needed"), done.stderr
        assert ("exited with code 3 before it finished starting; its stderr ended with: weather: refusing to "
                "start (WEATHER_EXIT_AT_START is set)") in done.stderr, done.stderr
        assert "is closed" not in done.stderr, (attempt, done.stderr)


def test_a_hanging_tool_is_cancelled_at_its_deadline_and_the_model_gets_a_tool_error(tmp_path: Path) -> None:
    marker = tmp_path / "marker.txt"
    config = team_config(tool_agent(
        [step(tool="mcp__weather__hang")],
        [step(new_answer="{last_tool_result}")],
        server=stdio(call_timeout_seconds=0.5 * FACTOR, env={"WEATHER_MARKER": str(marker)}),
    ))
    result = run_team(config, tmp_path)

    assert result.status == "completed"
    assert result.final_answer == f"mcp__weather__hang timed out after {0.5 * FACTOR:g} s; the request was cancelled."
    trace = records(result)
    assert_trace_invariants(trace)
    mcp_invariants(trace)
    assert not of_type(trace, "McpServerFailed")  # a slow tool is not a broken server
    assert wait_until(lambda: marker.exists() and "cancelled hang" in marker.read_text())


def test_a_long_tool_call_is_not_an_idle_stream(tmp_path: Path) -> None:
    config = team_config(
        tool_agent([step(tool="mcp__weather__slow", args={"seconds": 1.0})], [step(new_answer="{last_tool_result}")],
                   server=stdio()),
        idle_timeout=0.4,
    )
    result = run_team(config, tmp_path)
    assert result.status == "completed" and result.final_answer == "slept 1 s"
    trace = records(result)
    assert not of_type(trace, "DeadlineExpired")
    mcp_invariants(trace)


def test_a_call_whose_agent_is_cut_off_is_cancelled_the_mcp_way(tmp_path: Path) -> None:
    marker = tmp_path / "marker.txt"
    config = team_config(
        tool_agent([step(tool="mcp__weather__hang", incarnations=[1])], [step(new_answer="done")],
                   server=stdio(env={"WEATHER_MARKER": str(marker)})),
        turn_timeout=3.0,  # the server must list its tools before the call; on a busy machine that takes ~1 s
    )
    result = run_team(config, tmp_path)
    assert result.status == "completed" and result.final_answer == "done"
    trace = records(result)
    assert_trace_invariants(trace)
    mcp_invariants(trace)
    assert [r["payload"]["scope"] for r in of_type(trace, "DeadlineExpired")] == ["turn"]
    [cancel] = [r for r in of_type(trace, "McpCancelCall") if r["to"] == "mcp:a:weather#1"]
    assert cancel["payload"]["reason"] == "the calling agent incarnation is gone"
    assert wait_until(lambda: marker.exists() and "cancelled hang" in marker.read_text())
    assert not of_type(trace, "McpServerFailed")  # the server itself was fine all along


def test_cancelling_a_run_mid_call_leaves_no_server_behind(tmp_path: Path) -> None:
    config = team_config(tool_agent([step(tool="mcp__weather__slow", args={"seconds": 60})], server=stdio()))
    team: Team | None = None

    def cancel_on_call(record: dict[str, Any], _projection: Any) -> None:
        if record["type"] == "McpCallTool" and record["to"].startswith("mcp:") and team is not None:
            team.cancel("Ctrl-C")

    team = Team(config, "What is the weather?", log_dir=tmp_path / "logs", tick_interval_s=0.02,
                subscribers=[cancel_on_call])
    result = team.run()
    assert result.status in ("interrupted", "failed") and "Ctrl-C" in result.reason
    trace = records(result)
    assert_trace_invariants(trace)
    assert of_type(trace, "McpCallTool")  # the call was in flight; the guard checks the process is gone


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux-only")
def test_a_server_dies_with_its_owner_even_when_the_owner_is_killed(tmp_path: Path) -> None:
    owner = subprocess.Popen([sys.executable, "-c", _OWNER_SCRIPT, str(SERVER)], stdout=subprocess.PIPE, text=True)
    server: psutil.Process | None = None
    try:
        assert owner.stdout is not None
        server = psutil.Process(int(owner.stdout.readline()))
        owner.kill()  # no on_stop, no atexit: only the kernel can still clean up
        owner.wait(10)
        assert not psutil.wait_procs([server], timeout=5)[1], "the server outlived its killed owner"
    finally:
        owner.kill()
        if server is not None and server.is_running():
            server.kill()


_OWNER_SCRIPT = """
import queue, sys, threading
import pykka
from massgen.actors.mcp import McpServerSpec
from massgen.actors.mcp.server import McpServerActor
from massgen.actors.runtime.port import Peer, RunContext
from massgen.configs.schema import McpServerConfig
from massgen.messages import McpCallTool

class Probe(pykka.ThreadingActor):
    use_daemon_thread = True
    def __init__(self, inbox):
        super().__init__()
        self.inbox = inbox
    def on_receive(self, message):
        self.inbox.put(message)

inbox = queue.Queue()
probe = Peer("supervisor", 1, Probe.start(inbox))
config = McpServerConfig(name="weather", type="stdio", command=sys.executable, args=[sys.argv[1]])
actor = McpServerActor.start(RunContext("r", None), McpServerSpec("a", config), 1, probe)
inbox.get(timeout=60)
actor.tell(McpCallTool(call_id="1", agent="a", server="weather", tool="pid", arguments={}))
print(inbox.get(timeout=60).content, flush=True)
threading.Event().wait(600)
"""
