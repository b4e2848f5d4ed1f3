"""SIGTERM and SIGHUP end a run as Ctrl-C does: best answer kept, logs complete, exit 4."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

CONFIGS = Path(__file__).parent / "configs"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_termination_signal_keeps_the_best_answer_and_completes_the_logs(tmp_path: Path, signum: int) -> None:
    env = {**os.environ, "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "massgen.cli.main", "--automation", "--config", str(CONFIGS / "slow_team.yaml"), "q"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
    )
    assert proc.stdout is not None
    log_dir = tmp_path / proc.stdout.readline().split(": ", 1)[1].strip()
    trace = log_dir / "trace.jsonl"
    try:
        for _ in range(600):  # signal once the first answer is in the trace (an event, not a sleep)
            if proc.poll() is not None or (trace.exists() and '"AnswerAccepted"' in trace.read_text()):
                break
            try:
                proc.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                pass
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    name = signal.Signals(signum).name
    assert proc.returncode == 4, err
    assert "STATUS: interrupted" in out.splitlines() and f"REASON: interrupted by {name}" in out.splitlines()
    assert (log_dir / "final" / "quick" / "answer.txt").read_text() == "draft from quick\n"
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    assert records[-1]["type"] == "RunFinished" and records[-1]["payload"]["status"] == "interrupted"
    assert [r["payload"]["reason"] for r in records if r["type"] == "CancelRun"] == [f"interrupted by {name}"]
    status = json.loads((log_dir / "status.json").read_text())
    assert status["phase"] == "finished"
    assert "Traceback" not in err
