"""The full-screen UI under load: frames per second, frame time, fold lag and key echo.

Runs the real ``TuiApp`` (prompt-toolkit drawing a 200 x 60 screen into a discarding
VT100 output) on scripted teams that stream many small text deltas: 3 agents at about a
model's speed, and 64 agents at once. Per scenario it prints the trace records folded,
frames drawn and the most frames drawn in any one second (the cap is 20), the time a frame
took to draw (p50 / max; wall clock, and the loop thread's own CPU time, which a loaded
machine does not inflate), the lag from a record's message being sent to its fold on the
screen's loop (fold lag: the team's actors and the trace writer, then the screen) and from the
trace writer handing it to the screen to its fold (view lag: the screen's own part), each
p50 / p95 / max; the run's end apart (finish lag: ``RunFinished`` waits behind the writer's
backlog; the derived files, ``execution_metadata.yaml`` with these teams' megabytes of scripts
among them, are written after it is handed over); and how long a typed key took to show on the
command line (max).

    .venv/bin/python -m bench.tui_redraws [--scenario three sixty-four local-three] [--deltas 200]

``local-three`` (not run by default) is a real team instead: three agents on the in-process
Gemma 3 270M model (``local`` backend, model ``tiny``: the ``[local]`` extra), streaming at the
model's own speed; ``--deltas`` does not apply to it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from bench.streaming_team import streaming_team
from massgen import RunFinishedEvent
from massgen.cli.tui.app import TuiApp
from massgen.cli.tui.state import RunState
from massgen.configs import validate_data


def team(agents: int, deltas: int, delay: float) -> dict[str, object]:
    return streaming_team(agents, deltas, delay_s=delay, deadline_s=600, idle_s=120, word="tok", line_every=12,
                          straggler_grace_s=600)


class Discard:
    encoding = "utf-8"

    def __init__(self) -> None:
        self.bytes = 0

    def write(self, text: str) -> int:
        self.bytes += len(text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


class MeasuredApp(TuiApp):
    """The real app, with clocks on its fold and its frames."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fold_lags: list[float] = []
        self.view_lags: list[float] = []
        self.finish_lag = 0.0
        self._arrived: dict[int, float] = {}  # id(events) -> when the trace writer handed the record over
        self.frames: list[float] = []
        self.frame_times: list[float] = []
        self.frame_cpu: list[float] = []
        self.folded = 0
        self._frame_start = self._frame_cpu_start = 0.0

    def _enqueue(self, state: RunState, events: list[Any], ts: float) -> None:
        self._arrived[id(events)] = time.time()
        super()._enqueue(state, events, ts)

    def _drain(self) -> None:
        with self._pending_lock:
            batch, self._pending, self._drain_scheduled = self._pending, [], False
        now = time.time()
        for _state, events, ts in batch:  # the run's end apart: it waits behind the backlog
            if any(isinstance(event, RunFinishedEvent) for event in events):
                self.finish_lag = now - ts
        self.fold_lags += [now - ts for _state, events, ts in batch
                           if not any(isinstance(event, RunFinishedEvent) for event in events)]
        self.view_lags += [now - self._arrived.pop(id(events), now) for _state, events, _ts in batch]
        self.folded += len(batch)
        with self._pending_lock:  # folded by the real drain, in order, with anything that came since
            self._pending[:0] = batch
        super()._drain()

    def build(self, history: Any = None) -> Any:
        app = super().build(history)
        app.before_render += self._started
        app.after_render += self._drawn
        return app

    def _started(self, _app: Any) -> None:
        self._frame_start, self._frame_cpu_start = time.perf_counter(), time.thread_time()
        self.frames.append(time.monotonic())  # a frame counts when it starts: that is what the cap spaces

    def _drawn(self, _app: Any) -> None:
        self.frame_times.append(time.perf_counter() - self._frame_start)
        self.frame_cpu.append(time.thread_time() - self._frame_cpu_start)


def most_in_a_second(stamps: list[float]) -> int:
    best, start = 0, 0
    for end in range(len(stamps)):
        while stamps[end] - stamps[start] >= 1.0:
            start += 1
        best = max(best, end - start + 1)
    return best


