"""Signals end work the way a user expects, in the one-shot command and in the REPL.

One-shot: SIGTERM and SIGHUP end a run as Ctrl-C does (best answer kept, logs complete,
exit 4). REPL: SIGINT cancels the running turn (its best answer is kept) and the session
goes on; SIGTERM and SIGHUP end the session, with the running turn cancelled, its trace
closed, and no process of the session left behind. Real processes, real signals, a real
pseudo-terminal (``tests/signal_process.py``).
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest
from signal_process import ReplOnPty, session_processes, stop_one_shot, trace_records

TERMINATING = pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])


@TERMINATING
def test_a_termination_signal_keeps_the_best_answer_and_completes_the_logs(tmp_path: Path, signum: int) -> None:
    stopped = stop_one_shot(tmp_path, signum)
    name = signal.Signals(signum).name
    assert stopped.returncode == 4, stopped.err
    lines = stopped.out.splitlines()
    assert "RUN_STATUS: interrupted" in lines and f"REASON: interrupted by {name}" in lines
    assert (stopped.log_dir / "final" / "quick" / "answer.txt").read_text() == "draft from quick\n"
    records = stopped.records
    assert records[-1]["type"] == "RunFinished" and records[-1]["payload"]["status"] == "interrupted"
    assert [r["payload"]["reason"] for r in records if r["type"] == "CancelRun"] == [f"interrupted by {name}"]
    status = json.loads((stopped.log_dir / "status.json").read_text())
    assert status["phase"] == "finished"
    assert "Traceback" not in stopped.err


def _cancel_reasons(records: list[dict[str, object]]) -> list[object]:
    return [r["payload"]["reason"] for r in records if r["type"] == "CancelRun"]  # type: ignore[index]


def _finished_interrupted(records: list[dict[str, Any]]) -> bool:
    """One ``RunFinished(interrupted)``; after it only late sends of agents (and their dead letters)."""
    at = [i for i, r in enumerate(records) if r["type"] == "RunFinished"]
    return (len(at) == 1 and records[at[0]]["payload"]["status"] == "interrupted"
            and all(r["type"] == "DeadLetter" or not r["sender"].startswith(("supervisor", "system"))
                    for r in records[at[0] + 1:]))


def test_sigint_in_the_repl_cancels_the_running_turn_and_the_session_goes_on(tmp_path: Path) -> None:
    repl = ReplOnPty(tmp_path)
    try:
        repl.expect("Ask a question")
        repl.type("q\r")
        trace = repl.wait_for_trace('"AnswerAccepted"')
        repl.signal(signal.SIGINT)
        # What the user sees: the turn is cancelled, its best answer shown, and a prompt again.
        after = repl.expect("cancelling the turn; the best answer so far is kept")
        after = repl.expect("best answer so far (agent1.1)", start=after)
        after = repl.expect("draft from quick", start=after)
        repl.expect("massgen>", start=after)
        assert repl.proc.poll() is None  # the session goes on
        records = trace_records(trace)
        assert _finished_interrupted(records)
        assert _cancel_reasons(records) == ["interrupted by Ctrl-C"]
        repl.type("/quit\r")
        assert repl.wait() == 0
        assert "Traceback" not in repl.screen
        assert session_processes(repl.proc.pid) == []
    finally:
        repl.close()


@TERMINATING
def test_a_termination_signal_ends_the_repl_with_the_turn_cancelled_and_its_trace_closed(
        tmp_path: Path, signum: int) -> None:
    name = signal.Signals(signum).name
    repl = ReplOnPty(tmp_path)
    try:
        repl.expect("Ask a question")
        repl.type("q\r")
        trace = repl.wait_for_trace('"AnswerAccepted"')
        repl.signal(signum)
        assert repl.wait() == 4
        assert f"{name}: ending the session (cancelling the running turn first)" in repl.screen
        assert "draft from quick" in repl.screen and "Traceback" not in repl.screen
        records = trace_records(trace)
        assert _finished_interrupted(records)
        assert _cancel_reasons(records) == [f"interrupted by {name}"]  # cancelled once, by the signal
        status = json.loads((trace.parent / "status.json").read_text())
        assert status["phase"] == "finished"
        assert session_processes(repl.proc.pid) == []  # nothing the session started outlives it
    finally:
        repl.close()
