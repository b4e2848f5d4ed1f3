"""Shared by the MCP tests: the test servers, one McpServer actor with a probe as its supervisor,
and a deadline-bounded wait."""

from __future__ import annotations

import queue
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pykka
from support import FACTOR

from massgen.actors.mcp import McpServerSpec
from massgen.actors.mcp.server import McpServerActor
from massgen.actors.runtime.port import Peer, RunContext
from massgen.configs.schema import McpServerConfig
from massgen.messages import McpCallTool, McpToolResult, McpToolsListed, Message

SERVER = Path(__file__).parent / "mcp_servers" / "weather.py"
RAW_SERVER = Path(__file__).parent / "mcp_servers" / "raw_jsonrpc.py"
WAIT_S = 20.0 * FACTOR
M = TypeVar("M", bound=Message)


def stdio(name: str = "weather", **options: Any) -> dict[str, Any]:
    return {"name": name, "type": "stdio", "command": sys.executable, "args": [str(SERVER)], **options}


def raw(mode: str, name: str = "raw", env: dict[str, str] | None = None, **options: Any) -> dict[str, Any]:
    """The hand-written JSON-RPC server (``tests/mcp_servers/raw_jsonrpc.py``) in one of its modes."""
    return {"name": name, "type": "stdio", "command": sys.executable, "args": [str(RAW_SERVER)],
            "env": {"RAW_MCP_MODE": mode, **(env or {})}, **options}


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

    def call(self, tool: str, timeout: float = WAIT_S, **arguments: Any) -> McpToolResult:
        self._calls += 1
        self.ref.tell(McpCallTool(call_id=f"c{self._calls}", agent="a", server="weather", tool=tool,
                                  arguments=arguments))
        return self.expect(McpToolResult, timeout)

    def close(self) -> None:
        if self.ref.is_alive():
            self.ref.stop(timeout=10)
        self.probe.stop()


def harnesses() -> Iterator[Callable[..., Harness]]:
    """The body of a test file's ``mcp_actor`` fixture: start harnesses, close them all at the end."""
    started: list[Harness] = []

    def start(config: dict[str, Any], allowed: tuple[str, ...] | None = None, exclude: tuple[str, ...] = ()) -> Harness:
        harness = Harness(McpServerSpec("a", McpServerConfig.model_validate(config), allowed, exclude))
        started.append(harness)
        return harness

    yield start
    for harness in started:
        harness.close()
