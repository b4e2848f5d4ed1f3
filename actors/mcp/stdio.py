"""The stdio transport of an MCP connection, and the server process it owns.

Our own rather than the SDK's ``stdio_client``, because the actor must own the server
process in ways that one does not offer:

- know its pid and process group, to kill the server *and its children* on stop, even
  from the actor's thread when the event loop is stuck;
- notice its exit while no request is in flight (a pidfd, not a poll), and say why it
  died (exit code or signal, last lines of its stderr) instead of "connection closed";
- make it die with us when our own process is killed: on Linux the server is started
  through a tiny launcher that sets ``PR_SET_PDEATHSIG`` and then ``exec``s it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import sys
import uuid
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp_types
from anyio.abc import Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client._transport import TransportStreams
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from massgen.actors.mcp.spec import MCP_MESSAGE_CAP_BYTES, McpConfigError, oversize
from massgen.configs.schema import McpServerConfig
from massgen.messages.text import escape_value

# Set in every server's environment: lets tests (and an operator) find what a run started,
# grandchildren included, since they inherit it.
OWNER_ENV = "MASSGEN_MCP_OWNER_PID"
# One token per server process, inherited by everything it starts: how its stop finds a descendant
# that left the process group (``setsid``, a daemon's double fork), which a group kill misses.
SERVER_ENV = "MASSGEN_MCP_SERVER"

_STDERR_LINES = 20
_EXIT_GRACE_S = 1.0  # after stdin closes, the MCP shutdown sequence waits this long ...
_TERM_GRACE_S = 0.5  # ... then SIGTERM, this long, then SIGKILL
REAP_S = 1.0
_HEAD_BYTES = 4096  # where the id of a line that cannot be read is looked for
# A JSON-RPC id near the start of a line: how a reply that cannot be parsed still names its call.
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')

# Runs with ``python -I -S`` before the server: die with our process, then become the server.
_LAUNCHER = """\
import os, signal, sys
try:
    import ctypes
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
except Exception:
    pass
if os.getppid() != int(sys.argv[1]):
    os._exit(70)  # the parent died before prctl took effect
