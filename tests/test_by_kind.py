"""``bench/by_kind.py``: a team run's table by kind, issue 48's conditions checked, and the reader measured against
the graders, on rows written as ``bench.quality`` writes them."""

from __future__ import annotations

from typing import Any

from bench.by_kind import by_kind, must_show, reader_agreement, table
from bench.tasks import Task, Verdict


def task(task_id: str, kind: str, key: str) -> Task:
    return Task(task_id, f"question {task_id}", key, kind, lambda text: Verdict(None, key in (text or "")))


def program(agent: str, value: str) -> dict[str, Any]:
    return {"agent": agent, "label": f"{agent}.1",
            "text": f"```python\nprint(len('{value}' * 1))\n```\n\nThe program printed:\n{value}\n\nAnswer: {value}"}


def rows(task_id: str, greedy: str, team: str, firsts: list[dict[str, Any]], calls: int = 3) -> list[dict[str, Any]]:
    return [{"task_id": task_id, "method": "greedy", "text": greedy, "calls": 1, "seconds": 2.0},
            {"task_id": task_id, "method": "team", "text": team, "calls": calls, "seconds": 5.0,
             "first_answers": firsts}]


def test_the_table_counts_the_team_the_greedy_call_each_agent_and_the_ceiling_by_kind() -> None:
    tasks = [task("a", "letters", "41"), task("b", "dates", "Monday")]
    written = {"agent": "local_3", "label": "local_3.1", "text": "It is 40."}
    data = (rows("a", "It is 40.", "Answer: 41", [program("local_1", "41"), program("local_2", "40"), written],
                 calls=4)
            + rows("b", "Monday", "Monday", [program("local_1", "x"), program("local_2", "y"),
                                             {"agent": "local_3", "label": "local_3.1", "text": "Monday"}]))
    letters, dates, overall = by_kind(data, tasks)[1], by_kind(data, tasks)[0], by_kind(data, tasks)[2]
    assert (letters.kind, letters.greedy, letters.team, letters.alone, letters.ceiling) == (
        "letters", 0, 1, {"local_1": 1, "local_2": 0, "local_3": 0}, 1)
    assert (dates.team, dates.alone, overall.n, overall.team, overall.calls) == (
        1, {"local_1": 0, "local_2": 0, "local_3": 1}, 2, 2, 7)
    shown = must_show(by_kind(data, tasks))
    assert "overall: team 100.0 % against greedy 50.0 %: +50.0 points, met" in shown
    assert "mean calls 3.50: met" in shown and "wall time 2.50x one greedy call (on 2 questions" in shown


def test_the_reader_is_measured_where_the_graders_say_the_answers_agree_or_differ() -> None:
    tasks = [task("a", "letters", "41")]
    firsts = [program("local_1", "41"), program("local_2", "40"),
              {"agent": "local_3", "label": "local_3.1", "text": "So there are 41."}]
    report = reader_agreement(rows("a", "", "", firsts), tasks)
    assert report.splitlines()[0] == "reader (evidence.states) against the graders: 2 of 2 pairs read right"


def test_an_agent_a_run_did_not_wait_for_is_shown_right_of_answered_and_not_compared() -> None:
    """A run that stopped on agreement has no first answer of the agent it did not wait for: that agent's count
    is out of the runs that weighed its answer, and "at or above its best agent alone" is not claimed."""
    tasks = [task("a", "letters", "41"), task("b", "letters", "42")]
    data = (rows("a", "41", "Answer: 41", [program("local_1", "41"), program("local_2", "41")], calls=2)
            + rows("b", "42", "Answer: 42", [program("local_1", "42"), program("local_2", "42"),
                                             {"agent": "local_3", "label": "local_3.1", "text": "42"}]))
    letters = by_kind(data, tasks)[0]
    assert (letters.alone, letters.answered) == ({"local_1": 2, "local_2": 2, "local_3": 1},
                                                 {"local_1": 2, "local_2": 2, "local_3": 1})
    assert "| letters | 2 |" in table(by_kind(data, tasks)) and " 2 / 2 / 1/1 |" in table(by_kind(data, tasks))
    assert "letters: team 2 against its best agent alone: not known here" in must_show(by_kind(data, tasks))
