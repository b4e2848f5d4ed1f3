"""``massgen --resume DIR`` continues a killed run: same answer, and no finished model call is made again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import IO, Any

import pytest
import yaml
from support import FACTOR, of_type

from massgen.actors.record.resume import resume_point
from massgen.actors.run.team import Team
from massgen.configs import load_config, validate_data
from massgen.configs.loader import EXAMPLES_DIR
from massgen.logs import read_trace

QUESTION = "Which is larger, 9.11 or 9.9?"


def massgen(*args: str, tmp_path: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs")}
    return subprocess.run([sys.executable, "-m", "massgen.cli.main", *args], capture_output=True, text=True,
                          env=env, timeout=timeout * FACTOR, cwd=tmp_path)


def fields(output: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in output.splitlines() if ": " in line)


def slowed_example(tmp_path: Path, factor: float = 8.0) -> Path:
    """The shipped scripted team with every delay multiplied: time to be killed mid-call.

    Each kill point below is followed by a delay (0.8 s or more), so the kill lands before the next step.
    """
    data = yaml.safe_load((EXAMPLES_DIR / "basic" / "scripted_three_agents.yaml").read_text())
    for agent in data["agents"]:
        for call in agent["backend"]["script"]:
            for step in call:
                if "delay" in step:
                    step["delay"] *= factor
    path = tmp_path / "slowed.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def real_calls(trace: list[dict[str, Any]]) -> Counter[str]:
    """Model calls made (not replayed from an earlier trace), per agent."""
    return Counter(r["sender"].rpartition("#")[0] for r in trace
                   if r["type"] == "ModelReplyRecorded" and r["payload"]["replayed_from"] is None)


def attempt_dir_line(stdout: IO[str]) -> str:
    """The ATTEMPT_DIR of a starting ``--automation`` run (after LOG_DIR, the run's root, and STATUS)."""
    start = dict(stdout.readline().split(": ", 1) for _ in range(3))
    return start["ATTEMPT_DIR"].strip()


def kill_when(config: Path, tmp_path: Path, record_type: str, nth: int) -> Path:
    """Start a real run and SIGKILL it once the nth record of ``record_type`` is on disk."""
    env = {**os.environ, "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs")}
    proc = subprocess.Popen([sys.executable, "-m", "massgen.cli.main", "--automation", "--config", str(config),
                             QUESTION], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=tmp_path)
    assert proc.stdout is not None
    log_dir = tmp_path / attempt_dir_line(proc.stdout)
    trace = log_dir / "trace.jsonl"
    deadline = time.monotonic() + 30 * FACTOR
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            text = trace.read_text(errors="replace") if trace.exists() else ""
            if text.count(f'"type": "{record_type}"') >= nth:
                break
            time.sleep(0.01)
        assert proc.poll() is None, f"the run ended before {nth} x {record_type}"
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        proc.stdout.close()
        assert proc.stderr is not None
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    assert not any(r["type"] == "RunFinished" for r in read_trace(log_dir))
    return log_dir


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Counter[str]]:
    tmp_path = tmp_path_factory.mktemp("whole")
    config = slowed_example(tmp_path)
    done = massgen("--automation", "--config", str(config), QUESTION, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    log_dir = tmp_path / fields(done.stdout)["ATTEMPT_DIR"]
    answer = (tmp_path / fields(done.stdout)["ANSWER_FILE"]).read_text()
    return config, answer, real_calls(read_trace(log_dir))


@pytest.mark.parametrize(("record_type", "nth"), [
    ("ModelRequestSent", 1),  # every agent mid-call, nothing finished
    ("AnswerAccepted", 1),  # agent_b answered; agent_a and agent_c mid-call
    ("AnswerAccepted", 2),  # two answers, agent_c still on its first answer
    ("RecordVote", 2),  # agent_b and agent_a voted, agent_c still looking
    ("RecordVote", 1),  # agent_b voted; the others mid-call
])
def test_a_killed_run_resumes_to_the_same_answer_without_repeating_a_finished_call(
    record_type: str, nth: int, uninterrupted: tuple[Path, str, Counter[str]], tmp_path: Path
) -> None:
    config, expected_answer, expected_calls = uninterrupted
    shutil_config = tmp_path / "elsewhere.yaml"  # --resume needs no config file: the trace has it all
    shutil_config.write_text(config.read_text())
    old_dir = kill_when(shutil_config, tmp_path, record_type, nth)
    shutil_config.unlink()
    before = real_calls(read_trace(old_dir))

    resumed = massgen("--automation", "--resume", str(old_dir), tmp_path=tmp_path)

    assert resumed.returncode == 0, resumed.stderr
    assert "Traceback" not in resumed.stderr
    out = fields(resumed.stdout)
    assert out["RUN_STATUS"] == "completed" and out["WINNER_LABEL"] == "agent2.1"
    assert (tmp_path / out["ANSWER_FILE"]).read_text() == expected_answer
    new_dir = tmp_path / out["ATTEMPT_DIR"]
    assert new_dir == old_dir.parent / "attempt_2"
    trace = read_trace(new_dir)
    started, resumed_state = trace[0], next(r for r in trace if r["type"] == "RunResumed")
    assert started["payload"]["resumed_from"] == str(old_dir) and started["payload"]["attempt"] == 2
    old_trace = read_trace(old_dir)
    assert resumed_state["payload"]["previous_run_id"] == old_trace[0]["run_id"]
    assert resumed_state["payload"]["model_calls"] == sum(before.values())
    # No finished call is made again: old calls + new calls == the calls of the uninterrupted run.
    assert before + real_calls(trace) == expected_calls
    finished = next(r for r in trace if r["type"] == "RunFinished")["payload"]
    assert finished["model_calls"] == sum(expected_calls.values())


def test_resume_after_a_torn_last_line_and_a_corrupt_middle_line_says_what_it_skipped(
    uninterrupted: tuple[Path, str, Counter[str]], tmp_path: Path
) -> None:
    config, expected_answer, _ = uninterrupted
    old_dir = kill_when(config, tmp_path, "RecordVote", 2)
    lines = (old_dir / "trace.jsonl").read_bytes().split(b"\n")
    answers = sum(1 for line in lines if b'"AnswerAccepted"' in line)
    middle = next(i for i, line in enumerate(lines) if b'"AgentChunk"' in line)
    lines[middle] = b"\x00\x00garbage"
    torn = '{"seq": 999, "type": "AgentChunk", "payload": {"text": "größer'.encode()[:-1]  # mid-character
    (old_dir / "trace.jsonl").write_bytes(b"\n".join(lines).rstrip(b"\n") + b"\n" + torn)

    resumed = massgen("--automation", "--resume", str(old_dir), tmp_path=tmp_path)

    assert resumed.returncode == 0, resumed.stderr
    assert "Traceback" not in resumed.stderr
    assert f"skipped line {middle + 1}: not JSON" in resumed.stderr
    assert f"ignored the last line, cut off mid-write ({len(torn)} bytes)" in resumed.stderr
    assert f"resuming with {answers} earlier answers" in resumed.stderr
    out = fields(resumed.stdout)
    assert (tmp_path / out["ANSWER_FILE"]).read_text() == expected_answer
    state = next(r for r in read_trace(tmp_path / out["ATTEMPT_DIR"]) if r["type"] == "RunResumed")["payload"]
    assert state["skipped"] == [f"line {middle + 1}: not JSON (Expecting value at column 1)"]


def test_a_resumed_run_can_itself_be_killed_and_resumed(
    uninterrupted: tuple[Path, str, Counter[str]], tmp_path: Path
) -> None:
    config, expected_answer, expected_calls = uninterrupted
    first = kill_when(config, tmp_path, "AnswerAccepted", 1)
    env = {**os.environ, "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs")}
    proc = subprocess.Popen([sys.executable, "-m", "massgen.cli.main", "--automation", "--resume", str(first)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env, cwd=tmp_path)
    assert proc.stdout is not None
    second = tmp_path / attempt_dir_line(proc.stdout)
    deadline = time.monotonic() + 30 * FACTOR
    while time.monotonic() < deadline and proc.poll() is None:
        if (second / "trace.jsonl").exists() and (second / "trace.jsonl").read_text().count('"RecordVote"') >= 3:
            break
        time.sleep(0.01)
    proc.kill()
    proc.wait(10)
    proc.stdout.close()

    resumed = massgen("--automation", "--resume", str(second), tmp_path=tmp_path)

    assert resumed.returncode == 0, resumed.stderr
    out = fields(resumed.stdout)
    assert (tmp_path / out["ATTEMPT_DIR"]).name == "attempt_3"
    assert (tmp_path / out["ANSWER_FILE"]).read_text() == expected_answer
    made = sum((real_calls(read_trace(d)) for d in (first, second, tmp_path / out["ATTEMPT_DIR"])), Counter())
    assert made == expected_calls


def test_resume_without_config_says_which_secrets_the_trace_redacted(tmp_path: Path) -> None:
    data = {"agents": [{"id": "a", "backend": {"type": "scripted", "api_key": "sk-secret",
                                                "script": [[{"new_answer": "4"}]]}}],
            "orchestrator": {"final_answer_strategy": "winner_reuse"}}
    config = tmp_path / "keyed.yaml"
    config.write_text(json.dumps(data))
    done = massgen("--automation", "--config", str(config), "q", tmp_path=tmp_path)
    log_dir = tmp_path / fields(done.stdout)["ATTEMPT_DIR"]
    assert "sk-secret" not in (log_dir / "trace.jsonl").read_text()

    refused = massgen("--resume", str(log_dir), tmp_path=tmp_path)
    assert refused.returncode == 1
    assert "secrets redacted (agents[0].backend.api_key)" in refused.stderr and "--config" in refused.stderr
    assert "Traceback" not in refused.stderr

    given = massgen("--automation", "--resume", str(log_dir), "--config", str(config), tmp_path=tmp_path)
    assert given.returncode == 0, given.stderr


def test_a_turn_cut_short_is_redone_with_its_finished_calls_answered_from_the_trace(tmp_path: Path) -> None:
    # The first call gets a correction (no workflow call); the second is killed while the model works.
    data = {"agents": [{"id": "solo", "backend": {"type": "scripted", "script": [
        [{"text": "Let me think about 2+2 first."}],
        [{"delay": 3.0}, {"new_answer": "4"}],
    ]}}], "timeout_settings": {"orchestrator_timeout_seconds": 60}}
    config = tmp_path / "corrected.yaml"
    config.write_text(json.dumps(data))
    whole = massgen("--automation", "--config", str(config), QUESTION, tmp_path=tmp_path)
    assert whole.returncode == 0, whole.stderr
    expected = real_calls(read_trace(tmp_path / fields(whole.stdout)["ATTEMPT_DIR"]))

    old_dir = kill_when(config, tmp_path, "TurnCorrection", 1)
    resumed = massgen("--automation", "--resume", str(old_dir), tmp_path=tmp_path)

    assert resumed.returncode == 0, resumed.stderr
    assert "1 agents redoing their turn from recorded calls" in resumed.stderr
    trace = read_trace(tmp_path / fields(resumed.stdout)["ATTEMPT_DIR"])
    replays = [r for r in trace if r["type"] == "ModelReplyRecorded" and r["payload"]["replayed_from"]]
    old = {r["seq"]: r for r in read_trace(old_dir)}
    assert len(replays) == 1 and old[replays[0]["payload"]["replayed_from"]]["payload"]["text"] == \
        "Let me think about 2+2 first."
    assert real_calls(read_trace(old_dir)) + real_calls(trace) == expected
    assert (tmp_path / fields(resumed.stdout)["ANSWER_FILE"]).read_text() == "4\n"
    finished = next(r for r in trace if r["type"] == "RunFinished")["payload"]
    assert finished["model_calls"] == sum(expected.values())


@pytest.mark.parametrize("example", ["basic/scripted_three_agents", "faults/crash_and_recover"])
def test_resuming_from_any_point_of_a_trace_gives_the_same_answer_and_the_same_calls(
    example: str, tmp_path: Path
) -> None:
    """The trace is all a killed run leaves, flushed line by line: cutting a finished run's trace
    after record N is what a SIGKILL right after N leaves. Resume from every such point, in-process.
    The second example crashes on start and mid-stream: incarnations and restarts carry over."""
    config, _ = load_config(f"@examples/{example}")
    whole = Team(config, QUESTION, log_dir=tmp_path / "whole", tick_interval_s=0.02).run()
    assert whole.status == "completed"
    lines = (whole.log_dir / "trace.jsonl").read_text().splitlines(keepends=True)
    trace = read_trace(whole.log_dir)
    expected = real_calls(trace)
    points = range(1, len(trace) + 1)  # after every record, the last (RunFinished) included
    replayed = restarts = 0
    for cut in points:
        old_dir = tmp_path / f"cut_{cut}" / "attempt_1"
        old_dir.mkdir(parents=True)
        (old_dir / "trace.jsonl").write_text("".join(lines[:cut]))
        point = resume_point(old_dir)
        result = Team(validate_data(point.config, "trace"), point.question, resume=point,
                      tick_interval_s=0.02).run()
        assert (result.status, result.final_answer) == (whole.status, whole.final_answer), cut
        new = read_trace(result.log_dir)
        assert real_calls(read_trace(old_dir)) + real_calls(new) == expected, cut
        replayed += sum(1 for r in new if r["type"] == "ModelReplyRecorded" and r["payload"]["replayed_from"])
        old_restarts = len(of_type(read_trace(old_dir), "AgentRestarting"))
        assert old_restarts + len(of_type(new, "AgentRestarting")) == len(of_type(trace, "AgentRestarting")), cut
        restarts += old_restarts
        status = json.loads((result.log_dir / "status.json").read_text())
        assert sum(a["restarts"] for a in status["agents"].values()) == len(of_type(trace, "AgentRestarting")), cut
        assert status["usage"]["model_calls"] == sum(expected.values()), cut
    assert replayed > 0  # some cuts fell between a finished call and what the supervisor made of it
    assert restarts > 0 or example.startswith("basic")
