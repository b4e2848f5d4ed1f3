"""``massgen serve``: an OpenAI-compatible HTTP service in front of teams.

Loaded only when the ``serve`` subcommand runs, so the rest of the command line never
imports starlette or uvicorn. Layout: ``main`` (arguments, server, shutdown), ``app``
(routes), ``models`` (request bodies -> task), ``catalog`` (model name -> team),
``runs`` (admission and the actor/event-loop bridge), ``sse`` (streaming),
``completions`` (OpenAI response shapes), ``auth`` and ``errors``.
"""

from massgen.cli.serve.main import main

__all__ = ["main"]
