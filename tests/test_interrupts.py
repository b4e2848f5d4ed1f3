"""Ctrl-C, however early and however often, ends a one-shot run with exit 4 and every line said.

Real ``massgen --automation`` processes, real signals (``tests/signal_process.py``). Before,
Ctrl-C before any answer ended ``failed`` (exit 2), and a second Ctrl-C (three quick ones)
printed only ``LOG_DIR``: a script reading ``STATUS:`` got nothing. Also here: closing an
incarnation's event loop on a machine too busy to drain it in time leaves no task destroyed
while pending and no coroutine never awaited (they were seen under load).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from signal_process import CONFIGS, stop_one_shot

from massgen.actors.runtime.loop_thread import close_loop, run_loop

AUTOMATION_KEYS = ("RUN_STATUS", "WINNER", "ANSWER_FILE", "REASON")  # after LOG_DIR, which the helper read


def _fields(out: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)


def test_ctrl_c_before_any_answer_is_interrupted_with_exit_4(tmp_path: Path) -> None:
    stopped = stop_one_shot(tmp_path, signal.SIGINT, CONFIGS / "no_answer_team.yaml", when='"AgentChunk"')
    assert stopped.returncode == 4, stopped.err
    fields = _fields(stopped.out)
    assert fields["RUN_STATUS"] == "interrupted" and fields["WINNER"] == "none" and fields["ANSWER_FILE"] == "none"
    assert "interrupted by Ctrl-C" in fields["REASON"] and "no agent produced an answer" in fields["REASON"]
    finished = [r for r in stopped.records if r["type"] == "RunFinished"]
    assert len(finished) == 1 and finished[0]["payload"]["status"] == "interrupted"
    assert finished[0]["payload"]["final_answer"] is None
    assert not [r for r in stopped.records if r["type"] == "AnswerAccepted"]
    assert "Traceback" not in stopped.err


@pytest.mark.parametrize("config", ["slow_team.yaml", "no_answer_team.yaml"])
def test_three_quick_ctrl_cs_still_print_every_automation_line(tmp_path: Path, config: str) -> None:
    stopped = stop_one_shot(tmp_path, signal.SIGINT, CONFIGS / config, when='"AgentChunk"' if "no_answer" in config
                            else '"AnswerAccepted"', times=3, gap_s=0.02)
    assert stopped.returncode == 4, stopped.err
    fields = _fields(stopped.out)
    assert all(key in fields for key in AUTOMATION_KEYS), stopped.out
    assert fields["RUN_STATUS"] == "interrupted"
    assert "Traceback" not in stopped.err and "KeyboardInterrupt" not in stopped.err
    assert any(r["type"] == "CancelRun" for r in stopped.records)


def _busy_loop(target: Callable[..., None], busy_s: float) -> tuple[asyncio.AbstractEventLoop, threading.Thread,
                                                                     threading.Event]:
    """A loop on its own thread with one pending task, its thread then busy for ``busy_s``;
    the event is set once the task has been cancelled and has run its cleanup."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=target, args=(loop,), name="busy-loop", daemon=True)
    thread.start()
    worked = threading.Event()

    async def work() -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            worked.set()

    asyncio.run_coroutine_threadsafe(work(), loop)
    loop.call_soon_threadsafe(time.sleep, busy_s)
    return loop, thread, worked


def _left_nothing_pending(close: Callable[[], None], caplog: pytest.LogCaptureFixture) -> None:
    with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.ERROR, logger="asyncio"):
        warnings.simplefilter("always")
        close()
        gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message)]
    assert "Task was destroyed but it is pending" not in caplog.text


def test_closing_a_loop_too_busy_to_drain_in_time_leaves_nothing_pending(caplog: pytest.LogCaptureFixture) -> None:
    # The loop's thread is busy for 2.5 s, past close_loop's 2 s wait for its drain, as on a
    # machine with 8 engineers' tests on 2 cores: the drain has not even started when it stops.
    loop, thread, worked = _busy_loop(lambda loop: loop.run_forever(), 2.5)
    _left_nothing_pending(lambda: close_loop(loop, thread), caplog)
    assert loop.is_closed() and not thread.is_alive()
    assert worked.is_set()  # the pending task was cancelled and ran its cleanup


def test_a_loop_thread_too_busy_for_its_closer_finishes_its_own_loop(caplog: pytest.LogCaptureFixture) -> None:
    """The closer gives up waiting (2 s for the drain, 2 s for the thread); the thread, running
    ``run_loop``, cancels and awaits what is left and closes the loop itself once it is free."""
    loop, thread, worked = _busy_loop(run_loop, 4.5)  # past both of the closer's waits

    def close_and_wait_for_the_thread() -> None:
        close_loop(loop, thread)
        thread.join(60)

    _left_nothing_pending(close_and_wait_for_the_thread, caplog)
    assert not thread.is_alive() and loop.is_closed()
    assert worked.is_set()
