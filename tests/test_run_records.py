"""The trace loses nothing: configs, model requests, torn and corrupt lines, rebuilt files, live status."""

from __future__ import annotations

import json
import os
import shutil
import stat
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import FACTOR, of_type, run_team, scripted, step, team_config
from wire import protocols as p
from wire.server import Stream, WireServer

from massgen.actors.record.trace_writer import TraceWriter
from massgen.actors.run.team import Team
from massgen.actors.runtime.port import RunContext
from massgen.backends.base import BackendContext
from massgen.backends.openai_chat import create as create_chat
from massgen.configs import load_config, validate_data
from massgen.configs.backend_types import buildable
from massgen.configs.schema import BackendConfig
from massgen.logs import TraceWarning, read_trace, read_trace_file, rebuild_from_trace
from massgen.logs.calls import model_calls
from massgen.messages import DeadLetter, RunFinished, RunStarted, Sender
from massgen.messages.trace_writer_inbox import Flush

CONFIGS = Path(__file__).parent / "configs"
EXAMPLE = "@examples/basic/scripted_three_agents"

# A value other than the default for every option every backend type has.
COMMON: dict[str, Any] = {
    "model": "some-model", "base_url": "http://127.0.0.1:9/v1", "api_key": "sk-very-secret", "temperature": 0.7,
    "max_tokens": 321, "cwd": "/tmp/work", "allowed_tools": ["mcp__w__forecast"], "exclude_tools": ["x"],
    "seed": 11, "timeout_seconds": 42.5, "tool_mode": "json_schema", "top_p": 0.9,
    "enable_web_search": True, "enable_code_interpreter": True, "enable_code_execution": True,
    "reasoning": {"effort": "low"}, "text": {"verbosity": "low"}, "parallel_tool_calls": False,
    "custom_tools": [{"function": "add", "path": "tools.py"}], "extra_body": {"x": 1}, "check_tools": ["calculator"],
    "first_answer": "program",
    "chat_template_kwargs": {"enable_thinking": False},
    "upload_files": [{"image_path": "https://example.com/cat.png"}], "media_max_file_size_mb": 32,
    "mcp_servers": [{"name": "w", "type": "stdio", "command": "python3", "args": ["w.py"],
                     "env": {"TOKEN": "tok-secret"}, "cwd": "/tmp", "allowed_tools": ["forecast"],
                     "exclude_tools": ["y"], "call_timeout_seconds": 5.0, "start_timeout_seconds": 6.0}],
}
OWN: dict[str, dict[str, Any]] = {
    "scripted": {"script": [[{"text": "hi"}, {"delay": 0.5}, {"new_answer": "4"}], [{"vote": "agent1"}]],
                 "present": "Four.", "present_script": [[{"text": "Four, said twice."}]], "on_exhausted": "stop",
                 "crash_on_start": [2], "hang_on_start": [3], "usage_per_call": 7},
    "local": {"n_ctx": 8192, "n_threads": 3, "server_start_timeout_seconds": 12.0},
    "claude_code": {"cli_path": "/opt/claude", "extra_args": ["--verbose"], "permission_mode": "plan",
                    "append_system_prompt": "Be brief."},
    "antigravity_cli": {"cli_path": "/opt/agy", "extra_args": ["--flag"]},
    "azure_openai": {"api_version": "2024-10-21"},
}


def _record_run_started(log_dir: Path, config: dict[str, Any]) -> None:
    """Write a RunStarted record with the real trace writer, as a run does."""
    writer = TraceWriter.start(log_dir)
    ctx = RunContext("r1", writer)
    team = validate_data(config, "test config")
    ctx.record(RunStarted(run_id="r1", question="q", agents=("a",), labels=("agent1",), config=team.redacted(),
                          versions={}, log_dir=str(log_dir)))
    ctx.record(RunFinished(run_id="r1", status="failed", reason="test", winner=None, winner_label=None,
                           final_answer=None, partial=True, elapsed_s=0.0, model_calls=0, input_tokens=0,
                           output_tokens=0, cost_usd=0.0))
    writer.ask(Flush())
    writer.stop()


@pytest.mark.parametrize("backend_type", sorted(buildable()))
def test_every_backend_types_config_round_trips_through_the_trace(backend_type: str, tmp_path: Path) -> None:
    backend = {"type": backend_type, **COMMON, **OWN.get(backend_type, {})}
    model = buildable()[backend_type].options
    defaults = model.model_construct()
    unset = [name for name in model.model_fields if name != "type" and backend[name] == getattr(defaults, name)]
    assert not unset, f"give these a non-default value so the test covers them: {unset}"
    original = validate_data({"agents": [{"id": "a", "backend": backend, "system_message": "Be terse."}]}, "t")

    _record_run_started(tmp_path, original.model_dump(mode="json", serialize_as_any=True))

    text = (tmp_path / "trace.jsonl").read_text()
    assert "sk-very-secret" not in text and "tok-secret" not in text
    recorded = read_trace(tmp_path)[0]["payload"]["config"]
    rebuilt = validate_data(recorded, "the trace's config")
    assert type(rebuilt.agents[0].backend) is type(original.agents[0].backend)
    secrets = {"api_key", "mcp_servers"}
    assert rebuilt.agents[0].backend.model_dump(exclude=secrets) == original.agents[0].backend.model_dump(
        exclude=secrets)
    assert rebuilt.redacted() == original.redacted()
    assert rebuilt.agents[0].backend.api_key == "***"
    metadata = yaml.safe_load((tmp_path / "execution_metadata.yaml").read_text())
    assert metadata["config"] == recorded


