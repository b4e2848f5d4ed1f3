"""The agent actor (``actor.py``: one per configured agent, one incarnation per restart) and its turn
worker: a turn (``turn.py``) and its port to the agent (``turn_io.py``), what the model is told
(``prompts.py``), the checks of what it calls (``workflow_checks.py``, ``tool_arguments.py``), the
tools it may call (``client_tools.py``, ``custom_tools.py``, and its MCP servers' tools: ``mcp_tools.py``),
and the guards on each model call (``stream_guard.py``; a broken call is sent again by ``backends/retry.CallRetry``)."""
