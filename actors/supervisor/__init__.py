"""The supervisor actor, one package: the actor and its protocol (``actor.py``), the state its
behaviours share (``state.py``), one module per behaviour (turn handout, failures and deadlines,
the end of the run, the restore of a resumed run, its MCP servers: ``mcp_servers.py``), what a run needs
besides its config (``run_spec.py``, built by the handle), and its bookkeeping (``children.py``,
``stragglers.py``, ``notes.py``, ``budget.py``, ``deadlines.py``, ``restarts.py``)."""