os.execvp(sys.argv[2], sys.argv[2:])
"""

Streams = TransportStreams  # (messages from the server, messages to the server)
_Inbound = MemoryObjectReceiveStream[SessionMessage | Exception]

def describe_exit(code: int | None) -> str:
    if code is None:
        return "closed its output but is still running"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


class StdioServer:
    """One server process in its own process group, with pipes bridged to the session."""

    def __init__(self, config: McpServerConfig) -> None:
        assert config.command is not None
        self.config = config
        self.pid: int | None = None
        self.returncode: int | None = None
        self.exited = anyio.Event()
        self._stderr: deque[str] = deque(maxlen=_STDERR_LINES)
        self._process: Process | None = None
        self._killed = False
        self.token = uuid.uuid4().hex

    # -- what callers read ---------------------------------------------------------------

    def stderr_tail(self) -> str:
        return " | ".join(line for line in self._stderr if line.strip())[-1000:]

    def exit_detail(self, when: str = "") -> str:
        detail = f"the server process {describe_exit(self.returncode)}{when}"
        tail = self.stderr_tail()
        return f"{detail}; its stderr ended with: {tail}" if tail else detail

    def kill_now(self) -> None:
        """SIGKILL the whole process group; thread-safe, idempotent, never raises."""
        if self.pid is not None and not self._killed:
            self._killed = True
            _signal_group(self.pid, signal.SIGKILL)
            _kill_marked(self.token)

    # -- the connection ------------------------------------------------------------------

    def _argv_and_env(self) -> tuple[list[str], dict[str, str]]:
        config = self.config
        assert config.command is not None
        env = {**get_default_environment(), **config.env, OWNER_ENV: str(os.getpid()), SERVER_ENV: self.token}
        command = config.command
        if os.sep in command and not os.path.isabs(command) and config.cwd:
            command = os.path.join(config.cwd, command)
        if shutil.which(command, path=env.get("PATH")) is None:
            raise McpConfigError(f"MCP server {config.name!r}: command not found: {config.command!r}")
        argv = [command, *config.args]
        if sys.platform.startswith("linux"):
            argv = [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(os.getpid()), *argv]
        return argv, env

    @contextlib.asynccontextmanager
    async def connect(self) -> AsyncIterator[tuple[_Inbound, MemoryObjectSendStream[SessionMessage]]]:
        if self.config.cwd and not os.path.isdir(self.config.cwd):
            raise McpConfigError(f"MCP server {self.config.name!r}: cwd does not exist: {self.config.cwd!r}")
        argv, env = self._argv_and_env()
        process = await anyio.open_process(argv, cwd=self.config.cwd, env=env, start_new_session=True)
        self._process, self.pid = process, process.pid
        to_session, session_reads = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        session_writes, from_session = anyio.create_memory_object_stream[SessionMessage](0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._read_stdout, process, to_session)
            tg.start_soon(self._write_stdin, process, from_session, to_session)
            tg.start_soon(self._read_stderr, process)
            tg.start_soon(self._watch_exit, process, to_session)
            try:
                yield session_reads, session_writes
            finally:
                with anyio.CancelScope(shield=True):
                    await self._stop(process)
                    for stream in (to_session, session_reads, session_writes, from_session):
                        await stream.aclose()
                tg.cancel_scope.cancel()

    async def _read_stdout(self, process: Process, to_session: MemoryObjectSendStream[Any]) -> None:
        """Split stdout into lines, each one message (``parse_line``); a line over ``MCP_MESSAGE_CAP_BYTES``
        is skipped as it arrives, never held, and fails the call its first bytes name."""
        assert process.stdout is not None
        # One growing buffer, searched for a newline only in what each chunk added: joining and
        # splitting the whole pending line per 64 KiB chunk made a 10 MB reply quadratic.
        buffer = bytearray()
        skipping: bytes | None = None  # the head of a line over the cap, while the rest of it goes by
        try:
            async for chunk in process.stdout:
                if skipping is not None:
                    end = chunk.find(b"\n")
                    if end == -1:
                        continue
                    await to_session.send(self._unreadable(skipping, oversize(self.config.name)))
                    skipping, chunk = None, chunk[end + 1:]
                searched = len(buffer)
                buffer += chunk
                lines: list[bytes] = []
                start = 0
                while (end := buffer.find(b"\n", searched)) != -1:
                    lines.append(bytes(buffer[start:end]))
                    start = searched = end + 1
                del buffer[:start]
                if len(buffer) > MCP_MESSAGE_CAP_BYTES:
                    skipping = bytes(buffer[:_HEAD_BYTES])
                    buffer = bytearray()
                for line in lines:
                    if line.strip():
                        await to_session.send(self.parse_line(line))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
        finally:
            to_session.close()  # EOF: requests in flight fail with CONNECTION_CLOSED

    def parse_line(self, line: bytes) -> SessionMessage | Exception:
        """One line of stdout as a message, or what the session is told instead.

        The SDK's parser is stricter than JSON: it refuses a lone-surrogate escape (``"\\ud800"``),
        which Python's ``json`` reads. Such a line is read again with ``json`` and its lone
        surrogates are escaped where the text enters (``messages/text.escape_value``); a tool
        result says so in a note of its own. A line that still cannot be read and names an id
        fails that call at once (a ``PARSE_ERROR`` reply carrying the reason) instead of leaving
        it to time out; one with no id is garbage on stdout, which the session ignores.
        """
        if len(line) > MCP_MESSAGE_CAP_BYTES:
            return self._unreadable(line[:_HEAD_BYTES], oversize(self.config.name))
        try:
            return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
        except ValueError as strict:
            refused: Exception = strict
        try:
            value = json.loads(line.decode("utf-8", errors="replace"))
        except ValueError as exc:
            return self._unreadable(line, f"not JSON ({exc})", refused)
        notes: list[str] = []
        value = escape_value(value, f"MCP server {self.config.name!r} reply", notes)
        result = value.get("result") if isinstance(value, dict) else None
        if notes and isinstance(result, dict) and isinstance(result.get("content"), list):
            more = f"; and {len(notes) - 3} more" if len(notes) > 3 else ""
            result["content"].append({"type": "text", "text": f"[note: {'; '.join(notes[:3])}{more}]"})
        try:
            return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_python(value, by_name=False))
        except ValueError as exc:
            is_reply = isinstance(value, dict) and "method" not in value
            request_id = value.get("id") if is_reply else None
            why = f"not a JSON-RPC message ({_what_is_wrong(value, exc)})"
            return self._unreadable(line, why, exc, request_id) if is_reply else exc

    def _unreadable(self, line: bytes, why: str, error: Exception | None = None,
                    request_id: Any = None) -> SessionMessage | Exception:
        """A ``PARSE_ERROR`` reply for the call ``line`` answers, or (no id, or a request of the server's
        own: its ids are not ours) what the session logs and ignores."""
        if request_id is None and b'"method"' not in line[:_HEAD_BYTES]:
            found = _ID.search(line[:_HEAD_BYTES])
            if found is not None:
                with contextlib.suppress(ValueError):
                    request_id = json.loads(found.group(1))
        if not _is_id(request_id):
            return error if error is not None else ValueError(why)
        if not why.startswith("MCP server"):
            why = f"MCP server {self.config.name!r} sent a reply that could not be read: {why}"
        return SessionMessage(mcp_types.JSONRPCError(
            jsonrpc="2.0", id=request_id, error=mcp_types.ErrorData(code=mcp_types.PARSE_ERROR, message=why)))

    async def _write_stdin(
        self, process: Process, from_session: MemoryObjectReceiveStream[SessionMessage],
        to_session: MemoryObjectSendStream[Any],
    ) -> None:
        assert process.stdin is not None
        try:
            async for message in from_session:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                await process.stdin.send(data.encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            to_session.close()

    async def _read_stderr(self, process: Process) -> None:
        assert process.stderr is not None
        partial = ""
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async for chunk in process.stderr:
                lines = (partial + chunk.decode(errors="replace")).split("\n")
                partial = lines.pop()
                self._stderr.extend(line.rstrip() for line in lines)
        if partial:
            self._stderr.append(partial)

    async def _watch_exit(self, process: Process, to_session: MemoryObjectSendStream[Any]) -> None:
        """Set ``exited`` when the server dies, even if a grandchild still holds its pipes open."""
        self.returncode = await _wait_for_exit(process)
        self.exited.set()
        to_session.close()

    async def _stop(self, process: Process) -> None:
        """The MCP shutdown sequence, every wait bounded, then SIGKILL for whatever is left of the group."""
        assert process.stdin is not None
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
        with anyio.move_on_after(_EXIT_GRACE_S):
            await self.exited.wait()
        if not self.exited.is_set():
            _signal_group(process.pid, signal.SIGTERM)
            with anyio.move_on_after(_TERM_GRACE_S):
                await self.exited.wait()
        # Always: the leader may be gone while children it started still run in its group, or in
        # a session of their own.
        _signal_group(process.pid, signal.SIGKILL)
        _kill_marked(self.token)
        self._killed = True
        with anyio.move_on_after(REAP_S):
            await self.exited.wait()
        # Let asyncio's child watcher reap it while this loop still runs: reaped after the loop closed,
        # it warns "Loop ... that handles pid ... is closed" on stderr, in the middle of a run's output.
        with anyio.move_on_after(REAP_S):
            await process.wait()


def _what_is_wrong(value: Any, exc: ValueError) -> str:
    """The SDK's complaint about a reply, for the kind of message it is (a result or an error), in one line."""
    if not isinstance(exc, ValidationError):
        return str(exc)[:300]
    kind = "JSONRPCError" if isinstance(value, dict) and "error" in value else "JSONRPCResponse"
    found = [e for e in exc.errors(include_url=False, include_input=False) if e["loc"][:1] == (kind,)]
    found = found or exc.errors(include_url=False, include_input=False)
    return "; ".join(f"{'.'.join(map(str, e['loc'][1:])) or 'the message'}: {e['msg']}" for e in found[:3])[:300]


