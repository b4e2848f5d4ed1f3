"""Our workflow MCP server, driven by the MCP SDK's own client over streamable HTTP."""

from __future__ import annotations

import asyncio
import threading

from mcp import Client
from mcp_types import CallToolResult

from massgen.actors.agent import prompts
from massgen.backends.workflow_mcp import WorkflowToolServer, queue_deliverer
from massgen.messages.stream import ToolCallEvent


def text(result: CallToolResult) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


def test_tools_follow_the_request_and_one_valid_call_is_delivered() -> None:
    async def main() -> None:
        server = WorkflowToolServer("a1")
        await server.start()
        queue: asyncio.Queue[ToolCallEvent] = asyncio.Queue()
        try:
            async with Client(server.url) as client:
                assert (await client.list_tools()).tools == []  # no turn: nothing offered
                refused = await client.call_tool("new_answer", {"content": "x"})
                assert refused.is_error and "No turn" in text(refused)

                deliver = queue_deliverer(queue, asyncio.get_running_loop())
                server.begin((prompts.vote_tool(("agent2", "agent1")),), deliver)
                tools = {t.name: t for t in (await client.list_tools()).tools}
                assert list(tools) == ["vote"]  # new_answer is absent when the request lacks it
                assert tools["vote"].input_schema["properties"]["agent_id"]["enum"] == ["agent2", "agent1"]

                absent = await client.call_tool("new_answer", {"content": "x"})
                wrong = await client.call_tool("vote", {"agent_id": "agent9", "reason": "?"})
                assert absent.is_error and wrong.is_error and queue.empty()
                assert "agent2, agent1" in text(wrong)

                good = await client.call_tool("vote", {"agent_id": "agent1.2", "reason": "best"})
                again = await client.call_tool("vote", {"agent_id": "agent2", "reason": "changed my mind"})
                assert not good.is_error and "Vote recorded" in text(good)
                assert "already ended" in text(again)
                assert server.recorded == "vote"
                await asyncio.sleep(0)
                event = queue.get_nowait()
                assert event.call.name == "vote" and event.call.arguments == {"agent_id": "agent1.2", "reason": "best"}
                assert queue.empty(), "only the first valid workflow call of a turn counts"

                server.end()
                assert (await client.list_tools()).tools == []
        finally:
            await server.aclose()
        assert not [t for t in threading.enumerate() if t.name == "a1-workflow-mcp"]

    asyncio.run(main())
