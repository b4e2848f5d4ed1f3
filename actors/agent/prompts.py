"""What the model is told: lean coordination prompts and the two workflow tools.

Every character here is paid on every call by every agent, so the instructions say
only what a model needs to act. ``bench/prompt_size.py`` measures them.
"""

from __future__ import annotations

from massgen.messages import AnswerView, ChatMessage, ToolSpec, VoteEntry
from massgen.messages.stream import Attachment

# The vocabulary is declared once, in messages/workflow.py; re-exported for readers of the prompts.
from massgen.messages.workflow import NEW_ANSWER as NEW_ANSWER
from massgen.messages.workflow import VOTE as VOTE
from massgen.messages.workflow import WORKFLOW_TOOLS as WORKFLOW_TOOLS
from massgen.messages.workflow import new_answer_tool, vote_tool

_SYSTEM = (
    "You are one of several agents solving the same task. Work it out in your reply first, then end "
    "your turn with exactly one tool call: new_answer(content) with your complete answer, including the "
    "working others need to check it, or vote(agent_id, reason) for the best answer shown if it is "
    "already correct and complete."
)
_SYSTEM_VOTE_ONLY = (
    "You are one of several agents solving the same task. New answers are closed: check the answers "
    "shown in your reply, then end your turn by calling vote(agent_id, reason) for the best one."
)
# Two-phase turns (grammar-constrained models): free text first, a short decision after it.
_SYSTEM_THINK = (
    "You are one of several agents solving the same task. Work it out step by step in your reply and "
    "end with your final answer. Check any answers shown against your own work."
)
_SYSTEM_THINK_VOTE_ONLY = (
    "You are one of several agents solving the same task. Check the answers shown step by step in your "
    "reply and end with the final answer you find correct."
)
# Turns with check tools (actors/agent/check_tools.py): checking a result is a computation, not a rereading.
_CHECK_WITH_TOOLS = (" Check the results shown with calculate(expression) on the task's own numbers, "
                     "not by rereading them.")
_DECIDE = (
    "Decide now. new_answer: post your reply above as your answer. vote: an answer shown is correct and "
    "complete (agent_id, and a short reason)."
)
_DECIDE_VOTE_ONLY = "Decide now: vote for the best answer shown (agent_id, and a short reason)."
REASON_MAX_CHARS = 200


def workflow_tools(view: AnswerView, vote_only: bool) -> tuple[ToolSpec, ...]:
    tools: list[ToolSpec] = []
    if not vote_only:
        tools.append(new_answer_tool())
    if view.answers:
        tools.append(vote_tool(view.labels()))
    return tuple(tools)


def decision_tools(view: AnswerView, vote_only: bool) -> tuple[ToolSpec, ...]:
    """The second phase of a two-phase turn: commit to the reply just written, or vote."""
    tools: list[ToolSpec] = [] if vote_only else [new_answer_tool(with_content=False)]
    if view.answers:
        tools.append(vote_tool(view.labels(), REASON_MAX_CHARS))
    return tuple(tools)


def decision_message(vote_only: bool) -> ChatMessage:
    return ChatMessage(role="user", content=_DECIDE_VOTE_ONLY if vote_only else _DECIDE)


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
    think_first: bool = False,
    attachments: tuple[Attachment, ...] = (),
    check_tools: bool = False,
) -> list[ChatMessage]:
    """A coordination turn's opening; ``think_first`` for two-phase turns (no tools in the first call),
    ``check_tools`` when the answers in view may be checked with them.

    ``attachments`` (the backend's upload_files) go with the task's message, as upstream adds them to it."""
    if think_first:
        system = _SYSTEM_THINK_VOTE_ONLY if vote_only else _SYSTEM_THINK
    else:
        system = _SYSTEM_VOTE_ONLY if vote_only else _SYSTEM
    if check_tools and view.answers:
        system += _CHECK_WITH_TOOLS
    return [
        _system(system_message, system),
        *_history(history),
        ChatMessage(role="user", content=f"Task:\n{task}\n\n{render_answers(view, own_label)}",
                    attachments=attachments),
    ]


