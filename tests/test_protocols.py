"""Each actor's inbox is a closed protocol: what lies outside it becomes a traced dead letter.

A real scripted team with a real MCP server, so all five kinds of actor are alive at once.
As the first turn starts, every actor is sent things it does not accept; the run must go
on as if nothing happened, and the trace must name each refused message: who refused it,
what it was, and a short repr. Behaviour after the refusal proves the actor is still alive.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pykka
import pytest
from mcp_support import stdio
from support import assert_trace_invariants, of_type, records, scripted, step, team_config

from massgen.actors.agent.actor import AgentActor
from massgen.actors.coordination.judge import Judge
from massgen.actors.mcp.server import McpServerActor
from massgen.actors.record.trace_writer import TraceWriter
from massgen.actors.run.team import Team
from massgen.actors.supervisor.actor import Supervisor
from massgen.logs import LogProjection, read_trace
from massgen.messages import (
    AnswerView,
    CancelRun,
    KillAgent,
    McpToolsListed,
    Sender,
    StartTurn,
    Tick,
)
from massgen.messages.protocols import (
    AgentInbox,
    JudgeInbox,
    McpServerInbox,
    SupervisorInbox,
    TraceWriterInbox,
    members,
)
from massgen.messages.trace_writer_inbox import Flush


def _alive(cls: type[pykka.Actor]) -> list[pykka.ActorRef[Any]]:
    return [ref for ref in pykka.ActorRegistry.get_by_class(cls) if ref.is_alive()]


def test_every_actor_records_what_lies_outside_its_protocol_and_keeps_working(tmp_path: Path) -> None:
    config = team_config(
        scripted("a", [step(delay=0.3), step(tool="mcp__weather__forecast", args={"city": "Paris"})],
                 [step(new_answer="Tomorrow: {last_tool_result}")], [step(vote="agent1", reason="it checked")],
                 mcp_servers=[stdio()]),
        scripted("b", [step(delay=0.3), step(new_answer="Rain")], [step(vote="agent1", reason="it checked")]),
        orchestrator={"final_answer_strategy": "winner_reuse"},
        # Generous: "a"'s first call waits for the MCP server to start, slow on a loaded machine.
        run_timeout=120.0, turn_timeout=60.0, straggler_grace=60.0,
    )
    sent = threading.Event()

    def junk(record: dict[str, Any], projection: LogProjection) -> None:
        """On the first TurnStarted every actor exists: send each what it does not accept."""
        if record["type"] != "TurnStarted" or sent.is_set():
            return
        sent.set()
        [supervisor], [judge], [server], [writer] = (_alive(c) for c in (Supervisor, Judge, McpServerActor,
                                                                          TraceWriter))
        supervisor.tell(StartTurn(turn_id=99, task="not yours", view=AnswerView(), own_label="agent9"))
        supervisor.tell("not a message at all")
        supervisor.tell(McpToolsListed(sender=Sender(name="mcp:nobody:x", incarnation=1), agent="nobody",
                                       server="x", tools=()))
        supervisor.tell(KillAgent(name="nobody"))
        for agent in _alive(AgentActor):
            agent.tell(Tick(now=0.0))
        judge.tell(CancelRun(reason="a judge cannot cancel a run"))
        server.tell(Tick(now=0.0))
        writer.tell(("record", "event", "", Tick(now=0.0), {}))  # the writer's old tuple inbox

    result = Team(config, "Weather in Paris tomorrow?", log_dir=tmp_path / "run", subscribers=[junk],
                  tick_interval_s=0.02).run()

    assert sent.is_set()
    assert result.status == "completed" and result.final_answer == "Tomorrow: Sunny in Paris, 21 C"
    trace = records(result)
    assert_trace_invariants(trace)
    assert not of_type(trace, "ChildFailed", "AgentRestarting", "McpServerFailed", "McpServerRestarting")
    letters = {(r["payload"]["to"], r["payload"]["original_type"]): r for r in of_type(trace, "DeadLetter")}
    assert set(letters) == {
        ("supervisor#1", "StartTurn"), ("supervisor#1", "str"), ("supervisor#1", "McpToolsListed"),
        ("supervisor#1", "KillAgent"), ("a#1", "Tick"), ("b#1", "Tick"), ("judge#1", "CancelRun"),
        ("mcp:a:weather#1", "Tick"), ("trace_writer#1", "tuple"),
    }
    assert letters["supervisor#1", "str"]["payload"]["summary"] == "'not a message at all'"
    assert "outside the protocol of supervisor" in letters["supervisor#1", "str"]["payload"]["why"]
    assert letters["supervisor#1", "McpToolsListed"]["payload"]["original_sender"] == "mcp:nobody:x#1"
    assert "no MCP server" in letters["supervisor#1", "McpToolsListed"]["payload"]["why"]
    assert "no agent named 'nobody'" in letters["supervisor#1", "KillAgent"]["payload"]["why"]
    assert "CancelRun" in letters["judge#1", "CancelRun"]["payload"]["summary"]

    # Each actor went on working after it refused: something it sent (or wrote) comes later.
    def later(letter: dict[str, Any], sender: str, kind: str) -> bool:
        return any(r["seq"] > letter["seq"] and r["sender"] == sender and r["type"] == kind for r in trace)

    assert later(letters["supervisor#1", "KillAgent"], "supervisor#1", "RunFinished")
    assert later(letters["a#1", "Tick"], "a#1", "AnswerProposed")
    assert later(letters["b#1", "Tick"], "b#1", "AnswerProposed")
    assert later(letters["judge#1", "CancelRun"], "judge#1", "TallyUpdated")
    assert later(letters["mcp:a:weather#1", "Tick"], "mcp:a:weather#1", "McpToolResult")
    assert later(letters["trace_writer#1", "tuple"], "supervisor#1", "RunFinished")


@pytest.mark.parametrize(("protocol", "expected"), [
    (SupervisorInbox, 32), (AgentInbox, 9), (JudgeInbox, 4), (McpServerInbox, 2), (TraceWriterInbox, 3),
])
def test_each_protocol_is_a_closed_union_of_distinct_message_types(protocol: Any, expected: int) -> None:
    classes = members(protocol)
    assert len(classes) == expected and len(set(classes)) == expected


def test_the_trace_writer_answers_a_flush_with_the_last_seq_it_wrote(tmp_path: Path) -> None:
    writer = TraceWriter.start(tmp_path)
    try:
        writer.tell("flush")  # the old string form: outside the protocol, written as a dead letter
        assert writer.ask(Flush(), timeout=5) == 1
    finally:
        writer.stop()
    [letter] = of_type(read_trace(tmp_path), "DeadLetter")
    assert letter["payload"]["original_type"] == "str" and letter["payload"]["summary"] == "'flush'"
