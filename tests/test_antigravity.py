"""The ``antigravity_cli`` backend, driving a stand-in ``agy`` (tests/fake_agy.py).

The real ``agy`` is a Go binary from Google's site that no registry here carries; the
stand-in behaves as the backend expects it to (prompt in, plain text out, events in
``.antigravity/transcript.jsonl``, MCP servers from the workspace-local ``mcp_config.json``)
and calls our workflow MCP server with the MCP SDK client, as the real CLI would.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import psutil
import pytest
from support import assert_trace_invariants, records, run_team, scripted, step, team_config
from wire.harness import calls_of, error_of, finish_of, reasoning_of, run_calls, text_of, usage_of

from massgen.actors.agent import prompts
from massgen.backends import create as create_backend
from massgen.backends.antigravity import AntigravityBackend, TranscriptTail, create, parse_models
from massgen.backends.base import BackendContext, BackendError
from massgen.backends.cli_agent import ARGV_PROMPT_LIMIT
from massgen.configs.schema import AntigravityBackendConfig
from massgen.messages.stream import ChatMessage, ModelRequest, StreamEvent

FAKE_AGY = Path(__file__).with_name("fake_agy.py")
SYSTEM = ChatMessage(role="system", content="Be brief.")
TASK = ChatMessage(role="user", content="Task:\nWhat is 2+2?\n\nNo answers yet.")
ANSWER = ModelRequest(messages=(SYSTEM, TASK), tools=(prompts.new_answer_tool(),))


@pytest.fixture
def agy(tmp_path: Path) -> Path:
    """An ``agy`` executable: a shell shim that runs the stand-in with this interpreter."""
    shim = tmp_path / "bin" / "agy"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_AGY}" "$@"\n')
    shim.chmod(0o755)
    return shim


def backend(agy: Path, workspace: Path, env: dict[str, str] | None = None, **options: object) -> AntigravityBackend:
    config = AntigravityBackendConfig(cli_path=str(agy), cwd=str(workspace), **options)
    return create(config, BackendContext(agent_id="ag", env=env or {}))


def test_registered_under_its_config_type() -> None:
    built = create_backend(AntigravityBackendConfig(), BackendContext(agent_id="ag"))
    assert isinstance(built, AntigravityBackend)


def test_a_missing_binary_is_a_clear_error_that_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    for config in (AntigravityBackendConfig(), AntigravityBackendConfig(cli_path=str(tmp_path / "agy"))):
        with pytest.raises(BackendError) as caught:
            asyncio.run(create(config, BackendContext(agent_id="ag")).start())
        text = str(caught.value)
        assert "agy" in text and "https://antigravity.google" in text and "cli_path" in text


def test_answers_through_the_workflow_tools_with_live_transcript_events(agy: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    log = tmp_path / "agy.jsonl"
    events, = run_calls(backend(agy, workspace, {"FAKE_AGY_LOG": str(log)}), ANSWER)

    assert [(c.name, c.arguments) for c in calls_of(events)] == [("new_answer", {"content": "2 + 2 = 4"})]
    assert text_of(events).startswith("I called new_answer: Answer recorded.")
    assert reasoning_of(events) == "Reading the task and the answers so far."
    usage = usage_of(events)
    assert usage.output_tokens == 12 and usage.input_tokens > 0
    assert finish_of(events) == "tool_calls"
    (run,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert run["cwd"] == str(workspace.resolve()) and run["argv"][0] == "-p"
    assert "`new_answer` (MCP server `massgen`)" in run["prompt"] and "What is 2+2?" in run["prompt"]
    assert not (workspace / "mcp_config.json").exists(), "our mcp_config.json is removed on close"


def test_votes_among_the_offered_labels_and_presents_in_plain_text(agy: Path, tmp_path: Path) -> None:
    shown = ChatMessage(role="user", content="Task:\n2+2?\n\nCurrent answers:\n<agent2>\n4\n</agent2>\n"
                                             "<agent1 (yours)>\n4\n</agent1>")
    tools = (prompts.new_answer_tool(), prompts.vote_tool(("agent2", "agent1")))
    vote = ModelRequest(messages=(SYSTEM, shown), tools=tools, vote_targets=("agent2", "agent1"))
    present = ModelRequest(messages=(SYSTEM, TASK), kind="present")
    voted, presented = run_calls(backend(agy, tmp_path / "ws"), vote, present)

    assert [(c.name, c.arguments["agent_id"]) for c in calls_of(voted)] == [("vote", "agent2")]
    assert calls_of(presented) == [] and text_of(presented) == "The answer is 4.\n"
    assert finish_of(presented) == "stop"


def test_a_users_mcp_config_is_merged_and_restored(agy: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    original = json.dumps({"mcpServers": {"docs": {"serverUrl": "http://127.0.0.1:1/mcp"}}, "other": 1})
    (workspace / "mcp_config.json").write_text(original)
    ag = backend(agy, workspace, mcp_servers=[{"name": "files", "type": "stdio", "command": "files-mcp"}])

    async def during() -> dict[str, object]:
        await ag.start()
        try:
            data: dict[str, object] = json.loads((workspace / "mcp_config.json").read_text())
            return data
        finally:
            await ag.aclose()

    merged = asyncio.run(during())
    assert merged["other"] == 1
    assert merged["mcpServers"] == {
        "docs": {"serverUrl": "http://127.0.0.1:1/mcp"}, "files": {"command": "files-mcp", "args": []},
        "massgen": {"serverUrl": ag.mcp.url},
    }
    assert (workspace / "mcp_config.json").read_text() == original


def test_model_labels_are_checked_against_agy_models(agy: Path, tmp_path: Path) -> None:
    log = tmp_path / "agy.jsonl"
    events, = run_calls(backend(agy, tmp_path / "ws", {"FAKE_AGY_LOG": str(log)}, model="Gemini 3.5 Pro"), ANSWER)
    assert finish_of(events) == "tool_calls"
    assert json.loads(log.read_text())["argv"][2:4] == ["--model", "Gemini 3.5 Pro"]

    with pytest.raises(BackendError) as caught:
        asyncio.run(backend(agy, tmp_path / "ws", model="gemini-pro").start())
    assert "'gemini-pro'" in str(caught.value) and "Gemini 3.5 Flash (High)" in str(caught.value)


def test_a_long_prompt_goes_through_stdin(agy: Path, tmp_path: Path) -> None:
    log = tmp_path / "agy.jsonl"
    big = ChatMessage(role="user", content="Task:\n2+2?\n" + "x" * ARGV_PROMPT_LIMIT)
    events, = run_calls(backend(agy, tmp_path / "ws", {"FAKE_AGY_LOG": str(log)}),
                        ModelRequest(messages=(SYSTEM, big), tools=(prompts.new_answer_tool(),)))
    assert [c.name for c in calls_of(events)] == ["new_answer"]
    run = json.loads(log.read_text())
    assert run["argv"][:2] == ["-p", ""] and "x" * ARGV_PROMPT_LIMIT in run["prompt"]


def test_a_failing_cli_is_a_stream_error_with_its_reason(agy: Path, tmp_path: Path) -> None:
    events, = run_calls(backend(agy, tmp_path / "ws", {"FAKE_AGY_MODE": "fail"}), ANSWER)
    error = error_of(events)
    assert "code 2" in error.message and "authentication required" in error.message


def test_cancelling_the_call_kills_the_cli_and_what_it_started(agy: Path, tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    ag = backend(agy, tmp_path / "ws", {"FAKE_AGY_MODE": "hang", "FAKE_AGY_PIDFILE": str(pidfile)})

    async def main() -> list[StreamEvent]:
        await ag.start()
        seen: list[StreamEvent] = []

        async def consume() -> None:
            async for event in ag.stream(ANSWER):
                seen.append(event)

        task = asyncio.create_task(consume())
        deadline = time.monotonic() + 30
        while not pidfile.exists() or not seen:
            assert time.monotonic() < deadline and not task.done()
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await ag.aclose()
        return seen

    seen = asyncio.run(main())
    assert text_of(seen) == "Working\n"
    for pid in map(int, pidfile.read_text().split()):  # the CLI and its grandchild ``sleep``
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_parse_models_and_transcript_tail(tmp_path: Path) -> None:
    assert parse_models("Available models:\n* Gemini 3.5 Flash (High) (current)\n- Gemini 3.5 Pro\n\n") == [
        "Gemini 3.5 Flash (High)", "Gemini 3.5 Pro",
    ]
    path = tmp_path / "t.jsonl"
    path.write_text('{"type": "old"}\n')
    tail = TranscriptTail(path, path.stat().st_size)
    assert tail.poll() == []
    with path.open("a") as handle:
        handle.write('{"type": "thinking", "text": "a"}\n{"type": "half"')
    assert tail.poll() == [{"type": "thinking", "text": "a"}]
    with path.open("a") as handle:
        handle.write(', "x": 1}\nnot json\n')
    assert tail.poll() == [{"type": "half", "x": 1}]
    path.write_text('{"type": "new"}\n')  # rotated: shorter than where we were
    assert tail.poll() == [{"type": "new"}]


def test_an_antigravity_agent_answers_and_votes_in_a_real_team_run(agy: Path, tmp_path: Path) -> None:
    stand_in = {"id": "gravity", "backend": {"type": "antigravity_cli", "cli_path": str(agy),
                                             "cwd": str(tmp_path / "gravity_ws")}}
    checker = scripted(
        "checker", [step(new_answer="4")], [step(when_answers=["agent1"]), step(vote="agent1", reason="ok")]
    )
    result = run_team(team_config(stand_in, checker, run_timeout=60, turn_timeout=30, idle_timeout=30,
                                   present_timeout=60, straggler_grace=30), tmp_path)

    assert result.status == "completed" and not result.partial, result.reason
    assert result.winner == "gravity" and result.answers["agent1.1"] == "2 + 2 = 4"
    assert result.final_answer == "The answer is 4."
    assert [v for v in result.votes if v["voter"] == "gravity" and v["valid"]], result.votes
    assert_trace_invariants(records(result))
