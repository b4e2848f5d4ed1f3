"""The final presentation is the answer unless it changes the agreed result, and a replacement is never silent.

Before: under ``final_answer_strategy: winner_present`` a winner ending "Final answer: Paris" and a
presenter writing "The capital of France is **Paris**, on the Seine, ..." gave the user the raw
answer (the presentation's last line read as a different result), and only ``RunFinished.reason``
said so: nothing on the screen, nothing under ``--automation``. Now the prose presentation is the
answer; one that does change the result is replaced with a line on stderr, an ``--automation``
line, a notice in the Web UI (tests/test_web_ui.py) and ``RunFinished.presentation_not_used``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import FACTOR, of_type, records, run_team, scripted, step, team_config

from massgen.actors.coordination.presentation import presentation_change
from massgen.actors.coordination.results import explicit_result

WINNING = "France's capital city is Paris.\nFinal answer: Paris"
PROSE = ("The capital of France is **Paris**, on the Seine, the seat of its government since the 10th century.\n\n"
         "It is also the country's largest city.")
CHANGED = "Having thought again: the capital of France is Lyon."


def _agents(presentation: str) -> list[dict[str, Any]]:
    """alpha answers Paris and presents ``presentation``; beta answers Lyon; both vote for alpha."""
    return [
        scripted("alpha", [step(new_answer=WINNING)], [step(vote="agent1", reason="the capital")],
                 present=presentation),
        scripted("beta", [step(new_answer="Final answer: Lyon")], [step(vote="agent1", reason="Paris is right")]),
    ]


def test_a_presentation_stating_the_agreed_result_in_prose_is_the_final_answer(tmp_path: Path) -> None:
    result = run_team(team_config(*_agents(PROSE)), tmp_path, "What is the capital of France?")
    assert result.status == "completed" and result.winner == "alpha"
    assert result.final_answer == PROSE and result.presentation_not_used == ""
    finished = of_type(records(result), "RunFinished")[-1]["payload"]
    assert finished["reason"] == "the team converged" and finished["presentation_not_used"] == ""


def _massgen(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs")}
    return subprocess.run([sys.executable, "-m", "massgen.cli.main", *args], capture_output=True, text=True,
                          env=env, timeout=60 * FACTOR, cwd=tmp_path)


def test_a_presentation_that_changes_the_result_is_replaced_with_a_word_where_the_user_looks(
        tmp_path: Path) -> None:
    config = tmp_path / "team.yaml"
    config.write_text(yaml.safe_dump({"agents": _agents(CHANGED)}), encoding="utf-8")
    why = "the presentation changed the final answer ('paris' to 'having thought again: the capital of france is lyon')"

    shown = _massgen("--config", str(config), "What is the capital of France?", tmp_path=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == WINNING + "\n"  # the winner's answer, as written
    assert f"[final answer: the winning answer (agent1.1) as written, not its presentation: {why}]" in shown.stderr

    automated = _massgen("--automation", "--config", str(config), "What is the capital of France?",
                         tmp_path=tmp_path)
    fields = dict(line.split(": ", 1) for line in automated.stdout.splitlines() if ": " in line)
    assert fields["RUN_STATUS"] == "completed" and fields["PRESENTATION_NOT_USED"] == why
    trace = records_of(Path(fields["ATTEMPT_DIR"]))
    finished = of_type(trace, "RunFinished")[-1]["payload"]
    assert finished["presentation_not_used"] == why and finished["final_answer"] == WINNING


def records_of(log_dir: Path) -> list[dict[str, Any]]:
    from massgen.logs import read_trace

    return read_trace(log_dir)


@pytest.mark.parametrize(("winner", "presentation", "change"), [
    (WINNING, PROSE, None),
    (WINNING, CHANGED, "having thought again: the capital of france is lyon"),
    (WINNING, "# Paris\n\nAnswer: Lyon", "lyon"),  # its own Answer: line is its result
    ("2 + 2 = 4\nAnswer: 4", "Adding two and two gives **4**, as counting on shows.", None),
    ("2 + 2 = 4\nAnswer: 4", "Counting again, the total is 5.", "5"),
    ("Answer: 1,089", "The result is 1,089.", None),
    ("No explicit result here.", "Anything at all.", None),  # nothing was agreed explicitly: no check
])
def test_what_counts_as_changing_the_agreed_result(winner: str, presentation: str, change: str | None) -> None:
    assert presentation_change(explicit_result(winner), presentation) == change
