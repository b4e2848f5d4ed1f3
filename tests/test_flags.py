"""The flags MassGen users type: a quick team from a model name, the event stream, output and log
options, and usage errors that never read as an execution error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.zero_latency_openai import ZeroLatencyServer
from massgen.cli.main import main
from massgen.configs.backend_types import buildable
from massgen.logs import read_trace

EXAMPLE = "@examples/basic/scripted_three_agents"
QUESTION = "Which is larger, 9.11 or 9.9?"


@pytest.fixture
def zero() -> Iterator[ZeroLatencyServer]:
    with ZeroLatencyServer() as server:
        yield server


def automation(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, str]]:
    code = main(["--automation", *args])
    out = capsys.readouterr().out
    return code, dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)


def run_config(log_dir: str) -> dict[str, Any]:
    started = read_trace(Path(log_dir))[0]
    assert started["type"] == "RunStarted"
    config: dict[str, Any] = started["payload"]["config"]
    return config


def test_a_usage_error_exits_64_which_no_run_status_uses(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "massgen.cli.main", "--no-such-flag", "q"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=60,
                          env={**os.environ, "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs")})
    assert done.returncode == 64 and "unrecognized arguments: --no-such-flag" in done.stderr
    assert "Traceback" not in done.stderr


def _massgen_without_a_terminal(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "massgen.cli.main", *args], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL,
                          env={**os.environ, "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs")})


def test_single_agent_followed_by_the_question_names_what_the_parser_did(tmp_path: Path) -> None:
    """The parser takes the word after ``--single-agent`` as its agent id, as upstream's does; before, the
    error then said "give a question ... (the interactive session needs a terminal)"."""
    done = _massgen_without_a_terminal(tmp_path, "--single-agent", "What is 2+2?")
    assert done.returncode == 64, done.stderr
    assert done.stderr.startswith("massgen: error: --single-agent takes an agent id: 'What is 2+2?' was read as "
                                  "the agent id")
    assert "put the question after --single-agent ID" in done.stderr
    assert "needs a terminal" not in done.stderr and "Traceback" not in done.stderr
    # a word that can be an agent id, and no question after it: the same cause, named
    done = _massgen_without_a_terminal(tmp_path, "--single-agent", "agent_a")
    assert done.returncode == 64
    assert "no question: --single-agent took 'agent_a' as its agent id" in done.stderr


def test_an_agent_id_is_what_the_config_schema_takes() -> None:
    from massgen.cli.flags import AGENT_ID
    from massgen.configs.schema import AgentConfig

    (pattern,) = [m.pattern for m in AgentConfig.model_fields["id"].metadata if hasattr(m, "pattern")]
    assert AGENT_ID.pattern == pattern


@pytest.mark.parametrize("args, says", [
    (["--session-id", "a", "--continue", "q"], "--session-id and --continue"),
    (["--stream-events"], "--stream-events needs a question"),
    (["--no-logs", "--automation", "q"], "--no-logs and --automation"),
    (["--web-port", "8000", "q"], "--web-port goes with --web"),
    (["--strict", "q"], "--strict goes with --validate"),
])
def test_clashing_flags_are_usage_errors(args: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 64
    assert says in capsys.readouterr().err


def test_model_and_base_url_make_a_single_agent_on_that_server(
        zero: ZeroLatencyServer, capsys: pytest.CaptureFixture[str]) -> None:
    code, fields = automation(capsys, "--model", "chatcompletion/zero-model", "--base-url", zero.base_url,
                              "--system-message", "Answer in one line.", "What is 2+2?")
    assert code == 0 and fields["RUN_STATUS"] == "completed"
    agents = run_config(fields["ATTEMPT_DIR"])["agents"]
    assert len(agents) == 1 and agents[0]["system_message"] == "Answer in one line."
    backend = agents[0]["backend"]
    assert (backend["type"], backend["model"], backend["base_url"]) == ("chatcompletion", "zero-model",
                                                                         zero.base_url)
    assert zero.requests >= 2  # the answer and the presentation went to this server
    assert Path(fields["ANSWER_FILE"]).read_text() == "The answer is 4: two and two make four.\n"


def test_backend_picks_the_type_for_a_model_name(zero: ZeroLatencyServer, capsys: pytest.CaptureFixture[str]) -> None:
    code, fields = automation(capsys, "--backend", "vllm", "--model", "Qwen/Qwen2.5-7B-Instruct",
                              "--base-url", zero.base_url, "q")
    assert code == 0
    backend = run_config(fields["ATTEMPT_DIR"])["agents"][0]["backend"]
    assert backend["type"] == "vllm" and backend["model"] == "Qwen/Qwen2.5-7B-Instruct"


def test_model_with_config_makes_a_same_model_team(zero: ZeroLatencyServer,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, fields = automation(capsys, "--config", EXAMPLE, "--backend", "chatcompletion", "--model", "zero",
                              "--base-url", zero.base_url, "q")
    assert code == 0
    agents = run_config(fields["ATTEMPT_DIR"])["agents"]
    assert [a["id"] for a in agents] == ["agent_a", "agent_b", "agent_c"]
    assert {(a["backend"]["type"], a["backend"]["model"]) for a in agents} == {("chatcompletion", "zero")}


def test_a_provider_model_without_its_key_names_the_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["--model", "gpt-5-mini", "q"]) == 1
    assert "agent 'gpt-5-mini' (backend openai) needs OPENAI_API_KEY" in capsys.readouterr().err
    assert main(["--backend", "nope", "q"]) == 1
    assert "--backend 'nope' is not a backend type" in capsys.readouterr().err


def test_stream_events_prints_the_public_events_as_json_lines(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--stream-events", "--config", EXAMPLE, QUESTION]) == 0
    captured = capsys.readouterr()
    events = [json.loads(line) for line in captured.out.splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "run_started" and kinds[-1] == "final_answer"
    assert {"chunk", "answer", "vote"} <= set(kinds)
    assert events[0]["question"] == QUESTION and events[0]["agents"] == {
        "agent_a": "agent1", "agent_b": "agent2", "agent_c": "agent3"}
    assert events[-1]["final_answer"].startswith("9.9 is larger") and events[-1]["winner"] == "agent_b"
    assert "[" not in captured.err.split("logs:")[0]  # no progress lines: the events are the display


def test_output_file_debug_and_no_logs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    answer = tmp_path / "out" / "answer.md"
    assert main(["--config", EXAMPLE, "--output-file", str(answer), "--debug", QUESTION]) == 0
    captured = capsys.readouterr()
    assert answer.read_text() == captured.out and captured.out.startswith("9.9 is larger")
    debug_log = Path(captured.err.split("debug log: ")[1].strip())
    assert debug_log.name == "massgen_debug.log" and debug_log.parent == Path(
        captured.err.split("logs: ")[1].splitlines()[0])
    assert debug_log.stat().st_size > 0

    before = set((tmp_path / "massgen_logs").rglob("trace.jsonl"))
    assert main(["--config", EXAMPLE, "--no-logs", QUESTION]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("9.9 is larger") and "logs:" not in captured.err
    assert set((tmp_path / "massgen_logs").rglob("trace.jsonl")) == before


def test_list_backends_names_every_type_and_its_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--list-backends"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    assert set(rows) == set(buildable())
    assert "ANTHROPIC_API_KEY" in rows["claude"] and "XAI_API_KEY" in rows["grok"]
    assert "http://localhost:11434/v1" in rows["ollama"]
