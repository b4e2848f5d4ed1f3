"""Helpers for tests that watch processes they did not start (a killed caller's children): no event tells a
process's start, so that is polled with a deadline; its end is an event (a pidfd turns readable when it exits,
a zombie nobody reaps included), waited on with a deadline."""

from __future__ import annotations

import contextlib
import os
import select
import time
from collections.abc import Callable, Iterable

import psutil


def wait_for(found: Callable[[], list[psutil.Process]], timeout: float, what: str) -> list[psutil.Process]:
    """What ``found`` returns, once it is not empty (polled: no event tells a process's start)."""
    deadline = time.monotonic() + timeout
    while not (seen := found()):
        assert time.monotonic() < deadline, f"{what} never appeared"
        time.sleep(0.05)
    return seen


def descendants(pid: int, *, matching: str) -> list[psutil.Process]:
    """The live processes below ``pid`` whose command line holds ``matching``."""
    try:
        below = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    found = []
    for process in below:
        with contextlib.suppress(psutil.Error):
            if matching in " ".join(process.cmdline()) and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
    return found


def left_running(pids: Iterable[int], timeout: float) -> list[int]:
    """Which of ``pids`` still run (a zombie does not) after up to ``timeout`` seconds of waiting for their end."""
    fds: dict[int, int] = {}
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            fds[os.pidfd_open(pid)] = pid
    try:
        deadline = time.monotonic() + timeout
        while fds and (room := deadline - time.monotonic()) > 0:
            ended, _, _ = select.select(list(fds), [], [], room)
            for fd in ended:
                os.close(fd)
                del fds[fd]
        return sorted(fds.values())
    finally:
        for fd in fds:
            os.close(fd)
