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
from typing import IO, Any, TypeAlias, assert_never

from massgen import LogProjection, TraceRecord, messages
from massgen.cli.text import for_terminal

_REDRAW_EVERY_S = 0.1
_IDLE_REDRAW_S = 0.5
_HEARTBEAT_S = 30.0
_MCP_NOTES_SHOWN = 3  # of an MCP server's listing notes, on one progress line; the trace keeps them all


# The records worth a line; every other type gets none.
Described: TypeAlias = (
    messages.RunStarted | messages.AnswerAccepted | messages.RecordVote | messages.AgentRestarting
    | messages.AgentMarkedFailed | messages.AgentExcluded | messages.AgentRejoined | messages.FinishRound
    | messages.DeadlineExpired
    | messages.TurnCorrection | messages.McpServerFailed | messages.McpToolsListed | messages.McpToolsWithdrawn
    | messages.PresentFinal | messages.SnapshotTaken | messages.FirstAnswersDisagree | messages.FirstAnswersDecided
    | messages.BackendEvent
)
# The backend events worth a line: a local model's assembly and server start, and what befell its server.
_SHOWN_BACKEND_EVENTS = frozenset({"local.progress", "local.server"})
_DESCRIBED = messages.RecordSubset[Described](Described)


def describe(raw: Mapping[str, Any] | TraceRecord, projection: LogProjection) -> str | None:
    """One human line for a trace record, or None when it is not worth a line."""
    record = TraceRecord.of(raw)
    message = _DESCRIBED.message(record)
    if message is None:
        return None

    def label(agent: str) -> str:
        view = projection.agents.get(agent)
        return view.label if view is not None else agent

    match message:
        case messages.RunStarted():
            pairs = list(zip(message.agents, message.labels, strict=True))
            reserve = set((message.config.get("orchestrator") or {}).get("reserve_agents") or ())
            line = f"team of {len(message.agents)}: " + ", ".join(f"{lab}={agent}" for agent, lab in pairs)
            asked_later = [lab for agent, lab in pairs if agent in reserve]
            return line + (f" ({', '.join(asked_later)} only if the first answers disagree)" if asked_later else "")
        case messages.AnswerAccepted():
            return f"{label(message.agent)} answered {message.label}"
        case messages.RecordVote():
            return f"{label(message.voter)} voted for {message.target_label}: {message.reason[:60]}"
        case messages.AgentRestarting():
            return f"{label(message.name)} restarting in {message.delay_s:.1f}s ({message.reason})"
        case messages.AgentMarkedFailed():
            return f"{label(message.name)} failed for good: {message.reason}"
        case messages.AgentExcluded():
            return f"{label(message.name)} left out of round {message.round} (straggler); it may rejoin"
        case messages.AgentRejoined():
            return f"{label(message.name)} rejoined in round {message.round}"
        case messages.FinishRound():
            round_kind = "first-answer" if message.first_round else "voting"
            return (f"{label(record.to_name)} told to finish: {round_kind} round past "
                    f"{message.timeout_s:g} s; cut in {message.grace_s:g} s without new_answer or vote")
        case messages.DeadlineExpired():
            if message.scope == "run":
                return f"deadline: the run's {message.detail} are up"
            return f"deadline: {label(message.name)} {message.scope} ({message.detail})"
        case messages.TurnCorrection():
            return f"{label(record.sender_name)} corrected: {message.problem[:70]}"
        case messages.McpServerFailed():  # bad MCP config is reported here, at start, as well as in the trace
            return f"{label(message.agent)}: {message.error}"  # whole: its stderr tail is capped where it is read
        case messages.McpToolsListed():  # a line only when the server's listing was not offered as it came
            if not message.notes:
                return None
            shown = "; ".join(message.notes[:_MCP_NOTES_SHOWN])
            more = len(message.notes) - _MCP_NOTES_SHOWN
            return f"{label(message.agent)}: {shown}" + (f"; and {more} more notes (in the trace)" if more > 0 else "")
        case messages.McpToolsWithdrawn():
            return f"{label(message.agent)}: tools of MCP server {message.server} withdrawn"
        case messages.PresentFinal():
            view = projection.agents.get(record.to_name)
            return f"{view.label if view is not None else '?'} presents the final answer"
        case messages.SnapshotTaken():  # a line only when the other agents see less than the author wrote
            problem = message.error or message.cut
            return f"{message.label}'s files: {problem}" if problem else None
        case messages.FirstAnswersDisagree():
            return f"the first answers disagree: {label(message.ask)} (a reserve agent) is asked for its answer"
        case messages.FirstAnswersDecided():  # a line only when the run did not wait for every first answer
            if not message.not_waited_for:
                return None
            waived = ", ".join(label(agent) for agent in message.not_waited_for)
            return f"the first answers settle it: {waived} not waited for (no answer of theirs could change the result)"
        case messages.BackendEvent():
            text = message.info.get("text")
            if message.event not in _SHOWN_BACKEND_EVENTS or not isinstance(text, str):
                return None
            return f"{label(record.sender_name)}: {text}"
        case _ as unreachable:
            assert_never(unreachable)


# What the status line counts (streamed characters per turn) and what ends it.
_Counted: TypeAlias = messages.AgentChunk | messages.TurnStarted | messages.RunFinished
_COUNTED = messages.RecordSubset[_Counted](_Counted)


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

    def __call__(self, raw: Mapping[str, Any] | TraceRecord, projection: LogProjection) -> None:
        record = TraceRecord.of(raw)
        with self._lock:
            self._projection = projection
            match _COUNTED.message(record):
                case messages.AgentChunk(text=text):
                    sender = record.sender_name
                    self._chars[sender] = self._chars.get(sender, 0) + len(text)
                case messages.TurnStarted(agent=agent):
                    self._chars[agent] = 0
                case messages.RunFinished() | None:
                    pass
                case _ as unreachable:
                    assert_never(unreachable)
            line = describe(record, projection)
            if line is not None:  # answers, reasons, ids and errors are text from models and configs
                self._clear()
                self.stream.write(f"[{time.monotonic() - self.started:6.1f}s] {for_terminal(line)}\n")
            now = time.monotonic()
            if self.live and (line is not None or now - self._last_draw >= _REDRAW_EVERY_S):
                self._last_draw = now
                self._draw(projection)
            if messages.message_class(record) is messages.RunFinished:
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
        text = for_terminal(text)
        self._clear()
        if self.live:
            self.stream.write(text[:200])
            self._status_shown = True
        else:
            self.stream.write(f"[still working] {text}\n")
