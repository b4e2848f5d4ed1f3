"""What the supervisor knows about its run: one plain object, shared explicitly by its behaviours.

The supervisor actor (``actor.py``) creates it and hands it, with the few collaborators each one
needs, to its behaviours: turn handout (``turn_handout.py``), failures and deadlines
(``failures.py``), the end of the run (``ending.py``) and the restore of a resumed run
(``restore.py``). Only the supervisor's thread reads or changes it. The queries here are the
ones more than one behaviour asks.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Literal, Protocol

from massgen.actors.agent.actor import AgentSpec
from massgen.actors.coordination.answers import Coordination
from massgen.actors.runtime.port import Peer
from massgen.actors.supervisor.budget import Spending
from massgen.actors.supervisor.children import PROGRAM_SECONDS, Child, DeadlineSchedule, next_check
from massgen.actors.supervisor.deadlines import effective
from massgen.actors.supervisor.notes import NoteBoard
from massgen.actors.supervisor.restarts import RestartHistory
from massgen.actors.supervisor.run_spec import RunSpec
from massgen.actors.supervisor.stragglers import Missing, StragglerWatch
from massgen.configs.schema import OrchestratorConfig, TeamConfig, TimeoutSettings
from massgen.messages import Message, TallyUpdated, VoteEntry

Phase = Literal["coordinating", "presenting", "finished"]


class Emitter(Protocol):
    """How a behaviour speaks: as the supervisor, its messages caused by the one it is handling."""

    def tell(self, to: Peer, message: Message) -> bool:
        """Send ``message`` to ``to`` (traced); False if ``to`` is gone."""
        ...

    def record(self, message: Message) -> None:
        """Trace a decision that is sent to nobody."""
        ...


@dataclass
class RoundVotes:
    """The votes the judge recorded in its latest round, by voter: kept from each ``TallyUpdated.vote``, since
    an update carries only the vote it records, not the round's list (issue 51). O(1) a vote."""

    round: int = -1
    by_voter: dict[str, VoteEntry] = field(default_factory=dict)

    def count(self, tally: TallyUpdated) -> None:
        """Take in the judge's update: a later round starts empty; an earlier round's update adds nothing."""
        if tally.round > self.round:
            self.round, self.by_voter = tally.round, {}
        if tally.vote is not None and tally.round == self.round:
            self.by_voter[tally.vote.voter] = tally.vote

    def voters(self, round_: int) -> AbstractSet[str]:
        """Who has voted in ``round_`` (nobody, for a round the judge has not reported on)."""
        return self.by_voter.keys() if round_ == self.round else frozenset()

    def of(self, live: Collection[str], order: Sequence[str]) -> tuple[VoteEntry, ...]:
        """The votes of the ``live`` agents, in ``order`` (config order): what the judge counts."""
        return tuple(self.by_voter[agent] for agent in order if agent in self.by_voter and agent in live)


