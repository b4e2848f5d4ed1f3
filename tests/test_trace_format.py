"""Trace format 2: answers are written once and views refer to them, so the trace grows linearly
with the team; a trace of format 1 (everything whole) still rebuilds and resumes."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from support import run_team, scripted, step, team_config

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root, for bench/

from bench.scale import team
from massgen.actors.record.resume import resume_point
from massgen.actors.run.team import Team
from massgen.configs import validate_data
from massgen.logs import read_trace, rebuild_from_trace
from massgen.logs.reading import read_trace_file
from massgen.messages.trace_refs import TRACE_FORMAT

FORMAT_1 = Path(__file__).parent / "fixtures" / "trace_format_1" / "scripted_three_agents"
QUESTION = "Which is larger, 9.11 or 9.9?"


def written(log_dir: Path) -> list[dict[str, object]]:
    """The records as they are on disk, references and all."""
    return [json.loads(line) for line in (log_dir / "trace.jsonl").read_text().splitlines()]


def three_agents(tmp_path: Path):  # type: ignore[no-untyped-def]
    config = team_config(
        scripted("a", [step(new_answer="The answer is 4.")], [step(vote="agent2", reason="same")]),
        scripted("b", [step(delay=0.05), step(new_answer="It is 4.")], [step(vote="agent2", reason="mine")]),
        scripted("c", [step(delay=0.1), step(new_answer="4")], [step(vote="agent2", reason="agreed")]),
        orchestrator={"final_answer_strategy": "winner_reuse"},
    )
    return run_team(config, tmp_path)


def test_a_view_names_answers_by_label_and_reads_back_whole(tmp_path: Path) -> None:
    result = three_agents(tmp_path)
    assert result.status == "completed"
    on_disk = written(result.log_dir)
    assert on_disk[0]["payload"]["trace_format"] == TRACE_FORMAT  # type: ignore[index]
    contents = {r["payload"]["label"]: r["payload"]["content"]  # type: ignore[index]
                for r in on_disk if r["type"] == "AnswerAccepted"}
    views = [r["payload"]["view"] for r in on_disk if r["type"] == "StartTurn"]  # type: ignore[index]
    # Labels (or a delta of labels against the view before), never the text again.
    shown = [a for view in views if isinstance(view["answers"], list) for a in view["answers"]]
    assert shown and all(isinstance(a, str) and a in contents for a in shown)
    # Each viewer sees the answers in its own order (issue 20), so a view is not a delta of the one
    # before; its labels are what keep it small.
    for text in (t for t in contents.values() if len(t) > 4):  # "4" is in every turn id
        assert sum(json.dumps(r).count(json.dumps(text)[1:-1]) for r in on_disk
                   if r["type"] in ("StartTurn", "InjectAnswers", "PresentFinal")) == 0

    read = read_trace(result.log_dir)  # whole again: every answer in view with its content
    for record in (r for r in read if r["type"] == "StartTurn"):
        for entry in record["payload"]["view"]["answers"]:
            assert entry == {"agent": entry["label"].rpartition(".")[0], "label": entry["label"],
                             "content": contents[entry["label"]]}
    assert "trace_format" not in read[0]["payload"]  # the format is the file's, not the run's


def test_rebuilding_a_trace_with_references_gives_the_live_files_byte_for_byte(tmp_path: Path) -> None:
    result = three_agents(tmp_path)
    rebuilt = rebuild_from_trace(result.log_dir, write=False)
    for relative, text in rebuilt.items():
        assert (result.log_dir / relative).read_text() == text, relative


def test_a_lost_answer_line_makes_the_views_that_refer_to_it_unreadable_and_says_so(tmp_path: Path) -> None:
    result = three_agents(tmp_path)
    lines = (result.log_dir / "trace.jsonl").read_bytes().split(b"\n")
    lost = next(i for i, line in enumerate(lines) if b'"AnswerAccepted"' in line)
    label = json.loads(lines[lost])["payload"]["label"]
    lines[lost] = b"\x00garbage"
    (result.log_dir / "trace.jsonl").write_bytes(b"\n".join(lines))

    read = read_trace_file(result.log_dir)

    assert read.skipped[0].startswith(f"line {lost + 1}: not UTF-8") or read.skipped[0].startswith(
        f"line {lost + 1}: not JSON")
    assert any(f"refers to answer {label}, whose AnswerAccepted could not be read" in s for s in read.skipped[1:])
    assert all(r["type"] != "StartTurn" or all(a["label"] != label for a in r["payload"]["view"]["answers"])
               for r in read.records)


def test_a_trace_of_format_1_rebuilds_to_the_files_it_was_written_with(tmp_path: Path) -> None:
    rebuilt = rebuild_from_trace(FORMAT_1, write=False)
    for relative, text in rebuilt.items():
        expected = (FORMAT_1 / relative).read_text()
        if relative == "coordination_events.json":  # since format 2 the timeline counts a new round's answers
            events = json.loads(expected)
            for event in events:
                if event["type"] == "InvalidateVotes":
                    event["answers"] = len(event["answers"])
            expected = json.dumps(events, indent=2, ensure_ascii=False) + "\n"
        if relative == "status.json":  # since issue 22 it also carries upstream's keys: old ones unchanged
            old = json.loads(expected)
            for agent in old["agents"].values():  # since issue 38 "status" is upstream's word, ours is "state"
                agent["state"] = agent.pop("status")
            assert _holds(json.loads(text), old), relative
            continue
        assert expected == text, relative


def _holds(new: object, old: object) -> bool:
    """Whether ``new`` has every key of ``old``, recursively, with the same values."""
    if isinstance(old, dict):
        return isinstance(new, dict) and all(k in new and _holds(new[k], v) for k, v in old.items())
    return new == old


def test_a_trace_of_format_1_resumes_from_every_point_to_the_same_answer(tmp_path: Path) -> None:
    lines = (FORMAT_1 / "trace.jsonl").read_text().splitlines(keepends=True)
    finished = json.loads(lines[-1])["payload"]
    assert "trace_format" not in json.loads(lines[0])["payload"]  # written before the format had a number
    for cut in range(1, len(lines) + 1):
        old_dir = tmp_path / f"cut_{cut}" / "attempt_1"
        old_dir.mkdir(parents=True)
        (old_dir / "trace.jsonl").write_text("".join(lines[:cut]))
        point = resume_point(old_dir)
        assert not point.notes, cut
        result = Team(validate_data(point.config, "trace"), point.question, resume=point,
                      tick_interval_s=0.02).run()
        assert (result.status, result.final_answer) == (finished["status"], finished["final_answer"]), cut
        assert written(result.log_dir)[0]["payload"]["trace_format"] == TRACE_FORMAT  # type: ignore[index]
    shutil.rmtree(tmp_path, ignore_errors=True)


def trace_bytes(agents: int, tmp_path: Path) -> int:
    result = Team(team(agents, None), "What is 2+2?", log_dir=tmp_path / f"run_{agents}").run()
    assert result.status == "completed", result.reason
    return (result.log_dir / "trace.jsonl").stat().st_size


@pytest.mark.slow
def test_the_trace_grows_linearly_with_the_team(tmp_path: Path) -> None:
    # Every agent answers, then every agent votes with all answers in view: N^2 answers shown.
    small, large = trace_bytes(32, tmp_path), trace_bytes(128, tmp_path)
    assert large / 128 < 1.5 * small / 32, (small, large)


def test_a_large_repetitive_message_is_encoded_in_linear_time_and_decodes_whole() -> None:
    """A question of 200,000 identical lines once stalled the trace writer in difflib for minutes;
    the common head and tail are cut first, so the delta here is one small edit near the end."""
    from massgen.messages.trace_refs import TraceDecoder, TraceEncoder

    question = "1 + 1\n" * 200_000
    first = {"messages": [{"role": "user", "content": question}], "tools": [], "vote_targets": []}
    second = {"messages": [{"role": "user", "content": question + "and 2 + 2?\n"}],
              "tools": [], "vote_targets": []}
    third = {"messages": [{"role": "user", "content": "x\n" * 150_000 + question[:-600_000]}],
             "tools": [], "vote_targets": []}
    encoder, decoder = TraceEncoder(), TraceDecoder()
    for seq, payload in enumerate((first, second, third), start=1):
        written_payload = encoder.encode(seq, "ModelRequestSent", payload)
        assert decoder.decode(seq, "ModelRequestSent", written_payload) == payload
        if seq == 2:
            assert "$delta" in written_payload["messages"][0]["content"]
            assert len(json.dumps(written_payload)) < 1_000
