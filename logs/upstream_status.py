"""The fields upstream MassGen 0.1.97 writes into ``status.json``, computed from the same projection.

Scripts written for upstream poll ``status.json`` for ``is_complete``, ``finish_reason``,
``coordination.phase`` / ``completion_percentage``, ``results.winner``, each agent's ``status``
and ``error``, and read ``round_history``, ``reliability``, ``tool_metrics`` and the workspace
paths afterwards; every key of upstream's ``CoordinationTracker.save_status_file`` is here with
its meaning (tests/test_upstream_status.py compares them key for key with upstream's wheel).
``agents[id].status`` is upstream's word (``UPSTREAM_WORDS``); this version's word is in
``agents[id].state``. ``finish_reason`` names this version's endings (completed, partial,
timeout, budget, interrupted; ``error`` for failed). Everything comes from trace records (their
timestamps included), so a rebuilt status.json equals the live one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from massgen.logs.projection import AgentView, LogProjection
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

PREVIEW_CHARS = 200
_REASON_PREVIEW = 100
SNAPSHOTS_DIR = "snapshots"  # where answers' workspaces are frozen, inside the log directory (files/workspace.py)

# This version's agent states -> upstream's status words (its skills document waiting, streaming,
# answered, voted, error; its tracker also writes restarting and timeout). "done" (the run ended) is
# the agent's last upstream word: voted, answered, or waiting (see ``upstream_word``).
UPSTREAM_WORDS = {"starting": "waiting", "working": "streaming", "voting": "streaming", "presenting": "streaming",
                  "answered": "answered", "voted": "voted", "restarting": "restarting", "excluded": "timeout",
                  "failed": "error"}

# How a round ended (upstream's RoundTokenUsage.outcome), by the record that ended it.
_ROUND_ENDS: dict[type[Message], str] = {
    AnswerAccepted: "answer", RecordVote: "vote", FinalPresented: "presentation", AgentRestarting: "restarted",
    TurnFailed: "error", AgentMarkedFailed: "error", DeadlineExpired: "timeout"}
_OUTCOMES = ("answer", "vote", "presentation", "post_evaluation", "restarted", "error", "timeout")

# A correction's problem (actors/agent/workflow_checks.py) -> upstream's enforcement reason.
_ENFORCEMENT_REASONS = (
    ("did not call new_answer or vote", "no_workflow_tool"), ("reply was empty", "no_workflow_tool"),
    ("workflow calls; make exactly one", "vote_and_answer"), ("not valid JSON", "invalid_arguments"),
    ("New answers are closed", "answer_limit"), ("needs a non-empty 'content'", "empty_answer"),
    ("no answers to vote for", "vote_no_answers"), ("vote agent_id must be one of", "invalid_vote_id"),
)
_WORKFLOW_ERRORS = ("vote_no_answers", "vote_and_answer", "invalid_vote_id", "answer_limit", "answer_novelty",
                    "answer_duplicate")


def upstream_word(view: AgentView, voted: bool) -> str:
    """Upstream's status word for an agent; at the end, what it last did (voted, answered, or waiting)."""
    if view.status == "done":
        return "voted" if voted else "answered" if view.answers else "waiting"
    return UPSTREAM_WORDS.get(view.status, view.status)


def _finish(projection: LogProjection, phase: str) -> tuple[str, str]:
    finished = projection.finished
    if finished is None:
        return "in_progress", f"Phase: {phase}"
    status = str(finished.get("status"))
    if status == "completed" and finished.get("winner"):
        return "completed", f"Winner: {finished['winner']}"
    return ("error" if status == "failed" else status), str(finished.get("reason") or status)


def _phase(projection: LogProjection) -> str:
    if projection.finished is not None or any(a.status == "presenting" for a in projection.agents.values()):
        return "presentation"
    return "enforcement" if any(v["valid"] for v in projection.votes) else "initial_answer"


