"""A compact live view of a run on stderr, derived from trace records as they land.

Events worth a line (answers, votes, restarts, deadlines) are printed as they
happen; between them one status line is redrawn so a long model call still shows
progress. It is only used when stderr is a terminal.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Mapping
from typing import IO, Any

from massgen import LogProjection, TraceRecord

_REDRAW_EVERY_S = 0.1
_IDLE_REDRAW_S = 0.5
_HEARTBEAT_S = 30.0


def describe(raw: Mapping[str, Any] | TraceRecord, projection: LogProjection) -> str | None:
    """One human line for a trace record, or None when it is not worth a line."""
    record = TraceRecord.of(raw)
    p = record.payload
    kind = record.type
    label = {a: v.label for a, v in projection.agents.items()}
    if kind == "RunStarted":
        pairs = zip(p["agents"], p["labels"], strict=True)
        return f"team of {len(p['agents'])}: " + ", ".join(f"{lab}={agent}" for agent, lab in pairs)
    if kind == "AnswerAccepted":
        return f"{label.get(p['agent'], p['agent'])} answered {p['label']}"
    if kind == "RecordVote":
        return f"{label.get(p['voter'], p['voter'])} voted for {p['target_label']}: {p['reason'][:60]}"
    if kind == "AgentRestarting":
        return f"{label.get(p['name'], p['name'])} restarting in {p['delay_s']:.1f}s ({p['reason']})"
    if kind == "AgentMarkedFailed":
        return f"{label.get(p['name'], p['name'])} failed for good: {p['reason']}"
    if kind == "AgentExcluded":
        return f"{label.get(p['name'], p['name'])} left out of round {p['round']} (straggler); it may rejoin"
    if kind == "AgentRejoined":
        return f"{label.get(p['name'], p['name'])} rejoined in round {p['round']}"
    if kind == "FinishRound":
        round_kind = "first-answer" if p["first_round"] else "voting"
        return (f"{label.get(record.to_name, record.to_name)} told to finish: {round_kind} round past "
                f"{p['timeout_s']:g} s; cut in {p['grace_s']:g} s without new_answer or vote")
    if kind == "DeadlineExpired":
        if p["scope"] == "run":
            return f"deadline: the run's {p['detail']} are up"
        return f"deadline: {label.get(p['name'], p['name'])} {p['scope']} ({p['detail']})"
    if kind == "TurnCorrection":
        sender = record.sender_name
        return f"{label.get(sender, sender)} corrected: {p['problem'][:70]}"
    if kind == "McpServerFailed":  # bad MCP config is reported here, at start, as well as in the trace
        return f"{label.get(p['agent'], p['agent'])}: {p['error'][:100]}"
    if kind == "McpToolsWithdrawn":
        return f"{label.get(p['agent'], p['agent'])}: tools of MCP server {p['server']} withdrawn"
    if kind == "PresentFinal":
        return f"{label.get(record.to_name, '?')} presents the final answer"
    return None


class ProgressDisplay:
    """Subscriber for the trace writer; safe to call from the writer's thread.

    On a terminal (``live``) one status line is redrawn under the event lines. Elsewhere
    (a log file, a CI job) the event lines are printed as they come, and a plain summary
    line every ``_HEARTBEAT_S`` shows that a long model wait is still a wait, not a hang.
    """

    def __init__(self, stream: IO[str] | None = None, *, live: bool = True) -> None:
        self.stream = stream or sys.stderr
        self.live = live
        self.started = time.monotonic()
        self._chars: dict[str, int] = {}
        self._last_draw = 0.0
        self._lock = threading.Lock()
        self._status_shown = False
        self._projection: LogProjection | None = None
        self._finished = threading.Event()
        # Records stop while every agent waits on a model; the clock must not.
        threading.Thread(target=self._keep_drawing, name="progress", daemon=True).start()

    def _keep_drawing(self) -> None:
        interval = _IDLE_REDRAW_S if self.live else _HEARTBEAT_S
        while not self._finished.wait(interval):
            with self._lock:
                if self._projection is None or self._finished.is_set():
                    continue
                try:
                    self._draw(self._projection)
                    self.stream.flush()
                except (RuntimeError, ValueError, OSError):  # the projection moved under us, or stderr closed
                    pass

    def __call__(self, raw: Mapping[str, Any], projection: LogProjection) -> None:
        record = TraceRecord.of(raw)
        with self._lock:
            self._projection = projection
            if record.type == "AgentChunk":
                sender = record.sender_name
                self._chars[sender] = self._chars.get(sender, 0) + len(record.payload["text"])
            elif record.type == "TurnStarted":
                self._chars[record.payload["agent"]] = 0
            line = describe(record, projection)
            if line is not None:
                self._clear()
                self.stream.write(f"[{time.monotonic() - self.started:6.1f}s] {line}\n")
            now = time.monotonic()
            if self.live and (line is not None or now - self._last_draw >= _REDRAW_EVERY_S):
                self._last_draw = now
                self._draw(projection)
            if record.type == "RunFinished":
                self._finished.set()
                self._clear()
            self.stream.flush()

    def _clear(self) -> None:
        if self._status_shown:
            self.stream.write("\r\033[K")
            self._status_shown = False

    def _draw(self, projection: LogProjection) -> None:
        parts = []
        for agent_id, view in projection.agents.items():
            state = view.status
            if state == "working":
                state = f"working {self._chars.get(agent_id, 0)}ch"
            elif state == "voted" and view.voted_for:
                state = f"voted {view.voted_for}"
            parts.append(f"{view.label}:{state}")
        tally = " ".join(f"{projection.agents[a].label}={n}" for a, n in projection.tally().items())
        usage = projection.usage()
        text = (f"{time.monotonic() - self.started:5.1f}s | " + " | ".join(parts)
                + (f" | votes {tally}" if tally else "") + f" | calls {usage['model_calls']}")
        self._clear()
        if self.live:
            self.stream.write(text[:200])
            self._status_shown = True
        else:
            self.stream.write(f"[still working] {text}\n")
