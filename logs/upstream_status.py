"""The fields upstream MassGen 0.1.97 writes into ``status.json``, computed from the same projection.

Scripts written for upstream poll ``status.json`` for ``is_complete``, ``finish_reason``,
``coordination.phase`` / ``completion_percentage``, ``results.winner`` and each agent's
``error``; those keys are here with upstream's meaning. Two keys differ, documented in
docs/flags.md: ``agents[id].status`` keeps this version's words (starting, working, voting,
answered, voted, presenting, restarting, excluded, failed, done), and ``finish_reason`` names
this version's endings (completed, partial, timeout, budget, interrupted; ``error`` for failed).
Everything comes from trace records (their timestamps included), so a rebuilt status.json
equals the live one.
"""

from __future__ import annotations

from typing import Any

from massgen.logs.projection import LogProjection

PREVIEW_CHARS = 200
_REASON_PREVIEW = 100
_OUTCOMES = {"AnswerAccepted": "answer", "RecordVote": "vote", "FinalPresented": "presentation",
             "AgentRestarting": "restarted", "TurnFailed": "error", "DeadlineExpired": "timeout"}


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


def tool_stats(projection: LogProjection) -> dict[str, Any]:
    """Tool calls and their results, paired by call id, from the timeline."""
    started: dict[str, tuple[str, float]] = {}
    by_tool: dict[str, dict[str, Any]] = {}
    for event in projection.events:
        if event["type"] == "ToolCallRequested":
            started[str(event.get("call_id"))] = (str(event.get("name")), float(event["ts"]))
            stats = by_tool.setdefault(str(event.get("name")), {
                "call_count": 0, "success_count": 0, "failure_count": 0, "total_execution_time_ms": 0.0,
                "tool_type": "mcp" if str(event.get("name")).startswith("mcp__") else "tool"})
            stats["call_count"] += 1
        elif event["type"] == "ToolCallResult":
            name, at = started.pop(str(event.get("call_id")), (str(event.get("name")), float(event["ts"])))
            called = by_tool.get(name)
            if called is None:
                continue
            called["failure_count" if event.get("is_error") else "success_count"] += 1
            called["total_execution_time_ms"] = round(called["total_execution_time_ms"]
                                                      + (float(event["ts"]) - at) * 1000, 2)
    for stats in by_tool.values():
        stats["avg_execution_time_ms"] = round(stats["total_execution_time_ms"] / stats["call_count"], 2)
    return {
        "total_calls": sum(s["call_count"] for s in by_tool.values()),
        "total_failures": sum(s["failure_count"] for s in by_tool.values()),
        "total_execution_time_ms": round(sum(s["total_execution_time_ms"] for s in by_tool.values()), 2),
        "by_tool": by_tool,
    }


def _rounds(projection: LogProjection, usage: dict[str, Any]) -> dict[str, Any]:
    by_outcome = dict.fromkeys(("answer", "vote", "presentation", "post_evaluation", "restarted", "error",
                                "timeout"), 0)
    for event in projection.events:
        outcome = _OUTCOMES.get(event["type"])
        if outcome is not None:
            by_outcome[outcome] += 1
    return {"total_rounds": sum(by_outcome.values()), "by_outcome": by_outcome,
            "total_round_input_tokens": usage["input_tokens"], "total_round_output_tokens": usage["output_tokens"],
            "total_round_cost": float((projection.finished or {}).get("cost_usd", 0.0))}


def _agent_fields(projection: LogProjection) -> dict[str, dict[str, Any]]:
    """Upstream's per-agent keys, added beside this version's."""
    last_seen: dict[str, float] = {}
    for event in projection.events:
        agent = event.get("agent") or event.get("voter")
        if isinstance(agent, str):
            last_seen[agent] = float(event["ts"])
    fields: dict[str, dict[str, Any]] = {}
    for agent_id, view in projection.agents.items():
        vote = next((v for v in reversed(projection.votes) if v["voter"] == agent_id and v["valid"]), None)
        failed = view.status == "failed"
        fields[agent_id] = {
            "answer_count": len(view.answers),
            "latest_answer_label": f"{view.label}.{len(view.answers)}" if view.answers else None,
            "vote_cast": None if vote is None else {
                "voted_for_agent": vote["target"], "voted_for_label": vote["target_label"],
                "reason_preview": (vote["reason"] or "")[:_REASON_PREVIEW] or None},
            "times_restarted": view.restarts,
            "last_activity": last_seen.get(agent_id, projection.first_ts),
            "error": {"type": "error", "message": view.last_error, "timestamp": last_seen.get(agent_id)}
            if failed else None,
            "token_usage": {"input_tokens": view.input_tokens, "output_tokens": view.output_tokens,
                            "reasoning_tokens": 0, "cached_input_tokens": 0, "estimated_cost": 0.0},
        }
    return fields


def upstream_status(projection: LogProjection, agents: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Upstream's top-level status keys; ``agents`` (this version's per-agent dicts) gain upstream's keys."""
    started = projection.started or {}
    finished = projection.finished or {}
    config = started.get("config") or {}
    orchestrator = config.get("orchestrator") or {}
    usage = projection.usage()
    phase = _phase(projection)
    reason, details = _finish(projection, phase)
    for agent_id, extra in _agent_fields(projection).items():
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
            "orchestrator_paths": None,
            "eval_criteria": None,
            "context_paths": [{"path": c.get("path"), "permission": c.get("permission", "read")}
                              for c in orchestrator.get("context_paths") or []] or None,
            "docker_enabled": orchestrator.get("command_execution") == "docker",
        },
        "costs": {"total_estimated_cost": float(finished.get("cost_usd", 0.0)),
                  "total_input_tokens": usage["input_tokens"], "total_output_tokens": usage["output_tokens"]},
        "tools": tool_stats(projection),
        "rounds": _rounds(projection, usage),
        "coordination": {
            "phase": phase,
            "active_agent": None if projection.finished else active,
            "completion_percentage": 100 if projection.finished else
            (min(100, int(done_steps / steps * 100)) if steps else 0),
            "is_final_presentation": phase == "presentation",
        },
        "historical_workspaces": [{"answerLabel": s["label"], "workspacePath": s["path"]}
                                  for s in projection.snapshots],
        "results": {
            "votes": tally,
            "winner": finished.get("winner"),
            "final_answer_preview": None if final_answer is None else str(final_answer)[:PREVIEW_CHARS],
        },
    }
