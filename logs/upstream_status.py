"""The fields upstream MassGen 0.1.97 writes into ``status.json``, computed from the same projection.

Scripts written for upstream poll ``status.json`` for ``is_complete``, ``finish_reason``,
``coordination.phase`` / ``completion_percentage``, ``results.winner``, each agent's ``status``
and ``error``, and read ``round_history``, ``reliability``, ``tool_metrics`` and the workspace
paths afterwards; every key of upstream's ``CoordinationTracker.save_status_file`` is here with
its meaning (tests/test_upstream_automation.py compares them key for key with upstream's wheel).
``agents[id].status`` is upstream's word (``UPSTREAM_WORDS``); this version's word is in
``agents[id].state``. ``finish_reason`` names this version's endings (completed, partial,
timeout, budget, interrupted; ``error`` for failed). Everything comes from trace records (their
timestamps included), so a rebuilt status.json equals the live one. The per-agent sums are kept
as records arrive (``logs/status_fold.py``): one agent's keys cost what that agent holds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from massgen.logs.projection import AgentView, LogProjection
from massgen.logs.status_fold import ROUND_OUTCOMES, ToolTally

__all__ = ["PREVIEW_CHARS", "SNAPSHOTS_DIR", "UPSTREAM_WORDS", "tool_stats", "upstream_agent", "upstream_status",
           "upstream_word"]

PREVIEW_CHARS = 200
_REASON_PREVIEW = 100
SNAPSHOTS_DIR = "snapshots"  # where answers' workspaces are frozen, inside the log directory (files/workspace.py)

# This version's agent states -> upstream's status words (its skills document waiting, streaming,
# answered, voted, error; its tracker also writes restarting and timeout). "done" (the run ended) is
# the agent's last upstream word: voted, answered, or waiting (see ``upstream_word``).
UPSTREAM_WORDS = {"starting": "waiting", "working": "streaming", "voting": "streaming", "presenting": "streaming",
                  "answered": "answered", "voted": "voted", "restarting": "restarting", "excluded": "timeout",
                  "failed": "error"}

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
    return "enforcement" if projection.valid_votes else "initial_answer"


def tool_stats(projection: LogProjection, agent: str | None = None) -> dict[str, Any]:
    """Tool calls and their results, paired by call id (of one agent, or all), in the shape of upstream's
    ``get_tool_metrics_summary``; sizes are characters of the arguments' JSON and of the result."""
    fold = projection.fold
    return (fold.tools if agent is None else fold.agent_tools.get(agent) or ToolTally()).summary()


