"""Shared by the MCP tests: the test server and a deadline-bounded wait."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from support import FACTOR

from massgen.messages import McpToolsListed, Message

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
