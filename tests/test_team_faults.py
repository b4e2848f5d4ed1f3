"""Supervision: crashes, hangs, deadlines and budgets never take the team down."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pykka
import pytest
from support import (
    assert_trace_invariants,
    of_type,
    quick_and_slow,
    records,
    run_team,
    scripted,
    step,
    team_config,
)

from massgen.actors.run.team import Team
from massgen.actors.runtime.port import RUNTIME, DownReason, Peer, PykkaRuntime, RunContext, TracedActor
from massgen.configs import load_config
from massgen.messages import Down

ANSWER = [step(new_answer="Canberra")]
VOTE_1 = [step(vote="agent1", reason="right")]


def test_an_agent_that_crashes_is_restarted_and_the_team_converges(tmp_path: Path) -> None:
    config, _ = load_config("@examples/faults/crash_and_recover")
    result = run_team(config, tmp_path)

    assert result.status == "completed" and result.final_answer == "The capital of Australia is Canberra."
    trace = records(result)
    assert_trace_invariants(trace)
    failures = [(r["payload"]["incarnation"], r["payload"]["where"]) for r in of_type(trace, "ChildFailed")]
    assert failures == [(1, "on_start"), (2, "worker")]
    restarts = of_type(trace, "AgentRestarting")
    assert [r["payload"]["incarnation"] for r in restarts] == [1, 2]
    assert restarts[1]["payload"]["delay_s"] >= restarts[0]["payload"]["delay_s"]  # backoff grows
    assert any(v["voter"] == "flaky" and v["valid"] for v in result.votes)


def test_an_agent_that_keeps_crashing_is_dropped_and_the_others_finish(tmp_path: Path) -> None:
    config = team_config(
        scripted("good", ANSWER, VOTE_1),
        scripted("broken", ANSWER, crash_on_start=True),
        orchestrator={"restart": {"max_restarts": 2, "backoff_base_seconds": 0.01}},
    )
    result = run_team(config, tmp_path)

    assert result.status == "completed" and result.final_answer == "Canberra"
    trace = records(result)
    assert_trace_invariants(trace)
    assert len(of_type(trace, "AgentRestarting")) == 2
    marked = of_type(trace, "AgentMarkedFailed")
    assert [r["payload"]["name"] for r in marked] == ["broken"]
    assert "scripted crash on start" in marked[0]["payload"]["reason"]
    status = (result.log_dir / "status.json").read_text()
    assert '"state": "failed"' in status and '"status": "error"' in status  # ours, and upstream's word


def test_a_crash_mid_stream_is_a_failure_of_that_incarnation_only(tmp_path: Path) -> None:
    config = team_config(
        scripted("steady", ANSWER, VOTE_1),
        scripted("midway",
                 [step(text="Let me see"), step(fault="raise", incarnations=[1]), step(new_answer="Canberra!")],
                 VOTE_1),
        orchestrator={"final_answer_strategy": "winner_reuse"},
    )
    result = run_team(config, tmp_path)
    trace = records(result)
    assert_trace_invariants(trace)
    failed = of_type(trace, "ChildFailed")
    assert len(failed) == 1 and "ScriptFault" in failed[0]["payload"]["error"]
    assert result.status == "completed"


def test_a_hung_model_call_is_cut_off_by_the_idle_deadline(tmp_path: Path) -> None:
    config = team_config(
        scripted("steady", ANSWER, VOTE_1),
        scripted("stuck", [step(fault="hang", incarnations=[1]), *ANSWER], VOTE_1),
        idle_timeout=0.3,
    )
    result = run_team(config, tmp_path)
    assert result.status == "completed"
    trace = records(result)
    assert_trace_invariants(trace)
    expired = of_type(trace, "DeadlineExpired")
    assert [(r["payload"]["scope"], r["payload"]["name"]) for r in expired] == [("idle", "stuck")]
    cancels = [r for r in of_type(trace, "CancelTurn") if r["to"] == "stuck#1"]
    assert len(cancels) == 1


def test_a_model_that_streams_forever_is_cut_off_by_the_turn_deadline(tmp_path: Path) -> None:
    config = team_config(
        scripted("steady", ANSWER, VOTE_1),
        scripted("rambler", [step(fault="stream_forever")]),
        orchestrator={"restart": {"max_restarts": 1, "backoff_base_seconds": 0.01}},
        turn_timeout=0.4,
        idle_timeout=5.0,
    )
    result = run_team(config, tmp_path)
    assert result.status == "completed" and result.final_answer == "Canberra"
    trace = records(result)
    assert_trace_invariants(trace)
    scopes = {r["payload"]["scope"] for r in of_type(trace, "DeadlineExpired")}
    assert scopes == {"turn"}
    assert [r["payload"]["name"] for r in of_type(trace, "AgentMarkedFailed")] == ["rambler"]


def test_a_hung_start_handler_is_abandoned_and_a_new_incarnation_takes_over(tmp_path: Path) -> None:
    config = team_config(
        scripted("steady", ANSWER, VOTE_1),
        scripted("frozen", [step(delay=0.05), *ANSWER], VOTE_1, hang_on_start=[1]),
        turn_timeout=0.5,
    )
    result = run_team(config, tmp_path)
    assert result.status == "completed"
    trace = records(result)
    assert_trace_invariants(trace)
    expired = of_type(trace, "DeadlineExpired")
    assert [(r["payload"]["scope"], r["payload"]["name"]) for r in expired] == [("start", "frozen")]
    started = [r["sender"] for r in of_type(trace, "ChildStarted") if r["sender"].startswith("frozen")]
    assert started == ["frozen#2"]


def test_a_blocked_incarnation_is_abandoned_and_its_late_messages_become_dead_letters(tmp_path: Path) -> None:
    # steady keeps streaming (well inside the idle deadline) until after blocked#1 wakes up.
    slow_vote = [x for _ in range(12) for x in (step(text="."), step(delay=0.1))] + VOTE_1
    config = team_config(
        scripted("steady", ANSWER, slow_vote),
        scripted("blocked", [step(fault="block_thread", seconds=0.6, incarnations=[1]),
                             step(new_answer="Canberra, since 1913")], VOTE_1),
        idle_timeout=0.3,
    )
    result = run_team(config, tmp_path)
    assert result.status == "completed"
    trace = records(result)
    assert_trace_invariants(trace)
    assert [r["payload"]["scope"] for r in of_type(trace, "DeadlineExpired")] == ["idle"]
    late = [r["payload"] for r in of_type(trace, "DeadLetter")]
    assert late and all(d["original_sender"] == "blocked#1" for d in late)
    assert "AnswerProposed" in {d["original_type"] for d in late}
    assert list(result.answers) == ["agent1.1", "agent2.1"]  # the late answer was not accepted


def test_the_run_deadline_returns_the_best_answer_so_far_marked_partial(tmp_path: Path) -> None:
    config = team_config(
        scripted("early", [step(new_answer="first draft")], [step(fault="hang")]),
        scripted("later", [step(delay=0.1), step(new_answer="second draft")], [step(fault="hang")]),
        run_timeout=0.8, straggler_grace=5.0,  # not the run-scaled 0.04 s: "later" is slow, not stuck
    )
    result = run_team(config, tmp_path)
    assert result.status == "timeout" and result.partial
    assert result.final_answer == "second draft" and result.winner_label == "agent2.1"
    trace = records(result)
    assert_trace_invariants(trace)
    assert [r["payload"]["scope"] for r in of_type(trace, "DeadlineExpired")] == ["run"]
    assert (result.log_dir / "final" / "later" / "answer.txt").read_text() == "second draft\n"


def test_the_best_answer_so_far_prefers_votes_over_recency(tmp_path: Path) -> None:
    config = team_config(
        scripted("a", [step(new_answer="voted for")], [step(when_answers=["agent2"]), step(vote="agent1", reason="x")]),
        scripted("b", [step(delay=0.05), step(new_answer="newer")], [step(fault="hang")]),
        run_timeout=0.8, straggler_grace=30,  # b hangs until the run deadline
    )
    result = run_team(config, tmp_path)
    assert result.status == "timeout" and result.final_answer == "voted for"


def test_every_agent_failing_without_an_answer_fails_the_run_with_complete_logs(tmp_path: Path) -> None:
    config = team_config(
        scripted("x", ANSWER, crash_on_start=True),
        scripted("y", ANSWER, crash_on_start=True),
        orchestrator={"restart": {"max_restarts": 1, "backoff_base_seconds": 0.01}},
    )
    result = run_team(config, tmp_path)
    assert result.status == "failed" and result.final_answer is None
    assert "no agent produced an answer" in result.reason
    for name in ("trace.jsonl", "status.json", "vote.json", "coordination_events.json", "execution_metadata.yaml"):
        assert (result.log_dir / name).is_file(), name
    assert_trace_invariants(records(result))


def test_every_agent_failing_after_an_answer_returns_it_marked_partial(tmp_path: Path) -> None:
    config = team_config(
        scripted("x", ANSWER, [step(fault="raise")]),
        orchestrator={"restart": {"max_restarts": 0}},
    )
    result = run_team(config, tmp_path)
    assert result.status == "partial" and result.partial and result.final_answer == "Canberra"


def test_the_model_call_budget_ends_the_run_with_the_best_answer(tmp_path: Path) -> None:
    config = team_config(
        scripted("a", ANSWER, [step(new_answer="again")], [step(new_answer="and again")]),
        orchestrator={"budget": {"max_model_calls": 2}},
    )
    result = run_team(config, tmp_path)
    assert result.status == "budget" and result.final_answer == "again"
    assert result.usage["model_calls"] == 2
    trace = records(result)
    denied = [r for r in trace if r["type"] == "CallPermit" and not r["payload"]["granted"]]
    assert len(denied) == 1 and "budget of 2" in denied[0]["payload"]["reason"]
    assert_trace_invariants(trace)


def test_the_token_budget_is_checked_before_each_call(tmp_path: Path) -> None:
    config = team_config(
        scripted("a", ANSWER, [step(new_answer="again")], usage_per_call=600),
        orchestrator={"budget": {"max_tokens": 1000}},
    )
    result = run_team(config, tmp_path)
    assert result.status == "budget" and result.usage["model_calls"] == 2
    assert "token budget" in result.reason


def test_a_provider_error_event_fails_the_incarnation_and_is_traced(tmp_path: Path) -> None:
    config = team_config(
        scripted("a", [step(fault="error_event", incarnations=[1]), *ANSWER], VOTE_1),
    )
    result = run_team(config, tmp_path)
    assert result.status == "completed"
    trace = records(result)
    failed = of_type(trace, "ChildFailed")
    assert "scripted provider error" in failed[0]["payload"]["error"]
    errors = [r for r in of_type(trace, "ModelCallFinished") if r["payload"]["error"]]
    assert len(errors) == 1


class LosingRuntime(PykkaRuntime):
    """Pykka, except that one incarnation is lost the way a cluster loses an actor on a dead node:
    the cause is known first, then the ref is stopped, then (``tell_down``) a ``Down`` goes to its
    watcher. Without the ``Down`` the supervisor can only see the stopped ref on a ``Tick``, which is
    the order a ``Tick`` ahead of the ``Down`` in its mailbox gives on Ray."""

    def __init__(self, lose: tuple[str, int], *, tell_down: bool) -> None:
        self.lose, self.tell_down = lose, tell_down
        self.lost: dict[int, tuple[DownReason, str]] = {}
        self.ctx: RunContext | None = None
        self.threads: list[threading.Thread] = []

    def spawn(self, ctx: RunContext, cls: type[TracedActor[Any]], args: tuple[Any, ...], *, name: str,
              incarnation: int, beside: str | None = None) -> pykka.ActorRef[Any]:
        self.ctx = ctx
        return super().spawn(ctx, cls, args, name=name, incarnation=incarnation, beside=beside)

    def watch(self, ref: Any, watcher: Peer) -> None:
        incarnation = ref.proxy().incarnation.get()
        if (ref.proxy().name.get(), incarnation) == self.lose:
            thread = threading.Thread(target=self._lose, args=(ref, watcher, incarnation))
            self.threads.append(thread)
            thread.start()

    def _lose(self, ref: pykka.ActorRef[Any], watcher: Peer, incarnation: int) -> None:
        self.lost[id(ref)] = ("node_lost", "node n1 left the cluster")
        ref.stop()
        if self.tell_down:
            assert self.ctx is not None
            self.ctx.tell(watcher, Down(run_id=self.ctx.run_id, sender=RUNTIME,
                                        name=self.lose[0], incarnation=incarnation, reason="node_lost",
                                        detail="node n1 left the cluster"))

    def down_cause(self, ref: Any) -> tuple[DownReason, str] | None:
        return self.lost.get(id(ref))


@pytest.mark.parametrize("tell_down", [False, True], ids=["tick-sees-it-first", "down-told-too"])
def test_an_agent_lost_by_the_runtime_fails_with_the_cause_even_when_a_tick_sees_it_first(
        tmp_path: Path, tell_down: bool) -> None:
    runtime = LosingRuntime(("slow", 1), tell_down=tell_down)
    config = team_config(*quick_and_slow())
    result = Team(config, "What is 2+2?", log_dir=tmp_path / "run", tick_interval_s=0.02, runtime=runtime).run()
    for thread in runtime.threads:
        thread.join(timeout=10)

    # What the user sees: the lost agent's next incarnation answers, the run completes.
    assert result.status == "completed" and result.final_answer == "2+2=4, shown"
    trace = records(result)
    assert_trace_invariants(trace)
    # The trace: one failure of that incarnation, with the runtime's cause, whichever came first.
    failures = [r["payload"] for r in of_type(trace, "ChildFailed")]
    assert [(f["name"], f["incarnation"], f["where"], f["error"]) for f in failures] == [
        ("slow", 1, "down", "node_lost: node n1 left the cluster")]
    assert [(r["payload"]["name"], r["payload"]["incarnation"]) for r in of_type(trace, "AgentRestarting")] == [
        ("slow", 1)]
    assert len(of_type(trace, "Down")) == (1 if tell_down else 0)
    assert not any(t.is_alive() for t in runtime.threads)
