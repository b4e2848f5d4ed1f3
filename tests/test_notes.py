"""Notes from the person watching: delivered to each addressed agent once, at its next safe point."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from support import FACTOR, assert_trace_invariants, of_type, scripted, step, team_config

from massgen.actors.run.team import Team
from massgen.logs import read_trace


def test_a_note_reaches_a_working_agent_before_its_next_model_call(tmp_path: Path) -> None:
    # thinker's first call ends without a workflow call, so its turn makes a second call: the safe point.
    config = team_config(
        scripted("thinker", [step(text="Let me think. "), step(delay=0.5)], [step(new_answer="4")],
                 on_exhausted="vote_first"),
        scripted("quick", [step(new_answer="four")], on_exhausted="vote_first"),
    )
    thinking = threading.Event()

    def watch(record: dict[str, Any], _projection: object) -> None:
        if record["type"] == "AgentChunk" and record["sender"].startswith("thinker#"):
            thinking.set()

    team = Team(config, "What is 2+2?", log_dir=tmp_path / "run", subscribers=[watch], tick_interval_s=0.02)
    team.start()
    assert thinking.wait(10 * FACTOR)
    note_id = team.send_note("Answer with a digit, please.", to="thinker")
    result = team.wait()

    assert result.status == "completed" and note_id is not None
    trace = read_trace(result.log_dir)
    assert_trace_invariants(trace)
    sent = of_type(trace, "SendNote")
    assert [r["payload"] for r in sent] == [{"text": "Answer with a digit, please.", "to": "thinker"}]
    assert sent[0]["msg_id"] == note_id
    delivered = of_type(trace, "NoteDelivered")
    assert [(r["sender"], r["payload"]["note_id"]) for r in delivered] == [("thinker#1", note_id)]
    # Mid-turn: in the turn that was running, before that turn's second model call.
    turn_id = delivered[0]["payload"]["turn_id"]
    calls = [r for r in of_type(trace, "ModelCallStarted")
             if r["sender"] == "thinker#1" and r["payload"]["turn_id"] == turn_id]
    assert len(calls) == 2 and calls[0]["seq"] < delivered[0]["seq"] < calls[1]["seq"]
    assert calls[1]["payload"]["messages"] > calls[0]["payload"]["messages"] + 1  # correction and note


def test_a_note_to_all_is_delivered_once_to_each_agent_even_across_a_restart(tmp_path: Path) -> None:
    config = team_config(
        scripted("steady", [step(text="Working. "), step(delay=0.4), step(new_answer="4")],
                 on_exhausted="vote_first"),
        scripted("fragile", [step(text="Working too. "), step(delay=0.3), step(fault="raise", incarnations=[1]),
                             step(new_answer="four")], on_exhausted="vote_first"),
    )
    started = threading.Event()

    def watch(record: dict[str, Any], _projection: object) -> None:
        if record["type"] == "AgentChunk":
            started.set()

    team = Team(config, "What is 2+2?", log_dir=tmp_path / "run", subscribers=[watch], tick_interval_s=0.02)
    team.start()
    assert started.wait(10 * FACTOR)
    note_id = team.send_note("Keep it short.")
    result = team.wait()

    trace = read_trace(result.log_dir)
    assert_trace_invariants(trace)
    assert result.status == "completed"
    delivered = sorted(r["sender"].split("#")[0] for r in of_type(trace, "NoteDelivered")
                       if r["payload"]["note_id"] == note_id)
    assert delivered == ["fragile", "steady"]
    assert of_type(trace, "AgentRestarting"), "fragile failed once and was restarted"
