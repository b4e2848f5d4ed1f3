"""Usage errors exit 64 (``exit_codes.USAGE_ERROR``), not argparse's 2, which means "no agent answered"."""

from __future__ import annotations

import argparse
import math
import sys
from typing import NoReturn

from massgen.cli import exit_codes


class UsageParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors (and its subcommands' errors) exit with ``USAGE_ERROR``."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(exit_codes.USAGE_ERROR, f"{self.prog}: error: {message}\n")


def port_number(text: str) -> int:
    """An argparse ``type``: a TCP port, 0 (any free one) to 65535; anything else is the flag's usage error."""
    value = _whole_number(text, "a port number (0-65535)")
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port number (0-65535; 0 picks a free one)")
    return value


def positive_int(text: str) -> int:
    """An argparse ``type``: a whole number of at least 1."""
    value = _whole_number(text, "a whole number")
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}: must be at least 1")
    return value


def given(text: str) -> str:
    """An argparse ``type`` for a name or a path: an empty one is a mistake, not "the default" (it was run as such)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("empty; give a value or leave the flag out")
    return text


def positive_seconds(text: str) -> float:
    """An argparse ``type``: a finite number of seconds above 0."""
    value = _seconds(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text}: must be more than 0 seconds")
    return value


def seconds(text: str) -> float:
    """An argparse ``type``: a finite number of seconds, 0 or more."""
    value = _seconds(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text}: must be 0 seconds or more")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text}: must be a finite number of seconds")
    return value


def _whole_number(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None


def usage_error(message: str) -> int:
    """Report a usage error found after parsing (clashing flags); returns the exit code."""
    print(f"massgen: error: {message}", file=sys.stderr)
    return exit_codes.USAGE_ERROR