def _is_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _kill_marked(token: str) -> None:
    """SIGKILL every process whose environment carries this server's token (Linux ``/proc``).

    A descendant that called ``setsid`` is in no group of ours and, once its parent exits, no
    child of the server either; the environment it inherited still names the server. One that
    cleared its environment is not found: for that a cgroup would be needed.
    """
    needle = f"{SERVER_ENV}={token}".encode()
    try:
        pids = [int(entry.name) for entry in os.scandir("/proc") if entry.name.isdigit()]
    except OSError:
        return  # no /proc: the group kill is all there is
    for pid in pids:
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                marked = needle in handle.read().split(b"\0")
        except OSError:
            continue  # gone, or not ours to read
        if marked:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


async def _wait_for_exit(process: Process) -> int | None:
    """The exit status, without waiting for pipe EOF (which a surviving grandchild can delay forever)."""
    fd: int | None = None
    with contextlib.suppress(AttributeError, OSError):
        fd = os.pidfd_open(process.pid)
    if fd is None:  # not Linux, or already reaped
        while process.returncode is None:
            await anyio.sleep(0.05)
        return process.returncode
    try:
        loop = asyncio.get_running_loop()
        readable = asyncio.Event()
        loop.add_reader(fd, readable.set)
        try:
            await readable.wait()
        finally:
            loop.remove_reader(fd)
        try:  # read the status but leave the zombie for asyncio's child watcher to reap
            info = os.waitid(os.P_PIDFD, fd, os.WEXITED | os.WNOWAIT)
        except ChildProcessError:
            info = None
        if info is not None:
            killed = info.si_code in (os.CLD_KILLED, os.CLD_DUMPED)
            return -info.si_status if killed else info.si_status
        with anyio.move_on_after(REAP_S):
            while process.returncode is None:
                await anyio.sleep(0.01)
        return process.returncode
    finally:
        os.close(fd)
