"""A small price table so every call's usage carries a cost estimate.

Prices are USD per million tokens (input, output), matched by the longest model-name
prefix. Unknown models cost 0: an estimate that is missing is better than one made up.
"""

from __future__ import annotations

_PER_MILLION: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-5-nano": (0.05, 0.40),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5": (1.25, 10.00),
    "o4-mini": (1.10, 4.40),
    "o3": (2.00, 8.00),
    "claude-3-5-haiku": (0.80, 4.00),
    "claude-haiku-4": (1.00, 5.00),
    "claude-sonnet-4": (3.00, 15.00),
    "claude-3-7-sonnet": (3.00, 15.00),
    "claude-opus-4": (15.00, 75.00),
    "gemini-2.5-flash-lite": (0.10, 0.40),
    "gemini-2.5-flash": (0.30, 2.50),
    "gemini-2.5-pro": (1.25, 10.00),
    "gemini-2.0-flash": (0.10, 0.40),
    "grok-4": (3.00, 15.00),
    "grok-3-mini": (0.30, 0.50),
    "grok-3": (3.00, 15.00),
}


def cost_usd(model: str | None, input_tokens: int, output_tokens: int) -> float:
    """Estimated cost of one call; 0.0 for models not in the table (local models included)."""
    if not model:
        return 0.0
    name = model.lower().rsplit("/", 1)[-1]
    best = max((p for p in _PER_MILLION if name.startswith(p)), key=len, default=None)
    if best is None:
        return 0.0
    price_in, price_out = _PER_MILLION[best]
    return round((input_tokens * price_in + output_tokens * price_out) / 1_000_000, 8)
