"""Notes from a person watching a run, to every agent or one, delivered mid-turn.

``SendNote`` is run control (user -> supervisor); the supervisor forwards an
``InjectNote`` to each addressed agent, which hands it to its turn at the next safe
point (before its next model call) and reports ``NoteDelivered``. All three are
traced, so every viewer sees a note go out and arrive.
"""

from __future__ import annotations

from massgen.messages.envelope import Message


class SendNote(Message):
    """``to``: an agent id, or None for every agent. The message id is the note's id."""

    text: str
    to: str | None = None


class InjectNote(Message):
    turn_id: int
    note_id: str
    text: str


class NoteDelivered(Message):
    turn_id: int
    note_id: str
