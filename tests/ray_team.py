"""The team of the Ray runtime tests: three scripted agents, 1 to 2 s per model call."""

from __future__ import annotations

from support import scripted, step, team_config

from massgen.configs import TeamConfig


def slow_team() -> TeamConfig:
    """agent_b answers first and rightly; the others answer, then vote for agent2; agent_b presents."""
    return team_config(
        scripted("agent_a",
                 [step(text="Comparing digit by digit... "), step(delay=1.8), step(new_answer="9.11, because 11 > 9.")],
                 [step(when_answers=["agent2"]), step(delay=1.0),
                  step(vote="agent2", reason="9.90 > 9.11; I compared the decimals wrongly.")],
                 on_exhausted="repeat_last"),
        scripted("agent_b",
                 [step(delay=1.0), step(new_answer="9.9 is larger: 9.9 = 9.90, and 0.90 > 0.11.")],
                 [step(delay=1.0), step(vote="agent2", reason="Correct, with the comparison shown.")],
                 on_exhausted="repeat_last",
                 present="9.9 is larger. Written with the same number of decimals, 9.9 = 9.90 > 9.11."),
        scripted("agent_c",
                 [step(delay=2.0), step(new_answer="9.9")],
                 [step(when_answers=["agent1", "agent2"]), step(delay=1.0),
                  step(vote="agent2", reason="Correct, and it shows why.")],
                 on_exhausted="repeat_last"),
        orchestrator={"final_answer_strategy": "winner_present"},
        run_timeout=90.0, turn_timeout=20.0, idle_timeout=10.0,
    )
