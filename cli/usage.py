"""Usage errors exit 64 (``exit_codes.USAGE_ERROR``), not argparse's 2, which means "no agent answered"."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from massgen.cli import exit_codes


class UsageParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors (and its subcommands' errors) exit with ``USAGE_ERROR``."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(exit_codes.USAGE_ERROR, f"{self.prog}: error: {message}\n")


def usage_error(message: str) -> int:
    """Report a usage error found after parsing (clashing flags); returns the exit code."""
    print(f"massgen: error: {message}", file=sys.stderr)
    return exit_codes.USAGE_ERROR
