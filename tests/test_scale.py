"""Large teams: the run handle never loses a finished run, and a thousand agents converge."""

from __future__ import annotations

import itertools
import json
import sys
import threading
from pathlib import Path
from typing import Any

import pykka
import pytest
from support import assert_trace_invariants, of_type, records

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root, for bench/

from bench.actor_floor import RECORDS_A_TURN, ROUNDS, run_floor
from bench.scale import team
from massgen.actors.run.team import Team


@pytest.mark.slow
def test_256_agents_converge_and_the_handle_reports_it(tmp_path: Path) -> None:
    # The trace writer is thousands of records behind when the supervisor stops: the handle waits for them.
    result = Team(team(256, None), "What is 2+2?", log_dir=tmp_path / "run").run()
    assert result.status == "completed", result.reason
    trace = records(result)
    assert_trace_invariants(trace)  # among them: exactly one RunFinished
    assert len(of_type(trace, "AnswerAccepted")) == 256


@pytest.mark.slow
# 33-115 s on a 2-core machine (alone, or beside a second copy of itself); once, in a full CI run from a
# fresh clone, past the suite's 300 s (no stacks kept). Every wait in Team.wait is bounded (the run's
# deadline, then the trace writer's backlog of a thousand agents), so the longer limit only gives a slow
# writer its time; a real hang still fails here, with the stacks faulthandler dumps at 280 s.
@pytest.mark.timeout(900)
def test_a_thousand_agents_with_an_answer_cap_converge(tmp_path: Path) -> None:
    result = Team(team(1000, 16), "What is 2+2?", log_dir=tmp_path / "run").run()
    assert result.status == "completed", result.reason
    trace = records(result)
    assert_trace_invariants(trace)
    assert len(of_type(trace, "RecordVote")) == 1000 and len(of_type(trace, "AnswerAccepted")) == 16


def _tally_sizes(agents: int, tmp_path: Path) -> tuple[int, int]:
    """One capped run: the largest TallyUpdated payload (decoded, as readers get it) and all of them together,
    in JSON characters; and that every vote is carried once, by the update that records it."""
    result = Team(team(agents, 2), "What is 2+2?", log_dir=tmp_path / f"run_{agents}").run()
    assert result.status == "completed", result.reason
    trace = records(result)
    votes = of_type(trace, "RecordVote")
    tallies = [record["payload"] for record in of_type(trace, "TallyUpdated")]
    assert len(votes) == agents
    carried = [tally["vote"]["voter"] for tally in tallies if tally.get("vote")]
    assert sorted(carried) == sorted(vote["payload"]["voter"] for vote in votes)
    sizes = [len(json.dumps(tally)) for tally in tallies]
    return max(sizes), sum(sizes)


def test_a_vote_round_carries_each_vote_once_so_its_tallies_grow_linearly(tmp_path: Path) -> None:
    # Issue 51: every TallyUpdated once carried the round's whole vote list, so a round of N votes moved
    # N^2/2 entries through the judge, the trace writer and the supervisor (the file's deltas hid it on
    # disk). With two answers, an update holds two counts, two results and at most one vote, whatever the team.
    small_max, small_sum = _tally_sizes(6, tmp_path)
    large_max, large_sum = _tally_sizes(24, tmp_path)
    assert large_max <= small_max + 64  # a few characters more for longer agent names, never a vote more
    assert large_sum <= 4 * small_sum * 1.25  # four times the votes: about four times the tallies, not sixteen


