"""MCP tool servers as supervised actors, against real servers written with the SDK's MCPServer.

The servers run as real subprocesses (stdio) and on loopback (streamable HTTP); see
``tests/mcp_servers/weather.py`` for the tools and faults. The conftest guard checks the
process table after every test, grandchildren included (by the owner mark in their
environment), so every test here also proves that no server outlived it.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import conftest
import mcp_types
import psutil
import pykka
import pytest
from support import FACTOR, assert_trace_invariants, of_type, records, run_team, scripted, step, team_config

from massgen.actors.mcp import McpConfigError, McpServerSpec, select_tools
from massgen.actors.mcp_server import McpServerActor
from massgen.actors.mcp_stdio import OWNER_ENV
from massgen.actors.mcp_supervision import McpSupervision
from massgen.actors.runtime import Peer, RunContext, TracedActor
from massgen.actors.team import Team, agent_specs
from massgen.cli.progress import describe
from massgen.configs import ConfigError, validate_data
from massgen.configs.schema import McpServerConfig, RestartPolicy
from massgen.logs import LogProjection
from massgen.messages import McpCallTool, McpServerFailed, McpToolResult, McpToolsListed, Message, Sender

SERVER = Path(__file__).parent / "mcp_servers" / "weather.py"
WAIT_S = 20.0 * FACTOR
M = TypeVar("M", bound=Message)


def stdio(name: str = "weather", **options: Any) -> dict[str, Any]:
    return {"name": name, "type": "stdio", "command": sys.executable, "args": [str(SERVER)], **options}


def names(listed: McpToolsListed) -> list[str]:
    return [t.name for t in listed.tools]


def wait_until(predicate: Callable[[], bool], timeout: float = WAIT_S) -> bool:
    """For what only another process can show (a marker file): poll, with a deadline."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


# -- an McpServer actor on its own, with a probe as its supervisor ------------------------------


class Probe(pykka.ThreadingActor):
    use_daemon_thread = True

    def __init__(self, inbox: queue.Queue[Message]) -> None:
        super().__init__()
        self.inbox = inbox

    def on_receive(self, message: Any) -> None:
        self.inbox.put(message)


class Harness:
    def __init__(self, spec: McpServerSpec) -> None:
        self.inbox: queue.Queue[Message] = queue.Queue()
        self.probe = Probe.start(self.inbox)
        self.ref = McpServerActor.start(RunContext("test", None), spec, 1, Peer("supervisor", 1, self.probe))
        self._calls = 0

    def expect(self, cls: type[M], timeout: float = WAIT_S) -> M:
        message = self.inbox.get(timeout=timeout)
        assert isinstance(message, cls), f"expected {cls.__name__}, got {message!r}"
        return message

    def call(self, tool: str, **arguments: Any) -> McpToolResult:
        self._calls += 1
        self.ref.tell(McpCallTool(call_id=f"c{self._calls}", agent="a", server="weather", tool=tool,
                                  arguments=arguments))
        return self.expect(McpToolResult)

    def close(self) -> None:
        if self.ref.is_alive():
            self.ref.stop(timeout=10)
        self.probe.stop()


@pytest.fixture
def mcp_actor() -> Iterator[Callable[..., Harness]]:
    started: list[Harness] = []

    def start(config: dict[str, Any], allowed: tuple[str, ...] | None = None, exclude: tuple[str, ...] = ()) -> Harness:
        harness = Harness(McpServerSpec("a", McpServerConfig.model_validate(config), allowed, exclude))
        started.append(harness)
        return harness

    yield start
    for harness in started:
        harness.close()


