"""The workflow vocabulary: the two calls that end a turn, declared once.

Every layer speaks it: the prompts offer these tools, the turn runner reads them off a
model's stream, the scripted backend emits them, text-parsing and grammar backends
recognise them, and agent CLIs receive them over our MCP server. One spelling here, so
a rename (or a third call) cannot leave a backend behind.
"""

from __future__ import annotations

from typing import Final

from massgen.messages.stream import ToolSpec

NEW_ANSWER: Final = "new_answer"
VOTE: Final = "vote"
WORKFLOW_TOOLS: Final = (NEW_ANSWER, VOTE)

# The arguments each call takes.
CONTENT: Final = "content"  # new_answer: the full answer
AGENT_ID: Final = "agent_id"  # vote: the label of the agent voted for (agent2, or leniently agent2.3)
REASON: Final = "reason"  # vote: why, in the model's words


def new_answer_tool(with_content: bool = True) -> ToolSpec:
    """``new_answer``; in a decision (two-phase turn) it takes no content: the reply before it is the answer."""
    if not with_content:
        return ToolSpec(name=NEW_ANSWER, description="Post your reply above as your answer.",
                        parameters={"type": "object", "properties": {}, "required": []})
    return ToolSpec(
        name=NEW_ANSWER,
        description="Submit your complete answer to the task, with the working that supports it.",
        parameters={
            "type": "object",
            "properties": {CONTENT: {"type": "string", "description": "The full answer."}},
            "required": [CONTENT],
        },
    )


def vote_tool(targets: tuple[str, ...], reason_max: int | None = None) -> ToolSpec:
    """``vote`` for one of ``targets`` (agent labels), with a reason of at most ``reason_max`` characters."""
    reason: dict[str, object] = {"type": "string"}
    if reason_max is not None:
        reason["maxLength"] = reason_max
    return ToolSpec(
        name=VOTE,
        description="Vote for the best answer shown.",
        parameters={
            "type": "object",
            "properties": {AGENT_ID: {"type": "string", "enum": list(targets)}, REASON: reason},
            "required": [AGENT_ID, REASON],
        },
    )


def vote_target(value: object) -> str:
    """Accept ``agent2`` and, leniently, ``agent2.3``: a vote is for an agent's latest answer."""
    text = str(value or "").strip()
    head, _, tail = text.partition(".")
    return head if tail.isdigit() else text
