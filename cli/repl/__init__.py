"""The interactive session (``massgen`` with no question); loads prompt-toolkit only when used."""

from massgen.cli.repl.app import Repl, can_run_interactively, run_repl

__all__ = ["Repl", "can_run_interactively", "run_repl"]
