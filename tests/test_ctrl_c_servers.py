"""Ctrl-C, the documented way to stop ``massgen --web`` and ``massgen serve --ui``, stops them cleanly.

Real processes, a real SIGINT. Before, uvicorn raised the SIGINT again after its shutdown and the
command died with a ``KeyboardInterrupt`` traceback and exit 130; and ``--web`` never printed the
run's answer in the terminal. Now: a one-line note, no traceback, exit 4 (as a one-shot run stopped
by Ctrl-C), or for ``--web`` the exit code of its run's status, with the answer on stdout as the
one-shot command prints it.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import yaml
from serve_process import start_server, wait_until
from support import FACTOR

# Two agents: alpha answers "4", both vote for it.
TEAM = {"agents": [
    {"id": "alpha", "backend": {"type": "scripted", "script": [[{"new_answer": "4"}],
                                                               [{"vote": "agent1", "reason": "right"}]]}},
    {"id": "beta", "backend": {"type": "scripted", "script": [[{"new_answer": "four"}],
                                                              [{"vote": "agent1", "reason": "the digit"}]]}},
]}
# One agent that drafts an answer, then works for a minute before it would vote.
SLOW = {"agents": [{"id": "slowpoke", "backend": {"type": "scripted", "script": [
    [{"new_answer": "a draft"}], [{"delay": 60}, {"vote": "agent1", "reason": "done"}]]}}]}


class Web:
    """``massgen --web`` in a directory, its stderr read line by line as it comes."""

    def __init__(self, workdir: Path, config: dict[str, object], question: str) -> None:
        (workdir / "team.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "massgen.cli.main", "--web", "--config", "team.yaml", question], cwd=workdir,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "MASSGEN_LOG_BASE_DIR": str(workdir / "logs")})
        self.err_lines: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.err_lines.append(line)
            self._lines.put(line)
        self._lines.put(None)

    def wait_for(self, text: str) -> None:
        while True:
            line = self._lines.get(timeout=60 * FACTOR)
            assert line is not None, "".join(self.err_lines)
            if text in line:
                return

    def interrupt(self) -> tuple[int, str, str]:
        """Ctrl-C; the exit code, stdout and stderr."""
        self.proc.send_signal(signal.SIGINT)
        assert self.proc.stdout is not None
        out = self.proc.stdout.read()  # (not communicate(): it would race the reader thread for stderr)
        self.proc.wait(60 * FACTOR)
        self._reader.join(10)  # stderr to its end
        return self.proc.returncode, out, "".join(self.err_lines)


def test_ctrl_c_after_the_web_run_ends_stops_cleanly_with_the_answer_printed(tmp_path: Path) -> None:
    web = Web(tmp_path, TEAM, "What is 2+2?")
    try:
        web.wait_for("the run has ended")
        code, out, err = web.interrupt()
    finally:
        web.proc.kill()
    assert out == "4\n"  # the answer, on stdout, as `massgen "What is 2+2?"` prints it
    assert code == 0, err  # the run completed
    assert "massgen serve: stopped by Ctrl-C" in err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err


def test_ctrl_c_during_the_web_run_stops_it_keeping_the_best_answer_exit_4(tmp_path: Path) -> None:
    web = Web(tmp_path, SLOW, "Take your time")
    try:
        web.wait_for("watch the run at ")
        wait_until(lambda: any('"AnswerAccepted"' in trace.read_text(encoding="utf-8")
                               for trace in (tmp_path / "logs").rglob("trace.jsonl")), 30, "the draft")
        code, out, err = web.interrupt()
    finally:
        web.proc.kill()
    assert code == 4, err  # as a one-shot run stopped by Ctrl-C
    assert out == "a draft\n"
    assert "massgen serve: stopped by Ctrl-C" in err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err


def test_ctrl_c_stops_serve_ui_with_a_note_and_exit_4(tmp_path: Path) -> None:
    server = start_server(tmp_path, "--ui")
    code = server.stop(signal.SIGINT)
    err = server.output()
    assert code == 4, err
    assert "massgen serve: stopped by Ctrl-C" in err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
