"""The supervisor's state, declared once for the modules its behaviour is split into.

The supervisor is one actor (one thread, one mailbox) holding three concepts: routing its
protocol and ending the run (``supervisor.py``), handing out turns (``turn_handout.py``), and
failures, restarts and deadlines (``failures.py``). Each part is a mixin of this base, which
declares the state they share and the steps one part takes of another, so that each module
type-checks on its own. The state is created in ``Supervisor.__init__``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Literal

from massgen.actors.budget import Spending
from massgen.actors.children import Child
from massgen.actors.coordination import Coordination
from massgen.actors.mcp.supervision import McpSupervision
from massgen.actors.notes import NoteBoard
from massgen.actors.run_spec import RunSpec
from massgen.actors.runtime import Peer, TracedActor
from massgen.actors.stragglers import StragglerWatch
from massgen.configs.schema import OrchestratorConfig, TeamConfig, TimeoutSettings
from massgen.messages import RunStatus, TallyUpdated
from massgen.messages.protocols import SupervisorInbox

Phase = Literal["coordinating", "presenting", "finished"]


class SupervisorState(TracedActor[SupervisorInbox]):
    config: TeamConfig
    run: RunSpec
    timeouts: TimeoutSettings  # effective: unset deadlines scale with the run's
    stragglers: StragglerWatch
    rules: OrchestratorConfig
    children: dict[str, Child]
    coord: Coordination
    spent: Spending
    tally: TallyUpdated | None
    phase: Phase
    presenter: str | None
    winner: str | None
    started: float
    deadline: float
    _turn_ids: Iterator[int]
    # Agents whose first turn ended (an answer or a vote). Until every live agent's has, an agent
    # that already answered waits: a turn that shows it only its own answer is a wasted call.
    first_done: set[str]
    waiting: set[str]
    judge: Peer | None
    mcp: McpSupervision  # MCP tool servers: started, routed, restarted and withdrawn there
    notes: NoteBoard  # notes from the user, until each agent has them

    if TYPE_CHECKING:  # steps of one part that another takes; defined once, where they belong
        def _finish(self, status: RunStatus, reason: str, final: str | None = None) -> None: ...
        def _spawn(self, child: Child) -> None: ...
        def _release_waiting(self) -> None: ...
        def _counted(self) -> tuple[str, ...]: ...
        def _rejoin(self, child: Child) -> None: ...
