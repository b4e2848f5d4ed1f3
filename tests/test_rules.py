"""The pure rules behind supervision and voting, without threads."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from massgen.actors.coordination.answers import Coordination
from massgen.actors.coordination.decision import pick_winner
from massgen.actors.supervisor.restarts import RestartHistory
from massgen.configs.schema import OrchestratorConfig, RestartPolicy
from massgen.messages import TallyUpdated


def test_backoff_doubles_with_at_most_twenty_percent_jitter_and_is_capped() -> None:
    history = RestartHistory(RestartPolicy(backoff_base_seconds=1, backoff_max_seconds=5), rng=random.Random(7))
    for attempt, base in enumerate([1, 2, 4, 5, 5]):
        delay = history.delay(attempt)
        assert base <= delay <= base * 1.2


def test_intensity_gives_up_after_max_restarts_within_the_window() -> None:
    history = RestartHistory(RestartPolicy(max_restarts=3, window_seconds=60, backoff_base_seconds=0.1))
    assert [history.record_failure(t) is not None for t in (0, 1, 2)] == [True, True, True]
    assert history.record_failure(3) is None


def test_failures_outside_the_window_are_forgotten() -> None:
    history = RestartHistory(RestartPolicy(max_restarts=1, window_seconds=10, backoff_base_seconds=0.1))
    assert history.record_failure(0) is not None
    assert history.record_failure(11) is not None  # the first failure left the window
    assert history.record_failure(12) is None


@given(st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.integers(1, 5), min_size=1))
def test_the_winner_has_the_most_votes_and_ties_go_to_the_first_listed(counts: dict[str, int]) -> None:
    order = ["a", "b", "c", "d"]
    winner = pick_winner(counts, order)
    assert winner is not None
    assert counts[winner] == max(counts.values())
    tied = [agent for agent in order if counts.get(agent) == counts[winner]]
    assert winner == tied[0]


def make_coordination(**rules: int) -> Coordination:
    return Coordination(["x", "y"], {"x": "agent1", "y": "agent2"}, OrchestratorConfig(**rules))


def test_answers_are_labelled_by_agent_and_version_and_the_view_shows_the_newest() -> None:
    coord = make_coordination()
    coord.add_answer("y", "first")
    coord.add_answer("y", "second")
    coord.add_answer("x", "other")
    assert [a.label for a in coord.answers] == ["agent2.1", "agent2.2", "agent1.1"]
    view = coord.view()
    assert view.version == 3
    assert [(a.label, a.content) for a in view.answers] == [("agent1.1", "other"), ("agent2.2", "second")]


def test_one_view_per_version_is_shared_by_everyone_who_is_shown_it() -> None:
    """A team of N asks for the view N times per answer: it is built once per version, never mutated."""
    coord = make_coordination()
    coord.add_answer("x", "first")
    view = coord.view()
    assert coord.view() is view and coord.results() is coord.results()
    coord.add_answer("x", "second")
    assert coord.view() is not view and view.version == 1  # the old view stays as it was shown
    assert [a.content for a in coord.view().answers] == ["second"]
    assert (coord.count("x"), coord.count("y"), coord.latest("x").label) == (2, 0, "agent1.2")
    assert [r.latest for r in coord.results()] == [False, True]


def test_caps_make_agents_vote_only() -> None:
    coord = make_coordination(max_new_answers_per_agent=1, max_new_answers_global=3)
    assert not coord.vote_only("x")
    coord.add_answer("x", "a")
    assert coord.vote_only("x") and not coord.vote_only("y")
    coord.add_answer("y", "b")
    coord.add_answer("y", "c")
    assert coord.vote_only("y")


def test_best_so_far_prefers_the_current_rounds_leader_then_the_newest_answer() -> None:
    coord = make_coordination()
    coord.add_answer("x", "voted")
    coord.add_answer("y", "newest")
    assert coord.best_so_far(None).content == "newest"
    tally = TallyUpdated(round=2, counts={"x": 1}, converged=False, winner="x")
    assert coord.best_so_far(tally).content == "voted"
    stale = TallyUpdated(round=1, counts={"x": 1}, converged=False, winner="x")
    assert coord.best_so_far(stale).content == "newest"
