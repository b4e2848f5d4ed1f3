"""The load the UI benches put on a screen or an event stream: scripted agents streaming many small deltas.

Each agent streams ``deltas`` words, ``delay_s`` apart, answers, then votes for agent1; ``present:
done`` and ``on_exhausted: repeat_last`` keep the run to that shape whatever it is asked next.
"""

from __future__ import annotations


def streaming_team(agents: int, deltas: int, *, delay_s: float, deadline_s: float, idle_s: float,
                   word: str = "token", line_every: int = 0, straggler_grace_s: float | None = None
                   ) -> dict[str, object]:
    """The team's config data; every ``line_every``-th word ends a line (0: the text is one line)."""
    def script(i: int) -> list[list[dict[str, object]]]:
        steps: list[dict[str, object]] = []
        for n in range(deltas):
            ends_line = line_every > 0 and n % line_every == line_every - 1
            steps += [{"text": f"{word}{n} " + ("\n" if ends_line else "")}, {"delay": delay_s}]
        return [[*steps, {"new_answer": f"answer {i}"}], [{"vote": "agent1", "reason": "first"}]]

    timeouts: dict[str, float] = {"orchestrator_timeout_seconds": deadline_s, "turn_timeout_seconds": deadline_s,
                                  "idle_stream_timeout_seconds": idle_s}
    if straggler_grace_s is not None:
        timeouts["straggler_grace_seconds"] = straggler_grace_s
    return {
        "agents": [{"id": f"agent_{i}", "backend": {"type": "scripted", "present": "done",
                                                    "on_exhausted": "repeat_last", "script": script(i)}}
                   for i in range(1, agents + 1)],
        "timeout_settings": timeouts,
    }
