"""status.json is kept up to date as records arrive (issue 51): a write costs what the status holds.

Every write of a run's status is compared with the whole status computed afresh, after every record
of real runs (tools, a correction, a failure and restart, workspaces, revotes, a resumed trace), so
an agent whose change was not counted shows up as a difference. The structural tests pin the cost:
rendering reads no list that grows with the run, and one record re-encodes one agent's part.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import records, run_team, scripted, step, team_config

from massgen.logs import LogProjection, read_trace
from massgen.logs.status_text import StatusText, status_dict, status_text
from massgen.messages import ToolCallRequested, ToolCallResult, message_class
from massgen.messages.trace import sender_name

FIXTURE = Path(__file__).parent / "fixtures" / "trace_format_1" / "scripted_three_agents"


def busy_team() -> list[dict[str, Any]]:
    """Tool calls (two tools, an error), a correction, an agent that fails once and restarts, and votes
    invalidated by that agent's second answer (then cast again)."""
    everyone = ["agent1", "agent2", "agent3"]
    return [
        scripted("a", [step(tool="write_file", args={"path": "n.txt", "content": "4"})],
                 [step(tool="read_file", args={"path": "missing.txt"})], [step(text="thinking")],
                 [step(new_answer="4")], [step(when_answers=everyone), step(vote="agent2", reason="why")],
                 on_exhausted="vote_first"),
        scripted("b", [step(new_answer="2+2=4")], [step(when_answers=everyone), step(vote="agent2", reason="mine")],
                 on_exhausted="vote_first"),
        scripted("c", [step(fault="raise", incarnations=[1]), step(new_answer="four")],
                 [step(when_answers=everyone), step(delay=0.5), step(new_answer="four: 2 and 2 make 4")],
                 on_exhausted="vote_first"),
    ]


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> list[list[dict[str, Any]]]:
    tmp = tmp_path_factory.mktemp("status")
    busy = run_team(team_config(*busy_team(), orchestrator={"workspaces": True, "restart": {
        "max_restarts": 2, "backoff_base_seconds": 0.02, "backoff_max_seconds": 0.1}}), tmp / "busy")
    assert busy.status == "completed", busy.reason
    return [records(busy), read_trace(FIXTURE)]


def whole(projection: LogProjection) -> str:
    return json.dumps(status_dict(projection), indent=2, ensure_ascii=False) + "\n"


def test_every_write_equals_the_status_computed_afresh(traces: list[list[dict[str, Any]]]) -> None:
    for trace in traces:
        projection, live = LogProjection(), StatusText()
        for record in trace:
            projection.apply(record)
            assert live.render(projection) == whole(projection) == status_text(projection), record


def test_the_busy_run_fills_what_the_sums_keep(traces: list[list[dict[str, Any]]]) -> None:
    projection = LogProjection()
    for record in traces[0]:
        projection.apply(record)
    status = json.loads(status_text(projection))
    a = status["agents"]["a"]
    assert a["tool_metrics"]["total_calls"] == 2 and a["tool_metrics"]["total_failures"] == 1
    assert status["tools"]["total_calls"] == 2 and a["reliability"]["total_enforcement_retries"] == 1
    assert status["agents"]["c"]["times_restarted"] >= 1
    assert any(record["type"] == "InvalidateVotes" for record in traces[0][:-1])
    assert status["rounds"]["total_rounds"] == sum(len(v["round_history"]) for v in status["agents"].values())


def scanned_tool_calls(events: list[dict[str, Any]], agent: str | None) -> dict[str, tuple[int, int, int]]:
    """The timeline scanned whole, as status writes did before issue 51: tool -> (calls, successes, failures)."""
    calls: dict[str, list[int]] = {}
    names: dict[str, str] = {}
    for event in events:
        kind = message_class(event)
        if kind not in (ToolCallRequested, ToolCallResult) or agent not in (None, sender_name(str(event["from"]))):
            continue
        if kind is ToolCallRequested:
            names[str(event["call_id"])] = str(event["name"])
            calls.setdefault(str(event["name"]), [0, 0, 0])[0] += 1
        else:
            calls[names.pop(str(event["call_id"]))][2 if event.get("is_error") else 1] += 1
    return {name: (c[0], c[1], c[2]) for name, c in calls.items()}


def test_tool_metrics_from_the_sums_equal_a_scan_of_the_timeline(traces: list[list[dict[str, Any]]]) -> None:
    projection = LogProjection()
    for record in traces[0]:
        projection.apply(record)
    status = status_dict(projection)
    for agent, metrics in [(None, status["tools"])] + [(a, v["tool_metrics"]) for a, v in status["agents"].items()]:
        assert {name: (s["call_count"], s["success_count"], s["failure_count"])
                for name, s in metrics["by_tool"].items()} == scanned_tool_calls(projection.events, agent)


class Watched(list[dict[str, Any]]):
    """A list that counts how often it is read whole."""

    reads = 0

    def __iter__(self) -> Any:
        Watched.reads += 1
        return super().__iter__()

    def __reversed__(self) -> Any:
        Watched.reads += 1
        return super().__reversed__()


def test_a_status_write_reads_nothing_that_grows_with_the_run(traces: list[list[dict[str, Any]]]) -> None:
    projection = LogProjection()
    projection.events, projection.calls, projection.votes = Watched(), Watched(), Watched()
    text = StatusText()
    for record in traces[0]:
        projection.apply(record)
        Watched.reads = 0
        text.render(projection)
        assert Watched.reads == 0, f"a status write read the timeline, the calls or every vote after {record}"


def test_one_record_re_encodes_only_the_agent_it_is_about(traces: list[list[dict[str, Any]]]) -> None:
    trace = traces[0]
    projection, text = LogProjection(), StatusText()
    for record in trace:
        before = text.encoded
        projection.apply(record)
        text.render(projection)
        everyone = record["type"] in ("RunStarted", "RunFinished", "RunResumed", "InvalidateVotes")
        assert text.encoded - before <= (len(projection.agents) if everyone else 1), record
    # a write with nothing new encodes nothing
    before = text.encoded
    text.render(projection)
    assert text.encoded == before
