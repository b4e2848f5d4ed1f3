"""The conversation behind the REPL: config, earlier turns, and where each turn's logs go.

Every turn is a full team run. The (question, final answer) pairs of earlier turns are
handed to the next team as ``history`` so agents can build on them, and all turns of a
session log under one root: ``log_<timestamp>/turn_1``, ``turn_2``, ...
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from massgen import (
    RunResult,
    Session,
    SessionError,
    Subscriber,
    Team,
    TeamConfig,
    new_team,
    open_session,
)


def history_path() -> Path:
    """Where typed lines are remembered: next to the logs when their base is set, else ~/.massgen."""
    base = os.environ.get("MASSGEN_LOG_BASE_DIR")
    if base:
        return Path(base).expanduser().resolve().parent / "repl_history"
    return Path.home() / ".massgen" / "repl_history"


@dataclass(frozen=True)
class Turn:
    number: int
    question: str
    result: RunResult


class Conversation:
    """State that outlives a turn. Only the REPL's event loop thread touches it."""

    def __init__(self, config: TeamConfig, source: str, *, timeout: float | None = None,
                 session: Session | None = None, session_config: dict[str, Any] | None = None) -> None:
        """``session``: a stored session to continue; without one, a new session is stored at the first turn."""
        self.config = config
        self.source = source
        self.timeout = timeout
        self.history: list[tuple[str, str]] = list(session.history()) if session else []
        self.turns: list[Turn] = []
        self.root: Path | None = None
        self.next_turn = session.next_turn if session else 1
        self.session = session
        self._session_config = session_config or {}
        self.unsaved: str | None = None  # why the last turn could not be stored, for the REPL to say

    @property
    def agent_ids(self) -> list[str]:
        return [agent.id for agent in self.config.agents]

    def labels(self) -> dict[str, str]:
        """``agentN`` label -> agent id, in config order (as the agents see each other)."""
        return {f"agent{i}": agent_id for i, agent_id in enumerate(self.agent_ids, 1)}

    def resolve_agent(self, name: str) -> str | None:
        """An agent id from its id or its label (``agent2``); None when neither matches."""
        name = name.strip()
        if name in self.agent_ids:
            return name
        return self.labels().get(name)

    def new_team(self, question: str, subscribers: list[Subscriber]) -> Team:
        """The team for the next turn, with every earlier answer as context; not started yet."""
        number = self.next_turn
        self.next_turn += 1
        # The team chooses its folder (as for a question): turn_N of this conversation's root, or a new root.
        team = new_team(self.config, question, history=self.history, timeout=self.timeout,
                        run_root=self.root, subscribers=subscribers, turn=number,
                        context_paths=True)  # @path / @path:w in this question
        if self.root is None:
            self.root = team.log_dir.parent.parent  # log_<stamp>/turn_N/attempt_1
        return team

    def record(self, number: int, question: str, result: RunResult) -> None:
        """Keep the turn; its answer (even a best-so-far one) becomes context for the next turn."""
        self.turns.append(Turn(number, question, result))
        if result.final_answer is not None:
            self.history.append((question, result.final_answer))
        try:
            if self.session is None:
                self.session = open_session(config=self._session_config)
            self.session.add_turn(question, result)  # on disk now: another process can --continue
            self.unsaved = None
        except (SessionError, OSError) as exc:
            self.unsaved = f"the turn was not saved to the session: {exc}"

    def reset(self) -> int:
        """Forget the earlier turns' context; returns how many pairs were dropped. Logs stay."""
        dropped = len(self.history)
        self.history.clear()
        if self.session is not None:
            self.session.reset_context()
        return dropped
