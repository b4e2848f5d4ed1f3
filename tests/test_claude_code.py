"""The ``claude_code`` backend, with the real Claude Code CLI against a loopback Anthropic server.

The CLI comes from the npm registry (``scripts/install_test_tools.sh`` puts it in
``tests/.node``); it runs offline given ``ANTHROPIC_BASE_URL`` and a dummy key, and calls the
workflow tools on our MCP server as a real model would. Tests that run it are marked slow.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from support import assert_trace_invariants, of_type, records, run_team, scripted, step, team_config, unavailable
from wire.anthropic_tools import NEW_ANSWER_TOOL, VOTE_TOOL, AnthropicToolServer, tool_names, tool_schema
from wire.harness import calls_of, error_of, finish_of, run_calls, text_of, usage_of

from massgen.actors.agent import prompts
from massgen.backends import create as create_backend
from massgen.backends.base import BackendContext, BackendError
from massgen.backends.claude_code import ClaudeCodeBackend, create
from massgen.backends.cli_agent import ARGV_PROMPT_LIMIT
from massgen.configs.schema import ClaudeCodeBackendConfig
from massgen.messages.stream import ChatMessage, ModelRequest, StreamEvent

ROOT = Path(__file__).resolve().parents[1]
CLAUDE = ROOT / "tests" / ".node" / "node_modules" / ".bin" / "claude"
SYSTEM = ChatMessage(role="system", content="Be brief.")
TASK = ChatMessage(role="user", content="Task:\nWhat is 2+2?\n\nNo answers yet.")


@pytest.fixture(scope="session")
def claude_cli() -> str:
    """The real CLI, installed on first use; skipped with the reason when that cannot be done."""
    if not _works(CLAUDE) and shutil.which("npm"):
        subprocess.run([str(ROOT / "scripts" / "install_test_tools.sh")], capture_output=True, timeout=600)
    if not _works(CLAUDE):
        unavailable("the Claude Code CLI is not installed and scripts/install_test_tools.sh could not install it "
                    "(needs npm and the npm registry)")
    return str(CLAUDE)


def _works(path: Path) -> bool:
    if not path.exists():
        return False
    done = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60)
    return done.returncode == 0 and "Claude Code" in done.stdout


@pytest.fixture
def anthropic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AnthropicToolServer]:
    """The loopback model, and a scratch HOME so the CLI reads and writes no real settings."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    with AnthropicToolServer() as server:
        yield server


def backend(cli: str, server: AnthropicToolServer, **options: object) -> ClaudeCodeBackend:
    config = ClaudeCodeBackendConfig(cli_path=cli, base_url=server.url, api_key="dummy-key", **options)
    return create(config, BackendContext(agent_id="cc"))


# -- without the CLI -----------------------------------------------------------------------------------


def test_registered_under_its_config_type() -> None:
    built = create_backend(ClaudeCodeBackendConfig(), BackendContext(agent_id="cc"))
    assert isinstance(built, ClaudeCodeBackend)


def test_a_missing_cli_is_a_clear_error_that_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no claude on PATH ...
    monkeypatch.chdir(tmp_path)  # ... and no ./node_modules/.bin/claude
    for config in (ClaudeCodeBackendConfig(), ClaudeCodeBackendConfig(cli_path=str(tmp_path / "nope"))):
        with pytest.raises(BackendError) as caught:
            asyncio.run(create(config, BackendContext(agent_id="cc")).start())
        assert "npm install @anthropic-ai/claude-code" in str(caught.value)
        assert "cli_path" in str(caught.value)