@dataclass
class SupervisorState:
    config: TeamConfig
    run: RunSpec
    timeouts: TimeoutSettings  # effective: unset deadlines scale with the run's
    rules: OrchestratorConfig
    children: dict[str, Child]
    coord: Coordination
    spent: Spending
    stragglers: StragglerWatch
    notes: NoteBoard  # notes from the user, until each agent has them
    started: float
    deadline: float
    tally: TallyUpdated | None = None  # the judge's latest
    votes: RoundVotes = field(default_factory=RoundVotes)  # of the latest tally's round
    phase: Phase = "coordinating"
    presenter: str | None = None
    winner: str | None = None
    next_turn_id: int = 1  # turn ids are unique in a run, and go on from the attempt a resumed run continues
    judge: Peer | None = None  # started in ``on_start``
    deadlines: DeadlineSchedule = field(default_factory=DeadlineSchedule)  # when each agent is next checked
    place: dict[str, int] = field(default_factory=dict)  # each agent's place in config order
    order: tuple[str, ...] = ()  # the agents in config order
    # Agents whose first turn ended (an answer or a vote). Until every live agent's has, an agent
    # that already answered waits: a turn that shows it only its own answer is a wasted call.
    _first_done: set[str] = field(default_factory=set, init=False)
    _waiting: set[str] = field(default_factory=set, init=False)
    # The round whose first answers the judge is ruling on, and the agent whose answer completed them (its
    # next turn is held with the others'); None when no ruling is awaited.
    _judging: tuple[int, str | None] | None = field(default=None, init=False)
    # Who the round waits for, kept as it changes (``_refresh``), so a vote costs what it changed (issue 51):
    # the counted agents (live, not left out as stragglers), those of them not done (``missing``: done is voted
    # this round, waiting, answering or held), and those whose first turn has not ended.
    live: set[str] = field(default_factory=set, init=False)
    missing: Missing = field(default_factory=Missing, init=False)
    unstarted: set[str] = field(default_factory=set, init=False)
    # The latest tally's voters while its round is the answers', and (the tally's round, the answers') they are of.
    _voted: set[str] = field(default_factory=set, init=False)
    _votes_key: tuple[int, int] = field(default=(-1, 0), init=False)

    def __post_init__(self) -> None:
        self.order = tuple(self.children)
        self.place = {agent: i for i, agent in enumerate(self.order)}
        for child in self.children.values():
            child.on_status = self._status_changed
            self._refresh(child.spec.agent_id)

    @classmethod
    def new(cls, config: TeamConfig, run: RunSpec, specs: list[AgentSpec], now: float) -> SupervisorState:
        """A fresh run's state: every agent not yet started, no answers, nothing spent."""
        timeouts = effective(config.timeout_settings)  # unset deadlines scale with the run's
        rules = config.orchestrator
        order = [s.agent_id for s in specs]
        return cls(
            config=config, run=run, timeouts=timeouts, rules=rules,
            children={s.agent_id: Child(spec=s, history=RestartHistory(rules.restart),
                                        status="reserve" if s.agent_id in rules.reserve_agents else "starting")
                      for s in specs},
            coord=Coordination(order, {s.agent_id: s.label for s in specs}, rules),
            spent=Spending(rules.budget), stragglers=StragglerWatch(timeouts.straggler_grace_seconds),
            notes=NoteBoard(order), started=now, deadline=now + timeouts.orchestrator_timeout_seconds,
        )

    @property
    def finished(self) -> bool:
        return self.phase == "finished"

    def take_turn_id(self) -> int:
        turn_id = self.next_turn_id
        self.next_turn_id += 1
        return turn_id

    def command_seconds(self) -> float:
        """How long a silent tool (a command, a program, a code check) may run: the idle deadline waits for it."""
        return max(self.run.files.command_timeout_s if self.run.files else 0.0, PROGRAM_SECONDS)

    def schedule(self, child: Child) -> None:
        """``child``'s deadlines may have moved earlier (a new status, a turn begun, a command ended): its next
        check is due by its earliest deadline."""
        agent = child.spec.agent_id
        self.deadlines.check_at(agent, next_check(child, self.timeouts, answered=self.coord.count(agent) > 0,
                                                  command_s=self.command_seconds()))

    @property
    def first_done(self) -> AbstractSet[str]:
        return self._first_done

    def first_turn_ended(self, *agents: str) -> None:
        for agent in agents:
            if agent not in self._first_done:
                self._first_done.add(agent)
                self._refresh(agent)

    @property
    def waiting(self) -> AbstractSet[str]:
        """Agents whose next turn waits for the others' first answers."""
        return self._waiting

    def wait(self, agent: str) -> None:
        self._waiting.add(agent)
        self._refresh(agent)

    def stop_waiting(self, agent: str) -> None:
        if agent in self._waiting:
            self._waiting.discard(agent)
            self._refresh(agent)

    @property
    def judging(self) -> tuple[int, str | None] | None:
        return self._judging

    @judging.setter
    def judging(self, judging: tuple[int, str | None] | None) -> None:
        held = self._judging[1] if self._judging is not None else None
        self._judging = judging
        for agent in (held, judging[1] if judging is not None else None):
            if agent is not None:
                self._refresh(agent)

    def exclude(self, agent: str, round_: int) -> None:
        """Leave ``agent`` out of the round as a straggler, from round ``round_``."""
        self.stragglers.exclude(agent, round_)
        self._refresh(agent)

    def rejoin(self, agent: str) -> int | None:
        """``agent`` answered or voted: it counts again. The round it was left out of, or None."""
        excluded = self.stragglers.rejoin(agent)
        self._refresh(agent)
        return excluded

    def count_votes(self, tally: TallyUpdated) -> None:
        """Take in the judge's update (``RoundVotes.count``); its voter is done."""
        self.votes.count(tally)
        self.sync_votes(tally.vote.voter if tally.vote is not None else None)

    def sync_votes(self, voter: str | None = None) -> None:
        """The voters of the answers' round are done: all of them again when the round the votes or the answers
        are of changed (each vote is taken in once a round it counts in), else only ``voter``."""
        key = (self.votes.round, self.coord.version)
        voters = self.votes.voters(self.coord.version)
        if key != self._votes_key:
            old, self._voted, self._votes_key = self._voted, set(voters), key
            for agent in old ^ self._voted:
                self._refresh(agent)
        elif voter is not None and voter in voters and voter not in self._voted:
            self._voted.add(voter)
            self._refresh(voter)

    def _status_changed(self, child: Child) -> None:
        self._refresh(child.spec.agent_id)

    def _refresh(self, agent: str) -> None:
        """Where ``agent`` stands now, in ``live``, ``missing`` and ``unstarted``: O(1)."""
        child = self.children.get(agent)
        if child is None:
            return
        live = child.status not in ("failed", "reserve") and self.stragglers.counted(agent)
        done = (agent in self._voted or agent in self._waiting or child.status == "answering"
                or (self._judging is not None and self._judging[1] == agent))
        if live:
            self.live.add(agent)
        else:
            self.live.discard(agent)
        self.missing.set(agent, live and not done)
        if live and agent not in self._first_done:
            self.unstarted.add(agent)
        else:
            self.unstarted.discard(agent)

    def counted(self) -> tuple[str, ...]:
        """The agents the round waits for: live, and not left out of it as stragglers (in config order)."""
        return tuple(sorted(self.live, key=self.place.__getitem__))

    def awaiting_first_turns(self) -> bool:
        """Whether a live, counted agent has not yet ended its first (independent) turn. O(1)."""
        return bool(self.unstarted)

    def live_peer(self, agent_id: str) -> Peer | None:
        """The agent's incarnation now, unless it is failed or restarting."""
        child = self.children.get(agent_id)
        return child.peer if child is not None and child.status not in ("failed", "restarting") else None