def test_each_model_request_is_rebuilt_from_the_trace_as_the_provider_received_it(
    server: WireServer, tmp_path: Path
) -> None:
    # A reply with no workflow call (a correction follows), an answer, a vote, the presentation.
    server.script(
        Stream(p.chat_text("Let me think.")),
        Stream([p.chat_tool_delta(0, id="c1", name="new_answer", arguments='{"content": "4"}'),
                p.chat_chunk({}, "tool_calls"), p.sse("[DONE]")]),
        Stream([p.chat_tool_delta(0, id="c2", name="vote", arguments='{"agent_id": "agent1", "reason": "ok"}'),
                p.chat_chunk({}, "tool_calls"), p.sse("[DONE]")]),
        Stream(p.chat_text("Four.")),
    )
    backend = {"type": "vllm", "base_url": server.url + "/v1", "model": "test-model", "temperature": 0.2}
    result = run_team(team_config({"id": "solo", "backend": backend}), tmp_path)
    assert result.status == "completed" and result.final_answer == "Four."

    calls = model_calls(read_trace(result.log_dir))
    assert len(calls) == len(server.requests) == 4
    assert all(call.finished for call in calls)
    render = create_chat(BackendConfig.model_validate(backend), BackendContext(agent_id="solo"))
    for call, sent in zip(calls, server.requests, strict=True):
        expected = render._request_kwargs(call.request)
        assert expected["messages"] == sent.body["messages"]
        assert expected.get("tools") == sent.body.get("tools")
        assert sent.body["temperature"] == 0.2
    assert calls[1].reply is not None and calls[1].reply["tool_calls"][0]["arguments"] == {"content": "4"}
    assert calls[3].request.kind == "present" and calls[3].reply is not None and calls[3].reply["text"] == "Four."


# -- torn and corrupt traces ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def non_ascii_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run whose question (and so the first line) is not ASCII."""
    config, _ = load_config(EXAMPLE)
    result = run_team(config, tmp_path_factory.mktemp("run"), "Welche Zahl ist größer: 9,11 oder 9,9? — ≥ 🤔")
    return result.log_dir / "trace.jsonl"


def test_a_last_line_torn_at_any_byte_is_dropped_and_said(non_ascii_trace: Path, tmp_path: Path) -> None:
    whole = non_ascii_trace.read_bytes()
    full = read_trace_file(non_ascii_trace).records
    # End the file with the (non-ASCII) first record, then cut that line at every byte.
    line = whole.split(b"\n", 1)[0]
    assert any(byte >= 0x80 for byte in line)
    body = whole
    multibyte_cuts = 0
    for cut in range(1, len(line)):
        torn = tmp_path / "trace.jsonl"
        torn.write_bytes(body + line[:cut])
        try:
            line[:cut].decode("utf-8")
        except UnicodeDecodeError:
            multibyte_cuts += 1
        read = read_trace_file(tmp_path)
        assert read.records == full, cut
        assert read.skipped == [] and read.torn_bytes == cut
        assert read.notes() == [f"ignored the last line, cut off mid-write ({cut} bytes)"]
    assert multibyte_cuts > 0  # some cuts fell inside a character


def test_a_corrupt_line_in_the_middle_is_skipped_by_name_and_the_rest_is_kept(
    non_ascii_trace: Path, tmp_path: Path
) -> None:
    lines = non_ascii_trace.read_bytes().split(b"\n")
    answers = sum(1 for line in lines if b'"AnswerAccepted"' in line)
    middle = next(i for i, line in enumerate(lines) if b'"TurnStarted"' in line)
    lines[middle] = b'{"seq": 9, "type": "Tur\xff\xfe nStarted", "payl'
    (tmp_path / "trace.jsonl").write_bytes(b"\n".join(lines))

    read = read_trace_file(tmp_path)
    assert read.skipped == [f"line {middle + 1}: not UTF-8 (invalid start byte at byte 23)"]
    assert len(read.records) == len([line for line in lines if line]) - 1
    assert len(of_type(read.records, "AnswerAccepted")) == answers == 3
    with pytest.warns(TraceWarning, match=f"line {middle + 1}: not UTF-8"):
        read_trace(tmp_path)


# -- rebuilt files equal the live ones -------------------------------------------------------------


def _live_files(log_dir: Path) -> dict[str, str]:
    return {str(path.relative_to(log_dir)): path.read_text(encoding="utf-8")
            for path in sorted(log_dir.rglob("*")) if path.is_file() and path.name != "trace.jsonl"}