def test_the_command_line_environment_and_mcp_config(tmp_path: Path) -> None:
    fake = tmp_path / "claude"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    config = ClaudeCodeBackendConfig(
        cli_path=str(fake), model="claude-test", extra_args=["--max-turns", "3"], cwd=str(tmp_path / "ws"),
        base_url="http://127.0.0.1:9", api_key="dummy-key", allowed_tools=["Edit"], exclude_tools=["Bash"],
        mcp_servers=[{"name": "files", "type": "stdio", "command": "files-mcp", "args": ["--ro"]}],
    )
    cc = create(config, BackendContext(agent_id="cc"))

    async def check() -> None:
        await cc.start()
        try:
            request = ModelRequest(messages=(SYSTEM, TASK), tools=(prompts.new_answer_tool(),))
            argv, stdin_text = cc.command(request)
            assert argv[:2] == [str(fake), "-p"] and stdin_text is None
            assert "What is 2+2?" in argv[2] and "mcp__massgen__new_answer" in argv[2]
            assert argv[3:] == [
                "--output-format", "stream-json", "--verbose", "--mcp-config", str(cc.mcp_config_path),
                "--allowedTools", "mcp__massgen__new_answer,mcp__massgen__vote,mcp__files,Edit",
                "--disallowedTools", "Bash", "--model", "claude-test", "--max-turns", "3",
            ]
            servers = json.loads(cc.mcp_config_path.read_text())["mcpServers"]
            assert servers["massgen"] == {"type": "http", "url": cc.mcp.url}
            assert servers["files"] == {"type": "stdio", "command": "files-mcp", "args": ["--ro"]}
            assert cc.workspace == (tmp_path / "ws").resolve() and cc.workspace.is_dir()
            env = cc.environment()
            assert env["ENABLE_TOOL_SEARCH"] == "false" and env["DISABLE_TELEMETRY"] == "1"
            assert env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
            assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9" and env["ANTHROPIC_API_KEY"] == "dummy-key"
            long = ModelRequest(messages=(ChatMessage(role="user", content="x" * (ARGV_PROMPT_LIMIT + 1)),))
            argv, stdin_text = cc.command(long)
            assert argv[2] == "--output-format" and stdin_text is not None and "x" * 1000 in stdin_text
        finally:
            await cc.aclose()
        assert not cc.mcp_config_path.exists()

    asyncio.run(check())


# -- with the real CLI ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_workflow_calls_reach_the_stream_through_our_mcp_server(
    claude_cli: str, anthropic: AnthropicToolServer
) -> None:
    answer = ModelRequest(messages=(SYSTEM, TASK), tools=(prompts.new_answer_tool(),))
    vote_only = ModelRequest(
        messages=(SYSTEM, TASK), tools=(prompts.vote_tool(("agent2", "agent1")),), vote_targets=("agent2", "agent1")
    )
    present = ModelRequest(messages=(SYSTEM, TASK), kind="present")
    started = time.monotonic()
    first, second, third = run_calls(backend(claude_cli, anthropic), answer, vote_only, present)
    elapsed = time.monotonic() - started

    assert [(c.name, c.arguments) for c in calls_of(first)] == [("new_answer", {"content": "2 + 2 = 4"})]
    assert finish_of(first) == "tool_calls"
    assert "Recorded." in text_of(first)
    usage = usage_of(first)
    assert usage.input_tokens > 0 and usage.output_tokens > 0 and usage.cost_usd > 0

    assert [(c.name, c.arguments["agent_id"]) for c in calls_of(second)] == [("vote", "agent2")]
    vote_requests = [r for r in anthropic.message_requests() if VOTE_TOOL in tool_names(r.body)]
    assert vote_requests, "the vote tool never reached the model"
    assert NEW_ANSWER_TOOL not in tool_names(vote_requests[0].body)
    schema = tool_schema(vote_requests[0].body, VOTE_TOOL)
    assert schema["properties"]["agent_id"]["enum"] == ["agent2", "agent1"]

    assert calls_of(third) == [] and text_of(third) == "The answer is 4." and finish_of(third) == "stop"
    assert not any(name.startswith("mcp__massgen__") for name in tool_names(anthropic.message_requests()[-1].body))
    print(f"\nthree real CLI calls took {elapsed:.2f}s")


