"""The supervisor's deadline schedule: a tick checks the agents whose deadline has come, and a bounded share of
the sweep for stops nobody reported, so a tick's cost does not grow with the team (issue 51)."""

from __future__ import annotations

from massgen.actors.supervisor.children import DeadlineSchedule

TEAM = tuple(f"agent_{i}" for i in range(1, 151))


def test_a_check_comes_due_once_at_its_time() -> None:
    schedule = DeadlineSchedule()
    schedule.check_at("agent_2", 5.0)
    schedule.check_at("agent_1", 3.0)
    schedule.check_at("agent_1", 4.0)  # later than the check it has: it keeps the earlier one
    assert schedule.due(2.9) == []
    assert schedule.due(5.0) == ["agent_1", "agent_2"]
    assert schedule.due(10.0) == []


def test_a_small_team_is_swept_whole_once_a_second() -> None:
    schedule = DeadlineSchedule()
    small = TEAM[:10]
    assert list(schedule.sweep(0.0, small)) == list(small)
    assert list(schedule.sweep(0.5, small)) == []
    assert list(schedule.sweep(1.0, small)) == list(small)


def test_a_large_team_is_swept_over_several_ticks_each_agent_once() -> None:
    schedule = DeadlineSchedule()
    limit = DeadlineSchedule.SWEEP_AGENTS
    ticks = [list(schedule.sweep(0.05 * i, TEAM)) for i in range(5)]
    assert [len(t) for t in ticks] == [limit, limit, len(TEAM) - 2 * limit, 0, 0]
    assert [agent for tick in ticks for agent in tick] == list(TEAM)
    # the next pass begins a second after this one began, not after it ended
    assert list(schedule.sweep(1.0, TEAM)) == list(TEAM[:limit])
