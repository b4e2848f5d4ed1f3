"""What a finished run hands back: ``RunResult``, every field derived from the trace.

In the bottom layer (``outcome/``, beside the errors: a ``RunError`` holds it), so the run handle in
``actors/`` builds it without importing the face; the face re-exports it (``massgen.RunResult``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from massgen.outcome.errors import RUN_ERRORS


@dataclass(frozen=True)
class RunResult(dict[str, Any]):
    """What a finished run hands back; every field is derived from the trace.

    It is also a plain ``dict`` of upstream MassGen's keys (``as_dict``), as upstream's ``run()`` returns:
    scripts written for upstream save it with ``json.dumps(result)`` and check ``isinstance(result, dict)``.
    Our own callers read the attributes."""

    status: str
    reason: str
    final_answer: str | None
    winner: str | None
    winner_label: str | None
    partial: bool
    log_dir: Path
    run_id: str
    answers: dict[str, str] = field(default_factory=dict)
    votes: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    elapsed_s: float = 0.0
    # Why the final answer is the winning answer as written, not its presentation ("" when it is the
    # presentation, or none was asked for): every surface shows it (RunFinished.presentation_not_used).
    presentation_not_used: str = ""
    # The run's log_<stamp> root, holding turn_N/attempt_M (None: log_dir is a directory the caller named).
    log_root: Path | None = None
    # Each agent's anonymous label (agent id -> "agent1"), as the agents saw each other.
    labels: dict[str, str] = field(default_factory=dict)
    # Where the team came from, in upstream's words ("config_dict", "multi-agent:a,b", "agent:MxN", a path).
    config_used: str | None = None

    def __post_init__(self) -> None:
        dict.update(self, self.as_dict())

    @property
    def ok(self) -> bool:
        return self.status == "completed"

    @property
    def log_directory(self) -> str:
        """The run's ``log_<stamp>`` root, as upstream MassGen's ``log_directory`` (``log_dir`` is the attempt)."""
        return str(self.log_root or self.log_dir)

    def raise_for_status(self) -> RunResult:
        """Raise the ``RunError`` for an ending with a non-zero exit code (failed, partial, timeout,
        budget, interrupted); return the result itself otherwise (``completed``)."""
        error = RUN_ERRORS.get(self.status)
        if error is not None:
            raise error(f"the run ended with status {self.status!r}: {self.reason}", self)
        return self

    def as_dict(self) -> dict[str, Any]:
        """The result as plain data, with the keys scripts written for upstream MassGen read."""
        return {
            "final_answer": self.final_answer,
            "winner": self.winner,
            "winner_label": self.winner_label,
            "votes": [dict(v) for v in self.votes],
            # upstream's list: each answer's label, agent, snapshot folder (None here) and text
            "answers": self.answer_list(),
            "log_directory": self.log_directory,
            "log_dir": str(self.log_dir),
            # this version's counts, and upstream's names for the same tokens
            "usage": {**self.usage, "prompt_tokens": self.usage.get("input_tokens", 0),
                      "completion_tokens": self.usage.get("output_tokens", 0),
                      "total_tokens": self.usage.get("input_tokens", 0) + self.usage.get("output_tokens", 0)},
            "status": self.status,
            "reason": self.reason,
            "partial": self.partial,
            "presentation_not_used": self.presentation_not_used,
            "run_id": self.run_id,
            "elapsed_s": self.elapsed_s,
            # upstream's names: the winner, the final/ folder, the counted votes, the id to find the run by
            "selected_agent": self.winner,
            "final_answer_path": str(self.log_dir / "final"),
            "vote_results": self.vote_results(),
            "session_id": self.run_id,
            "config_used": self.config_used,
        }

    def answer_list(self) -> list[dict[str, Any]]:
        """Upstream's ``answers``: ``{"label", "agent_id", "answer_path", "content"}`` per answer, in order."""
        by_label = {label: agent for agent, label in self.labels.items()}
        return [{"label": label, "agent_id": by_label.get(label.rsplit(".", 1)[0]), "answer_path": None,
                 "content": content} for label, content in self.answers.items()]

    def vote_results(self) -> dict[str, Any]:
        """Upstream's ``vote_results``: the counted votes of the deciding round by agent voted for, who voted
        and why (``voter_details``), whether the top count was shared (``is_tie``), how many votes were
        counted (``total_votes``), and ``agent_mapping`` (anonymous label -> agent id). ``winner`` is
        the run's winner: the judge's pick (docs/architecture.md), which can differ from the top count."""
        counted = [v for v in self.votes if v.get("valid", True)]
        details: dict[str, list[dict[str, str]]] = {}
        for vote in counted:
            details.setdefault(str(vote["target"]), []).append(
                {"voter": str(vote["voter"]), "reason": str(vote.get("reason") or "No reason provided")})
        counts = self.vote_counts()
        top = max(counts.values(), default=0)
        return {
            "vote_counts": counts,
            "voter_details": details,
            "winner": self.winner,
            "is_tie": sum(1 for n in counts.values() if n == top) > 1,
            "total_votes": len(counted),
            "agents_with_answers": len({label.rsplit(".", 1)[0] for label in self.answers}),
            "agents_voted": len({str(v["voter"]) for v in counted}),
            "agent_mapping": {label: agent for agent, label in self.labels.items()},
        }

    def vote_counts(self) -> dict[str, int]:
        """Votes of the deciding round, by the agent voted for."""
        counts: dict[str, int] = {}
        for vote in self.votes:
            if vote.get("valid", True):
                counts[str(vote["target"])] = counts.get(str(vote["target"]), 0) + 1
        return counts
