"""Real ``massgen`` processes stopped by real signals: one helper for the command and the REPL.

``stop_one_shot`` runs ``massgen --automation`` on a slow team, signals it once the first
answer is in the trace (an event, not a sleep) and collects what it printed and wrote.
``ReplOnPty`` runs the interactive session on a pseudo-terminal, as a user's terminal
would, in a session of its own so a leak check can find every process it started.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CONFIGS = Path(__file__).parent / "configs"
SLOW_TEAM = CONFIGS / "slow_team.yaml"
WAIT_S = 30.0


def massgen_env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs"), "HOME": str(tmp_path)}


def wait_for_trace(trace: Path | None, needle: str, proc: subprocess.Popen[Any], find: Path | None = None,
                   timeout: float = WAIT_S) -> Path:
    """Until ``needle`` is in the trace (``trace``, or the first ``trace.jsonl`` under ``find``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if trace is None and find is not None:
            trace = next(iter(sorted(find.glob("**/trace.jsonl"))), None)
        if trace is not None and trace.exists() and needle in trace.read_text(errors="replace"):
            return trace
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=0.05)
    raise AssertionError(f"{needle} never reached the trace (process exit code {proc.poll()})")


def trace_records(trace: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in trace.read_text().splitlines()]


@dataclass
class Stopped:
    returncode: int
    out: str
    err: str
    log_dir: Path
    records: list[dict[str, Any]]


def stop_one_shot(tmp_path: Path, signum: int, config: Path = SLOW_TEAM, *, when: str = '"AnswerAccepted"',
                  times: int = 1, gap_s: float = 0.0) -> Stopped:
    """``massgen --automation`` on ``config``, sent ``signum`` (``times`` times, ``gap_s`` apart, as a
    user's quick key presses) once ``when`` (by default the first answer) is in the trace."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "massgen.cli.main", "--automation", "--config", str(config), "q"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=massgen_env(tmp_path), cwd=tmp_path,
    )
    assert proc.stdout is not None
    try:
        # LOG_DIR (the run's root), STATUS, then ATTEMPT_DIR: the folder with the trace
        start = dict(proc.stdout.readline().split(": ", 1) for _ in range(3))
        log_dir = tmp_path / start["ATTEMPT_DIR"].strip()
        trace = wait_for_trace(log_dir / "trace.jsonl", when, proc)
        for number in range(times):
            if number:
                time.sleep(gap_s)
            proc.send_signal(signum)
        out, err = proc.communicate(timeout=WAIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return Stopped(proc.returncode, out, err, log_dir, trace_records(trace))


def session_processes(sid: int) -> list[int]:
    """Every process still alive in session ``sid`` (zombies included: they are not reaped yet)."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        if int(fields[3]) == sid:  # state, ppid, pgrp, session
            alive.append(int(entry.name))
    return alive


class ReplOnPty:
    """``massgen --config CONFIG`` with no question, on a pseudo-terminal of 40 x 200."""

    def __init__(self, tmp_path: Path, config: Path = SLOW_TEAM) -> None:
        self.logs = tmp_path / "logs"
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))
        env = {**massgen_env(tmp_path), "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
        self.proc = subprocess.Popen(
            # the line REPL: the full-screen view (the default on a terminal) is tests/test_tui.py's
            [sys.executable, "-m", "massgen.cli.main", "--config", str(config), "--display", "rich"],
            stdin=slave, stdout=slave, stderr=slave, env=env, cwd=tmp_path, start_new_session=True,
        )
        os.close(slave)
        self.master = master
        self.screen = ""

    def expect(self, needle: str, timeout: float = WAIT_S, start: int = 0) -> int:
        """Read the terminal until ``needle`` shows (after offset ``start``); the offset after it."""
        deadline = time.monotonic() + timeout
        while (found := self.screen.find(needle, start)) < 0:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{needle!r} never showed; the screen ends with {self.screen[-2000:]!r}")
            ready, _, _ = select.select([self.master], [], [], min(left, 0.1))
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the session closed its terminal
                    chunk = b""
                if not chunk:
                    raise AssertionError(f"{needle!r} never showed before the terminal closed: "
                                         f"{self.screen[-2000:]!r}")
                self.screen += chunk.decode(errors="replace")
        return found + len(needle)

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def signal(self, signum: int) -> None:
        os.kill(self.proc.pid, signum)

    def wait_for_trace(self, needle: str) -> Path:
        return wait_for_trace(None, needle, self.proc, find=self.logs)

    def wait(self, timeout: float = WAIT_S) -> int:
        """The exit code, reading the terminal meanwhile so the session never blocks on a full one."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if ready:
                try:
                    self.screen += os.read(self.master, 65536).decode(errors="replace")
                except OSError:
                    pass
        return self.proc.wait(timeout=1)

    def close(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        os.close(self.master)
