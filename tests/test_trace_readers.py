"""What a trace reader is given, and what it does with a trace it cannot use.

Every reader of a trace (``read_trace``, ``read_trace_file``, ``rebuild_from_trace``, ``resume_point``) takes
the same paths: a run's ``log_<stamp>`` root (upstream's LOG_DIR) or a ``turn_N`` folder (then its newest
attempt), an attempt directory, or a ``trace.jsonl`` itself; anything else is an error naming the path once.
A trace with no run in it is never turned into an empty run written over a run's good files.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import massgen
from massgen.logs import TraceReadError, TraceWarning, read_trace, read_trace_file, rebuild_from_trace

EXAMPLE = "@examples/basic/scripted_three_agents"


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The attempt directory of one finished run, in the usual ``log_<stamp>/turn_1/attempt_1`` layout."""
    base = tmp_path_factory.mktemp("logs")
    team = massgen.new_team(EXAMPLE, "What is 2+2?", log_base=base)
    result = team.run()
    assert result.status == "completed"
    return result.log_dir


def _derived_files(log_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(log_dir)): p.read_bytes() for p in sorted(log_dir.rglob("*"))
            if p.is_file() and p.name != "trace.jsonl"}


def _copy_of(run: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "copy"
    for path in run.rglob("*"):
        if path.is_file():
            target = copy / path.relative_to(run)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    return copy


# -- a trace with no run in it ---------------------------------------------------------------------

DAMAGED = {
    "garbage": b"garbage\n",
    "empty": b"",
    "binary": bytes(range(256)) * 4,
    "cut inside its first record": b'{"seq": 1, "ts": 1.0, "kind": "event", "type": "RunSta',
}


@pytest.mark.parametrize("damage", DAMAGED)
def test_rebuilding_from_a_trace_with_no_run_in_it_refuses_and_leaves_the_files_as_they_were(
    finished_run: Path, tmp_path: Path, damage: str
) -> None:
    log_dir = _copy_of(finished_run, tmp_path)
    good = _derived_files(log_dir)
    (log_dir / "trace.jsonl").write_bytes(DAMAGED[damage])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the skipped lines are said as well; the refusal is what matters
        with pytest.raises(massgen.TraceError, match="no RunStarted record") as refused:
            rebuild_from_trace(log_dir)
        assert str(log_dir / "trace.jsonl") in str(refused.value)
        with pytest.raises(massgen.TraceError, match="no RunStarted record"):
            rebuild_from_trace(log_dir, write=False)  # nothing to show either: an empty run is not this run
    assert _derived_files(log_dir) == good  # status.json, vote.json, ... still the finished run's


def test_rebuilding_into_another_folder_from_a_trace_with_no_run_writes_nothing_there(
    finished_run: Path, tmp_path: Path
) -> None:
    log_dir = _copy_of(finished_run, tmp_path)
    (log_dir / "trace.jsonl").write_bytes(b"garbage\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(massgen.TraceError):
            rebuild_from_trace(log_dir, tmp_path / "out")
    assert not (tmp_path / "out").exists()


# -- one definition of the path a reader is given ----------------------------------------------------


def test_every_reader_takes_a_run_s_log_dir_its_turn_its_attempt_or_its_trace(finished_run: Path) -> None:
    attempt = finished_run
    turn, root = attempt.parent, attempt.parent.parent
    assert root.name.startswith("log_")  # upstream's LOG_DIR, as the automation lines print it
    expected_records = read_trace(attempt)
    expected_files = rebuild_from_trace(attempt, write=False)
    for given in (root, turn, attempt, attempt / "trace.jsonl", str(root)):
        assert read_trace(given) == expected_records, given
        assert read_trace_file(given).records == expected_records, given
        assert rebuild_from_trace(given, write=False) == expected_files, given
        assert massgen.resume_point(given).log_dir == attempt, given


def test_a_file_that_is_not_a_trace_is_refused_by_every_reader_naming_it(tmp_path: Path) -> None:
    config = tmp_path / "team.yaml"
    config.write_text("agents: []\n", encoding="utf-8")
    (tmp_path / "trace.jsonl").write_text("", encoding="utf-8")  # beside it: not what was named
    for read in (read_trace, read_trace_file, rebuild_from_trace):
        with pytest.raises(TraceReadError, match=f"^{config}: is a file, not a run's log directory"):
            read(config)
    with pytest.raises(massgen.ResumeError, match=f"^{config}: is a file, not a run's log directory"):
        massgen.resume_point(config)


def test_a_path_with_no_trace_is_named_once(tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent"
    for read in (read_trace, read_trace_file, rebuild_from_trace):
        with pytest.raises(TraceReadError) as refused:
            read(missing)
        message = str(refused.value)
        assert message.startswith(f"{missing}: ") and "trace.jsonl/trace.jsonl" not in message, message
        assert message.count(str(missing)) == 1, message
    empty = tmp_path / "empty"
    empty.mkdir()
    for read in (read_trace, read_trace_file, rebuild_from_trace):
        with pytest.raises(TraceReadError, match=f"^{empty}: no trace.jsonl here"):
            read(empty)
    with pytest.raises(massgen.ResumeError, match=f"^{empty}: no trace.jsonl here"):
        massgen.resume_point(empty)


# -- the trace's name, spelled once -----------------------------------------------------------------------


def trace_name_spelled_out(source: str) -> list[int]:
    """The lines of ``source`` with ``"trace.jsonl"`` as a string of its own (not inside a sentence)."""
    import ast

    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and node.value == "trace.jsonl"]


def test_the_trace_s_file_name_is_spelled_once_in_the_run_s_code() -> None:
    """``logs/layout.py: TRACE_FILE`` is the name; a module that spells it again can drift from it."""
    root = Path(massgen.__file__).resolve().parent.parent
    spelled = {str(path.relative_to(root)): lines
               for folder in ("actors", "logs", "massgen", "outcome", "messages")
               for path in sorted((root / folder).rglob("*.py"))
               if (lines := trace_name_spelled_out(path.read_text(encoding="utf-8")))}
    assert list(spelled) == ["logs/layout.py"], spelled


# -- records out of seq order, and a trace of a newer format ----------------------------------------

def test_a_repeated_or_misplaced_record_is_skipped_and_named_and_never_read_as_more_work(
    finished_run: Path, tmp_path: Path
) -> None:
    """The writer numbers a trace's records 1, 2, 3, ...: a record whose seq is not above the one before it
    was copied or moved there. A repeated answer read as a second one opened a new round on resume."""
    import json

    from massgen.actors.record.resume import resume_point

    lines = (finished_run / "trace.jsonl").read_text().splitlines(keepends=True)
    answer = next(i for i, line in enumerate(lines) if '"AnswerAccepted"' in line)
    cut = answer + 8  # a run killed a little after its first answer
    clean = tmp_path / "clean" / "attempt_1"
    clean.mkdir(parents=True)
    (clean / "trace.jsonl").write_text("".join(lines[:cut]))
    reset = json.loads(lines[answer + 2])
    stray = json.loads(lines[answer + 1])
    damaged = [*lines[:answer + 1], lines[answer],  # the answer's line twice
               json.dumps({**stray, "seq": 1_000_000}) + "\n",  # a seq from nowhere, before the rest
               *lines[answer + 1:answer + 2], json.dumps({**reset, "seq": 1}) + "\n",  # its seq reset
               *lines[answer + 3:cut]]
    dup = tmp_path / "dup" / "attempt_1"
    dup.mkdir(parents=True)
    (dup / "trace.jsonl").write_text("".join(damaged))

    with pytest.warns(TraceWarning) as said:
        records = read_trace(dup)

    message = str(said[0].message)
    seq = json.loads(lines[answer])["seq"]
    assert f"line {answer + 2}: seq {seq} out of order (the record kept before it has seq {seq})" in message
    assert f"line {answer + 3}: seq 1000000 out of order" in message
    assert f"line {answer + 5}: seq 1 out of order" in message
    kept = [r["seq"] for r in records]
    assert kept == [r["seq"] for r in read_trace(clean) if r["seq"] != reset["seq"]]
    answers = resume_point(dup).answers
    assert answers == resume_point(clean).answers and len(set(answers)) == len(answers)  # none read twice


def test_a_trace_of_a_newer_format_is_refused_with_that_reason_by_every_reader(
    finished_run: Path, tmp_path: Path
) -> None:
    import json

    from massgen.actors.record.resume import ResumeError, resume_point

    lines = (finished_run / "trace.jsonl").read_text().splitlines(keepends=True)
    first = json.loads(lines[0])
    first["payload"]["trace_format"] = 99
    newer = tmp_path / "newer" / "attempt_1"
    newer.mkdir(parents=True)
    (newer / "trace.jsonl").write_text(json.dumps(first) + "\n" + "".join(lines[1:]))
    reason = "trace format 99: this massgen reads formats 1 to 2"

    with pytest.raises(ResumeError, match=reason):
        resume_point(newer)
    with pytest.raises(TraceReadError, match=reason):
        rebuild_from_trace(newer)
    with pytest.raises(TraceReadError, match=reason):
        read_trace(newer)
    shown = massgen_cli("logs", "show", str(newer), cwd=tmp_path)
    assert shown.returncode == 1 and reason in shown.stderr and "run None" not in shown.stdout
    listed = massgen_cli("logs", "list", "--log-dir", str(tmp_path / "newer"), cwd=tmp_path)
    assert listed.returncode == 0 and "unreadable" in listed.stdout and reason in listed.stdout
    resumed = massgen_cli("--resume", str(newer), cwd=tmp_path)
    assert resumed.returncode == 1 and reason in resumed.stderr and "no RunStarted" not in resumed.stderr


def massgen_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "massgen.cli.main", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=60)
