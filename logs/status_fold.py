"""Upstream's per-agent status numbers, kept up to date as each timeline entry and model call arrives.

``status.json`` is rewritten up to four times a second. Computing its tool metrics, costs and
round history from the whole timeline for every agent made each write cost agents x events
(issue 51: a 1,000-agent run spent most of its time there). ``StatusFold`` is fed each entry
once by ``LogProjection`` and holds the running sums, so a write costs what the status holds.
It also tells its watchers which agents changed (any record about the agent: its own numbers or the
projection's), so a status write re-renders only those (``logs/status_text.py``).
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from massgen.messages import (
    AgentMarkedFailed,
    AgentRestarting,
    AnswerAccepted,
    DeadlineExpired,
    FinalPresented,
    Message,
    PresentFinal,
    RecordVote,
    SnapshotTaken,
    ToolCallRequested,
    ToolCallResult,
    TurnCorrection,
    TurnFailed,
    TurnStarted,
    message_class,
)
from massgen.messages.trace import sender_name

__all__ = ["ROUND_OUTCOMES", "StatusFold", "ToolTally"]

# How a round ended (upstream's RoundTokenUsage.outcome), by the record that ended it.
_ROUND_ENDS: dict[type[Message], str] = {
    AnswerAccepted: "answer", RecordVote: "vote", FinalPresented: "presentation", AgentRestarting: "restarted",
    TurnFailed: "error", AgentMarkedFailed: "error", DeadlineExpired: "timeout"}
ROUND_OUTCOMES = ("answer", "vote", "presentation", "post_evaluation", "restarted", "error", "timeout")

# A correction's problem (actors/agent/workflow_checks.py) -> upstream's enforcement reason.
_ENFORCEMENT_REASONS = (
    ("did not call new_answer or vote", "no_workflow_tool"), ("reply was empty", "no_workflow_tool"),
    ("workflow calls; make exactly one", "vote_and_answer"), ("not valid JSON", "invalid_arguments"),
    ("New answers are closed", "answer_limit"), ("needs a non-empty 'content'", "empty_answer"),
    ("no answers to vote for", "vote_no_answers"), ("vote agent_id must be one of", "invalid_vote_id"),
)

# The field that names the agent a supervisor's record is about.
_NAMED_IN: dict[type[Message], str] = {AnswerAccepted: "agent", RecordVote: "voter", AgentRestarting: "name",
                                       AgentMarkedFailed: "name", DeadlineExpired: "name"}


def _distribution(ordered: list[float], suffix: str = "", digits: int | None = None) -> dict[str, float]:
    def shown(value: float) -> float:
        return round(value, digits) if digits is not None else value

    return {f"min{suffix}": shown(ordered[0]), f"max{suffix}": shown(ordered[-1]),
            f"median{suffix}": shown(ordered[len(ordered) // 2])}


@dataclass
class _Tool:
    """One tool's running counts; its samples are kept sorted, so a summary reads percentiles in place."""

    counts: dict[str, Any]
    inputs: list[float] = field(default_factory=list)
    outputs: list[float] = field(default_factory=list)
    times: list[float] = field(default_factory=list)