def test_the_judge_reads_each_ballot_once_not_the_rounds_on_every_vote(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 51: on each vote the judge decided by recounting every vote of the round (the "best so far" winner
    # a run cut mid-round presents), so a round of N votes read N^2/2 ballots: 0.49 s of judge CPU at 1,000
    # agents, 2.29 s at 2,000. Its round's counts now take each vote as it arrives: one reading a vote.
    from massgen.actors.coordination import decision
    readings = 0
    plain = decision.supported_result

    def counted(ballot: decision.Ballot) -> str:
        nonlocal readings
        readings += 1
        return plain(ballot)

    monkeypatch.setattr(decision, "supported_result", counted)
    agents = 120
    result = Team(team(agents, 2), "What is 2+2?", log_dir=tmp_path / "run").run()
    assert result.status == "completed", result.reason
    assert len(of_type(records(result), "RecordVote")) == agents
    assert readings <= 2 * agents  # one a vote (a vote cast again is read again); 7,260 when recounted


def test_a_tick_checks_the_agents_whose_deadline_came_not_the_team(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 51: every Tick (each 50 ms) checked every agent's deadlines, so a run cost ticks x agents: its time
    # times its team. The supervisor now checks an agent when its earliest deadline comes (none come in this run)
    # and, once a second, every agent for a stop nobody reported.
    from massgen.actors.supervisor import failures
    checks = ticks = 0
    plain_overdue, plain_tick = failures.overdue, failures.FailureHandling.on_tick

    def overdue(*args: Any, **kwargs: Any) -> Any:
        nonlocal checks
        checks += 1
        return plain_overdue(*args, **kwargs)

    def on_tick(self: failures.FailureHandling, now: float) -> None:
        nonlocal ticks
        ticks += 1
        plain_tick(self, now)

    monkeypatch.setattr(failures, "overdue", overdue)
    monkeypatch.setattr(failures.FailureHandling, "on_tick", on_tick)
    agents = 100
    result = Team(team(agents, 2), "What is 2+2?", log_dir=tmp_path / "run", tick_interval_s=0.002).run()
    assert result.status == "completed", result.reason
    assert ticks >= 5, ticks  # enough ticks that checking the whole team on each would show
    assert checks <= agents * (2 + ticks // 250), (checks, ticks)  # the sweeps, once a second; ticks x 100 before


def test_a_vote_costs_the_supervisor_what_it_changed_not_a_pass_over_the_team(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 51: on each tally the straggler watch rebuilt who was done and who counted from every agent, and each
    # vote asked whether any agent's first turn was still to end: three passes over the team a vote, N^2 in all.
    # The supervisor's state now keeps who counts, who is missing and who has not ended a first turn as each agent
    # changes, so an agent's standing is read when it changes (a few times a run), not on everyone's vote.
    from massgen.actors.supervisor import stragglers
    readings = 0
    plain = stragglers.StragglerWatch.counted

    def counted(self: stragglers.StragglerWatch, agent: str) -> bool:
        nonlocal readings
        readings += 1
        return plain(self, agent)

    monkeypatch.setattr(stragglers.StragglerWatch, "counted", counted)
    agents = 120
    result = Team(team(agents, 2), "What is 2+2?", log_dir=tmp_path / "run").run()
    assert result.status == "completed", result.reason
    assert len(of_type(records(result), "RecordVote")) == agents
    assert readings <= 16 * agents, readings  # a few changes an agent (1,090); 15,001 when the team was scanned


@pytest.mark.parametrize(("write_cpu_s", "most_writes"), [(0.001, 41), (0.1, 11)])
def test_writing_status_stays_a_bounded_share_of_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         write_cpu_s: float, most_writes: int) -> None:
    # Issue 51: status.json was rewritten every 0.25 s whatever a write cost, and a write costs what the status
    # holds (0.1-0.4 s of CPU for 1,000 agents), so writing it cost team x time and took most of the writer's
    # CPU. The next write now waits ten times the CPU the last one took, when that is more than 0.25 s. A fake
    # clock drives the writer: a record every 50 ms of a 10 s run, each write taking ``write_cpu_s`` of CPU.
    from massgen.actors.record import trace_writer
    clock = {"wall": 1000.0, "cpu": 0.0}
    writes: list[float] = []
    plain = trace_writer.render_status

    def render(*args: Any) -> str:
        writes.append(clock["wall"])
        clock["cpu"] += write_cpu_s
        return plain(*args)

    monkeypatch.setattr(trace_writer.time, "monotonic", lambda: clock["wall"])
    monkeypatch.setattr(trace_writer.time, "thread_time", lambda: clock["cpu"])
    monkeypatch.setattr(trace_writer, "render_status", render)
    writer = trace_writer.TraceWriter(tmp_path)  # driven by hand, on this thread: no actor, no trailing timer
    monkeypatch.setattr(writer, "_ask_status", lambda: None)
    writer.on_start()
    try:
        for _ in range(200):
            clock["wall"] += 0.05
            writer._dead_letter("a record")
            writer._publish()
            if writer._trailing is not None:
                writer._trailing.cancel()
                writer._trailing = None
    finally:
        writer.on_stop()
    run_s = 200 * 0.05
    assert len(writes) <= most_writes, len(writes)  # 34 for the costly status too, before: 3.4 s of 10
    assert len(writes) * write_cpu_s <= 0.1 * run_s + write_cpu_s  # a tenth of the run at most
    gaps = [b - a for a, b in itertools.pairwise(writes)]
    assert max(gaps) <= max(0.25, 10 * write_cpu_s) + 0.05 + 1e-9  # and never staler than that


def test_a_finished_run_stops_its_agents_a_few_at_a_time_and_stops_them_all(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 51: the supervisor told every child to stop at once. Each stop wakes an agent's two threads, so a
    # thousand agents queued two thousand threads on the GIL, every one waking each switch interval to ask for it:
    # stopping 1,000 agents cost 460,000 context switches and 2.9 s, 2,000 about 25 s. It now stops them in waves.
    import threading

    from massgen.actors.agent.actor import AgentActor
    from massgen.actors.supervisor import actor as supervisor
    lock = threading.Lock()
    stopping = most = stopped = 0
    plain = AgentActor.on_stop

    def on_stop(self: AgentActor) -> None:
        nonlocal stopping, most, stopped
        with lock:
            stopping += 1
            most = max(most, stopping)
        try:
            plain(self)
        finally:
            with lock:
                stopping -= 1
                stopped += 1

    monkeypatch.setattr(AgentActor, "on_stop", on_stop)
    agents = 3 * supervisor._STOP_WAVE + 5
    result = Team(team(agents, 2), "What is 2+2?", log_dir=tmp_path / "run").run()
    assert result.status == "completed", result.reason
    assert stopped == agents  # every one stopped (not abandoned) before run() returned
    assert most <= supervisor._STOP_WAVE, most
    assert not [t.name for t in threading.enumerate() if t.name.startswith("agent_") and t.is_alive()]


def test_the_actor_floor_runs_the_shape_it_names_and_leaves_no_thread(tmp_path: Path) -> None:
    """bench.scale --floor: every agent takes every round and writes its records; all its threads end."""
    before = set(threading.enumerate())
    assert run_floor(40, deadline_s=60) == ("completed", 40 * ROUNDS * RECORDS_A_TURN)
    assert pykka.ActorRegistry.get_all() == []
    for thread in set(threading.enumerate()) - before:  # a stopped actor's thread returns just after its reply
        thread.join(timeout=10)
        assert not thread.is_alive(), thread.name
