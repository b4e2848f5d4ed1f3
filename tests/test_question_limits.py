"""The question: never blank, never past a limit the user can raise, and written to the logs once.

A 4 MiB request used to write 75 MB of logs in 3 s (the question in every ``StartTurn``,
``PresentFinal`` and model request), and a 50 MB question 900 MB. Now a question over
``$MASSGEN_MAX_QUESTION_BYTES`` (4 MiB) is refused before anything starts, on every surface,
and a large question is in ``trace.jsonl`` once: the records read back are the same.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from serve_process import start_server, write_configs
from support import of_type, records

import massgen
from massgen.actors.run.question import DEFAULT_MAX_BYTES, MAX_BYTES_ENV, QuestionError
from massgen.logs import read_trace_file, rebuild_from_trace

TEAM = "@examples/basic/scripted_three_agents"


def _massgen(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "massgen.cli.main", *args], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path,
                          env={**os.environ, "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs"), **(env or {})})


def test_a_50_mb_question_is_refused_naming_the_limit_and_how_to_raise_it(tmp_path: Path) -> None:
    question = "Summarise this. " + "x" * 50_000_000
    with pytest.raises(QuestionError) as caught:
        massgen.run_sync(question, TEAM, log_dir=tmp_path / "run")
    message = str(caught.value)
    assert "50,000,016 bytes" in message and f"{DEFAULT_MAX_BYTES:,} bytes" in message and MAX_BYTES_ENV in message
    assert isinstance(caught.value, massgen.ConfigError) and caught.value.limit == DEFAULT_MAX_BYTES
    assert not (tmp_path / "run" / "trace.jsonl").exists()  # refused before any log or actor


def test_the_command_line_refuses_an_oversized_question_with_exit_1(tmp_path: Path) -> None:
    done = _massgen(tmp_path, "--automation", "--config", TEAM, "y" * 2000, env={MAX_BYTES_ENV: "1000"})
    assert done.returncode == 1
    assert "the question is 2,000 bytes, over the limit of 1,000 bytes" in done.stderr
    assert f"set ${MAX_BYTES_ENV} to raise it" in done.stderr and "Traceback" not in done.stderr
    assert not list((tmp_path / "logs").glob("**/trace.jsonl"))


def test_raising_the_limit_lets_it_run(tmp_path: Path) -> None:
    done = _massgen(tmp_path, "--automation", "--config", TEAM, "y" * 2000, env={MAX_BYTES_ENV: "4000"})
    assert done.returncode == 0 and "STATUS: completed" in done.stdout


def test_a_bad_limit_is_a_config_error(tmp_path: Path) -> None:
    done = _massgen(tmp_path, "--config", TEAM, "What is 2+2?", env={MAX_BYTES_ENV: "lots"})
    assert done.returncode == 1 and f"${MAX_BYTES_ENV} must be a positive whole number" in done.stderr


def test_a_question_of_only_spaces_is_a_usage_error(tmp_path: Path) -> None:
    done = _massgen(tmp_path, "--automation", "--config", TEAM, "   \t ")
    assert done.returncode == 64
    assert "the question is empty (only whitespace)" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "logs").exists()
    with pytest.raises(QuestionError, match="the question is empty"):
        massgen.run_sync("  \n ", TEAM, log_dir=tmp_path / "api")


def test_a_large_question_is_written_to_the_trace_once_and_read_back_whole(tmp_path: Path) -> None:
    question = "Which is larger, 9.11 or 9.9? Context: " + "abc\u00e9\"\\\n" * 100_000  # 1 MB, escapes included
    result = massgen.run_sync(question, TEAM, log_dir=tmp_path / "run")
    assert result.status == "completed"
    trace_file = tmp_path / "run" / "trace.jsonl"
    escaped = len(json.dumps(question, ensure_ascii=False).encode())  # as the question is written in JSON
    # Before: every StartTurn, PresentFinal and model request carried it, 18x the question.
    assert trace_file.stat().st_size < escaped + 100_000
    log_bytes = sum(p.stat().st_size for p in (tmp_path / "run").rglob("*") if p.is_file())
    assert log_bytes < 5 * escaped  # the trace, execution_metadata.yaml, coordination_events.json: once each
    status = json.loads((tmp_path / "run" / "status.json").read_text())
    assert len(status["question"]) < 5000 and "characters in all" in status["question"]

    trace = records(result)  # read back from disk: every record as it was sent
    assert trace[0]["payload"]["question"] == question
    turns = of_type(trace, "StartTurn", "PresentFinal")
    assert len(turns) >= 4 and all(t["payload"]["task"] == question for t in turns)
    requests = of_type(trace, "ModelRequestSent")
    assert requests and all(any(question in m["content"] for m in r["payload"]["messages"])
                            for r in requests if r["payload"]["keep"] == 0)
    assert read_trace_file(trace_file).skipped == []
    rebuilt = rebuild_from_trace(tmp_path / "run")
    assert rebuilt["coordination_events.json"] == (tmp_path / "run" / "coordination_events.json").read_text()


def test_serve_refuses_an_oversized_question_with_a_413_naming_the_limit(tmp_path: Path) -> None:
    write_configs(tmp_path)
    server = start_server(tmp_path, "--config", "team.yaml", "--max-body-bytes", "100000",
                          env={MAX_BYTES_ENV: "50000"})
    try:
        with httpx.Client(base_url=server.base_url, timeout=30) as client:
            def ask(text: str) -> httpx.Response:
                return client.post("/v1/chat/completions",
                                   json={"model": "team", "messages": [{"role": "user", "content": text}]})

            over_question = ask("z" * 60_000)
            assert over_question.status_code == 413
            error = over_question.json()["error"]
            assert error["code"] == "request_too_large" and MAX_BYTES_ENV in error["message"]
            over_body = ask("z" * 200_000)
            assert over_body.status_code == 413 and "--max-body-bytes" in over_body.json()["error"]["message"]
            blank = ask("   ")
            assert blank.status_code == 400 and "is empty" in blank.json()["error"]["message"]
            assert server.health()["runs_in_progress"] == 0
            assert not list((tmp_path / "logs").glob("**/trace.jsonl"))  # no run was started
    finally:
        assert server.stop() == -15


@pytest.mark.parametrize(("question", "history", "said"), [
    (None, (), "the question must be text (a str), not NoneType"),
    (42, (), "the question must be text (a str), not int"),
    ("What is 2+2?", (("Hi", None),), "history 1 must be a (question, answer) pair of text, not ('Hi', None)"),
    ("What is 2+2?", (("Hi", "Hello"), "just text"), "history 2 must be a (question, answer) pair of text"),
])
def test_a_question_or_history_that_is_not_text_is_refused_naming_it(tmp_path: Path, question: object,
                                                                      history: object, said: str) -> None:
    with pytest.raises(QuestionError) as caught:
        massgen.run_sync(question, TEAM, history=history, log_dir=tmp_path / "run")  # type: ignore[arg-type]
    assert said in str(caught.value)
    assert not (tmp_path / "run").exists()  # refused before a log file or an actor exists
