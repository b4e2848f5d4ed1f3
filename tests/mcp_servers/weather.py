"""A small MCP server for the tests, written with the SDK's ``MCPServer``.

Runs over stdio by default, or with ``--http`` over streamable HTTP on a free
loopback port, which it prints as ``PORT <n>`` on stdout once it listens. Its
tools cover the cases the client must survive: a normal answer, a slow one, one
that never returns (and notes its cancellation), one whose process dies mid-call,
and one that blocks the server's event loop.

Environment knobs (all optional):
- ``WEATHER_EXIT_AT_START=CODE``: print a reason to stderr and exit before serving.
- ``WEATHER_MARKER=PATH``: append one line per notable event (``cancelled hang``).
- ``WEATHER_GRANDCHILD=1``: start a long-sleeping child process, to prove that
  the whole process group is cleaned up, not only the server. ``WEATHER_GRANDCHILD=setsid``:
  start it with ``setsid -f``, in a session of its own and reparented away from the server,
  as a daemon would (``WEATHER_MARKER`` gets its pid: ``grandchild <pid>``).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time

if __name__ == "__main__" and os.environ.get("WEATHER_EXIT_AT_START") is not None:
    # Before the slow imports: a server that fails at once, as a broken install does.
    print("weather: refusing to start (WEATHER_EXIT_AT_START is set)", file=sys.stderr, flush=True)
    sys.exit(int(os.environ["WEATHER_EXIT_AT_START"]))

import anyio
from mcp.server.mcpserver import MCPServer

server = MCPServer("weather", log_level="WARNING")


def _mark(line: str) -> None:
    path = os.environ.get("WEATHER_MARKER")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(line + "\n")


@server.tool()
def forecast(city: str) -> str:
    """Tomorrow's weather for a city."""
    return f"Sunny in {city}, 21 C"


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def admin_reset() -> str:
    """A tool no agent should see."""
    return "reset"


@server.tool()
async def slow(seconds: float) -> str:
    """Answer after the given number of seconds."""
    await anyio.sleep(seconds)
    return f"slept {seconds:g} s"


@server.tool()
async def hang() -> str:
    """Never answer; note a cancellation when the client gives up."""
    try:
        await anyio.sleep_forever()
    except anyio.get_cancelled_exc_class():
        _mark("cancelled hang")
        raise
    return "unreachable"


@server.tool()
async def freeze(seconds: float = 3600.0) -> str:
    """Block the server's event loop: the server stops answering anything, even pings."""
    time.sleep(seconds)  # on purpose: a blocking call inside an async tool
    return "thawed"


@server.tool()
def die() -> str:
    """Kill this server process mid-call."""
    os.kill(os.getpid(), signal.SIGKILL)
    return "unreachable"


@server.tool()
def big(size: int) -> str:
    """A reply of ``size`` characters (a tool that dumps a whole file or page)."""
    return ("0123456789abcdef" * (size // 16 + 1))[:size]


@server.tool()
def pid() -> str:
    """This server's process id."""
    return str(os.getpid())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP on a free loopback port")
    options = parser.parse_args()
    grandchild = os.environ.get("WEATHER_GRANDCHILD")
    if grandchild == "setsid":
        marker = os.environ.get("WEATHER_MARKER", os.devnull)
        subprocess.run(["setsid", "-f", sys.executable, "-c", "import os, time\n"
                        f"open({marker!r}, 'a').write(f'grandchild {{os.getpid()}}\\n')\ntime.sleep(600)"],
                       check=True)
    elif grandchild:
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)  # weather-grandchild"])
    _mark(f"started {os.getpid()}")
    if not options.http:
        server.run()
        return
    import socket

    import uvicorn

    # Bind first, then announce: the test learns the port without guessing or polling.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    anyio.run(uvicorn.Server(config).serve, [sock])


if __name__ == "__main__":
    main()
