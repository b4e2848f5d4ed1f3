"""The terminal UI's state: one reducer over the run's typed view events.

``RunState.apply(event, ts)`` folds one ``ViewEvent`` (``massgen.events``: the
stream events and the finer ones a screen draws), stamped with its trace record's
time, into everything the screen shows. It reads no clock and touches no terminal, so
a live run and a replay of its trace reach the same state, and a redraw (after a
resize, or one that was skipped) loses nothing: the screen is a function of the state.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from massgen import (
    AnswerEvent,
    ChunkEvent,
    DeadlineEvent,
    ExcludedEvent,
    FailureEvent,
    FinalAnswerEvent,
    LogProjection,
    McpEvent,
    ModelCallEvent,
    ModelCallStartedEvent,
    NoteDeliveredEvent,
    NoteSentEvent,
    PresentingEvent,
    RejoinedEvent,
    RestartEvent,
    RunFinishedEvent,
    RunSettingsEvent,
    RunStartedEvent,
    SnapshotEvent,
    SteeringEvent,
    TallyEvent,
    ToolCallFinishedEvent,
    ToolCallStartedEvent,
    TraceRecord,
    TurnStartedEvent,
    ViewEvent,
    VoteEvent,
    VotesInvalidatedEvent,
    view_events_from_record,
)

# Each panel keeps at most this much streamed text per entry, and this many entries: a long run's
# panel stays cheap to draw; what is cut is in the trace (and /inspect points there).
MAX_ENTRY_CHARS = 20_000
MAX_ENTRIES = 400

EntryKind = Literal["text", "reasoning", "mark", "tool"]


@dataclass
class ToolCard:
    """One tool call: compact on screen until opened, then its arguments and result."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    result: str | None = None
    is_error: bool = False

    @property
    def summary(self) -> str:
        if self.result is None:
            outcome = "running"
        elif self.is_error:
            outcome = "error"
        else:
            outcome = f"{len(self.result)} chars"
        return f"{self.name} ({outcome})"


@dataclass
class Entry:
    """A piece of an agent's panel, in the order it happened."""

    kind: EntryKind
    text: str = ""
    card: ToolCard | None = None


@dataclass
class AgentState:
    agent: str
    label: str
    state: str = "starting"
    incarnation: int = 1
    entries: list[Entry] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    voted_for: str | None = None
    vote_reason: str = ""
    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    restarts: int = 0
    chars: int = 0
    # While a model call is out: when it went out (trace time), and how many chunks and tool calls
    # arrived since. A screen shows a sign of life from these and its clock.
    calling_since: float | None = None
    call_activity: int = 0

    def add(self, kind: EntryKind, text: str = "", card: ToolCard | None = None) -> None:
        last = self.entries[-1] if self.entries else None
        if kind in ("text", "reasoning") and last is not None and last.kind == kind:
            last.text = (last.text + text)[-MAX_ENTRY_CHARS:]
        else:
            self.entries.append(Entry(kind, text[-MAX_ENTRY_CHARS:], card))
            if len(self.entries) > MAX_ENTRIES:
                del self.entries[: len(self.entries) - MAX_ENTRIES]


@dataclass(frozen=True)
class TimelineItem:
    at: float  # seconds since the run started
    text: str


@dataclass
class Note:
    note_id: str
    text: str
    to: str | None
    delivered_to: list[str] = field(default_factory=list)


@dataclass
class McpServerState:
    agent: str
    server: str
    state: str
    detail: str = ""
    tools: tuple[str, ...] = ()


