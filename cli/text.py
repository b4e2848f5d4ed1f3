"""Text at the terminal's edges: argv bytes that are not UTF-8, output that is not Unicode, and
text from a model, a config or a question that would drive the terminal.

Python decodes argv with ``surrogateescape``, so ``caf\\xe9`` (Latin-1 bytes) arrives as a
string with a lone surrogate that no UTF-8 file or provider accepts. Such bytes become a
visible escape (``caf\\\\xe9``) at the boundary; on the way out, text that still cannot
be encoded is written escaped instead of failing the run after the work is done.

The standard streams may also be gone: closed by the shell (``>&-``, ``2>&-``) or a pipe whose
reader left (``| head -1``). Neither is a failure of the command: what was asked still happens
(the answer is stored, the session turn saved), and what nobody can read is dropped.

A terminal obeys control sequences in what it is given: an answer holding ``ESC ] 52`` writes
the clipboard, ``ESC ] 0`` sets the window title, ``ESC [ 2J`` clears the screen. Every text
that did not come from this program (answers, vote reasons, questions, agent ids, errors) goes
through ``for_terminal`` before it is written to stdout or stderr: control characters become
visible escapes (``\\x1b``), the readable text stays as it is. Files on disk keep the raw text. What
counts as unsafe is decided once, in ``messages/text.py`` (``unsafe_for_terminal``), which a served
model name is checked against too.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
from collections.abc import Iterator
from typing import IO

__all__ = ["counted", "escape_unencodable_output", "for_terminal", "from_argv", "unless_reader_gone"]


def for_terminal(text: str) -> str:
    """``text`` safe to write to a terminal: C0 and C1 controls, bidi overrides and lone surrogates as visible
    escapes (``messages/text.py`` decides which), tabs and newlines kept (a CRLF as a newline)."""
    from massgen import escape_for_terminal  # when first needed: its package loads every message type

    return escape_for_terminal(text.replace("\r\n", "\n"))


def from_argv(arg: str) -> str:
    """``arg`` with bytes that were not UTF-8 written as ``\\xNN`` escapes."""
    try:
        arg.encode("utf-8")
        return arg
    except UnicodeEncodeError:
        return os.fsencode(arg).decode("utf-8", "backslashreplace")


def escape_unencodable_output() -> None:
    """Make stdout and stderr write what they cannot encode as escapes, never raise; a stream the shell
    closed becomes a sink, so writing to it is not an error (and ``print(file=None)`` cannot send
    stderr's lines to stdout). Safe to call more than once."""
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (lives as long as the process)
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


@contextlib.contextmanager
def unless_reader_gone(*streams: IO[str]) -> Iterator[None]:
    """Write to ``streams`` inside; if the reader of one has left (a broken pipe), end those writes quietly.

    That stream's file descriptor then points at ``/dev/null``: every later write and the flush at exit
    succeed, so one check here stands for all of them, and what comes after the writes still runs.
    """
    try:
        yield
    except BrokenPipeError:
        broken = [s for s in streams if _reader_left(s)]
        for stream in broken or streams:  # none that can tell: every one may be the broken one
            _drop_output(stream)


def _fd(stream: IO[str]) -> int | None:
    try:
        return stream.fileno()
    except (OSError, ValueError):  # not a file (a test's StringIO), or closed
        return None


def _reader_left(stream: IO[str]) -> bool:
    """True when ``stream`` is a pipe nobody reads any more (``poll`` says POLLERR for its write end)."""
    fd = _fd(stream)
    if fd is None or not hasattr(select, "poll"):
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & select.POLLERR for _, events in poller.poll(0))


def _drop_output(stream: IO[str]) -> None:
    fd = _fd(stream)
    if fd is None:
        return
    sink = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(sink, fd)
    finally:
        os.close(sink)


def counted(n: int, noun: str) -> str:
    """``1 call``, ``2 calls``: a count with its noun in the number the count takes (a regular plural)."""
    return f"{n} {noun if n == 1 else noun + 's'}"
