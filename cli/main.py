"""The ``massgen`` command, a dispatcher: the command line is parsed once (``cli/request``) and the one
``Request`` goes to the mode it asks for.

Imports are deferred to the mode that needs them, so ``massgen --help`` and
``--validate`` start fast and never load a provider SDK.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

from massgen import ConfigError, check_deadline
from massgen.cli import exit_codes
from massgen.cli.request import EPILOG, Request, build_parser, parse

__all__ = ["EPILOG", "Request", "build_parser", "entry", "main"]


def _quiet_library_logs() -> None:
    # Pykka logs failures of actors we supervise; the trace has them, the terminal need not.
    logging.getLogger("pykka").setLevel(logging.CRITICAL)


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch: a subcommand, else the command line parsed once into a ``Request``, answered without a
    team (lists, config tools, setup) or resolved (``cli/run_config``) and run on its surface."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] and argv[0] in ("serve", "logs", "export", "viewer", "shares"):  # subcommands.NAMES
        from massgen.cli import subcommands

        return subcommands.main(argv[0], argv[1:])
    request = parse(argv)
    if isinstance(request, int):
        return request
    _quiet_library_logs()
    from massgen.cli import config_tools

    answered = config_tools.answer(request)
    if answered is not None:
        return answered
    if request.orchestrator_timeout is not None:
        try:
            check_deadline(request.orchestrator_timeout, "--orchestrator-timeout")
        except ConfigError as error:
            print(f"massgen: {error}", file=sys.stderr)
            return exit_codes.CONFIG_ERROR
    if request.setup or request.quickstart or request.init:
        from massgen.cli import setup

        return setup.main(request)
    from massgen.cli import run_config, surfaces

    refused = surfaces.refusal(request)
    if refused is not None:
        return refused
    resolved = run_config.resolve(request)
    return resolved if isinstance(resolved, int) else surfaces.run(resolved)


def entry() -> None:
    from massgen.cli.fast_exit import exit_after

    exit_after(main)


if __name__ == "__main__":
    entry()