class ToolTally:
    """Tool calls and their results, paired by call id, in the shape of upstream's
    ``get_tool_metrics_summary``; sizes are characters of the arguments' JSON and of the result."""

    def __init__(self) -> None:
        self._started: dict[str, tuple[str, float, int]] = {}
        self._tools: dict[str, _Tool] = {}

    def requested(self, event: dict[str, Any]) -> None:
        name = str(event.get("name"))
        size = len(json.dumps(event.get("arguments") or {}, ensure_ascii=False))
        self._started[str(event.get("call_id"))] = (name, float(event["ts"]), size)
        tool = self._tools.get(name)
        if tool is None:
            tool = self._tools[name] = _Tool({
                "call_count": 0, "success_count": 0, "failure_count": 0, "total_execution_time_ms": 0.0,
                "total_input_chars": 0, "total_output_chars": 0,
                "tool_type": "mcp" if name.startswith("mcp__") else "tool"})
        tool.counts["call_count"] += 1
        tool.counts["total_input_chars"] += size
        bisect.insort(tool.inputs, size)

    def result(self, event: dict[str, Any]) -> None:
        name, at, _ = self._started.pop(str(event.get("call_id")), (str(event.get("name")), float(event["ts"]), 0))
        tool = self._tools.get(name)
        if tool is None:
            return
        elapsed_ms = (float(event["ts"]) - at) * 1000
        chars = int(event.get("chars") or 0)
        tool.counts["failure_count" if event.get("is_error") else "success_count"] += 1
        tool.counts["total_execution_time_ms"] = round(tool.counts["total_execution_time_ms"] + elapsed_ms, 2)
        tool.counts["total_output_chars"] += chars
        bisect.insort(tool.outputs, chars)
        bisect.insort(tool.times, elapsed_ms)

    def summary(self) -> dict[str, Any]:
        """A fresh dict: what callers do with it never reaches the running counts."""
        by_tool: dict[str, dict[str, Any]] = {}
        for name, tool in self._tools.items():
            stats = by_tool[name] = dict(tool.counts)
            count = stats["call_count"]
            stats["avg_execution_time_ms"] = round(stats["total_execution_time_ms"] / count, 2)
            stats["input_tokens_est"] = stats["total_input_chars"] // 4
            stats["output_tokens_est"] = stats["total_output_chars"] // 4
            stats["avg_input_chars"] = round(stats["total_input_chars"] / count, 1)
            stats["avg_output_chars"] = round(stats["total_output_chars"] / count, 1)
            outputs = tool.outputs or [0]
            stats["output_distribution"] = {**_distribution(outputs), "p90": outputs[-1] if count < 10 else
                                            outputs[int(len(outputs) * 0.9)], "p99": outputs[-1]}
            stats["input_distribution"] = _distribution(tool.inputs or [0])
            times = tool.times or [0.0]
            stats["exec_time_distribution"] = {**_distribution(times, "_ms", 2),
                                               "p90_ms": round(times[int(len(times) * 0.9)] if count >= 10
                                                               else times[-1], 2)}
        return {
            "total_calls": sum(s["call_count"] for s in by_tool.values()),
            "total_failures": sum(s["failure_count"] for s in by_tool.values()),
            "total_execution_time_ms": round(sum(s["total_execution_time_ms"] for s in by_tool.values()), 2),
            "by_tool": by_tool,
        }


def _new_round(agent: str, number: int, kind: str, ts: float) -> dict[str, Any]:
    """One round in upstream's ``RoundTokenUsage.to_dict`` shape; tokens are added from its calls."""
    return {"round_number": number, "agent_id": agent, "round_type": kind, "outcome": "", "input_tokens": 0,
            "output_tokens": 0, "reasoning_tokens": 0, "cached_input_tokens": 0, "estimated_cost": 0.0,
            "context_window_size": 0, "context_usage_pct": 0.0, "tool_calls_count": 0, "token_source": "api",
            "start_time": ts, "end_time": 0.0, "duration_ms": 0.0, "api_calls_count": 0, "api_time_ms": 0.0,
            "avg_ttft_ms": 0.0}


def _close(round_: dict[str, Any] | None, outcome: str, ts: float) -> None:
    if round_ is not None:
        round_.update(outcome=outcome, end_time=ts, duration_ms=round((ts - round_["start_time"]) * 1000, 2))


