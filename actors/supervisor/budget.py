"""What a run has spent, and whether it may spend more.

Checked before every model call (the agent's turn worker asks for a permit), so a
budget is never overrun by more than the call in flight.
"""

from __future__ import annotations

from dataclasses import dataclass

from massgen.configs.schema import Budget


@dataclass
class Spending:
    limits: Budget
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def exhausted(self) -> str | None:
        """Why no further call may be made, or None."""
        if self.limits.max_model_calls is not None and self.calls >= self.limits.max_model_calls:
            return f"model call budget of {self.limits.max_model_calls} used up"
        if self.limits.max_tokens is not None and self.tokens >= self.limits.max_tokens:
            return f"token budget of {self.limits.max_tokens} used up"
        return None

    def charge_call(self) -> None:
        self.calls += 1

    def add_usage(self, input_tokens: int, output_tokens: int, cost_usd: float) -> None:
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        self.cost_usd += cost_usd
