"""Upstream MassGen's ``voting_sensitivity`` and ``answer_novelty_requirement``, as words to the agents.

Both say how readily an agent should vote for an answer in view rather than write its own.
They are appended to each agent's system message; ``balanced`` sensitivity is massgen's
own prompt and adds nothing. Agreement is still decided by results (docs/architecture.md):
a new answer whose result equals one in view is a vote whatever these say.
"""

from __future__ import annotations

from massgen.configs.schema import OrchestratorConfig

_SENSITIVITY = {
    "lenient": "Voting: if an answer in view is correct and complete enough, vote for it; write a new answer "
               "only to fix a real error or add something missing.",
    "strict": "Voting: vote for an answer in view only if it is fully correct, complete and well supported; "
              "otherwise write a better answer.",
}
_NOVELTY = {
    "lenient": "A new answer may refine an answer in view.",
    "balanced": "A new answer must differ in substance from every answer in view (a different result, a fixed "
                "error, or missing content), not only in wording; otherwise vote.",
    "strict": "Write a new answer only if it takes a materially different approach or reaches a different result "
              "from every answer in view; otherwise vote.",
}


def guidance(rules: OrchestratorConfig) -> str | None:
    """The lines these settings add to every agent's system message; None when they add none."""
    lines = [_SENSITIVITY.get(rules.voting_sensitivity or ""), _NOVELTY.get(rules.answer_novelty_requirement or "")]
    text = " ".join(line for line in lines if line)
    return text or None


def system_message(own: str | None, rules: OrchestratorConfig) -> str | None:
    extra = guidance(rules)
    if extra is None:
        return own
    return f"{own}\n\n{extra}" if own else extra
