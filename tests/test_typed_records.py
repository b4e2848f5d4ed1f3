"""Typed records: one parse of a trace line into its message, shared by every reader.

A live subscriber gets the writer's own message (nothing is parsed again); a record read
back from disk is parsed once, however many readers look at it; a reader that shows a
subset of the types never parses the others; and a record whose payload is not the
message its type names is a clear error naming the record and the field.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import scripted, step, team_config

from massgen import LogProjection, TraceRecord, messages
from massgen.actors.record.resume import resume_point
from massgen.actors.run.team import Team
from massgen.logs.reading import read_trace_file
from massgen.messages.trace import RecordError, RecordSubset


def _config():  # type: ignore[no-untyped-def]
    return team_config(
        scripted("a", [step(new_answer="The answer is 4.")], [step(vote="agent1", reason="mine")]),
        scripted("b", [step(new_answer="4")], [step(vote="agent1", reason="same")]),
        orchestrator={"final_answer_strategy": "winner_reuse"},
    )


def test_every_live_subscriber_gets_the_message_the_writer_wrote_and_the_written_dict(tmp_path: Path) -> None:
    seen: dict[str, list[tuple[TraceRecord, messages.Message]]] = {"first": [], "second": []}

    def first(record: TraceRecord, _projection: LogProjection) -> None:
        seen["first"].append((record, record.message()))

    def second(record: TraceRecord, _projection: LogProjection) -> None:
        seen["second"].append((record, record.message()))

    result = Team(_config(), "What is 2+2?", log_dir=tmp_path / "run", subscribers=[first, second],
                  tick_interval_s=0.02).run()
    assert result.status == "completed"
    assert len(seen["first"]) == len(seen["second"]) > 0
    for (record, message), (other, again) in zip(seen["first"], seen["second"], strict=True):
        assert record is other and message is again  # one record, one message: no reader parsed it
        assert type(message).__name__ == record.type == record["type"]
        assert dict(record) == record.as_dict()  # subscribers written against the line's dict still read it
    on_disk = [json.loads(line) for line in (tmp_path / "run" / "trace.jsonl").read_text().splitlines()]
    assert [r["seq"] for r in on_disk] == [record.seq for record, _ in seen["first"]]


def test_a_record_read_back_is_parsed_once_and_a_subset_parses_only_its_own_types(tmp_path: Path) -> None:
    Team(_config(), "What is 2+2?", log_dir=tmp_path / "run", tick_interval_s=0.02).run()
    records = [TraceRecord.of(raw) for raw in read_trace_file(tmp_path / "run").records]
    answers = RecordSubset[messages.AnswerAccepted](messages.AnswerAccepted)
    shown = [answers.message(record) for record in records]
    assert sorted(m.label for m in shown if m is not None) == ["agent1.1", "agent2.1"]
    parsed = [record for record in records if record._message is not None]
    assert {record.type for record in parsed} == {"AnswerAccepted"}  # the others were never parsed
    answer = next(record for record in parsed)
    assert answer.message() is answer.message()


def _tampered(tmp_path: Path, type_name: str, field: str) -> Path:
    Team(_config(), "What is 2+2?", log_dir=tmp_path / "run", tick_interval_s=0.02).run()
    trace = tmp_path / "run" / "trace.jsonl"
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    target = next(r for r in lines if r["type"] == type_name)
    del target["payload"][field]
    trace.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return trace


def test_a_payload_that_is_not_its_message_is_an_error_naming_the_record_and_the_field(tmp_path: Path) -> None:
    trace = _tampered(tmp_path, "AnswerAccepted", "content")
    records = [TraceRecord.of(raw) for raw in read_trace_file(trace).records]
    bad = next(r for r in records if r.type == "AnswerAccepted")
    votes = RecordSubset[messages.RecordVote](messages.RecordVote)
    assert votes.message(bad) is None  # a reader that does not show answers never looks inside one
    with pytest.raises(RecordError, match=rf"trace record {bad.seq} \(AnswerAccepted\): content: Field required"):
        bad.message()


def test_resuming_a_trace_with_a_broken_record_skips_it_and_names_it(tmp_path: Path) -> None:
    trace = _tampered(tmp_path, "RecordVote", "target_label")
    point = resume_point(trace.parent)
    assert [why for why in point.state.skipped if "(RecordVote): target_label: Field required" in why]
    assert [note for note in point.notes if note.startswith("skipped trace record")]


def test_a_subscriber_sees_a_record_only_once_its_line_is_in_the_trace_and_the_end_before_the_derived_files(
        tmp_path: Path) -> None:
    """Written before shown (a crash loses nothing a screen showed); the screen need not wait for logs/*."""
    trace = tmp_path / "run" / "trace.jsonl"
    written_when_seen: list[tuple[int, list[int]]] = []
    metadata_when_finished: list[bool] = []

    def check(record: TraceRecord, _projection: LogProjection) -> None:
        written_when_seen.append((record.seq, [json.loads(line)["seq"] for line in trace.read_text().splitlines()]))
        if record.type == "RunFinished":
            metadata_when_finished.append((tmp_path / "run" / "execution_metadata.yaml").exists())

    result = Team(_config(), "What is 2+2?", log_dir=tmp_path / "run", subscribers=[check],
                  tick_interval_s=0.02).run()
    assert result.status == "completed"
    assert [seq for seq, _ in written_when_seen] == list(range(1, len(written_when_seen) + 1))  # in order, all
    for seq, on_disk in written_when_seen:
        assert seq in on_disk
    assert metadata_when_finished == [False]  # RunFinished shown before the derived files were written
    assert (tmp_path / "run" / "execution_metadata.yaml").exists()  # and they are, once run() returns
    assert (tmp_path / "run" / "status.json").exists()
