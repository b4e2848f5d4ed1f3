"""Checking what a turn produced: is the workflow call valid, and what does an answer carry.

Pure functions of a model call's output, kept apart from the turn runner (which talks to the
model and the supervisor) so the rules read, and are tested, on their own: the problems a
model is told to fix, the work a bare answer carries, and a vote reason that only echoes our
own correction text.
"""

from __future__ import annotations

import re

from massgen.actors.coordination import results
from massgen.backends.toolcall_text import strip_tool_calls
from massgen.messages import AnswerView, ToolCall
from massgen.messages.workflow import AGENT_ID, CONTENT, NEW_ANSWER, vote_target

_BARE_ANSWER_CHARS = 200
_MIN_COPY_CHARS = 12
# A line that is only one of the tags the view wraps answers in (actors/agent/prompts.py): <agent2.1 (yours)>.
_VIEW_TAG_LINE = re.compile(r"^[ \t]*</?agent\d+(?:\.\d+)?(?: \(yours\))?>[ \t]*$\n?", re.MULTILINE)


def workflow_problem(workflow: list[ToolCall], view: AnswerView, vote_only: bool, text: str,
                     need_content: bool = True) -> str | None:
    """What is wrong with a call's workflow calls, in the words the model is told; None for one valid call."""
    if not workflow:
        return "You did not call new_answer or vote." if text else "Your reply was empty."
    if len(workflow) > 1:
        return f"You made {len(workflow)} workflow calls; make exactly one."
    call = workflow[0]
    if call.parse_error:
        return f"The arguments of your {call.name} call were not valid JSON ({call.parse_error})."
    if call.name == NEW_ANSWER:
        if vote_only:
            return "New answers are closed for you."
        content = call.arguments.get(CONTENT)
        if need_content and (not isinstance(content, str) or not content.strip()):
            return "new_answer needs a non-empty 'content' string."
        return None
    target = vote_target(call.arguments.get(AGENT_ID))
    if not view.answers:
        return "There are no answers to vote for yet."
    if target not in view.labels():
        return f"vote agent_id must be one of {', '.join(view.labels())}."
    return None


def _normalise(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".!")


def _written_result(text: str) -> str:
    """The answer line (or boxed value), else the last line: what a text literally ends with. Not the
    result a sentence concludes ("2 + 2 = 4."): an answer after such reasoning still says it plainly."""
    explicit = results.explicit_result(text)
    if explicit:
        return explicit
    lines = [line for line in text.splitlines() if line.strip()]
    return _normalise(lines[-1]) if lines else ""


def with_work(content: str, reasoning: str) -> str:
    """An answer carries its work: a bare one-line answer after reasoning text gets that text before it."""
    content, reasoning = content.strip(), strip_tool_calls(reasoning)
    if not reasoning or "\n" in content or len(content) > _BARE_ANSWER_CHARS:
        return content
    if _written_result(reasoning) == _written_result(content):
        return reasoning  # the reasoning already ends with the answer
    return f"{reasoning}\n\n{content}"


def without_view_tags(content: str) -> str:
    """An answer without the view's wrapping tags that a model copied into it: a closing tag on the
    last line would otherwise be the answer's final result and end the team's final answer."""
    return _VIEW_TAG_LINE.sub("", content).strip()


def copies_ours(reason: str, ours: list[str]) -> bool:
    """A vote reason that only echoes text we put in the conversation (a correction) is not the model's."""
    mine = _normalise(reason)
    if len(mine) < _MIN_COPY_CHARS:
        return False
    return any(mine in _normalise(text) or _normalise(text) in mine for text in ours)

