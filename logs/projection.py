"""Everything in a log directory except the trace, computed from trace records alone.

The same ``LogProjection`` runs live inside the trace writer and, later, over a
``trace.jsonl`` read back from disk; so the rebuilt files equal the live ones by
construction, and every number a user sees can be traced to the records behind it.
Only record fields are used (timestamps included), never the wall clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias, assert_never

from massgen.logs.status_fold import StatusFold
from massgen.messages import (
    AgentExcluded,
    AgentMarkedFailed,
    AgentRejoined,
    AgentRestarting,
    AnswerAccepted,
    AnswerNow,
    CancelRun,
    ChildFailed,
    ContextChanged,
    DeadLetter,
    DeadlineExpired,
    FinalPresented,
    FinishRound,
    InjectAnswers,
    InvalidateVotes,
    KillAgent,
    ModelCallFinished,
    ModelCallStarted,
    PresentFinal,
    RecordVote,
    RestartAgent,
    RunFinished,
    RunResumed,
    RunStarted,
    SetRunTimeout,
    SnapshotTaken,
    ToolCallRequested,
    ToolCallResult,
    ToolDenied,
    TurnCorrection,
    TurnFailed,
    TurnStarted,
)
from massgen.messages.trace import RecordSubset, TraceRecord, sender_name

# status.json is rewritten up to four times a second: it shows the head of a long question.
STATUS_QUESTION_CHARS = 4096

# The messages the projection folds into its state; every other type only counts as a record
# (and, when in TimelineMessage, is listed in the timeline). Adding one here without a case in
# ``_fold`` is a type error.
ProjectedMessage: TypeAlias = (
    RunStarted | TurnStarted | AnswerAccepted | RecordVote | InvalidateVotes | RunResumed | ModelCallStarted
    | ModelCallFinished | ChildFailed | AgentRestarting | AgentMarkedFailed | AgentExcluded | AgentRejoined
    | PresentFinal | SnapshotTaken | ContextChanged | RunFinished
)
_PROJECTED = RecordSubset[ProjectedMessage](ProjectedMessage)


@dataclass
class AgentView:
    agent_id: str
    label: str
    status: str = "starting"
    incarnation: int = 1
    answers: list[str] = field(default_factory=list)
    voted_for: str | None = None
    restarts: int = 0
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    last_error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            # this version's word for what the agent is doing; status.json's "status" is upstream's word
            "state": self.status,
            "incarnation": self.incarnation,
            "answers": len(self.answers),
            "latest_answer": f"{self.label}.{len(self.answers)}" if self.answers else None,
            "voted_for": self.voted_for,
            "restarts": self.restarts,
            "model_calls": self.model_calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "last_error": self.last_error,
        }


# The records listed in events.jsonl's timeline (when told, or events), folded or not.
TimelineMessage: TypeAlias = (
    RunStarted | TurnStarted | AnswerAccepted | RecordVote | InvalidateVotes | InjectAnswers | TurnCorrection
    | TurnFailed | ChildFailed | AgentRestarting | AgentMarkedFailed | DeadlineExpired | DeadLetter | PresentFinal
    | FinalPresented | RunFinished | CancelRun | AnswerNow | SetRunTimeout | KillAgent | RestartAgent
    | ToolCallRequested | ToolCallResult | ToolDenied | SnapshotTaken | ContextChanged | FinishRound | RunResumed
    | AgentExcluded | AgentRejoined
)
_TIMELINE = RecordSubset[TimelineMessage](TimelineMessage)
# The timeline entries shortened or shared from their message rather than copied from the payload.
_Shortened: TypeAlias = InvalidateVotes | RunResumed | TurnStarted
_SHORTENED = RecordSubset[_Shortened](_Shortened)


class LogProjection:
    """Folds trace records into the state behind every derived log file."""

    def __init__(self) -> None:
        self.started: dict[str, Any] | None = None
        self.finished: dict[str, Any] | None = None
        self.agents: dict[str, AgentView] = {}
        self.answers: list[dict[str, Any]] = []
        self.votes: list[dict[str, Any]] = []
        # The votes not invalidated since they were cast, and each voter's newest of them: a status write
        # reads these, never every vote of the run.
        self.valid_votes: list[dict[str, Any]] = []
        self.valid_vote_of: dict[str, dict[str, Any]] = {}
        self.events: list[dict[str, Any]] = []
        self.snapshots: list[dict[str, Any]] = []
        # Each model call: agent, turn_id, tokens, cost, when it started and ended (status.json's round_history).
        self.calls: list[dict[str, Any]] = []
        self._calls_open: dict[tuple[str, int, int], float] = {}
        self.context_changes: dict[str, Any] | None = None
        # Calls and tokens an attempt resumed from had already spent (RunResumed).
        self.carried_usage = {"model_calls": 0, "input_tokens": 0, "output_tokens": 0}
        self.first_ts: float | None = None
        self.last_ts: float | None = None
        self.records = 0
        self.excluded: dict[str, int] = {}  # stragglers left out of a round and not back yet
        # upstream's per-agent numbers, summed as entries arrive (logs/status_fold.py)
        self.fold = StatusFold()

    # -- folding ------------------------------------------------------------------------

    def apply(self, raw: Mapping[str, Any] | TraceRecord) -> None:
        """Fold one record (as read from a line, or typed: the live writer's holds its message) into the state.

        The projection folds a subset of the message types (``ProjectedMessage``); the others only
        count and, when in the timeline, are listed.
        """
        record = TraceRecord.of(raw)
        self.records += 1
        ts = float(record.ts)
        self.first_ts = ts if self.first_ts is None else self.first_ts
        self.last_ts = ts
        if record in _TIMELINE and record.kind in ("tell", "event"):  # listed from the payload: nothing parsed
            entry = self._event(record)
            self.events.append(entry)
            self.fold.event(entry)
        if record.kind not in ("tell", "event", "reply"):
            return
        folded = _PROJECTED.message(record)
        if folded is not None:
            self._fold(record, folded)

    def _event(self, record: TraceRecord) -> dict[str, Any]:
        """The timeline entry of a record: its payload but the bulky fields. The three types it shortens
        are folded too (``ProjectedMessage``), so reading their message here parses nothing extra."""
        p = record.payload
        detail = {k: v for k, v in p.items() if k not in ("task", "history", "view", "config", "content")}
        if "content" in p:
            detail["chars"] = len(str(p["content"]))
        message = _SHORTENED.message(record)
        match message:
            case None:
                pass
            case InvalidateVotes():  # every answer so far, each time: a count, or the file grows as N^2
                detail["answers"] = len(message.answers)
            case RunResumed():  # each agent's carried calls are in the trace, not the timeline
                detail["agents"] = [carried.agent for carried in message.agents]
            case TurnStarted():  # the message's labels are the answers' own strings: shared
                detail["view_labels"] = message.view_labels
            case _ as unreachable:
                assert_never(unreachable)
        return {
            "seq": record.seq,
            "ts": record.ts,
            "type": record.type,
            "from": record.sender,
            "to": record.to,
            **detail,
        }

    def _agent_of(self, sender: str) -> AgentView | None:
        return self.agents.get(sender_name(sender))

    def _fold(self, record: TraceRecord, message: ProjectedMessage) -> None:
        match message:
            case RunStarted():
                self.started = {**record.payload, "ts": record.ts, "run_id": record.run_id}
                for agent_id, label in zip(message.agents, message.labels, strict=True):
                    self.agents[agent_id] = AgentView(agent_id=agent_id, label=label)
                orchestrator = message.config.get("orchestrator") or {}
                self.fold.begin(self.agents, int(orchestrator.get("max_attempts_per_turn") or 3))
            case TurnStarted():
                self.fold.touch((message.agent,))
                if agent := self.agents.get(message.agent):
                    agent.status = "voting" if message.vote_only else "working"
                    agent.incarnation = message.incarnation
                    agent.voted_for = None
            case AnswerAccepted():
                self.fold.touch((message.agent,))
                self.answers.append({"agent": message.agent, "label": message.label, "content": message.content,
                                     "round": message.round, "seq": record.seq, "ts": record.ts})
                if agent := self.agents.get(message.agent):
                    agent.answers.append(message.content)
                    agent.status = "answered"
            case RecordVote():
                vote = {"voter": message.voter, "target": message.target, "target_label": message.target_label,
                        "reason": message.reason, "round": message.round, "seq": record.seq, "ts": record.ts,
                        "valid": True, "agreement": message.agreement}
                self.votes.append(vote)
                self.valid_votes.append(vote)
                self.valid_vote_of[message.voter] = vote
                self.fold.touch((message.voter,))
                if agent := self.agents.get(message.voter):
                    agent.voted_for = message.target_label
                    agent.status = "voted"
            case InvalidateVotes():  # only the valid ones change: each vote is invalidated once
                for vote in self.valid_votes:
                    vote["valid"] = False
                # an agent's voted_for is its vote since its last turn began: a valid vote's voter
                for voter in self.valid_vote_of:
                    if view := self.agents.get(voter):
                        view.voted_for = None
                self.fold.touch(self.valid_vote_of)
                self.valid_votes, self.valid_vote_of = [], {}
            case RunResumed():
                self.carried_usage = {"model_calls": message.model_calls, "input_tokens": message.input_tokens,
                                      "output_tokens": message.output_tokens}
                self.fold.touch(carried.agent for carried in message.agents)
                for carried in message.agents:
                    if agent := self.agents.get(carried.agent):
                        agent.restarts, agent.incarnation = carried.restarts, carried.incarnation
                        agent.status = "failed" if carried.status == "failed" else agent.status
            case ModelCallStarted():
                self._calls_open[(sender_name(record.sender), message.turn_id, message.call_index)] = float(record.ts)
            case ModelCallFinished():
                agent = self._agent_of(record.sender)
                name = sender_name(record.sender)
                started = self._calls_open.pop((name, message.turn_id, message.call_index), float(record.ts))
                if agent and message.finish_reason != "replayed":  # answered from an earlier trace: no call made
                    agent.model_calls += 1
                    agent.input_tokens += message.input_tokens
                    agent.output_tokens += message.output_tokens
                    call = {"agent": name, "turn_id": message.turn_id, "input_tokens": message.input_tokens,
                            "output_tokens": message.output_tokens, "cost_usd": message.cost_usd,
                            "started": started, "ts": float(record.ts)}
                    self.calls.append(call)
                    self.fold.call(call)
            case ChildFailed():
                self.fold.touch((message.name,))
                if agent := self.agents.get(message.name):
                    agent.last_error = message.error
            case AgentRestarting():
                self.fold.touch((message.name,))
                if agent := self.agents.get(message.name):
                    agent.status = "restarting"
                    agent.restarts += 1
                    agent.last_error = message.reason
            case AgentMarkedFailed():
                self.fold.touch((message.name,))
                if agent := self.agents.get(message.name):
                    agent.status = "failed"
                    agent.last_error = message.reason
            case AgentExcluded():
                self.fold.touch((message.name,))
                if agent := self.agents.get(message.name):  # left out of this round as a straggler; its turn goes on
                    agent.status = "excluded"
                    self.excluded[message.name] = message.round
                    agent.last_error = message.reason
            case AgentRejoined():
                self.fold.touch((message.name,))
                self.excluded.pop(message.name, None)
                agent = self.agents.get(message.name)
                if agent and agent.status == "excluded":
                    agent.status = "working"
            case PresentFinal():
                self.fold.touch((record.to_name,))
                if agent := self.agents.get(record.to_name):
                    agent.status = "presenting"
            case SnapshotTaken():
                self.snapshots.append({k: record.payload[k] for k in ("label", "path", "digest", "files", "bytes")})
            case ContextChanged():
                self.context_changes = {"changed_files": list(message.files), "diff": message.diff_path}
            case RunFinished():
                self.finished = {**record.payload, "ts": record.ts}
                self.fold.touch(self.agents)
                for agent_id, view in self.agents.items():
                    if view.status != "failed":  # a straggler left out and never back says so, not "done"
                        view.status = "excluded" if agent_id in self.excluded else "done"
            case _ as unreachable:
                assert_never(unreachable)

    # -- views --------------------------------------------------------------------------

    def tally(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for vote in self.valid_votes:
            counts[vote["target"]] = counts.get(vote["target"], 0) + 1
        return counts

    def usage(self) -> dict[str, Any]:
        carried = self.carried_usage
        return {
            "model_calls": carried["model_calls"] + sum(a.model_calls for a in self.agents.values()),
            "input_tokens": carried["input_tokens"] + sum(a.input_tokens for a in self.agents.values()),
            "output_tokens": carried["output_tokens"] + sum(a.output_tokens for a in self.agents.values()),
        }

    def status(self, *, agents: bool = True) -> dict[str, Any]:
        """This version's status; ``agents=False`` leaves each agent's part empty (status_text.py writes it)."""
        started = self.started or {}
        elapsed = (self.last_ts or 0.0) - (self.first_ts or 0.0)
        question = started.get("question")
        if isinstance(question, str) and len(question) > STATUS_QUESTION_CHARS:  # rewritten 4x a second
            question = (f"{question[:STATUS_QUESTION_CHARS]}... [{len(question):,} characters in all; "
                        "the whole question is in trace.jsonl]")
        return {
            "run_id": started.get("run_id"),
            "question": question,
            "phase": "finished" if self.finished else "coordinating",
            "elapsed_s": round(elapsed, 3),
            "agents": {agent_id: view.as_dict() for agent_id, view in self.agents.items()} if agents else {},
            "answers": [a["label"] for a in self.answers],
            "vote_tally": self.tally(),
            "usage": self.usage(),
            "result": None if not self.finished else {
                k: self.finished[k] for k in ("status", "reason", "winner", "winner_label", "partial")
            },
        }

    def vote_file(self) -> dict[str, Any]:
        return {"votes": self.votes, "final_tally": self.tally(),
                "winner": (self.finished or {}).get("winner")}

    def metadata(self) -> dict[str, Any]:
        started = self.started or {}
        finished = self.finished or {}
        return {
            "run_id": started.get("run_id"),
            "question": started.get("question"),
            "turn": started.get("turn"),
            "attempt": started.get("attempt"),
            "log_dir": started.get("log_dir"),
            "versions": started.get("versions"),
            "config": started.get("config"),
            "timings": {
                "started_at": started.get("ts"),
                "finished_at": finished.get("ts"),
                "elapsed_s": finished.get("elapsed_s"),
            },
            "usage": {
                "model_calls": finished.get("model_calls", self.usage()["model_calls"]),
                "input_tokens": finished.get("input_tokens", self.usage()["input_tokens"]),
                "output_tokens": finished.get("output_tokens", self.usage()["output_tokens"]),
                "cost_usd": finished.get("cost_usd", 0.0),
            },
            "result": {k: finished.get(k) for k in ("status", "reason", "winner", "winner_label", "partial")},
            **({"snapshots": self.snapshots} if self.snapshots else {}),
            **({"files": self.context_changes} if self.context_changes else {}),
        }

    def agent_outputs(self) -> dict[str, str]:
        """One text file per agent with every answer it gave, labelled."""
        outputs: dict[str, str] = {}
        for agent_id, view in self.agents.items():
            parts = [f"## {view.label}.{i}\n\n{text}\n" for i, text in enumerate(view.answers, 1)]
            outputs[agent_id] = "\n".join(parts) if parts else "(no answer)\n"
        return outputs
