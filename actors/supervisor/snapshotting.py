"""Answer snapshots, copied off the supervisor's thread.

Copying an answer's workspace (``RunFiles.stage_snapshot``) took the supervisor's thread 15.4 s for
a 200 MB, 20,002-file workspace: no tick, deadline, vote or user command was handled meanwhile.
The copy now runs on a small pool of worker threads; the answer waits (its agent is "answering",
taking no turn) and is accepted when the worker's ``SnapshotReady`` arrives, so the files are
still in place before anyone is shown the answer. Accepting it then costs one rename.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pykka

from massgen.files import RunFiles
from massgen.messages import AnswerProposed, SnapshotReady

__all__ = ["Snapshotting"]

_WORKERS = 2  # copies of two answers overlap; more would only share the same disk


class Snapshotting:
    """The answers waiting for their snapshot, and the threads copying them."""

    def __init__(self, files: RunFiles | None, run_id: str, deliver: Callable[[SnapshotReady], None]) -> None:
        """``deliver``: hand the ``SnapshotReady`` to the supervisor's mailbox (from a worker thread)."""
        self.files, self.run_id, self._deliver = files, run_id, deliver
        self.waiting: dict[str, AnswerProposed] = {}  # agent -> its answer, until its snapshot is ready
        self._pool: ThreadPoolExecutor | None = None
        self._closed = False

    def needed(self, agent_id: str) -> bool:
        return self.files is not None and agent_id in self.files.with_workspace

    def start(self, agent_id: str, answer: AnswerProposed) -> None:
        """Copy ``agent_id``'s workspace for ``answer`` on a worker thread."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix=f"snapshot-{self.run_id}")
        self.waiting[agent_id] = answer
        self._pool.submit(self._copy, agent_id, answer.turn_id)

    def _copy(self, agent_id: str, turn_id: int) -> None:
        assert self.files is not None
        staged = self.files.stage_snapshot(agent_id, f"{agent_id}-turn{turn_id}")
        if self._closed:  # the supervisor is stopping: a message now could sit unread in its mailbox
            RunFiles.discard_snapshot(staged)
            return
        try:
            self._deliver(SnapshotReady(run_id=self.run_id, agent=agent_id, turn_id=turn_id, staged=staged))
        except pykka.ActorDeadError:  # the run ended meanwhile: nobody will accept it
            RunFiles.discard_snapshot(staged)

    def ready(self, message: SnapshotReady) -> AnswerProposed | None:
        """The answer this snapshot was taken for, if it is still waiting for it."""
        answer = self.waiting.get(message.agent)
        if answer is None or answer.turn_id != message.turn_id:
            return None
        del self.waiting[message.agent]
        return answer

    def close(self) -> None:
        """No new copies; one under way finishes on its own and is discarded."""
        self._closed = True
        if self._pool is not None:
            with contextlib.suppress(RuntimeError):
                self._pool.shutdown(wait=False, cancel_futures=True)
