"""What an MCP server may send that it should not, and what the client makes of it.

The servers are real processes: the hand-written JSON-RPC server ``tests/mcp_servers/raw_jsonrpc.py``
for what the SDK's ``MCPServer`` would refuse to emit (tool schemas the SDK's client rejects, replies
that are not quite JSON-RPC, hostile tool names), and the SDK's own weather server for size limits.
The rule in every case: what can be kept is kept, what is left out is named in a note that reaches
the trace (``McpToolsListed.notes``) or the model (the tool result), and a reply that cannot be used
fails its call at once with the reason, never by timing out, never blamed on the process.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import mcp_types
import pytest
from mcp_support import Harness, harnesses, names, raw, stdio
from support import assert_trace_invariants, of_type, records, run_team, scripted, step, team_config

from massgen.actors.mcp import McpServerSpec, select_tools
from massgen.actors.mcp.spec import MCP_MESSAGE_CAP_BYTES
from massgen.cli.progress import describe
from massgen.configs.schema import McpServerConfig
from massgen.logs import LogProjection
from massgen.messages import McpServerFailed, McpToolsListed

OVER_THE_CAP = f"larger than the {MCP_MESSAGE_CAP_BYTES // 2**20} MiB an MCP message may be"
TOOLS_PER_SERVER = 256
DESCRIPTION_CAP_CHARS = 4096
QUICK_S = 10.0  # well under the 60 s call timeout these calls used to wait out


@pytest.fixture
def mcp_actor() -> Iterator[Callable[..., Harness]]:
    yield from harnesses()


# -- tools/list --------------------------------------------------------------------------------------


def test_a_tool_whose_schema_the_sdk_rejects_is_left_out_with_a_note_and_the_others_are_offered(
    mcp_actor: Callable[..., Harness],
) -> None:
    # Probe finding 5: one such tool lost every tool of the server, and the start failure was
    # blamed on the process ("exited with code 0"), which exited because we closed it.
    harness = mcp_actor(raw("bad_schema"))
    listed = harness.expect(McpToolsListed)
    assert names(listed) == ["mcp__raw__ping_tool"]
    required, schema_type = listed.notes
    assert required.startswith("MCP server 'raw': tool 'bad_required' left out: its listing was refused")
    assert "inputSchema.required" in required
    assert schema_type.startswith("MCP server 'raw': tool 'bad_schema_type' left out: its listing was refused")
    assert "inputSchema" in schema_type
    assert harness.call("ping_tool").content == "pong"
    assert harness.inbox.empty()  # no failure, so no restart


def test_in_a_run_the_left_out_tools_are_named_in_the_trace_and_the_rest_are_used(tmp_path: Path) -> None:
    config = team_config(scripted("a", [step(tool="mcp__raw__ping_tool")], [step(new_answer="{last_tool_result}")],
                                  mcp_servers=[raw("bad_schema")]))
    result = run_team(config, tmp_path)

    assert result.status == "completed" and result.final_answer == "pong"
    trace = records(result)
    assert_trace_invariants(trace)
    listed = [r for r in of_type(trace, "McpToolsListed") if r["to"].startswith("a#")]
    assert [len(r["payload"]["notes"]) for r in listed] == [2]
    assert "tool 'bad_required' left out" in listed[0]["payload"]["notes"][0]
    assert not of_type(trace, "McpServerFailed", "McpServerRestarting", "McpToolsWithdrawn")
    line = describe(listed[0], LogProjection())  # what the terminal's progress shows of it
    assert line is not None and line.startswith("a: ") and "tool 'bad_required' left out" in line


def test_a_tools_list_reply_refused_whole_is_named_as_the_cause_not_the_process_exit(
    mcp_actor: Callable[..., Harness],
) -> None:
    failed = mcp_actor(raw("bad_listing")).expect(McpServerFailed)
    assert failed.where == "start"
    assert "its reply to tools/list was refused" in failed.error and "tools" in failed.error
    assert "exited with code" not in failed.error


# -- what a tool listing may hold ------------------------------------------------------------------------


def test_tool_names_providers_refuse_are_left_out_and_long_descriptions_are_cut_with_notes(
    mcp_actor: Callable[..., Harness],
) -> None:
    harness = mcp_actor(raw("hostile_names"))
    listed = harness.expect(McpToolsListed)
    assert names(listed) == ["mcp__raw__ping_tool", "mcp__raw__huge_desc"]
    huge = listed.tools[1]
    assert len(huge.description) < DESCRIPTION_CAP_CHARS + 100
    assert huge.description.startswith("Z" * DESCRIPTION_CAP_CHARS)
    assert huge.description.endswith(f"[truncated: {DESCRIPTION_CAP_CHARS:,} of 5,000,000 characters shown]")
    notes = "\n".join(listed.notes)
    assert len(listed.notes) == 4, notes
    assert "tool 'evil\\x1b[2J" in notes and "\\u202e\\x00' left out" in notes  # named, escaped
    assert not re.search("[\x00-\x08\x0b-\x1f\u202e]", notes)
    assert f"tool '{'a' * 80}...' left out" in notes and "(10,010 characters)" in notes
    assert "tool 'dotted.name' left out" in notes
    assert "^[a-zA-Z0-9_-]{1,64}$" in notes  # what a name must be
    assert "tool 'huge_desc': description cut to 4,096 of 5,000,000 characters" in notes
    assert all(note.startswith("MCP server 'raw': ") for note in listed.notes)


def test_at_most_256_tools_are_taken_from_one_server_and_the_rest_are_counted_in_a_note(
    mcp_actor: Callable[..., Harness],
) -> None:
    listed = mcp_actor(raw("hostile_names", env={"RAW_MCP_TOOLS": "300"})).expect(McpToolsListed)
    assert names(listed) == [f"mcp__raw__t{i}" for i in range(TOOLS_PER_SERVER)]
    assert listed.notes == (f"MCP server 'raw': 44 of 300 tools left out (at most {TOOLS_PER_SERVER} "
                            "are taken from one server): t256, t257, t258, t259, t260, ... and 39 more",)


def test_the_64_character_limit_counts_the_prefix_the_model_sees() -> None:
    config = McpServerConfig(name="weather", type="stdio", command="x")
    fits, too_long = "f" * (64 - len("mcp__weather__")), "f" * (65 - len("mcp__weather__"))
    tools = [mcp_types.Tool(name=n, input_schema={"type": "object"}) for n in (fits, too_long)]
    notes: list[str] = []
    offered, hidden = select_tools(McpServerSpec("a", config), tools, notes)
    assert [t.name for t in offered] == [f"mcp__weather__{fits}"] and hidden == ()
    assert notes == [f"MCP server 'weather': tool '{too_long}' left out: its name as offered to the model, "
                     f"'mcp__weather__{too_long}', does not match ^[a-zA-Z0-9_-]{{1,64}}$ (65 characters)"]


# -- replies that cannot be used as they are ------------------------------------------------------


def test_a_reply_with_a_lone_surrogate_escape_is_delivered_at_once_with_it_made_visible(
    mcp_actor: Callable[..., Harness],
) -> None:
    # Probe finding 6: valid JSON the SDK's parser refuses; the reply was dropped and the call
    # reported as timed out 60 s later though the server had answered at once.
    harness = mcp_actor(raw("surrogate"))
    harness.expect(McpToolsListed)
    result = harness.call("ping_tool", timeout=QUICK_S)
    assert not result.is_error
    text, _, note = result.content.partition("\n")
    assert text == "pong \\ud800"
    assert note == "[note: MCP server 'raw' reply/result/content/0/text: 1 lone surrogate (U+D800) escaped]"


def test_a_reply_line_that_cannot_be_read_fails_its_call_at_once(mcp_actor: Callable[..., Harness]) -> None:
    harness = mcp_actor(raw("broken_reply"))
    harness.expect(McpToolsListed)
    broken = harness.call("ping_tool", timeout=QUICK_S)
    assert broken.is_error
    assert "mcp__raw__ping_tool failed: MCP server 'raw' sent a reply that could not be read" in broken.content
    assert "not JSON" in broken.content
    not_a_result = harness.call("not_a_result", timeout=QUICK_S)
    assert not_a_result.is_error and "could not be read" in not_a_result.content
    assert harness.call("ping_tool", timeout=QUICK_S).is_error  # each broken reply fails only its own call
    assert harness.inbox.empty()


# -- size ---------------------------------------------------------------------------------------------------


def test_a_result_over_the_message_cap_names_the_cap_and_the_server_stays_up_over_http(
    mcp_actor: Callable[..., Harness], http_url: str,
) -> None:
    # Probe finding 10: a 50 MB result over streamable HTTP was "the connection was lost".
    harness = mcp_actor({"name": "weather", "type": "streamable-http", "url": http_url})
    harness.expect(McpToolsListed)
    two_mb = harness.call("big", size=2_000_000)  # over the SDK's default 1 MiB event limit
    assert not two_mb.is_error and two_mb.content.endswith("of 2,000,000 characters shown]")
    over = harness.call("big", size=MCP_MESSAGE_CAP_BYTES + 1000)
    assert over.is_error
    assert "was lost" not in over.content
    assert OVER_THE_CAP in over.content
    assert harness.call("forecast", city="Oslo").content == "Sunny in Oslo, 21 C"
    assert harness.inbox.empty()


def test_a_result_over_the_message_cap_fails_its_call_at_once_and_the_server_stays_up_over_stdio(
    mcp_actor: Callable[..., Harness],
) -> None:
    harness = mcp_actor(stdio())
    harness.expect(McpToolsListed)
    over = harness.call("big", size=MCP_MESSAGE_CAP_BYTES + 1000, timeout=QUICK_S * 2)
    assert over.is_error
    assert OVER_THE_CAP in over.content
    assert harness.call("forecast", city="Oslo").content == "Sunny in Oslo, 21 C"
    assert harness.inbox.empty()
