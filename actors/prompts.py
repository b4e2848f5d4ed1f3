"""What the model is told: lean coordination prompts and the two workflow tools.

Every character here is paid on every call by every agent, so the instructions say
only what a model needs to act. ``bench/prompt_size.py`` measures them.
"""

from __future__ import annotations

from massgen.messages import AnswerView, ChatMessage, ToolSpec, VoteEntry

NEW_ANSWER = "new_answer"
VOTE = "vote"
WORKFLOW_TOOLS = (NEW_ANSWER, VOTE)

_SYSTEM = (
    "You are one of several agents solving the same task. End your turn with exactly one tool call: "
    "new_answer(content) with a complete answer, or vote(agent_id, reason) for the best answer shown "
    "if it is already correct and complete."
)
_SYSTEM_VOTE_ONLY = (
    "You are one of several agents solving the same task. New answers are closed: end your turn by "
    "calling vote(agent_id, reason) for the best answer shown."
)


def new_answer_tool() -> ToolSpec:
    return ToolSpec(
        name=NEW_ANSWER,
        description="Submit your complete answer to the task.",
        parameters={
            "type": "object",
            "properties": {"content": {"type": "string", "description": "The full answer."}},
            "required": ["content"],
        },
    )


def vote_tool(targets: tuple[str, ...]) -> ToolSpec:
    return ToolSpec(
        name=VOTE,
        description="Vote for the best answer shown.",
        parameters={
            "type": "object",
            "properties": {
                "agent_id": {"type": "string", "enum": list(targets)},
                "reason": {"type": "string"},
            },
            "required": ["agent_id", "reason"],
        },
    )


def workflow_tools(view: AnswerView, vote_only: bool) -> tuple[ToolSpec, ...]:
    tools: list[ToolSpec] = []
    if not vote_only:
        tools.append(new_answer_tool())
    if view.answers:
        tools.append(vote_tool(view.labels()))
    return tuple(tools)


def render_answers(view: AnswerView, own_label: str) -> str:
    if not view.answers:
        return "No answers yet."
    blocks = []
    for answer in view.answers:
        mine = " (yours)" if answer.agent == own_label else ""
        blocks.append(f"<{answer.label}{mine}>\n{answer.content}\n</{answer.label}>")
    return "Current answers:\n" + "\n".join(blocks)


def _history(history: tuple[tuple[str, str], ...]) -> list[ChatMessage]:
    messages: list[ChatMessage] = []
    for question, answer in history:
        messages.append(ChatMessage(role="user", content=question))
        messages.append(ChatMessage(role="assistant", content=answer))
    return messages


def _system(system_message: str | None, body: str) -> ChatMessage:
    text = f"{system_message}\n\n{body}" if system_message else body
    return ChatMessage(role="system", content=text)


def turn_messages(
    task: str,
    view: AnswerView,
    own_label: str,
    vote_only: bool,
    system_message: str | None,
    history: tuple[tuple[str, str], ...] = (),
) -> list[ChatMessage]:
    system = _SYSTEM_VOTE_ONLY if vote_only else _SYSTEM
    return [
        _system(system_message, system),
        *_history(history),
        ChatMessage(role="user", content=f"Task:\n{task}\n\n{render_answers(view, own_label)}"),
    ]


def injection_message(view: AnswerView, own_label: str) -> ChatMessage:
    return ChatMessage(
        role="user",
        content="New answers arrived while you worked; take them into account.\n"
        + render_answers(view, own_label),
    )


def correction_message(problem: str, vote_only: bool) -> ChatMessage:
    wanted = "vote(agent_id, reason)" if vote_only else "new_answer(content) or vote(agent_id, reason)"
    return ChatMessage(role="user", content=f"{problem} End your turn with exactly one call of {wanted}.")


def present_messages(
    task: str,
    view: AnswerView,
    votes: tuple[VoteEntry, ...],
    own_label: str,
    synthesize: bool,
    system_message: str | None,
    history: tuple[tuple[str, str], ...] = (),
) -> list[ChatMessage]:
    tally = "\n".join(f"- {v.voter} voted {v.target_label}: {v.reason}" for v in votes) or "- no votes"
    if synthesize:
        ask = "Combine the best parts of these answers into one final answer for the user."
    else:
        ask = f"The team chose your answer ({own_label}). Write the final answer for the user."
    return [
        _system(system_message, "You present the team's final answer. Reply with the answer only, no tools."),
        *_history(history),
        ChatMessage(
            role="user",
            content=f"Task:\n{task}\n\n{render_answers(view, own_label)}\n\nVotes:\n{tally}\n\n{ask}",
        ),
    ]