@dataclass
class RunState:
    """Everything one turn's screen shows, folded from its events in trace order."""

    run_id: str = ""
    question: str = ""
    log_dir: str = ""
    turn: int = 1
    agents: dict[str, AgentState] = field(default_factory=dict)
    phase: str = "starting"
    round: int = 0
    started_ts: float | None = None
    last_ts: float | None = None
    deadline_s: float = 0.0
    strategy: str = ""
    winner_rule: str = "support"
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    answers: list[AnswerEvent] = field(default_factory=list)
    # the current round's votes, as the events that cast them, by voter (a voter's newest last): a vote
    # replaces its voter's in one step, where rebuilding a list made a round of N votes cost N^2
    vote_of: dict[str, VoteEvent] = field(default_factory=dict)
    withdrawn_votes: int = 0
    tally: dict[str, int] = field(default_factory=dict)
    converged: bool = False
    leader: str | None = None
    timeline: list[TimelineItem] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    mcp: dict[tuple[str, str], McpServerState] = field(default_factory=dict)
    snapshots: list[SnapshotEvent] = field(default_factory=list)
    tool_calls: dict[str, ToolCard] = field(default_factory=dict)
    finished: RunFinishedEvent | None = None
    events: int = 0

    # -- reading --------------------------------------------------------------------------------

    @property
    def votes(self) -> list[VoteEvent]:
        """The current round's votes, oldest first (a voter that voted again counts from its newest)."""
        return list(self.vote_of.values())

    def elapsed(self, now: float | None = None) -> float:
        """Seconds since the run started: to ``now`` while it runs, to its end once finished."""
        if self.finished is not None:
            return self.finished.elapsed_s
        if self.started_ts is None:
            return 0.0
        end = now if now is not None else (self.last_ts or self.started_ts)
        return max(0.0, end - self.started_ts)

    def label_of(self, agent: str) -> str:
        found = self.agents.get(agent)
        return found.label if found is not None else agent

    def decision(self) -> str:
        """What the judge decided, as it happened: every vote (consensus), most of them (majority), or a
        split the judge's rule settled; "" until the round converged."""
        if not self.converged or self.leader is None:
            return ""
        label = self.label_of(self.leader)
        total, won = sum(self.tally.values()), self.tally.get(self.leader, 0)
        if total and won == total:
            return f"consensus: {label} ({won} of {total} votes)"
        if won * 2 > total:
            return f"majority: {label} ({won} of {total} votes)"
        split = "-".join(str(n) for n in sorted(self.tally.values(), reverse=True)) or "no votes"
        top = max(self.tally.values(), default=0)
        if won == top and list(self.tally.values()).count(top) > 1:
            return f"no majority ({split}): tie broken for {label} by winner_rule {self.winner_rule}"
        return f"no majority ({split}): {label} chosen by winner_rule {self.winner_rule}"

    def agent_named(self, name: str) -> AgentState | None:
        """An agent by id or by its label (``agent2``)."""
        if name in self.agents:
            return self.agents[name]
        return next((a for a in self.agents.values() if a.label == name), None)

    # -- folding --------------------------------------------------------------------------------

    def _at(self, ts: float) -> float:
        return 0.0 if self.started_ts is None else max(0.0, ts - self.started_ts)

    def _mark(self, ts: float, text: str) -> None:
        self.timeline.append(TimelineItem(self._at(ts), text))

    def _agent(self, agent: str, label: str = "") -> AgentState:
        found = self.agents.get(agent)
        if found is None:
            found = self.agents[agent] = AgentState(agent, label or agent)
        return found

    def apply(self, event: ViewEvent, ts: float) -> None:
        """Fold one event, stamped with its record's time (seconds since the epoch)."""
        self.events += 1
        if self.started_ts is None:
            self.started_ts = ts
        self.last_ts = ts
        match event:
            case RunStartedEvent():
                self.run_id, self.question, self.log_dir = event.run_id, event.question, str(event.log_dir)
                self.started_ts = ts
                self.phase = "coordinating"
                self.round = 1
                for agent, label in event.agents.items():
                    self._agent(agent, label)
                self._mark(ts, f"run started: {len(event.agents)} agents")
            case RunSettingsEvent():
                self.deadline_s, self.strategy, self.turn = event.deadline_s, event.strategy, event.turn
                self.winner_rule = event.winner_rule
            case ChunkEvent():
                panel = self._agent(event.agent, event.label)
                panel.add("reasoning" if event.kind == "reasoning" else "text", event.text)
                panel.chars += len(event.text)
                panel.call_activity += 1
                if panel.state in ("starting", "working", "voting"):
                    panel.state = "streaming"
            case TurnStartedEvent():
                panel = self._agent(event.agent, event.label)
                panel.state = "voting" if event.vote_only else "working"
                panel.incarnation = event.incarnation
                panel.calling_since = None  # a cancelled turn's call may have ended unrecorded
                seen = ", ".join(event.view_labels) or "no answers yet"
                again = f" (incarnation {event.incarnation})" if event.incarnation > 1 else ""
                panel.add("mark", ("vote-only turn" if event.vote_only else "new turn") + f"{again}, sees {seen}")
            case AnswerEvent():
                panel = self._agent(event.agent, event.label.rsplit(".", 1)[0])
                panel.answers.append(event.label)
                panel.state = "answered"
                panel.add("mark", f"answered {event.label}: {event.content}")
                self.answers.append(event)
                self.round = max(self.round, event.round)
                self._mark(ts, f"{panel.label} answered {event.label}")
            case VoteEvent():
                panel = self._agent(event.voter, event.voter_label)
                panel.voted_for, panel.vote_reason, panel.state = event.target_label, event.reason, "voted"
                panel.add("mark", f"voted for {event.target_label}: {event.reason}")
                self.vote_of.pop(event.voter, None)
                self.vote_of[event.voter] = event
                self._mark(ts, f"{event.voter_label} voted for {event.target_label}")
            case VotesInvalidatedEvent():
                withdrawn = len(self.vote_of)
                self.withdrawn_votes += withdrawn
                for voter in self.vote_of:  # only a voter of this round has a vote to withdraw
                    if voted := self.agents.get(voter):
                        voted.voted_for = None
                self.vote_of, self.tally, self.converged, self.leader = {}, {}, False, None
                self.round = max(self.round, event.round)
                if withdrawn:
                    self._mark(ts, f"round {event.round}: {withdrawn} vote{'s' if withdrawn != 1 else ''} "
                                   f"withdrawn ({event.reason})")
                else:  # nobody had voted yet: nothing was withdrawn, a new round just begins
                    self._mark(ts, f"round {event.round} begins ({event.reason})")
            case TallyEvent():
                self.tally, self.converged, self.leader = dict(event.counts), event.converged, event.winner
                self.round = max(self.round, event.round)
                decision = self.decision()
                if decision:
                    self._mark(ts, f"round {event.round}: {decision}")
            case RestartEvent():
                panel = self._agent(event.agent, event.label)
                panel.state, panel.restarts = "restarting", panel.restarts + 1
                panel.calling_since = None
                panel.add("mark", f"restarting in {event.delay_s:.1f}s: {event.reason}")
                self._mark(ts, f"{event.label} restarting ({event.reason})")
            case FailureEvent():
                panel = self._agent(event.agent, event.label)
                panel.calling_since = None
                if event.permanent:
                    panel.state = "failed"
                panel.add("mark", ("failed for good: " if event.permanent else "failed: ") + event.reason)
                self._mark(ts, f"{event.label} failed" + (" for good" if event.permanent else "")
                           + f": {event.reason}")
            case ExcludedEvent():
                panel = self._agent(event.agent, event.label)
                panel.state = "excluded"
                panel.add("mark", f"left out of round {event.round}: {event.reason}")
                self._mark(ts, f"{event.label} left out of round {event.round}")
            case RejoinedEvent():
                panel = self._agent(event.agent, event.label)
                panel.add("mark", f"rejoined in round {event.round}")
                self._mark(ts, f"{event.label} rejoined")
            case DeadlineEvent():
                who = self.label_of(event.agent) if event.agent else "the run"
                if event.agent:
                    self._agent(event.agent).add("mark", f"deadline ({event.scope}): {event.detail}")
                self._mark(ts, f"deadline: {who} {event.scope} ({event.detail})")
            case ModelCallStartedEvent():
                panel = self._agent(event.agent, event.label)
                panel.calling_since, panel.call_activity = ts, 0
            case ModelCallEvent():
                panel = self._agent(event.agent, event.label)
                panel.calling_since = None
                panel.calls += 1
                panel.tokens += event.input_tokens + event.output_tokens
                panel.cost_usd += event.cost_usd
                self.calls += 1
                self.input_tokens += event.input_tokens
                self.output_tokens += event.output_tokens
                self.cost_usd += event.cost_usd
                if event.error:
                    panel.add("mark", f"model call failed: {event.error}")
            case ToolCallStartedEvent():
                card = ToolCard(event.call_id, event.name, dict(event.arguments))
                self.tool_calls[event.call_id] = card
                panel = self._agent(event.agent, event.label)
                panel.add("tool", card=card)
                panel.call_activity += 1
            case ToolCallFinishedEvent():
                known = self.tool_calls.get(event.call_id)
                if known is None:  # a result whose request this view never saw (a resumed run)
                    known = self.tool_calls[event.call_id] = ToolCard(event.call_id, event.name, {})
                    self._agent(event.agent, event.label).add("tool", card=known)
                known.result, known.is_error = event.content, event.is_error
            case NoteSentEvent():
                self.notes.append(Note(event.note_id, event.text, event.to))
                targets = [self._agent(event.to)] if event.to else list(self.agents.values())
                for panel in targets:
                    panel.add("mark", f"note: {event.text}")
                self._mark(ts, f"note to {self.label_of(event.to) if event.to else 'every agent'}: {event.text}")
            case NoteDeliveredEvent():
                for note in self.notes:
                    if note.note_id == event.note_id:
                        note.delivered_to.append(event.agent)
                self._agent(event.agent, event.label).add("mark", "note delivered")
            case SteeringEvent():
                self._steer(event, ts)
            case PresentingEvent():
                self.phase = "presenting"
                self._agent(event.agent, event.label).state = "presenting"
                self._mark(ts, f"{event.label} presents the final answer")
            case McpEvent():
                self.mcp[(event.agent, event.server)] = McpServerState(event.agent, event.server, event.state,
                                                                       event.detail, event.tools)
                if event.state != "tools_listed":
                    self._mark(ts, f"{self.label_of(event.agent)}: MCP {event.server} {event.state}")
            case SnapshotEvent():
                self.snapshots.append(event)
            case RunFinishedEvent():
                self._finish(event, ts)
            case FinalAnswerEvent():
                pass  # built from the result after the trace closed; RunFinishedEvent carried it all
            case _:
                pass  # a newer event kind this screen does not draw yet

    def _steer(self, event: SteeringEvent, ts: float) -> None:
        if event.action == "kill":
            self._agent(event.agent).add("mark", "killed by the user")
            self._mark(ts, f"kill requested for {self.label_of(event.agent)}")
        elif event.action == "restart":
            self._agent(event.agent).add("mark", "restart requested by the user")
            self._mark(ts, f"restart requested for {self.label_of(event.agent)}")
        elif event.action == "answer_now":
            self.phase = "answering now"
            self._mark(ts, "answer now: vote on the answers there are, then present")
        elif event.action == "timeout":
            self.deadline_s = float(event.detail)
            self._mark(ts, f"run deadline set to {event.detail} s")
        elif event.action == "cancel":
            self.phase = "cancelling"
            self._mark(ts, f"cancel requested: {event.detail}")

    def _finish(self, event: RunFinishedEvent, ts: float) -> None:
        self.finished = event
        self.phase = "finished"
        self.calls, self.cost_usd = event.model_calls, event.cost_usd
        self.input_tokens, self.output_tokens = event.input_tokens, event.output_tokens
        for agent, panel in self.agents.items():
            panel.calling_since = None  # the run is over: no call of it is out any more
            if agent == event.winner:
                panel.state = "winner"
            elif panel.state not in ("failed", "excluded"):
                panel.state = "done"
        self._mark(ts, f"finished: {event.status}" + (f", {event.winner_label} wins" if event.winner_label else ""))


class TraceFolder:
    """Trace records -> view events -> ``RunState``: the one path a live run and a replay share.

    A live subscriber gets each record with the trace writer's projection, already folded;
    a replay folds its own projection first, exactly as the writer did.
    """

    def __init__(self, state: RunState | None = None) -> None:
        self.state = state or RunState()
        self._projection: LogProjection | None = None

    def on_record(self, raw: Mapping[str, Any] | TraceRecord, projection: LogProjection) -> None:
        record = TraceRecord.of(raw)
        for event in view_events_from_record(record, projection):
            self.state.apply(event, float(record.ts))

    def replay(self, records: list[dict[str, Any]]) -> RunState:
        projection = self._projection = self._projection or LogProjection()
        for raw in records:
            record = TraceRecord.of(raw)  # typed once: the projection and the view events share its message
            projection.apply(record)
            self.on_record(record, projection)
        return self.state
