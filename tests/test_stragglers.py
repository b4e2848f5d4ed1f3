"""A straggler costs its own deadline: loops and drips end, late agents are left out of the round
after a grace, and rejoin when they answer."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

from support import assert_trace_invariants, of_type, records, run_team, scripted, step, team_config

from massgen import ExcludedEvent, LogProjection, RejoinedEvent, events_from_record
from massgen.actors.agent.stream_guard import StreamLimits, guard, repeated_period
from massgen.actors.record.resume import resume_point
from massgen.actors.run.team import Team
from massgen.actors.supervisor.deadlines import effective
from massgen.configs import validate_data
from massgen.messages.stream import StreamError, StreamEvent, TextDelta

ANSWER = [step(new_answer="Canberra")]
VOTE_1 = [step(vote="agent1", reason="right")]


def _collect(texts: list[str], limits: StreamLimits) -> list[StreamEvent]:
    async def source() -> AsyncIterator[StreamEvent]:
        for text in texts:
            yield TextDelta(text=text)

    async def main() -> list[StreamEvent]:
        return [event async for event in guard(source(), limits)]

    return asyncio.run(main())


def test_a_repeating_tail_is_found_with_its_period() -> None:
    assert repeated_period("intro " + "abc" * 1000, window=2000, max_period=50) == 3
    assert repeated_period("abc" * 100, window=2000, max_period=50) is None  # too little text
    prose = " ".join(f"word{i}" for i in range(2000))
    assert repeated_period(prose, window=2000, max_period=400) is None


def test_a_looping_stream_ends_with_the_cause_named() -> None:
    events = _collect(["Let me think again. "] * 1000, StreamLimits())
    assert isinstance(events[-1], StreamError)
    assert "repetition" in events[-1].message and "20-character pattern" in events[-1].message
    assert len(events) < 200  # ended soon after the window filled, not at the end of the source


def test_an_output_budget_ends_a_long_stream() -> None:
    chunks = [f"line {i} of a long essay\n" for i in range(100)]
    events = _collect(chunks, StreamLimits(max_output_chars=500))
    assert isinstance(events[-1], StreamError) and "output budget exceeded" in events[-1].message
    assert sum(len(e.text) for e in events if isinstance(e, TextDelta)) < 600


def test_ordinary_output_passes_untouched() -> None:
    chunks = [f"sentence {i} says something new. " for i in range(500)]
    events = _collect(chunks, StreamLimits())
    assert not any(isinstance(e, StreamError) for e in events) and len(events) == 500


def test_unset_deadlines_scale_with_the_run_deadline() -> None:
    short = validate_data({"agents": [scripted("a", ANSWER)],
                           "timeout_settings": {"orchestrator_timeout_seconds": 120}}, "t").timeout_settings
    limits = effective(short)
    assert limits.turn_timeout_seconds == 60 and limits.idle_stream_timeout_seconds == 12
    assert limits.straggler_grace_seconds == 6
    explicit = validate_data({"agents": [scripted("a", ANSWER)], "timeout_settings": {
        "orchestrator_timeout_seconds": 120, "idle_stream_timeout_seconds": 100}}, "t").timeout_settings
    assert effective(explicit).idle_stream_timeout_seconds == 100  # what a user sets is kept


def _assert_dropped_as_straggler(tmp_path: Path, faulty: dict[str, object]) -> list[dict[str, object]]:
    config = team_config(
        scripted("one", ANSWER, VOTE_1), scripted("two", ANSWER, VOTE_1), faulty,
        turn_timeout=60, idle_timeout=30, run_timeout=120,
    )
    result = run_team(config, tmp_path)
    assert result.status == "completed" and result.final_answer == "Canberra"
    trace = records(result)
    assert_trace_invariants(trace)
    expired = of_type(trace, "DeadlineExpired")
    assert [(r["payload"]["scope"], r["payload"]["name"]) for r in expired] == [("straggler", "slow")]
    excluded = of_type(trace, "AgentExcluded")
    assert [(r["payload"]["name"], r["payload"]["round"]) for r in excluded] == [("slow", 2)]
    assert excluded[0]["payload"]["reason"].startswith("straggler: no vote")
    assert not of_type(trace, "AgentRejoined")
    assert not [r for r in of_type(trace, "AgentMarkedFailed") if "straggler" in r["payload"]["reason"]]
    status = json.loads((result.log_dir / "status.json").read_text())
    assert status["agents"]["slow"]["state"] == "excluded"  # not "done", not failed for the whole run
    assert status["agents"]["slow"]["status"] == "timeout"  # upstream's word for an agent cut by its deadline
    assert "straggler" in status["agents"]["slow"]["last_error"]
    return trace


def test_a_late_first_answer_rejoins_the_next_round(tmp_path: Path) -> None:
    """Left out of round 2 after the grace, the late agent answers while the others vote: it rejoins,
    its answer opens round 3, and that round waits for its vote too."""
    slow_vote = [step(delay=3.0), step(vote="agent1", reason="right")]
    config = team_config(
        scripted("one", ANSWER, slow_vote, VOTE_1), scripted("two", ANSWER, slow_vote, VOTE_1),
        scripted("slow", [step(delay=1.0), step(new_answer="Canberra")], VOTE_1),
        straggler_grace=0.3, run_timeout=60,
    )
    result = run_team(config, tmp_path)
    assert result.status == "completed" and result.final_answer == "Canberra"
    trace = records(result)
    assert_trace_invariants(trace)
    order = [(r["type"], r["payload"].get("name") or r["payload"].get("agent") or r["payload"].get("voter"))
             for r in trace if r["type"] in ("AgentExcluded", "AgentRejoined", "AnswerAccepted", "RecordVote")]
    assert order.index(("AgentExcluded", "slow")) < order.index(("AgentRejoined", "slow")) \
        < order.index(("AnswerAccepted", "slow")) < order.index(("RecordVote", "slow"))
    excluded = of_type(trace, "AgentExcluded")[0]["payload"]
    rejoined = of_type(trace, "AgentRejoined")[0]["payload"]
    assert (excluded["round"], rejoined["excluded_round"], rejoined["round"]) == (2, 2, 2)
    final_votes = [r["payload"]["voter"] for r in of_type(trace, "RecordVote") if r["payload"]["round"] == 3]
    assert sorted(final_votes) == ["one", "slow", "two"]  # round 3 counted the straggler again
    assert not of_type(trace, "AgentMarkedFailed")
    status = json.loads((result.log_dir / "status.json").read_text())
    assert status["agents"]["slow"]["state"] == "done" and status["agents"]["slow"]["answers"] == 1
    assert status["agents"]["slow"]["status"] == "voted"  # upstream's word for how it ended
    projection = LogProjection()  # what `--stream-events`, the API and serve show of it
    events = [e for r in trace for e in (projection.apply(r), events_from_record(r, projection))[1]]
    seen = [(e.type, e.agent, e.as_dict()["round"]) for e in events if isinstance(e, ExcludedEvent | RejoinedEvent)]
    assert seen == [("excluded", "slow", 2), ("rejoined", "slow", 2)]


def test_a_hung_agent_is_dropped_once_the_others_have_voted(tmp_path: Path) -> None:
    _assert_dropped_as_straggler(tmp_path, scripted("slow", [step(fault="hang")]))


def test_a_dripping_agent_is_dropped_once_the_others_have_voted(tmp_path: Path) -> None:
    drip = [x for _ in range(200) for x in (step(text="."), step(delay=0.2))]
    _assert_dropped_as_straggler(tmp_path, scripted("slow", drip))


def test_a_looping_agent_fails_with_the_loop_named_and_is_then_dropped(tmp_path: Path) -> None:
    trace = _assert_dropped_as_straggler(tmp_path, scripted("slow", [step(fault="stream_forever")]))
    errors = [r["payload"]["error"] for r in of_type(trace, "ChildFailed") if r["payload"]["name"] == "slow"]
    assert errors and all("stream guard: repetition" in e for e in errors)


def test_a_straggler_left_out_when_the_run_was_killed_is_still_left_out_when_it_resumes(tmp_path: Path) -> None:
    """The exclusion is in the trace, so a resumed run does not wait for the straggler either; it
    rejoins the resumed run when it answers, as it would have in the first."""
    slow_vote = [step(delay=3.0), step(vote="agent1", reason="right")]
    config = team_config(
        scripted("one", ANSWER, slow_vote, VOTE_1), scripted("two", ANSWER, slow_vote, VOTE_1),
        scripted("slow", [step(delay=1.0), step(new_answer="Canberra")], VOTE_1),
        straggler_grace=0.3, run_timeout=60,
    )
    whole = run_team(config, tmp_path / "whole")
    lines = (whole.log_dir / "trace.jsonl").read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines, 1) if '"type": "AgentExcluded"' in line)
    killed = tmp_path / "killed" / "attempt_1"
    killed.mkdir(parents=True)
    (killed / "trace.jsonl").write_text("".join(lines[:cut]))  # what a SIGKILL right after it leaves

    point = resume_point(killed)
    assert point.state.agents["slow"].excluded_round == 2
    result = Team(validate_data(point.config, "trace"), point.question, resume=point, tick_interval_s=0.02).run()

    assert result.status == "completed" and result.final_answer == "Canberra"
    trace = records(result)
    resumed = of_type(trace, "RunResumed")[0]["payload"]
    assert {a["agent"]: a["excluded_round"] for a in resumed["agents"]}["slow"] == 2
    assert not of_type(trace, "AgentExcluded")  # not timed out again: it was already left out
    assert [r["payload"]["excluded_round"] for r in of_type(trace, "AgentRejoined")] == [2]
