"""The supervisor's undelivered notes: who still has to hear which note.

A note addressed to an agent stays pending until that agent reports ``NoteDelivered``.
It is sent at once to an agent in a turn, and again with every turn the agent starts
(a restarted incarnation has lost what the old one held); the agent's turn ignores a
note id it has already delivered, so a resend is harmless.
"""

from __future__ import annotations

from massgen.messages import SendNote


class NoteBoard:
    def __init__(self, agents: list[str]) -> None:
        self._pending: dict[str, dict[str, str]] = {agent: {} for agent in agents}

    def post(self, note: SendNote) -> list[str]:
        """Record a note; the agents it is addressed to (unknown ids address nobody)."""
        to = [a for a in self._pending if note.to in (None, a)]
        for agent in to:
            self._pending[agent][note.msg_id] = note.text
        return to

    def pending(self, agent: str) -> list[tuple[str, str]]:
        """(note id, text) still to deliver to ``agent``, oldest first."""
        return list(self._pending.get(agent, {}).items())

    def delivered(self, agent: str, note_id: str) -> None:
        self._pending.get(agent, {}).pop(note_id, None)
