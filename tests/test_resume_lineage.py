"""A run is resumed once, by one process, from the newest attempt that holds its work.

- A ``--resume`` killed before it recorded where it started (its trace holds only ``RunStarted``, or
  nothing) is passed over: the next ``--resume LOG_DIR`` continues from the attempt that holds the work,
  says which attempt it skipped and why, and pays for no finished model call again.
- The process running a run holds its lock (``logs/run_lock.py``): a ``--resume`` of a run still going,
  or a second of two resumes started together, is refused with exit 1, naming the folder and the process;
  ``rebuild_from_trace`` refuses to write into a live run's folder.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from support import FACTOR
from test_resume import QUESTION, attempt_dir_line, fields, kill_when, massgen, real_calls, slowed_example

from massgen.actors.run.team import Team
from massgen.configs import load_config
from massgen.logs import LogProjection, TraceReadError, read_trace, rebuild_from_trace
from massgen.messages.trace import TraceRecord


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Counter[str]]:
    tmp_path = tmp_path_factory.mktemp("whole")
    done = massgen("--automation", "--config", str(slowed_example(tmp_path)), QUESTION, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    answer = (tmp_path / fields(done.stdout)["ANSWER_FILE"]).read_text()
    return answer, real_calls(read_trace(tmp_path / fields(done.stdout)["ATTEMPT_DIR"]))


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs")}


def _resume_killed_at_its_start(run_root: Path, tmp_path: Path) -> Path:
    """A real ``massgen --resume`` SIGKILLed as soon as its new attempt's trace is on disk; its attempt."""
    proc = subprocess.Popen([sys.executable, "-m", "massgen.cli.main", "--automation", "--resume", str(run_root)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=_env(tmp_path),
                            cwd=tmp_path)
    assert proc.stdout is not None
    attempt = tmp_path / attempt_dir_line(proc.stdout)  # printed before the trace is written
    deadline = time.monotonic() + 30 * FACTOR
    while proc.poll() is None and time.monotonic() < deadline and not (
            (attempt / "trace.jsonl").exists() and (attempt / "trace.jsonl").stat().st_size > 0):
        time.sleep(0.001)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    return attempt


@pytest.mark.parametrize("left", ["RunStarted only", "nothing"])
def test_a_resume_killed_before_it_recorded_its_start_is_passed_over_and_no_finished_call_is_paid_twice(
    left: str, uninterrupted: tuple[str, Counter[str]], tmp_path: Path
) -> None:
    expected_answer, expected_calls = uninterrupted
    first = kill_when(slowed_example(tmp_path), tmp_path, "AnswerAccepted", 2)  # two answers paid for
    paid = real_calls(read_trace(first))
    assert sum(paid.values()) >= 2
    run_root = first.parent.parent
    second = _resume_killed_at_its_start(run_root, tmp_path)
    # What the kill leaves when it lands between the first flush (RunStarted) and RunResumed, or before it.
    lines = (second / "trace.jsonl").read_text().splitlines(keepends=True)
    assert '"RunStarted"' in lines[0] and '"resumed_from"' in lines[0]
    (second / "trace.jsonl").write_text(lines[0] if left == "RunStarted only" else "")

    resumed = massgen("--automation", "--resume", str(run_root), tmp_path=tmp_path)

    assert resumed.returncode == 0, resumed.stderr
    out = fields(resumed.stdout)
    third = tmp_path / out["ATTEMPT_DIR"]
    trace = read_trace(third)
    # Not one finished call sent again: the calls of attempt 1 and attempt 3 are the uninterrupted run's.
    assert paid + real_calls(trace) == expected_calls
    assert f"skipped {second}: " in resumed.stderr
    assert (("no RunResumed" if left == "RunStarted only" else "its trace is empty")
            in resumed.stderr), resumed.stderr
    assert f"continuing from {first}" in resumed.stderr
    assert "resuming with 2 earlier answers" in resumed.stderr
    assert third == first.parent / "attempt_3"
    assert (tmp_path / out["ANSWER_FILE"]).read_text() == expected_answer
    assert trace[0]["payload"]["resumed_from"] == str(first) and trace[0]["payload"]["attempt"] == 3
    finished = next(r for r in trace if r["type"] == "RunFinished")["payload"]
    assert finished["model_calls"] == sum(expected_calls.values())


def _start(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "massgen.cli.main", "--automation", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=_env(tmp_path), cwd=tmp_path)


def test_a_resume_of_a_run_still_going_is_refused_naming_its_process_and_so_is_a_rebuild_into_it(
    tmp_path: Path
) -> None:
    live = _start(tmp_path, "--config", str(slowed_example(tmp_path)), QUESTION)
    assert live.stdout is not None
    try:
        attempt = tmp_path / attempt_dir_line(live.stdout)
        run_root = attempt.parent.parent
        deadline = time.monotonic() + 30 * FACTOR
        while '"AnswerAccepted"' not in ((attempt / "trace.jsonl").read_text()
                                          if (attempt / "trace.jsonl").exists() else ""):
            assert live.poll() is None and time.monotonic() < deadline, "the run ended before its first answer"
            time.sleep(0.01)

        second = massgen("--automation", "--resume", str(run_root), tmp_path=tmp_path)

        assert second.returncode == 1, second.stderr
        assert f"{run_root}: this run is still going in process {live.pid}" in second.stderr
        assert "Traceback" not in second.stderr and "resuming with" not in second.stderr
        assert not (attempt.parent / "attempt_2").exists()  # nothing made, nothing paid
        with pytest.raises(TraceReadError, match=f"the run is still going in process {live.pid}"):
            rebuild_from_trace(attempt)
        assert live.poll() is None
    finally:
        out, err = live.communicate(timeout=120 * FACTOR)
    assert live.returncode == 0, err
    assert "RUN_STATUS: completed" in out
    rebuild_from_trace(attempt)  # over: its files may be rebuilt in place


def test_of_two_resumes_started_together_one_runs_and_the_other_is_refused(tmp_path: Path) -> None:
    first = kill_when(slowed_example(tmp_path), tmp_path, "AnswerAccepted", 1)
    run_root = first.parent.parent
    both = [_start(tmp_path, "--resume", str(run_root)) for _ in range(2)]
    results = [(proc, *proc.communicate(timeout=120 * FACTOR)) for proc in both]

    codes = sorted(proc.returncode for proc, _, _ in results)
    assert codes == [0, 1], [err for _, _, err in results]
    (winner, out, _), = [r for r in results if r[0].returncode == 0]
    (_, _, refused), = [r for r in results if r[0].returncode == 1]
    assert f"{run_root}: this run is still going in process {winner.pid}" in refused
    assert "RUN_STATUS: completed" in out
    assert sorted(p.name for p in first.parent.glob("attempt_*")) == ["attempt_1", "attempt_2"]


def test_rebuilding_a_live_run_in_place_is_refused_and_elsewhere_or_after_it_ends_is_not(tmp_path: Path) -> None:
    config, _ = load_config(str(slowed_example(tmp_path)))
    answered = threading.Event()

    def on_record(record: TraceRecord, projection: LogProjection) -> None:
        if record.type == "AnswerAccepted":
            answered.set()

    team = Team(config, QUESTION, log_dir=tmp_path / "run", subscribers=[on_record]).start()
    try:
        assert answered.wait(30 * FACTOR)
        with pytest.raises(TraceReadError, match=f"{tmp_path / 'run'}: the run is still going in process "
                                                 f"{os.getpid()}"):
            rebuild_from_trace(tmp_path / "run")
        elsewhere = rebuild_from_trace(tmp_path / "run", tmp_path / "copy")
        assert (tmp_path / "copy" / "status.json").read_text() == elsewhere["status.json"]
        assert "status.json" in rebuild_from_trace(tmp_path / "run", write=False)  # read as it is: allowed
    finally:
        result = team.wait()
    assert result.status == "completed"
    live: dict[str, Any] = {name: (tmp_path / "run" / name).read_text() for name in ("status.json", "vote.json")}
    rebuilt = rebuild_from_trace(tmp_path / "run")
    assert {name: rebuilt[name] for name in live} == live
