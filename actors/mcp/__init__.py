"""MCP tool servers as supervised actors: the design in short.

Modules: ``spec.py`` (names, specs, filters; light, imported by every run), ``server.py`` (the
actor), ``session.py`` and ``stdio.py`` (session and server process, on the actor's loop),
each on the layer of its user: the supervisor's side (start, route, restart, withdraw) is
``actors/supervisor/mcp_servers.py``, the agent's side ``actors/agent/mcp_tools.py``; this package
imports neither. The SDK is imported only when a run has MCP servers (``server.py`` and below).

One McpServer actor per configured server per agent, one incarnation per (re)start. It
owns the client session and, for stdio, the server process, on an event loop thread of
its own, so its mailbox stays free while calls run: calls overlap, and cancel and stop
are handled at once. It reports to the supervisor only: ``McpToolsListed`` once started,
``McpToolResult`` per call, ``McpServerFailed`` when the server cannot start, dies, or
stops answering. It never restarts itself; the supervisor decides (backoff, intensity)
and starts a new incarnation, which re-initialises the session and lists the tools again.
When it gives up, the agent is told to withdraw the server's tools and the run goes on.
Agents reach tools only by messages (``McpCallTool``), routed by the supervisor.

No server process outlives its run: each runs in its own process group, killed on stop
(stdin closed, then SIGTERM, then SIGKILL for the whole group), and on Linux the kernel
kills it if our process dies without stopping it (``PR_SET_PDEATHSIG``).

What a user sees on bad config (decided here, enforced by the supervisor): the run goes
on without that server. A command that does not exist, a missing cwd or a name in
``allowed_tools`` that the server lacks is a *permanent* failure: reported once, clearly,
in the trace, and the server's tools are never offered. A server that exits at start or
cannot be reached may be a passing problem, so it is restarted like any failure, and
withdrawn when the restart intensity is exceeded. A team with a broken tool server still
answers, and the trace says why the tools were missing. (Unknown transports and missing
``command``/``url`` are rejected earlier, when the config is loaded.)

What a server sends is checked where it enters, and what is not taken is named in a note, never
dropped silently: a tool the SDK's strict listing would refuse is left out alone, not with every
tool of its server (``session.py``); names providers refuse, long descriptions, too many tools
(``spec.select_tools``; notes in ``McpToolsListed.notes``); a reply over ``MCP_MESSAGE_CAP_BYTES`` or
one that cannot be read fails its own call at once, saying why (``stdio.py``, ``session.py``).

Every call has a deadline (``call_timeout_seconds``): on expiry the SDK sends
``notifications/cancelled`` for the request and the model gets a tool error. The server
is then pinged; no answer means it hangs, and it is reported failed so it is restarted.
"""

from massgen.actors.mcp.spec import McpConfigError, McpServerSpec, exposed_name, select_tools

__all__ = ["McpConfigError", "McpServerSpec", "exposed_name", "select_tools"]
