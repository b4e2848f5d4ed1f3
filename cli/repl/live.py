"""The live view of one turn: a trace subscriber that keeps one line per agent.

Records arrive on the trace writer's thread after they are on disk; this view folds
them into short per-agent notes (streaming, answered, voted, injected, restarting,
failed, timed out), prints a line for each event worth one, and streams the followed
agent's text. The REPL draws ``agent_lines()`` and ``summary()`` in its toolbar.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias, assert_never

from massgen import LogProjection, RunResult, Team, TraceRecord, messages
from massgen.cli.progress import describe

Say = Callable[[str], None]
_FOLLOW_FLUSH_CHARS = 160
# An incomplete line of the followed agent is shown once it has waited this long for the rest of it
# (``LiveTurn.tick``): a model that streams without newlines, then thinks, is seen thinking.
FOLLOW_IDLE_S = 0.5


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# What the user (or the supervisor) did to the run, which ``describe`` leaves out: a line each, when told.
Steering: TypeAlias = (
    messages.CancelRun | messages.AnswerNow | messages.SetRunTimeout | messages.KillAgent | messages.RestartAgent
    | messages.InjectAnswers
)
_STEERING = messages.RecordSubset[Steering](Steering)


def control_line(raw: Mapping[str, Any] | TraceRecord) -> str | None:
    """Lines for what the user (or the supervisor) did to the run, which ``describe`` leaves out."""
    record = TraceRecord.of(raw)
    message = _STEERING.message(record) if record.kind == "tell" else None
    match message:
        case None:
            return None
        case messages.CancelRun():
            return f"cancel requested: {message.reason}"
        case messages.AnswerNow():
            return "answer now: agents vote on the answers there are, then the winner presents"
        case messages.SetRunTimeout():
            return f"run deadline set to {message.seconds:g} s after the start"
        case messages.KillAgent():
            return f"kill requested for {message.name}"
        case messages.RestartAgent():
            return f"restart requested for {message.name}"
        case messages.InjectAnswers():
            labels = ", ".join(answer.label for answer in message.view.answers)
            return f"{record.to_name} gets new answers injected mid-turn: {labels}"
        case _ as unreachable:
            assert_never(unreachable)


# What changes an agent's note in the toolbar.
Noted: TypeAlias = (
    messages.TurnStarted | messages.AgentChunk | messages.AnswerAccepted | messages.RecordVote
    | messages.InjectAnswers | messages.DeadlineExpired | messages.AgentRestarting | messages.AgentMarkedFailed
    | messages.AgentExcluded | messages.PresentFinal | messages.RunFinished
)
_NOTED = messages.RecordSubset[Noted](Noted)


class LiveTurn:
    """Everything the screen shows about one running (or finished) turn."""

    def __init__(self, number: int, question: str, say: Say, redraw: Callable[[], None],
                 follow: str | None = None) -> None:
        self.number = number
        self.question = question
        self.follow = follow
        self.team: Team | None = None
        self.projection: LogProjection | None = None
        self.result: RunResult | None = None
        self.cancel_requested = False
        self._say = say
        self._redraw = redraw
        self._started = time.monotonic()
        self._ended: float | None = None
        self._notes: dict[str, str] = {}
        self._chars: dict[str, int] = {}
        self._follow_text = ""
        self._follow_waiting: float | None = None  # since when an incomplete line has waited for its rest
        self._changed = threading.Condition()

    # -- the subscriber (trace writer thread) -------------------------------------------------

    def on_record(self, raw: Mapping[str, Any] | TraceRecord, projection: LogProjection) -> None:
        record = TraceRecord.of(raw)
        with self._changed:
            self.projection = projection
            self._fold(record, projection)
            line = describe(record, projection) or control_line(record)
            self._changed.notify_all()
        if line is not None:
            self._say(f"[{self.elapsed():5.1f}s] {line}")
        self._redraw()

    def _fold(self, record: TraceRecord, projection: LogProjection) -> None:
        told = record.kind == "tell"
        match _NOTED.message(record):
            case None:
                pass
            case messages.TurnStarted() as turn:
                self._flush_follow(turn.agent)
                self._chars[turn.agent] = 0
                self._notes[turn.agent] = "voting only" if turn.vote_only else "working"
            case messages.AgentChunk(text=text) if told:
                agent = record.sender_name
                view = projection.agents.get(agent)
                if view is None or f"{agent}#{view.incarnation}" != record.sender:
                    return  # a late chunk from an abandoned incarnation
                self._chars[agent] = self._chars.get(agent, 0) + len(text)
                self._notes[agent] = f"streaming {self._chars[agent]} chars"
                if agent == self.follow:
                    self._follow_text += text
                    self._flush_follow(agent, partial=False)
            case messages.AnswerAccepted() as answer:
                self._flush_follow(answer.agent)
                self._notes[answer.agent] = f"answered {answer.label}"
            case messages.RecordVote() as vote if told:
                self._flush_follow(vote.voter)
                self._notes[vote.voter] = f"voted for {vote.target_label}"
            case messages.InjectAnswers(view=view) if told:
                labels = ", ".join(answer.label for answer in view.answers)
                self._notes[record.to_name] = f"injected {labels}"
            case messages.DeadlineExpired() as expired if expired.name:
                self._notes[expired.name] = f"timed out ({expired.scope}: {expired.detail})"
            case messages.AgentRestarting() as restarting:
                self._notes[restarting.name] = (f"restarting in {restarting.delay_s:.1f}s "
                                                f"({_clip(restarting.reason, 40)})")
            case messages.AgentMarkedFailed() as failed:
                self._flush_follow(failed.name)
                self._notes[failed.name] = f"failed ({_clip(failed.reason, 50)})"
            case messages.AgentExcluded() as excluded:  # its text so far, before the line that leaves it out
                self._flush_follow(excluded.name)
            case messages.PresentFinal():
                self._notes[record.to_name] = "presenting the final answer"
            case messages.RunFinished() as finished:
                self._ended = time.monotonic()
                for agent in list(self._chars):
                    self._flush_follow(agent)
                for agent, view in projection.agents.items():
                    if agent == finished.winner:
                        self._notes[agent] = f"winner ({finished.winner_label})"
                    elif view.status != "failed":
                        self._notes[agent] = "done"
            case messages.AgentChunk() | messages.RecordVote() | messages.InjectAnswers() | messages.DeadlineExpired():
                pass  # not told (a reply or a copy), or a deadline of the whole run: no agent's note changes
            case _ as unreachable:
                assert_never(unreachable)

    def _flush_follow(self, agent: str, partial: bool = True) -> None:
        """Print the followed agent's text in whole lines (and a line of ``_FOLLOW_FLUSH_CHARS`` or more);
        with ``partial``, the rest too (its turn ended, it was left out, or the rest waited: ``tick``)."""
        if agent != self.follow or not self._follow_text:
            return
        text = self._follow_text
        if partial:
            lines, self._follow_text = text, ""
        else:
            cut = text.rfind("\n")
            if cut < 0 and len(text) < _FOLLOW_FLUSH_CHARS:
                if self._follow_waiting is None:
                    self._follow_waiting = time.monotonic()
                return
            cut = cut if cut >= 0 else len(text)
            lines, self._follow_text = text[:cut], text[cut:].lstrip("\n")
        self._follow_waiting = time.monotonic() if self._follow_text else None
        for line in lines.splitlines():
            self._say(f"  {agent} │ {line}")

    def tick(self, now: float | None = None) -> None:
        """Show the followed agent's incomplete line once it has waited ``FOLLOW_IDLE_S`` for the rest;
        called on a timer while the turn runs (the REPL's loop), since a quiet agent sends no record."""
        with self._changed:
            waiting = self._follow_waiting
            if self.follow is None or waiting is None:
                return
            if (time.monotonic() if now is None else now) - waiting >= FOLLOW_IDLE_S:
                self._flush_follow(self.follow)

    # -- reading (any thread) -----------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.result is None

    def elapsed(self) -> float:
        return (self._ended or time.monotonic()) - self._started

    def set_follow(self, agent: str | None) -> None:
        with self._changed:
            self.follow, self._follow_text, self._follow_waiting = agent, "", None

    def wait_until(self, predicate: Callable[[LiveTurn], bool], timeout: float) -> bool:
        """Block until ``predicate(self)`` holds after some record; for callers that need an event."""
        with self._changed:
            return self._changed.wait_for(lambda: predicate(self), timeout)

    def note(self, agent: str) -> str:
        with self._changed:
            return self._notes.get(agent, "starting")

    def agent_lines(self) -> list[str]:
        with self._changed:
            projection = self.projection
            if projection is None:
                return ["  starting the team..."]
            lines = []
            for agent, view in list(projection.agents.items()):
                marker = "»" if agent == self.follow else " "
                lines.append(f" {marker}{view.label:<8} {agent:<16} {self._notes.get(agent, 'starting')}")
            return lines

    def summary(self) -> str:
        with self._changed:
            projection = self.projection
            parts = [f"turn {self.number}", f"{self.elapsed():.1f}s"]
            if projection is not None:
                labels = {a: v.label for a, v in projection.agents.items()}
                tally = projection.tally()
                if tally:
                    parts.append("votes " + " ".join(f"{labels.get(a, a)}={n}" for a, n in tally.items()))
                usage = projection.usage()
                parts.append(f"calls {usage['model_calls']}")
                parts.append(f"tokens {usage['input_tokens'] + usage['output_tokens']}")
            if self.cancel_requested and self.running:
                parts.append("cancelling")
            return " · ".join(parts)