def _assert_rebuilt_equal(log_dir: Path, tmp_path: Path) -> None:
    live = _live_files(log_dir)
    assert rebuild_from_trace(str(log_dir), write=False) == live
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(log_dir / "trace.jsonl", copy / "trace.jsonl")
    written = rebuild_from_trace(copy)  # a Path, written next to the trace
    assert written == live == _live_files(copy)


def _interrupted(tmp_path: Path) -> Path:
    config, _ = load_config(str(CONFIGS / "slow_team.yaml"))
    answered = threading.Event()
    team = Team(config, "q", log_dir=tmp_path / "logs" / "run", tick_interval_s=0.02,
                subscribers=[lambda record, _: answered.set() if record["type"] == "AnswerAccepted" else None])
    team.start()
    assert answered.wait(10 * FACTOR)
    team.cancel("interrupted by the test")
    result = team.wait()
    assert result.status == "interrupted"
    return result.log_dir


def _timeout(tmp_path: Path) -> Path:
    config, _ = load_config(str(CONFIGS / "slow_team.yaml"))
    config = config.model_copy(update={"timeout_settings": config.timeout_settings.model_copy(
        update={"orchestrator_timeout_seconds": 0.5})})
    result = run_team(config, tmp_path)
    assert result.status == "timeout"
    return result.log_dir


def _failed(tmp_path: Path) -> Path:
    config, _ = load_config(str(CONFIGS / "all_crash.yaml"))
    result = run_team(config, tmp_path)
    assert result.status == "failed"
    return result.log_dir


def _completed(tmp_path: Path) -> Path:
    config, _ = load_config(EXAMPLE)
    result = run_team(config, tmp_path)
    assert result.status == "completed"
    return result.log_dir


@pytest.mark.parametrize("run", [_completed, _interrupted, _timeout, _failed])
def test_rebuilt_files_equal_the_live_files_for_every_ending(run: Any, tmp_path: Path) -> None:
    _assert_rebuilt_equal(run(tmp_path), tmp_path)


def test_the_derived_files_get_the_mode_the_trace_gets_from_the_users_umask(tmp_path: Path) -> None:
    before = os.umask(0o027)  # a user who lets the group read and others nothing
    try:
        log_dir = _completed(tmp_path)
    finally:
        os.umask(before)
    trace_mode = stat.S_IMODE((log_dir / "trace.jsonl").stat().st_mode)
    assert trace_mode == 0o640
    written = [path for path in log_dir.rglob("*") if path.is_file() and not path.is_symlink()]
    assert {path.name for path in written} >= {"status.json", "vote.json", "coordination_events.json"}
    assert {path.name: stat.S_IMODE(path.stat().st_mode) for path in written} == {
        path.name: trace_mode for path in written}  # mkstemp's 0600 was no one's choice


def test_records_after_run_finished_reach_the_live_files_too(tmp_path: Path) -> None:
    log_dir = tmp_path / "run"
    config, _ = load_config(EXAMPLE)
    writer = TraceWriter.start(log_dir)
    ctx = RunContext("r1", writer)
    ctx.record(RunStarted(run_id="r1", question="q", agents=("agent_a",), labels=("agent1",),
                          config=config.redacted(), versions={}, log_dir=str(log_dir)))
    ctx.record(RunFinished(run_id="r1", status="failed", reason="test", winner=None, winner_label=None,
                           final_answer=None, partial=True, elapsed_s=0.1, model_calls=0, input_tokens=0,
                           output_tokens=0, cost_usd=0.0))
    ctx.record(DeadLetter(run_id="r1", sender=Sender(name="agent_a", incarnation=1), original_type="AgentChunk",
                          original_sender="agent_a#1", to="supervisor#1", why="recipient stopped",
                          timestamp=time.time() + 0.5))
    writer.ask(Flush())
    writer.stop()
    events = json.loads((log_dir / "coordination_events.json").read_text())
    assert events[-1]["type"] == "DeadLetter"
    assert json.loads((log_dir / "status.json").read_text())["elapsed_s"] >= 0.5
    _assert_rebuilt_equal(log_dir, tmp_path)


# -- live status --------------------------------------------------------------------------------------


def test_status_json_shows_a_state_change_while_the_model_is_still_working(tmp_path: Path) -> None:
    config = team_config(scripted("thinker", [step(delay=5.0 * FACTOR), step(new_answer="4")]))
    team = Team(config, "q", log_dir=tmp_path / "run", tick_interval_s=0.02)
    team.start()
    try:
        status = tmp_path / "run" / "status.json"
        trace = tmp_path / "run" / "trace.jsonl"
        deadline = time.monotonic() + 4.0 * FACTOR
        while time.monotonic() < deadline and '"ModelRequestSent"' not in (
                trace.read_text() if trace.exists() else ""):
            time.sleep(0.02)
        seen = None
        while time.monotonic() < deadline:  # well before the 5 s call ends: only a trailing write helps
            seen = json.loads(status.read_text())["agents"]["thinker"]["state"] if status.exists() else None
            if seen == "working":
                break
            time.sleep(0.02)
        assert seen == "working"
    finally:
        team.cancel()
        team.wait()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _assert_rebuilt_equal(tmp_path / "run", tmp_path)