def bare_messages(task: str, system_message: str | None, history: tuple[tuple[str, str], ...] = (),
                  attachments: tuple[Attachment, ...] = ()) -> list[ChatMessage]:
    """The question as one call of the model is asked: no team prompt, no workflow, no answers; only what the
    user gave (the agent's own system message, the conversation so far, attachments) with it."""
    opening = [ChatMessage(role="system", content=system_message)] if system_message else []
    return [*opening, *_history(history), ChatMessage(role="user", content=task, attachments=attachments)]


# A first answer asked as a program (``backend.first_answer: program``; PAL, Gao et al. 2022): the model states
# the problem in code and the sandbox does the counting and the arithmetic it slips on in words.
PROGRAM_REQUEST = ("Do not work it out in words. Write a short Python program that computes the answer and prints "
                   "only the final answer. Reply with the program alone, in one ```python code block.")


def program_messages(task: str, system_message: str | None, history: tuple[tuple[str, str], ...] = (),
                     attachments: tuple[Attachment, ...] = ()) -> list[ChatMessage]:
    """The question as one call asks it (``bare_messages``), with the request for a program after it."""
    messages = bare_messages(task, system_message, history, attachments)
    last = messages[-1]
    messages[-1] = ChatMessage(role="user", content=f"{task}\n\n{PROGRAM_REQUEST}", attachments=last.attachments)
    return messages


def injection_message(view: AnswerView, own_label: str) -> ChatMessage:
    return ChatMessage(
        role="user",
        content="New answers arrived while you worked; take them into account.\n"
        + render_answers(view, own_label),
    )


def correction_message(problem: str, vote_only: bool) -> ChatMessage:
    wanted = "vote(agent_id, reason)" if vote_only else "new_answer(content) or vote(agent_id, reason)"
    return ChatMessage(role="user", content=f"{problem} End your turn with exactly one call of {wanted}.")


def finish_round_message(elapsed_s: float, timeout_s: float, grace_s: float, first_round: bool,
                         vote_only: bool, can_vote: bool) -> ChatMessage:
    """Past the round's soft timeout: finish now with what the agent has (upstream MassGen's wrap-up)."""
    round_kind = "first-answer" if first_round else "voting"
    if vote_only:
        wanted = "call vote(agent_id, reason) for the best answer in view"
    elif can_vote:
        wanted = ("call new_answer(content) with your best answer so far (work in progress is fine), "
                  "or vote(agent_id, reason) if an answer in view is good enough")
    else:
        wanted = "call new_answer(content) with your best answer so far (work in progress is fine)"
    return ChatMessage(role="user", content=(
        f"Time is up for this {round_kind} round: {elapsed_s:.0f} s of its {timeout_s:g} s limit have passed. "
        f"Finish now: {wanted}. Skip further checks and tool calls. In {grace_s:g} s this turn is cut off "
        "and what you have not submitted is lost; a later round can still improve on it."
    ))


def think_again_message(problem: str) -> ChatMessage:
    """A correction in the free-text phase of a two-phase turn."""
    return ChatMessage(role="user", content=f"{problem} Work the task out and end with your final answer.")


def present_messages(
    task: str,
    view: AnswerView,
    votes: tuple[VoteEntry, ...],
    own_label: str,
    synthesize: bool,
    system_message: str | None,
    history: tuple[tuple[str, str], ...] = (),
    attachments: tuple[Attachment, ...] = (),
) -> list[ChatMessage]:
    tally = "\n".join(f"- {v.voter} voted {v.target_label}: {v.reason}" for v in votes) or "- no votes"
    if synthesize:
        ask = "Combine the best parts of these answers into one final answer for the user."
    else:
        ask = (f"The team chose your answer ({own_label}). Write the final answer for the user: keep the working "
               "that supports it and end with the same final answer.")
    return [
        _system(system_message, "You present the team's final answer. Reply with the answer only, no tools."),
        *_history(history),
        ChatMessage(
            role="user",
            content=f"Task:\n{task}\n\n{render_answers(view, own_label)}\n\nVotes:\n{tally}\n\n{ask}",
            attachments=attachments,
        ),
    ]
