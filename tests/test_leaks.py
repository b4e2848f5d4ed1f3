"""Nothing leaks: threads, file descriptors and processes return to their baseline after 50 runs.

Garbage collection is off while the runs go: what an incarnation leaves to the collector
(an unclosed event loop holds an epoll fd, a socket pair and an executor thread) counts
as a leak, because in a long-lived process the collector may not run for a long time.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
from serve_process import start_server, write_configs
from wire.team_chat import TeamChatServer

import massgen

RUNS = 50


def _settled(measure: Callable[[], tuple[int, ...]], baseline: tuple[int, ...], limit_s: float = 10.0
             ) -> tuple[int, ...]:
    """The measure once it is back at (or under) the baseline (stopped threads take a moment), or the last one.

    Under it is no leak: a thread of something that ran before the baseline may end meanwhile."""
    give_up = time.monotonic() + limit_s
    now = measure()
    while not _within(now, baseline) and time.monotonic() < give_up:
        time.sleep(0.05)
        now = measure()
    return now


def _within(now: tuple[int, ...], baseline: tuple[int, ...]) -> bool:
    return all(n <= b for n, b in zip(now, baseline, strict=True))


def _stable(measure: Callable[[], tuple[int, ...]], limit_s: float = 10.0) -> tuple[int, ...]:
    """A baseline: the measure once it reads the same three times in a row."""
    give_up = time.monotonic() + limit_s
    seen = [measure()]
    while (len(seen) < 3 or len(set(seen[-3:])) > 1) and time.monotonic() < give_up:
        time.sleep(0.2)
        seen.append(measure())
    return seen[-1]


@pytest.fixture
def collector_off() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_fifty_api_runs_leave_no_threads_fds_or_processes(tmp_path: Path, collector_off: None) -> None:
    me = psutil.Process()

    def measure() -> tuple[int, ...]:
        return threading.active_count(), me.num_fds(), len(me.children(recursive=True))

    with TeamChatServer() as server:
        def team(index: int) -> dict[str, Any]:
            if index % 2:
                return {"agents": [{"id": f"s{i}", "backend": {"type": "scripted",
                                                               "script": [[{"new_answer": f"answer {i}"}]]}}
                                   for i in range(3)]}
            return {"agents": [{"id": f"h{i}", "backend": {
                "type": "chatcompletion", "base_url": f"{server.url}/v1", "api_key": "sk-test",
                "model": f"healthy#{i}"}} for i in range(3)]}

        for index in range(2):  # warm-up: imports, SDK clients' first use
            massgen.run_sync("What is 2+2?", team(index), log_dir=tmp_path / f"warm{index}")
        baseline = measure()
        for index in range(RUNS):
            result = massgen.run_sync("What is 2+2?", team(index), log_dir=tmp_path / f"run{index}")
            assert result.status == "completed", result.reason
        assert _within(_settled(measure, baseline), baseline), (_settled(measure, baseline), baseline)


def test_fifty_served_runs_leave_no_threads_fds_or_processes(tmp_path: Path) -> None:
    write_configs(tmp_path)
    server = start_server(tmp_path, "--config", "team.yaml")
    try:
        process = psutil.Process(server.proc.pid)

        def measure() -> tuple[int, ...]:
            return process.num_threads(), process.num_fds(), len(process.children(recursive=True))

        body = {"model": "team", "messages": [{"role": "user", "content": "What is 2+2?"}]}
        with httpx.Client(timeout=60) as client:
            def one() -> None:
                reply = client.post(f"{server.api_url}/chat/completions", json=body)
                assert reply.status_code == 200, reply.text

            for _ in range(2):
                one()
            server.wait_idle()
            baseline = _stable(measure)
            for _ in range(RUNS):
                one()
            server.wait_idle()  # measured with the client's keep-alive connection open, as the baseline was
            assert _within(_settled(measure, baseline), baseline), (_settled(measure, baseline), baseline)
    finally:
        server.stop()