@pytest.fixture
def http_url() -> Iterator[str]:
    """The weather server over streamable HTTP on a loopback port it picks and announces."""
    process = subprocess.Popen([sys.executable, str(SERVER), "--http"], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("PORT "), f"the HTTP server did not start: {line!r}"
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"
    finally:
        process.kill()
        process.wait(10)


# -- filters and config: no processes -----------------------------------------------------------------


def _tool(name: str) -> mcp_types.Tool:
    return mcp_types.Tool(name=name, description=f"{name} tool", input_schema={"type": "object", "properties": {}})


TOOLS = [_tool("forecast"), _tool("echo"), _tool("admin_reset")]


def test_filters_apply_per_server_and_per_backend_before_the_model_sees_the_tools() -> None:
    config = McpServerConfig(name="weather", type="stdio", command="x", exclude_tools=["admin_reset"])
    offered, hidden = select_tools(McpServerSpec("a", config), TOOLS)
    assert [t.name for t in offered] == ["mcp__weather__forecast", "mcp__weather__echo"]
    assert hidden == ("mcp__weather__admin_reset",)
    assert offered[0].parameters == {"type": "object", "properties": {}}

    config = McpServerConfig(name="weather", type="stdio", command="x",
                             allowed_tools=["forecast", "mcp__weather__echo"])
    offered, _ = select_tools(McpServerSpec("a", config, exclude_tools=("mcp__weather__echo",)), TOOLS)
    assert [t.name for t in offered] == ["mcp__weather__forecast"]

    # A backend whitelist covers every tool of the agent; entries for other servers do not matter here.
    spec = McpServerSpec("a", McpServerConfig(name="weather", type="stdio", command="x"),
                         allowed_tools=("mcp__weather__echo", "mcp__search__query", "Read"))
    offered, hidden = select_tools(spec, TOOLS)
    assert [t.name for t in offered] == ["mcp__weather__echo"]
    assert set(hidden) == {"mcp__weather__forecast", "mcp__weather__admin_reset"}


def test_an_allowed_tool_the_server_does_not_have_is_a_clear_error() -> None:
    spec = McpServerSpec("a", McpServerConfig(name="weather", type="stdio", command="x"),
                         allowed_tools=("mcp__weather__forcast",))
    with pytest.raises(McpConfigError, match=r"mcp__weather__forcast \(it has: admin_reset, echo, forecast\)"):
        select_tools(spec, TOOLS)


@pytest.mark.parametrize(("server", "expected"), [
    ({"name": "w", "type": "ftp", "command": "x"}, "mcp_servers[0].type: Input should be 'stdio' or 'streamable-http'"),
    ({"name": "w", "type": "stdio"}, "type stdio needs 'command'"),
    ({"name": "w", "type": "streamable-http"}, "type streamable-http needs 'url'"),
    ({"name": "a b", "type": "stdio", "command": "x"}, "mcp_servers[0].name: String should match"),
])
def test_bad_transport_config_is_rejected_when_the_config_loads(server: dict[str, Any], expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        validate_data({"agents": [{"id": "a", "backend": {"type": "scripted", "mcp_servers": [server]}}]}, "t.yaml")
    assert expected in str(caught.value)
    assert OWNER_ENV == conftest.MCP_OWNER_ENV  # the leak guard looks for the mark the servers get


# -- the supervisor's routing, without threads or servers -----------------------------------------------


class _Routing(McpSupervision):
    """McpSupervision with probes where the McpServer actors would be."""

    def __init__(self, inbox: queue.Queue[Any], clock: list[float]) -> None:
        self.trace = Probe.start(inbox)
        ctx = RunContext("test", self.trace, clock=lambda: clock[0])
        owner = TracedActor(ctx, "supervisor")
        agent = scripted("a", mcp_servers=[stdio(call_timeout_seconds=5)])
        spec = agent_specs(team_config(agent))[0]
        self.agent = Peer("a", 1, Probe.start(inbox))
        super().__init__(owner, [spec], RestartPolicy(backoff_base_seconds=1.0), lambda _: self.agent)

    def _spawn(self, server: Any) -> None:
        server.incarnation += 1
        server.peer = Peer(server.spec.name, server.incarnation, Probe.start(queue.Queue()))
        server.status, server.since = "starting", self.ctx.clock()


def test_the_supervisor_routes_calls_to_live_incarnations_only() -> None:
    inbox: queue.Queue[Any] = queue.Queue()
    clock = [0.0]
    routing = _Routing(inbox, clock)
    routing.start(Peer("supervisor", 1, routing.agent.ref))

    def sent() -> list[tuple[str, str, str]]:
        """(kind, type, to) of everything traced so far, in order."""
        routing.trace.ask("sync")  # every earlier record has reached the inbox
        out = []
        while not inbox.empty():
            item = inbox.get()
            if isinstance(item, tuple):  # ("record", kind, to, message, extra); the rest went to a probe
                out.append((item[1], type(item[3]).__name__, item[2]))
        return out

    def from_server(sender: int, cls: type[Message], **fields: Any) -> None:
        routing.from_server(cls(sender=Sender(name="mcp:a:weather", incarnation=sender), **fields))

    def call(call_id: str) -> None:
        routing.from_agent(routing.agent, McpCallTool(call_id=call_id, agent="a", server="weather",
                                                      tool="forecast", arguments={}))

    call("q1")  # the server is still starting: the call waits for it
    assert sent() == []
    from_server(1, McpToolsListed, agent="a", server="weather", tools=())
    assert sent() == [("tell", "McpToolsListed", "a#1"), ("tell", "McpCallTool", "mcp:a:weather#1")]

    from_server(1, McpServerFailed, agent="a", server="weather", name="mcp:a:weather", incarnation=1,
                error="it died", where="exited")
    assert sent() == [("event", "McpServerRestarting", ""), ("tell", "McpToolResult", "a#1")]
    from_server(1, McpToolResult, call_id="q1", agent="a", server="weather", tool="forecast", content="late")
    assert sent() == [("event", "DeadLetter", "")]  # the dead incarnation's late reply

    call("q2")  # restarting: queued, then dropped when its deadline passes
    clock[0] = 0.5
    assert routing.on_tick(clock[0]) == {"a"}  # a call is waiting: not an idle stream
    clock[0] = 5.5
    routing.on_tick(clock[0])  # the restart (after ~1 s) is due too
    assert sent() == [("tell", "McpToolResult", "a#1")]
    assert routing.servers["mcp:a:weather"].incarnation == 2 and not routing.pending
    for ref in (routing.trace, routing.agent.ref, *(p.ref for p in routing.peers())):
        ref.stop()


# -- one McpServer actor against real servers ---------------------------------------------------------


def test_a_stdio_server_lists_its_filtered_tools_and_answers_calls(mcp_actor: Callable[..., Harness]) -> None:
    harness = mcp_actor(stdio(env={"WEATHER_GRANDCHILD": "1"}), exclude=("mcp__weather__admin_reset",))
    listed = harness.expect(McpToolsListed)
    assert "mcp__weather__forecast" in names(listed) and listed.hidden == ("mcp__weather__admin_reset",)
    forecast = next(t for t in listed.tools if t.name == "mcp__weather__forecast")
    assert forecast.description == "Tomorrow's weather for a city."
    assert forecast.parameters["required"] == ["city"]

    result = harness.call("forecast", city="Paris")
    assert (result.content, result.is_error) == ("Sunny in Paris, 21 C", False)
    refused = harness.call("admin_reset")
    assert refused.is_error and "unknown tool" in refused.content

    server = psutil.Process(int(harness.call("pid").content))
    family = [server, *server.children(recursive=True)]
    assert len(family) == 2  # the server and the grandchild it started
    harness.close()
    assert not psutil.wait_procs(family, timeout=5)[1], "the process group outlived its actor"


def test_a_streamable_http_server_lists_tools_and_answers_calls(
    mcp_actor: Callable[..., Harness], http_url: str
) -> None:
    harness = mcp_actor({"name": "weather", "type": "streamable-http", "url": http_url,
                         "allowed_tools": ["forecast"]})
    assert names(harness.expect(McpToolsListed)) == ["mcp__weather__forecast"]
    assert harness.call("forecast", city="Oslo").content == "Sunny in Oslo, 21 C"


def test_an_unreachable_url_is_reported_at_start(mcp_actor: Callable[..., Harness]) -> None:
    with psutil.Process().oneshot():
        import socket

        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        sock.close()  # nothing listens there now
    harness = mcp_actor({"name": "weather", "type": "streamable-http", "url": f"http://127.0.0.1:{port}/mcp",
                         "start_timeout_seconds": 5 * FACTOR})
    failed = harness.expect(McpServerFailed)
    assert failed.where == "start" and not failed.permanent
    assert f"cannot reach http://127.0.0.1:{port}/mcp" in failed.error


def test_a_server_killed_between_calls_is_reported_at_once(mcp_actor: Callable[..., Harness]) -> None:
    harness = mcp_actor(stdio())
    harness.expect(McpToolsListed)
    os.kill(int(harness.call("pid").content), signal.SIGKILL)
    failed = harness.expect(McpServerFailed)  # no call in flight: the exit itself is noticed
    assert failed.where == "exited" and "killed by SIGKILL" in failed.error
    late = harness.call("forecast", city="Paris")
    assert late.is_error and "not connected" in late.content


def test_a_server_that_stops_answering_is_found_by_a_ping_and_killed(mcp_actor: Callable[..., Harness]) -> None:
    harness = mcp_actor(stdio(call_timeout_seconds=0.5 * FACTOR))
    harness.expect(McpToolsListed)
    pid = int(harness.call("pid").content)
    harness.ref.tell(McpCallTool(call_id="f", agent="a", server="weather", tool="freeze", arguments={}))
    # It blocks the server's event loop, so not even a ping gets an answer: the failure is
    # reported first, then the call's own tool error.
    assert harness.expect(McpServerFailed).where == "hung"
    result = harness.expect(McpToolResult)
    assert result.is_error and "timed out" in result.content and "stopped responding" in result.content
    harness.close()  # stdin closed, no exit, SIGTERM to the group
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_a_server_that_exits_at_start_is_reported_with_its_exit_code_and_stderr(
    mcp_actor: Callable[..., Harness],
) -> None:
    failed = mcp_actor(stdio(env={"WEATHER_EXIT_AT_START": "3"})).expect(McpServerFailed)
    assert failed.where == "start" and not failed.permanent
    assert "exited with code 3 before it finished starting" in failed.error
    assert "refusing to start" in failed.error


def test_start_errors_no_restart_can_fix_are_permanent(mcp_actor: Callable[..., Harness]) -> None:
    missing = mcp_actor({"name": "weather", "type": "stdio", "command": "no-such-mcp-server-binary"})
    failed = missing.expect(McpServerFailed)
    assert failed.permanent and failed.where == "config"
    assert "command not found: 'no-such-mcp-server-binary'" in failed.error

    typo = mcp_actor(stdio(allowed_tools=["forcast"]))
    failed = typo.expect(McpServerFailed)
    assert failed.permanent and "allowed_tools names tools it does not have: mcp__weather__forcast" in failed.error


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
        turn_timeout=1.0,
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
from massgen.actors.mcp_server import McpServerActor
from massgen.actors.runtime import Peer, RunContext
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