def _distribution(values: list[float], suffix: str = "", digits: int | None = None) -> dict[str, float]:
    ordered = sorted(values)

    def shown(value: float) -> float:
        return round(value, digits) if digits is not None else value

    return {f"min{suffix}": shown(ordered[0]), f"max{suffix}": shown(ordered[-1]),
            f"median{suffix}": shown(ordered[len(ordered) // 2])}


def tool_stats(projection: LogProjection, agent: str | None = None) -> dict[str, Any]:
    """Tool calls and their results, paired by call id, from the timeline (of one agent, or all), in the
    shape of upstream's ``get_tool_metrics_summary``; sizes are characters of the arguments' JSON and of
    the result."""
    started: dict[str, tuple[str, float, int]] = {}
    by_tool: dict[str, dict[str, Any]] = {}
    samples: dict[str, dict[str, list[float]]] = {}
    for event in projection.events:
        kind = message_class(event)
        if agent is not None and kind in (ToolCallRequested, ToolCallResult) \
                and sender_name(str(event.get("from"))) != agent:
            continue
        if kind is ToolCallRequested:
            name = str(event.get("name"))
            size = len(json.dumps(event.get("arguments") or {}, ensure_ascii=False))
            started[str(event.get("call_id"))] = (name, float(event["ts"]), size)
            stats = by_tool.setdefault(name, {
                "call_count": 0, "success_count": 0, "failure_count": 0, "total_execution_time_ms": 0.0,
                "total_input_chars": 0, "total_output_chars": 0,
                "tool_type": "mcp" if name.startswith("mcp__") else "tool"})
            stats["call_count"] += 1
            stats["total_input_chars"] += size
            samples.setdefault(name, {"input": [], "output": [], "time": []})["input"].append(size)
        elif kind is ToolCallResult:
            name, at, _ = started.pop(str(event.get("call_id")), (str(event.get("name")), float(event["ts"]), 0))
            called = by_tool.get(name)
            if called is None:
                continue
            elapsed_ms = (float(event["ts"]) - at) * 1000
            called["failure_count" if event.get("is_error") else "success_count"] += 1
            called["total_execution_time_ms"] = round(called["total_execution_time_ms"] + elapsed_ms, 2)
            called["total_output_chars"] += int(event.get("chars") or 0)
            samples[name]["output"].append(int(event.get("chars") or 0))
            samples[name]["time"].append(elapsed_ms)
    for name, stats in by_tool.items():
        count = stats["call_count"]
        stats["avg_execution_time_ms"] = round(stats["total_execution_time_ms"] / count, 2)
        stats["input_tokens_est"] = stats["total_input_chars"] // 4
        stats["output_tokens_est"] = stats["total_output_chars"] // 4
        stats["avg_input_chars"] = round(stats["total_input_chars"] / count, 1)
        stats["avg_output_chars"] = round(stats["total_output_chars"] / count, 1)
        seen = samples[name]
        outputs = seen["output"] or [0]
        stats["output_distribution"] = {**_distribution(outputs), "p90": sorted(outputs)[-1] if count < 10 else
                                        sorted(outputs)[int(len(outputs) * 0.9)], "p99": sorted(outputs)[-1]}
        stats["input_distribution"] = _distribution(seen["input"] or [0])
        times = seen["time"] or [0.0]
        stats["exec_time_distribution"] = {**_distribution(times, "_ms", 2),
                                           "p90_ms": round(sorted(times)[int(len(times) * 0.9)] if count >= 10
                                                           else sorted(times)[-1], 2)}
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


# The field that names the agent a supervisor's record is about.
_NAMED_IN: dict[type[Message], str] = {AnswerAccepted: "agent", RecordVote: "voter", AgentRestarting: "name",
                                       AgentMarkedFailed: "name", DeadlineExpired: "name"}


def _event_agent(event: dict[str, Any], kind: type[Message] | None) -> str:
    """The agent a timeline event is about: named in it (a supervisor's record), else its sender."""
    key = None if kind is None else _NAMED_IN.get(kind)
    return str(event.get(key) or "") if key else sender_name(str(event.get("from") or ""))


class _Rounds:
    """Each agent's rounds (upstream's ``round_history``) and enforcement corrections (``reliability``),
    from the timeline: a round is one turn (or the final presentation) of one agent."""

    def __init__(self, projection: LogProjection) -> None:
        self.history: dict[str, list[dict[str, Any]]] = {a: [] for a in projection.agents}
        self.corrections: dict[str, list[dict[str, Any]]] = {a: [] for a in projection.agents}
        config = (projection.started or {}).get("config") or {}
        max_attempts = int((config.get("orchestrator") or {}).get("max_attempts_per_turn") or 3)
        open_rounds: dict[str, dict[str, Any]] = {}
        by_turn: dict[tuple[str, int], dict[str, Any]] = {}
        answered: set[str] = set()
        for event in projection.events:
            kind, ts = message_class(event), float(event["ts"])
            if kind in (TurnStarted, PresentFinal):
                agent = str(event["agent"]) if kind is TurnStarted else sender_name(str(event.get("to")))
                if agent not in self.history:
                    continue
                self._close(open_rounds.pop(agent, None), "restarted", ts)
                round_type = ("presentation" if kind is PresentFinal else
                              "initial_answer" if agent not in answered and not event.get("vote_only") else
                              "enforcement")
                opened = _new_round(agent, len(self.history[agent]), round_type, ts)
                self.history[agent].append(opened)
                open_rounds[agent] = by_turn[(agent, int(event.get("turn_id") or 0))] = opened
                continue
            agent = _event_agent(event, kind)
            if agent not in self.history:
                continue
            if kind is AnswerAccepted:
                answered.add(agent)
            if kind is ToolCallRequested and agent in open_rounds:
                open_rounds[agent]["tool_calls_count"] += 1
            elif kind is TurnCorrection:
                current = open_rounds.get(agent)
                problem = str(event.get("problem") or "")
                self.corrections[agent].append({
                    "round": current["round_number"] if current else 0, "attempt": event.get("attempt"),
                    "max_attempts": max_attempts,
                    "reason": next((r for text, r in _ENFORCEMENT_REASONS if text in problem), "workflow_error"),
                    "tool_calls": [], "error_message": problem, "buffer_preview": "", "buffer_chars": 0,
                    "timestamp": ts})
            elif kind is not None and kind in _ROUND_ENDS and (kind is not DeadlineExpired
                                                               or event.get("scope") != "run"):
                self._close(open_rounds.pop(agent, None), _ROUND_ENDS[kind], ts)
        for call in projection.calls:
            into = by_turn.get((call["agent"], call["turn_id"]))
            if into is None:
                continue
            into["input_tokens"] += call["input_tokens"]
            into["output_tokens"] += call["output_tokens"]
            into["estimated_cost"] = round(into["estimated_cost"] + call["cost_usd"], 6)
            into["api_calls_count"] += 1
            into["api_time_ms"] = round(into["api_time_ms"] + (call["ts"] - call["started"]) * 1000, 2)

    @staticmethod
    def _close(round_: dict[str, Any] | None, outcome: str, ts: float) -> None:
        if round_ is not None:
            round_.update(outcome=outcome, end_time=ts, duration_ms=round((ts - round_["start_time"]) * 1000, 2))

    def timing(self, agent: str) -> dict[str, Any] | None:
        """Upstream's ``round_timing``: the agent's current (latest) round and when it began."""
        rounds = self.history.get(agent)
        return {"round_number": rounds[-1]["round_number"], "round_start_time": rounds[-1]["start_time"]} \
            if rounds else None

    def reliability(self, agent: str) -> dict[str, Any] | None:
        """Upstream's ``reliability``: None without corrections (its "perfect reliability")."""
        events = self.corrections.get(agent)
        if not events:
            return None
        by_round: dict[str, dict[str, Any]] = {}
        for event in events:
            entry = by_round.setdefault(str(event["round"]), {"count": 0, "reasons": []})
            entry["count"] += 1
            if event["reason"] not in entry["reasons"]:
                entry["reasons"].append(event["reason"])
        reasons = list(dict.fromkeys(e["reason"] for e in events))
        return {"enforcement_attempts": events, "by_round": by_round, "unknown_tools": [],
                "workflow_errors": [r for r in reasons if r in _WORKFLOW_ERRORS],
                "total_enforcement_retries": len(events), "total_buffer_chars_lost": 0, "outcome": "ok"}


def _rounds_summary(history: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Upstream's top-level ``rounds``: every agent's rounds, by outcome, with their tokens and cost."""
    every = [r for rounds in history.values() for r in rounds]
    by_outcome = dict.fromkeys(_OUTCOMES, 0)
    for round_ in every:
        if round_["outcome"] in by_outcome:
            by_outcome[round_["outcome"]] += 1
    return {"total_rounds": len(every), "by_outcome": by_outcome,
            "total_round_input_tokens": sum(r["input_tokens"] for r in every),
            "total_round_output_tokens": sum(r["output_tokens"] for r in every),
            "total_round_cost": round(sum(r["estimated_cost"] for r in every), 6)}


def _agent_fields(projection: LogProjection) -> dict[str, dict[str, Any]]:
    """Upstream's per-agent keys, added beside this version's."""
    last_seen: dict[str, float] = {}
    for event in projection.events:
        agent = event.get("agent") or event.get("voter")
        if isinstance(agent, str):
            last_seen[agent] = float(event["ts"])
    rounds = _Rounds(projection)
    started = projection.started or {}
    workspaces: dict[str, str] = started.get("workspaces") or {}
    snapshots = str(Path(str(started.get("log_dir") or "")) / SNAPSHOTS_DIR)
    fields: dict[str, dict[str, Any]] = {}
    for agent_id, view in projection.agents.items():
        vote = next((v for v in reversed(projection.votes) if v["voter"] == agent_id and v["valid"]), None)
        word = upstream_word(view, vote is not None)
        workspace = workspaces.get(agent_id)
        fields[agent_id] = {
            "status": word,
            "answer_count": len(view.answers),
            "latest_answer_label": f"{view.label}.{len(view.answers)}" if view.answers else None,
            "vote_cast": None if vote is None else {
                "voted_for_agent": vote["target"], "voted_for_label": vote["target_label"],
                "reason_preview": (vote["reason"] or "")[:_REASON_PREVIEW] or None},
            "times_restarted": view.restarts,
            "last_activity": last_seen.get(agent_id, projection.first_ts),
            "error": {"type": word, "message": view.last_error, "timestamp": last_seen.get(agent_id)}
            if word in ("error", "timeout") else None,
            # agents read each other's work from the snapshots: they are upstream's temp workspace too
            "workspace_paths": None if workspace is None else {
                "workspace": workspace, "snapshot_storage": snapshots, "temp_workspace": snapshots},
            "token_usage": {"input_tokens": view.input_tokens, "output_tokens": view.output_tokens,
                            "reasoning_tokens": 0, "cached_input_tokens": 0,
                            "estimated_cost": round(sum(c["cost_usd"] for c in projection.calls
                                                        if c["agent"] == agent_id), 6)},
            "tool_metrics": tool_stats(projection, agent_id),
            "round_history": rounds.history.get(agent_id, []),
            "round_timing": rounds.timing(agent_id),
            "reliability": rounds.reliability(agent_id),
        }
    return fields


def _historical_workspaces(projection: LogProjection) -> list[dict[str, Any]]:
    """Upstream's list of answers' frozen workspaces (the snapshots taken, in order)."""
    return [{"answerId": f"{e['agent']}-{e['ts']}", "agentId": e["agent"],
             "answerNumber": int(str(e["label"]).rsplit(".", 1)[-1]) if str(e["label"]).rsplit(".", 1)[-1].isdigit()
             else 1, "answerLabel": e["label"], "timestamp": e["ts"], "workspacePath": e["path"]}
            for e in projection.events if message_class(e) is SnapshotTaken and e.get("path")]


def upstream_status(projection: LogProjection, agents: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Upstream's top-level status keys; ``agents`` (this version's per-agent dicts) gain upstream's keys."""
    started = projection.started or {}
    finished = projection.finished or {}
    config = started.get("config") or {}
    orchestrator = config.get("orchestrator") or {}
    usage = projection.usage()
    phase = _phase(projection)
    reason, details = _finish(projection, phase)
    extras = _agent_fields(projection)
    for agent_id, extra in extras.items():
        agents.setdefault(agent_id, {}).update(extra)
    steps = 2 * len(projection.agents)
    done_steps = len(projection.answers) + sum(1 for v in projection.votes if v["valid"])
    active = next((a for a, view in projection.agents.items() if view.status in ("working", "voting", "presenting")),
                  None)
    final_answer = finished.get("final_answer")
    tally: dict[str, int] = {}
    for vote in projection.votes:
        if vote["valid"]:
            tally[vote["target_label"]] = tally.get(vote["target_label"], 0) + 1
    snapshots = str(Path(str(started.get("log_dir") or "")) / SNAPSHOTS_DIR)
    return {
        "finish_reason": reason,
        "finish_reason_details": details,
        "is_complete": projection.finished is not None,
        "review_pending": False,
        "meta": {
            "last_updated": projection.last_ts,
            "session_id": started.get("run_id"),
            "log_dir": started.get("log_dir"),
            "question": started.get("question"),
            "start_time": projection.first_ts,
            "elapsed_seconds": round((projection.last_ts or 0.0) - (projection.first_ts or 0.0), 3),
            # where answers' workspaces are frozen and read by the other agents (None: no agent has files)
            "orchestrator_paths": {"snapshot_storage": snapshots, "temp_workspace_parent": snapshots}
            if started.get("workspaces") else None,
            "eval_criteria": None,
            "context_paths": [{"path": c.get("path"), "permission": c.get("permission", "read")}
                              for c in orchestrator.get("context_paths") or []] or None,
            "docker_enabled": orchestrator.get("command_execution") == "docker",
        },
        "costs": {"total_estimated_cost": float(finished.get("cost_usd", 0.0)),
                  "total_input_tokens": usage["input_tokens"], "total_output_tokens": usage["output_tokens"]},
        "tools": tool_stats(projection),
        "rounds": _rounds_summary({a: e["round_history"] for a, e in extras.items()}),
        "coordination": {
            "phase": phase,
            "active_agent": None if projection.finished else active,
            "completion_percentage": 100 if projection.finished else
            (min(100, int(done_steps / steps * 100)) if steps else 0),
            "is_final_presentation": phase == "presentation",
        },
        "historical_workspaces": _historical_workspaces(projection),
        "results": {
            "votes": tally,
            "winner": finished.get("winner"),
            "final_answer_preview": None if final_answer is None else str(final_answer)[:PREVIEW_CHARS],
        },
    }
