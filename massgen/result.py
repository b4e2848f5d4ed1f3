"""What a finished run hands back: ``RunResult``, every field derived from the trace.

A leaf module of the face (it imports only ``massgen.errors``), so the run handle in
``actors/`` can build it without importing the face's higher parts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from massgen.errors import RUN_ERRORS


@dataclass(frozen=True)
class RunResult:
    """What a finished run hands back; every field is derived from the trace."""

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

    @property
    def ok(self) -> bool:
        return self.status == "completed"

    @property
    def log_directory(self) -> str:
        """The log directory as a string: the name upstream MassGen's result dict uses."""
        return str(self.log_dir)

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
            "answers": dict(self.answers),
            "log_directory": self.log_directory,
            "log_dir": self.log_directory,
            "usage": dict(self.usage),
            "status": self.status,
            "reason": self.reason,
            "partial": self.partial,
            "presentation_not_used": self.presentation_not_used,
            "run_id": self.run_id,
            "elapsed_s": self.elapsed_s,
            # upstream's names: the winner, the final/ folder, the counted votes, the id to find the run by
            "selected_agent": self.winner,
            "final_answer_path": str(self.log_dir / "final"),
            "vote_results": {"vote_counts": self.vote_counts(), "winner": self.winner},
            "session_id": self.run_id,
        }

    def vote_counts(self) -> dict[str, int]:
        """Votes of the deciding round, by the agent voted for."""
        counts: dict[str, int] = {}
        for vote in self.votes:
            if vote.get("valid", True):
                counts[str(vote["target"])] = counts.get(str(vote["target"]), 0) + 1
        return counts

    def get(self, key: str, default: Any = None) -> Any:
        """``result.get("final_answer")``, as on upstream MassGen's dict."""
        return self.as_dict().get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self.as_dict()

    def keys(self) -> list[str]:
        return list(self.as_dict())

    def __getitem__(self, key: str) -> Any:
        """``result["final_answer"]`` works as it does on upstream MassGen's dict."""
        return self.as_dict()[key]