def _timing(rounds: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Upstream's ``round_timing``: the agent's current (latest) round and when it began."""
    return {"round_number": rounds[-1]["round_number"], "round_start_time": rounds[-1]["start_time"]} \
        if rounds else None


def _reliability(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Upstream's ``reliability``: None without corrections (its "perfect reliability")."""
    if not events:
        return None
    by_round: dict[str, dict[str, Any]] = {}
    for event in events:
        entry = by_round.setdefault(str(event["round"]), {"count": 0, "reasons": []})
        entry["count"] += 1
        if event["reason"] not in entry["reasons"]:
            entry["reasons"].append(event["reason"])
    reasons = list(dict.fromkeys(e["reason"] for e in events))
    return {"enforcement_attempts": [dict(e) for e in events], "by_round": by_round, "unknown_tools": [],
            "workflow_errors": [r for r in reasons if r in _WORKFLOW_ERRORS],
            "total_enforcement_retries": len(events), "total_buffer_chars_lost": 0, "outcome": "ok"}


def _rounds_summary(projection: LogProjection) -> dict[str, Any]:
    """Upstream's top-level ``rounds``: every agent's rounds, by outcome, with their tokens and cost."""
    history = projection.fold.history
    every = [r for agent in projection.agents for r in history.get(agent, ())]
    by_outcome = dict.fromkeys(ROUND_OUTCOMES, 0)
    for round_ in every:
        if round_["outcome"] in by_outcome:
            by_outcome[round_["outcome"]] += 1
    return {"total_rounds": len(every), "by_outcome": by_outcome,
            "total_round_input_tokens": sum(r["input_tokens"] for r in every),
            "total_round_output_tokens": sum(r["output_tokens"] for r in every),
            "total_round_cost": round(sum(r["estimated_cost"] for r in every), 6)}


def _snapshots(projection: LogProjection) -> str:
    return str(Path(str((projection.started or {}).get("log_dir") or "")) / SNAPSHOTS_DIR)


def upstream_agent(projection: LogProjection, agent_id: str) -> dict[str, Any]:
    """Upstream's keys for one agent, added beside this version's; fresh dicts, from the running sums."""
    fold = projection.fold
    view = projection.agents[agent_id]
    vote = projection.valid_vote_of.get(agent_id)
    word = upstream_word(view, vote is not None)
    workspace = ((projection.started or {}).get("workspaces") or {}).get(agent_id)
    last_seen = fold.last_seen.get(agent_id)
    rounds = fold.history.get(agent_id, [])
    snapshots = _snapshots(projection)
    return {
        "status": word,
        "answer_count": len(view.answers),
        "latest_answer_label": f"{view.label}.{len(view.answers)}" if view.answers else None,
        "vote_cast": None if vote is None else {
            "voted_for_agent": vote["target"], "voted_for_label": vote["target_label"],
            "reason_preview": (vote["reason"] or "")[:_REASON_PREVIEW] or None},
        "times_restarted": view.restarts,
        "last_activity": projection.first_ts if last_seen is None else last_seen,
        "error": {"type": word, "message": view.last_error, "timestamp": last_seen}
        if word in ("error", "timeout") else None,
        # agents read each other's work from the snapshots: they are upstream's temp workspace too
        "workspace_paths": None if workspace is None else {
            "workspace": workspace, "snapshot_storage": snapshots, "temp_workspace": snapshots},
        "token_usage": {"input_tokens": view.input_tokens, "output_tokens": view.output_tokens,
                        "reasoning_tokens": 0, "cached_input_tokens": 0,
                        "estimated_cost": round(fold.costs.get(agent_id, 0), 6)},
        "tool_metrics": tool_stats(projection, agent_id),
        "round_history": [dict(r) for r in rounds],
        "round_timing": _timing(rounds),
        "reliability": _reliability(fold.corrections.get(agent_id, [])),
    }


def upstream_status(projection: LogProjection) -> dict[str, Any]:
    """Upstream's top-level status keys (each agent's are ``upstream_agent``'s)."""
    started = projection.started or {}
    finished = projection.finished or {}
    config = started.get("config") or {}
    orchestrator = config.get("orchestrator") or {}
    usage = projection.usage()
    phase = _phase(projection)
    reason, details = _finish(projection, phase)
    steps = 2 * len(projection.agents)
    done_steps = len(projection.answers) + len(projection.valid_votes)
    active = next((a for a, view in projection.agents.items() if view.status in ("working", "voting", "presenting")),
                  None)
    final_answer = finished.get("final_answer")
    tally: dict[str, int] = {}
    for vote in projection.valid_votes:
        tally[vote["target_label"]] = tally.get(vote["target_label"], 0) + 1
    # upstream's orchestrator paths: a dict always, its values None when no agent has a workspace
    snapshots = _snapshots(projection) if started.get("workspaces") else None
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
            # where answers' workspaces are frozen and read by the other agents
            "orchestrator_paths": {"snapshot_storage": snapshots, "temp_workspace_parent": snapshots},
            "eval_criteria": None,
            "context_paths": [{"path": c.get("path"), "permission": c.get("permission", "read")}
                              for c in orchestrator.get("context_paths") or []] or None,
            "docker_enabled": orchestrator.get("command_execution") == "docker",
        },
        "costs": {"total_estimated_cost": float(finished.get("cost_usd", 0.0)),
                  "total_input_tokens": usage["input_tokens"], "total_output_tokens": usage["output_tokens"]},
        "tools": tool_stats(projection),
        "rounds": _rounds_summary(projection),
        "coordination": {
            "phase": phase,
            "active_agent": None if projection.finished else active,
            "completion_percentage": 100 if projection.finished else
            (min(100, int(done_steps / steps * 100)) if steps else 0),
            "is_final_presentation": phase == "presentation",
        },
        "historical_workspaces": [dict(w) for w in projection.fold.workspaces],
        "results": {
            "votes": tally,
            "winner": finished.get("winner"),
            "final_answer_preview": None if final_answer is None else str(final_answer)[:PREVIEW_CHARS],
        },
    }