@pytest.mark.slow
def test_a_long_prompt_goes_through_stdin(claude_cli: str, anthropic: AnthropicToolServer) -> None:
    long_task = ChatMessage(role="user", content="Task:\nWhat is 2+2?\n" + "context " * 14_000)
    request = ModelRequest(messages=(SYSTEM, long_task), tools=(prompts.new_answer_tool(),))
    (events,) = run_calls(backend(claude_cli, anthropic), request)

    assert [c.name for c in calls_of(events)] == ["new_answer"]
    assert "context " * 100 in json.dumps(anthropic.message_requests()[0].body)


@pytest.mark.slow
def test_a_provider_error_is_a_stream_error(claude_cli: str, anthropic: AnthropicToolServer) -> None:
    anthropic.fail_with = (400, "invalid_request_error", "temperature: must be at most 1.0")
    (events,) = run_calls(backend(claude_cli, anthropic), ModelRequest(messages=(SYSTEM, TASK)))

    error = error_of(events)
    assert "temperature: must be at most 1.0" in error.message and error.status == 400 and not error.retryable


@pytest.mark.slow
def test_cancelling_the_call_kills_the_cli(claude_cli: str, anthropic: AnthropicToolServer) -> None:
    anthropic.hang = True
    cc = backend(claude_cli, anthropic)

    async def main() -> list[int]:
        await cc.start()
        seen: list[StreamEvent] = []

        async def consume() -> None:
            async for event in cc.stream(ModelRequest(messages=(SYSTEM, TASK), tools=(prompts.new_answer_tool(),))):
                seen.append(event)

        task = asyncio.create_task(consume())
        deadline = time.monotonic() + 60
        while not anthropic.message_requests():  # the CLI is up and waiting on the model
            assert time.monotonic() < deadline and not task.done()
            await asyncio.sleep(0.05)
        pids = [p.pid for p in psutil.Process(os.getpid()).children(recursive=True)]
        assert pids
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await cc.aclose()
        return pids

    pids = asyncio.run(main())
    alive = [pid for pid in pids if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
    assert alive == []


@pytest.mark.slow
def test_a_claude_code_agent_answers_and_votes_in_a_real_team_run(
    claude_cli: str, anthropic: AnthropicToolServer, tmp_path: Path
) -> None:
    coder = {
        "id": "coder",
        "backend": {"type": "claude_code", "cli_path": claude_cli, "base_url": anthropic.url, "api_key": "dummy-key",
                    "cwd": str(tmp_path / "coder_ws")},
    }
    checker = scripted(
        "checker", [step(new_answer="4")], [step(when_answers=["agent1"]), step(vote="agent1", reason="same")]
    )
    config = team_config(coder, checker, run_timeout=120, turn_timeout=60, idle_timeout=60, present_timeout=60)
    result = run_team(config, tmp_path)

    assert result.status == "completed" and not result.partial, result.reason
    assert result.winner == "coder"
    # The text the model wrote before its new_answer call is its work, kept with the answer, when the CLI
    # streams it before the call reaches our workflow server (the usual order; the reverse drops it).
    coder_answer = result.answers["agent1.1"]
    assert coder_answer in ("2 + 2 = 4", "Calling the workflow tool.\n\n2 + 2 = 4")
    assert result.final_answer == "The answer is 4."
    coder_votes = [v for v in result.votes if v["voter"] == "coder" and v["valid"]]
    assert coder_votes, result.votes
    trace = records(result)
    assert_trace_invariants(trace)
    accepted = of_type(trace, "AnswerAccepted")
    assert any(r["payload"]["agent"] == "coder" and r["payload"]["content"] == coder_answer for r in accepted)
    # backend.cwd gives the agent a workspace of its own for this run (massgen/files), not the named folder
    assert (tmp_path / "workspaces" / result.run_id / "coder").is_dir() and not (tmp_path / "coder_ws").exists()
    used = [name for name, _ in anthropic.tool_uses]
    assert NEW_ANSWER_TOOL in used and VOTE_TOOL in used