class StatusFold:
    """Per agent: tool metrics, model-call cost, rounds (upstream's ``round_history``), enforcement
    corrections (``reliability``) and when it was last named; for the run: tool metrics and the
    answers' frozen workspaces. A round is one turn (or the final presentation) of one agent; its
    ``round_type`` is upstream's: ``initial_answer`` when the agent saw no answers, else ``voting``.
    """

    def __init__(self) -> None:
        self.tools = ToolTally()
        self.agent_tools: dict[str, ToolTally] = {}
        self.costs: dict[str, float] = {}
        self.history: dict[str, list[dict[str, Any]]] = {}
        self.corrections: dict[str, list[dict[str, Any]]] = {}
        self.last_seen: dict[str, float] = {}
        self.workspaces: list[dict[str, Any]] = []  # upstream's historical_workspaces, in order
        self._max_attempts = 3
        self._open: dict[str, dict[str, Any]] = {}
        self._by_turn: dict[tuple[str, int], dict[str, Any]] = {}
        self._watchers: list[set[str]] = []  # each gets the agents whose part of status.json changed

    def begin(self, agents: Iterable[str], max_attempts: int) -> None:
        """The team, from ``RunStarted``: only its agents have rounds."""
        self._max_attempts = max_attempts
        for agent in agents:
            self.history.setdefault(agent, [])
            self.corrections.setdefault(agent, [])
            self.agent_tools.setdefault(agent, ToolTally())
            self._changed(agent)

    def touch(self, agents: Iterable[str]) -> None:
        """Agents whose status changed in the projection's own state (its ``AgentView``, their votes)."""
        for agent in agents:
            self._changed(agent)

    def watch(self) -> set[str]:
        """A set the fold adds each changed agent to from now on; its owner empties it as it reads it."""
        changed: set[str] = set()
        self._watchers.append(changed)
        return changed

    def _changed(self, agent: str) -> None:
        for changed in self._watchers:
            changed.add(agent)

    def event(self, event: dict[str, Any]) -> None:
        """One timeline entry (``LogProjection.events``), in order."""
        kind, ts = message_class(event), float(event["ts"])
        named = event.get("agent") or event.get("voter")
        if isinstance(named, str):
            self.last_seen[named] = ts
            self._changed(named)
        if kind is ToolCallRequested or kind is ToolCallResult:
            sender = sender_name(str(event.get("from")))
            tally = self.agent_tools.get(sender)
            for counted in (self.tools, tally):
                if counted is not None:
                    (counted.requested if kind is ToolCallRequested else counted.result)(event)
            self._changed(sender)
        elif kind is SnapshotTaken and event.get("path"):
            last = str(event["label"]).rsplit(".", 1)[-1]
            self.workspaces.append({"answerId": f"{event['agent']}-{event['ts']}", "agentId": event["agent"],
                                    "answerNumber": int(last) if last.isdigit() else 1,
                                    "answerLabel": event["label"], "timestamp": event["ts"],
                                    "workspacePath": event["path"]})
        self._round(event, kind, ts)

    def _round(self, event: dict[str, Any], kind: type[Message] | None, ts: float) -> None:
        if kind is TurnStarted or kind is PresentFinal:
            agent = str(event["agent"]) if kind is TurnStarted else sender_name(str(event.get("to")))
            if agent not in self.history:
                return
            _close(self._open.pop(agent, None), "restarted", ts)
            # upstream's orchestrator: "voting" if the agent is shown answers, else "initial_answer"
            round_type = ("presentation" if kind is PresentFinal else
                          "voting" if event.get("view_labels") else "initial_answer")
            opened = _new_round(agent, len(self.history[agent]), round_type, ts)
            self.history[agent].append(opened)
            self._open[agent] = self._by_turn[(agent, int(event.get("turn_id") or 0))] = opened
            self._changed(agent)
            return
        key = None if kind is None else _NAMED_IN.get(kind)
        agent = str(event.get(key) or "") if key else sender_name(str(event.get("from") or ""))
        if agent not in self.history:
            return
        if kind is ToolCallRequested and agent in self._open:
            self._open[agent]["tool_calls_count"] += 1
        elif kind is TurnCorrection:
            current = self._open.get(agent)
            problem = str(event.get("problem") or "")
            self.corrections[agent].append({
                "round": current["round_number"] if current else 0, "attempt": event.get("attempt"),
                "max_attempts": self._max_attempts,
                "reason": next((r for text, r in _ENFORCEMENT_REASONS if text in problem), "workflow_error"),
                "tool_calls": [], "error_message": problem, "buffer_preview": "", "buffer_chars": 0,
                "timestamp": ts})
        elif kind is not None and kind in _ROUND_ENDS and (kind is not DeadlineExpired or event.get("scope") != "run"):
            _close(self._open.pop(agent, None), _ROUND_ENDS[kind], ts)
        self._changed(agent)

    def call(self, call: dict[str, Any]) -> None:
        """One finished model call (``LogProjection.calls``): its cost, and its round's tokens."""
        agent = call["agent"]
        self.costs[agent] = self.costs.get(agent, 0) + call["cost_usd"]
        self._changed(agent)
        into = self._by_turn.get((agent, call["turn_id"]))
        if into is None:
            return
        into["input_tokens"] += call["input_tokens"]
        into["output_tokens"] += call["output_tokens"]
        into["estimated_cost"] = round(into["estimated_cost"] + call["cost_usd"], 6)
        into["api_calls_count"] += 1
        into["api_time_ms"] = round(into["api_time_ms"] + (call["ts"] - call["started"]) * 1000, 2)
