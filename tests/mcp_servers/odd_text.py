"""An MCP server (the SDK's ``MCPServer``, over stdio) whose one tool answers with text that is not
valid: a NUL and control characters, as a careless or hostile server may send."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("odd", log_level="WARNING")


@server.tool()
def status() -> str:
    """The service's status line."""
    return "up\x00down \x1b[2J since noon"


if __name__ == "__main__":
    server.run()
