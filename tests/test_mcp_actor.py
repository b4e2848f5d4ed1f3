"""One McpServer actor, its filters and the supervisor's routing, against real MCP servers.

The servers are written with the SDK's MCPServer (``tests/mcp_servers/weather.py``) and run as
real subprocesses (stdio) and on loopback (streamable HTTP). The conftest guard checks the
process table after every test, grandchildren included, so every test here also proves that
no server outlived it.
"""

from __future__ import annotations

import os
import queue
import signal
from collections.abc import Callable, Iterator
from typing import Any

import conftest
import mcp_types
import psutil
import pytest
from mcp_support import (
    Harness,
    Probe,
    harnesses,
    names,
    stdio,
    wait_until,
)
from support import FACTOR, scripted, team_config

from massgen.actors.mcp import McpConfigError, McpServerSpec, select_tools
from massgen.actors.mcp.server import MCP_RESULT_CAP_CHARS
from massgen.actors.mcp.stdio import OWNER_ENV
from massgen.actors.run.team import agent_specs
from massgen.actors.runtime.port import Peer, RunContext, TracedActor
from massgen.actors.supervisor.mcp_servers import ActorPort, McpSupervision
from massgen.configs import ConfigError, validate_data
from massgen.configs.schema import McpServerConfig, RestartPolicy
from massgen.messages import McpCallTool, McpServerFailed, McpToolResult, McpToolsListed, Message, Sender
from massgen.messages.trace_writer_inbox import WriteRecord


@pytest.fixture
def mcp_actor() -> Iterator[Callable[..., Harness]]:
    yield from harnesses()


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


class _ProbePort(ActorPort):
    """The supervisor's port, with probes where the McpServer actors would be."""

    def spawn(self, spec: McpServerSpec, incarnation: int, supervisor: Peer) -> Any:
        return Probe.start(queue.Queue())


class _Routing(McpSupervision):
    def __init__(self, inbox: queue.Queue[Any], clock: list[float]) -> None:
        self.trace = Probe.start(inbox)
        ctx = RunContext("test", self.trace, clock=lambda: clock[0])
        agent = scripted("a", mcp_servers=[stdio(call_timeout_seconds=5)])
        spec = agent_specs(team_config(agent))[0]
        self.agent = Peer("a", 1, Probe.start(inbox))
        port = _ProbePort(TracedActor(ctx, "supervisor"))
        super().__init__(port, [spec], RestartPolicy(backoff_base_seconds=1.0), lambda _: self.agent)


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
            if isinstance(item, WriteRecord):  # the rest went to a probe
                out.append((item.kind, type(item.message).__name__, item.to))
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


def test_a_grandchild_the_server_started_in_a_session_of_its_own_dies_with_the_server(
    mcp_actor: Callable[..., Harness], tmp_path: Any,
) -> None:
    # Issue 37: `setsid` took a server's child out of its process group, and it outlived the run.
    marker = tmp_path / "marker"
    harness = mcp_actor(stdio(env={"WEATHER_GRANDCHILD": "setsid", "WEATHER_MARKER": str(marker)}))
    harness.expect(McpToolsListed)
    assert wait_until(lambda: marker.exists() and "grandchild" in marker.read_text())
    grandchild = psutil.Process(int(marker.read_text().split("grandchild ")[1].split()[0]))
    assert grandchild.ppid() != int(harness.call("pid").content)  # reparented: no longer the server's child
    harness.close()
    assert not psutil.wait_procs([grandchild], timeout=5 * FACTOR)[1], "the setsid grandchild outlived its server"


def test_a_10_mb_reply_reaches_the_model_cut_to_the_cap_with_a_note(mcp_actor: Callable[..., Harness]) -> None:
    # Issue 37: a 10 MB reply was taken for a hang (the call timed out, the server was restarted)
    # and never reached the model.
    harness = mcp_actor(stdio(call_timeout_seconds=2.5 * FACTOR))  # 3-4 s on this machine before the fix
    harness.expect(McpToolsListed)
    result = harness.call("big", size=10_000_000)
    assert not result.is_error, result.content[:300]
    kept, _, note = result.content.rpartition("\n[")
    assert kept == ("0123456789abcdef" * 10_000)[:len(kept)] and 0 < len(kept) <= MCP_RESULT_CAP_CHARS
    assert note.startswith(f"tool result cut: {len(kept):,} of 10,000,000 characters shown")
    assert harness.call("forecast", city="Oslo").content == "Sunny in Oslo, 21 C"  # the same server, still up