def local_team() -> dict[str, object]:
    """Three agents on the tiny local model: the plumbing at a real model's pace, one new answer each."""
    return {
        "agents": [{"id": f"tiny_{i}", "backend": {"type": "local", "model": "tiny", "seed": i, "temperature": 0.3,
                                                   "max_tokens": 64}} for i in (1, 2, 3)],
        "orchestrator": {"max_new_answers_per_agent": 1, "final_answer_strategy": "winner_reuse"},
        "timeout_settings": {"orchestrator_timeout_seconds": 900, "idle_stream_timeout_seconds": 300,
                             "turn_timeout_seconds": 600},
    }


def run_scenario(name: str, agents: int, deltas: int, delay: float) -> dict[str, Any]:
    data = local_team() if name == "local-three" else team(agents, deltas, delay)
    config = validate_data(data, f"bench {name}")
    out = Discard()
    output = Vt100_Output(out, lambda: Size(rows=60, columns=200), term="xterm", enable_cpr=False)  # type: ignore[arg-type]
    with tempfile.TemporaryDirectory() as tmp, create_pipe_input() as pipe:
        app = MeasuredApp(config, name, input=pipe, output=output, history_file=Path(tmp) / "history")
        import os

        os.environ["MASSGEN_LOG_BASE_DIR"] = str(Path(tmp) / "logs")
        codes: list[int] = []
        thread = threading.Thread(target=lambda: codes.append(app.run()), name="tui")
        thread.start()
        while app._app is None or not app._app.is_running:
            time.sleep(0.01)
        started = time.monotonic()
        pipe.send_text(("What is 2+3? Answer in one sentence." if name == "local-three" else "go") + "\r")
        assert app.wait_until(lambda a: bool(a.results) or a.state.finished is not None, 600)
        assert app.wait_until(lambda a: bool(a.results), 600)
        run_s = time.monotonic() - started
        echoes: list[float] = []
        for ch in "abcdefghij":  # a key, typed after the run, shows on the line at the next frame
            mark = time.monotonic()
            pipe.send_text(ch)
            while app._buffer is None or not app._buffer.text.endswith(ch):
                time.sleep(0.001)
            echoes.append(time.monotonic() - mark)
        pipe.send_text("\x15/quit\r")
        thread.join(60)
    state: RunState = app.state
    lags = sorted(app.fold_lags) or [0.0]
    view_lags = sorted(app.view_lags) or [0.0]
    frames = [f for f in app.frames if f >= started]
    return {
        "scenario": name, "agents": agents, "run_s": round(run_s, 2), "records_folded": app.folded,
        "chunks": sum(a.chars for a in state.agents.values()), "frames": len(frames),
        "frames_per_s": round(len(frames) / run_s, 1), "most_frames_in_1s": most_in_a_second(frames),
        "frame_ms_p50": round(statistics.median(app.frame_times) * 1000, 1),
        "frame_ms_max": round(max(app.frame_times) * 1000, 1),
        "frame_cpu_ms_p50": round(statistics.median(app.frame_cpu) * 1000, 1),
        "frame_cpu_ms_max": round(max(app.frame_cpu) * 1000, 1),
        "fold_lag_ms_p50": round(lags[len(lags) // 2] * 1000, 1),
        "fold_lag_ms_p95": round(lags[int(len(lags) * 0.95)] * 1000, 1),
        "fold_lag_ms_max": round(lags[-1] * 1000, 1),
        "finish_lag_ms": round(app.finish_lag * 1000, 1),
        "view_lag_ms_p50": round(view_lags[len(view_lags) // 2] * 1000, 1),
        "view_lag_ms_p95": round(view_lags[int(len(view_lags) * 0.95)] * 1000, 1),
        "view_lag_ms_max": round(view_lags[-1] * 1000, 1),
        "key_echo_ms_max": round(max(echoes) * 1000, 1), "status": state.finished.status if state.finished else None,
    }


SCENARIOS = {"three": (3, 0.02), "sixty-four": (64, 0.005), "local-three": (3, 0.0)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", nargs="+", choices=sorted(SCENARIOS), default=["three", "sixty-four"])
    parser.add_argument("--deltas", type=int, default=200, help="text deltas per agent (default 200)")
    args = parser.parse_args(argv)
    for name in args.scenario:
        agents, delay = SCENARIOS[name]
        result = run_scenario(name, agents, args.deltas, delay)
        print(" ".join(f"{k}={v}" for k, v in result.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
