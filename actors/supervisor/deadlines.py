"""The deadlines a run actually uses: unset ones are derived from the run deadline.

A fixed default (a 600 s turn, 120 s of silence) is longer than a short run, and then a
single hung or dripping agent holds the whole team until the run deadline. A deadline
the config leaves unset is therefore the smaller of its default and a fraction of the
run deadline, so one agent's fault costs its own deadline and not the team's.
"""

from __future__ import annotations

from massgen.configs.schema import TimeoutSettings

# Field -> fraction of the run deadline it may take at most when the config leaves it unset.
FRACTIONS = {
    "turn_timeout_seconds": 0.5,
    "idle_stream_timeout_seconds": 0.1,
    "present_timeout_seconds": 0.25,
    "straggler_grace_seconds": 0.05,
}


def effective(settings: TimeoutSettings) -> TimeoutSettings:
    """``settings`` with every unset deadline capped at its fraction of the run deadline."""
    run = settings.orchestrator_timeout_seconds
    updates = {
        name: min(getattr(settings, name), run * fraction)
        for name, fraction in FRACTIONS.items()
        if name not in settings.model_fields_set
    }
    return settings.model_copy(update=updates)
