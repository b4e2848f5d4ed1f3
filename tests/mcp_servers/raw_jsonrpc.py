"""An MCP server written by hand, newline-delimited JSON-RPC over stdio, for what the SDK's own
``MCPServer`` refuses to send: tool listings the SDK's client rejects, replies that are not quite
JSON-RPC. ``RAW_MCP_MODE`` picks what it does wrong; ``ping_tool`` always answers ``pong``.

Modes:
- ``bad_schema``: besides ``ping_tool``, ``bad_required`` (``inputSchema.required: 5``) and
  ``bad_schema_type`` (``inputSchema: "hello"``), tools the SDK's strict ``tools/list`` validation rejects.
- ``bad_listing``: a ``tools/list`` reply whose ``tools`` is not a list (nothing to keep).
- ``hostile_names``: tool names with ESC, NUL and U+202E, a 10,000-character name, a 5 MB
  description, a dotted name; ``RAW_MCP_TOOLS=N`` instead lists N plain tools ``t0`` .. ``t<N-1>``.
- ``surrogate``: ``ping_tool`` answers text holding a lone-surrogate escape (``\\ud800``), valid JSON.
- ``broken_reply``: ``ping_tool`` answers a line that is not JSON but names its id;
  ``not_a_result`` answers valid JSON with its id whose ``result`` is a string.
"""

from __future__ import annotations

import json
import os
import sys

MODE = os.environ.get("RAW_MCP_MODE", "")
OUT = sys.stdout.buffer
ESC = "\x1b"


def send(message: dict[str, object]) -> None:
    write(json.dumps(message).encode())  # ensure_ascii: a lone surrogate goes out as the escape \ud800


def write(line: bytes) -> None:
    OUT.write(line + b"\n")
    OUT.flush()


def tool(name: str, description: str = "a tool", schema: object = None) -> dict[str, object]:
    return {"name": name, "description": description,
            "inputSchema": {"type": "object", "properties": {}} if schema is None else schema}


def tools() -> object:
    listed = [tool("ping_tool", "answers pong")]
    if MODE == "bad_schema":
        listed += [tool("bad_required", schema={"type": "object", "properties": {}, "required": 5}),
                   tool("bad_schema_type", schema="hello")]
    elif MODE == "bad_listing":
        return "not a list"
    elif MODE == "hostile_names" and os.environ.get("RAW_MCP_TOOLS"):
        listed = [tool(f"t{i}", f"tool {i}") for i in range(int(os.environ["RAW_MCP_TOOLS"]))]
    elif MODE == "hostile_names":
        listed += [tool(f"evil{ESC}[2J{ESC}]52;c;ZXZpbA==\x07\u202e\x00"), tool("a" * 10_000),
                   tool("dotted.name"), tool("huge_desc", "Z" * 5_000_000)]
    elif MODE == "broken_reply":
        listed.append(tool("not_a_result"))
    return listed


def answer(request_id: object, name: str) -> None:
    if MODE == "surrogate":
        send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": "pong \ud800"}]}})
    elif MODE == "broken_reply" and name == "ping_tool":
        write(b'{"jsonrpc": "2.0", "id": ' + json.dumps(request_id).encode() + b', "result": {"content": [{"type"')
    elif MODE == "broken_reply" and name == "not_a_result":
        send({"jsonrpc": "2.0", "id": request_id, "result": "pong"})
    else:
        send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": "pong"}]}})


def main() -> None:
    for line in sys.stdin.buffer:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": request_id, "result": {
                "protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "1"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": tools()}})
        elif method == "tools/call":
            answer(request_id, message["params"]["name"])
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": request_id, "result": {}})
        elif request_id is not None:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "unknown method"}})


if __name__ == "__main__":
    main()
