"""Code answers checked by running them against the task's own examples (``check_tools: [code_examples]``).

Each agent runs its code answer confined against the examples the task shows (doctest lines,
``f(x) == y`` lines, ``assert`` lines) on its own turn worker, and the outcome goes with the
answer into the trace. Answers that behave alike on those inputs agree, however they are written;
one that does not parse or fails an example cannot beat one that passes, not as the prior and not
with more votes; and a first round whose answers all pass with one behaviour ends the run at once.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from support import of_type, records, resumed_after_last_answer, run_team, scripted, step, team_config

from massgen.actors.coordination.code_checks import answer_code, check_answer, task_examples

TASK = '''Complete the function.

from typing import List


def below_zero(operations: List[int]) -> bool:
    """ The account starts at zero; is the balance ever below zero?
    >>> below_zero([1, 2, 3])
    False
    >>> below_zero([1, 2, -4, 5])
    True
    """
'''
LOOP = "def below_zero(operations):\n    balance = 0\n    for op in operations:\n        balance += op\n" \
       "        if balance < 0:\n            return True\n    return False\n"
ACCUMULATE = "from itertools import accumulate\n\n\ndef below_zero(operations):\n" \
             "    print('checking')  # what the code prints is not its result\n" \
             "    return any(total < 0 for total in accumulate(operations))\n"
SUM = "def below_zero(operations):\n    return sum(operations) < 0\n"  # fails the second example
SUM_AGAIN = "def below_zero(ops):\n    total = sum(ops)\n    return total < 0\n"  # the same wrong behaviour


def fenced(code: str, words: str = "Here is the function:") -> str:
    return f"{words}\n\n```python\n{code}```"


def test_the_task_examples_are_read_from_doctests_equalities_and_asserts() -> None:
    found = task_examples(TASK)
    assert found is not None and found.examples == (("below_zero([1, 2, 3])", "False"),
                                                    ("below_zero([1, 2, -4, 5])", "True"))
    asserts = task_examples("Write f.\nassert f(2) == 4\nassert f(3) == 9, 'squares'\n")
    assert asserts is not None and asserts.examples == (("f(2)", "4"), ("f(3)", "9"))
    stated = task_examples('def add(a, b):\n    """add(2, 3) == 5\n    add(1, 1) ➞ 2\n    """\n')
    assert stated is not None and stated.examples == (("add(2, 3)", "5"), ("add(1, 1)", "2"))
    assert task_examples("What is 2 + 2?") is None and task_examples("x == 3 is true") is None


def test_the_forms_humaneval_writes_its_examples_in_are_read_and_broken_ones_left_out() -> None:
    task = ('def f(s, n):\n    """\n    f("5 apples", 19) ->19 - 5 = 14\n    f("a", 3) ==> True\n'
            '    * f("b", 1) => [1, 2]\n    f({"a": 1}, 2) should return False.\n    f(a, 1) => 3\n'
            '    >>> f("c",\n    >>> f("d", 2)\n    [1,\n     2]\n    """\n')
    found = task_examples(task)
    assert found is not None and found.examples == (
        ('f("5 apples", 19)', "14"), ('f("a", 3)', "True"), ('f("b", 1)', "[1, 2]"), ('f({"a": 1}, 2)', "False"),
        ('f("d", 2)', "[1, 2]"))  # f(a, 1) names an a the task never defines; f("c", does not parse


def test_an_answers_code_is_its_last_python_block_else_its_text_when_that_parses() -> None:
    assert answer_code(fenced(SUM) + "\nor better:\n" + fenced(LOOP, "")) == LOOP
    assert answer_code(LOOP) == LOOP
    assert answer_code("It returns False.") is None


def check(answer: str) -> Any:
    return asyncio.run(check_answer(TASK, answer))


def test_an_answer_is_run_against_the_examples_and_what_ran_is_kept() -> None:
    passing, failing = check(fenced(LOOP)), check(fenced(SUM))
    assert passing.passed and [(e.call, e.expected, e.got, e.passed) for e in passing.examples if not e.probe] == [
        ("below_zero([1, 2, 3])", "False", "False", True), ("below_zero([1, 2, -4, 5])", "True", "True", True)]
    assert not failing.passed and [e.got for e in failing.examples if not e.probe] == ["False", "False"]
    probes = [(e.call, e.got) for e in passing.examples if e.probe]  # the examples' arguments, changed
    assert ("below_zero([])", "False") in probes and ("below_zero([1, 2, -4])", "True") in probes
    broken = check("```python\ndef below_zero(operations:\n    return 1\n```")
    assert not broken.passed and not broken.parsed and broken.error.startswith("does not parse")
    prose = check("The balance goes below zero when a prefix sum is negative.")
    assert not prose.passed and "no Python code" in prose.error
    raising = check(fenced("def below_zero(operations):\n    return operations[10] < 0\n"))
    assert not raising.passed and [e.got for e in raising.examples if not e.probe] == ["raised IndexError"] * 2
    assert asyncio.run(check_answer("What is 2 + 2?", "4")) is None  # no code task: nothing runs


def test_two_answers_written_differently_with_one_behaviour_agree() -> None:
    loop, accumulate, wrong, wrong_again = (check(fenced(c)) for c in (LOOP, ACCUMULATE, SUM, SUM_AGAIN))
    assert loop.behaviour == accumulate.behaviour and loop.passed and accumulate.passed
    assert wrong.behaviour == wrong_again.behaviour != loop.behaviour


def test_answers_that_pass_the_examples_but_behave_differently_elsewhere_do_not_agree() -> None:
    """Probes (the examples' arguments changed) tell apart what the two examples alone cannot."""
    memorised = check(fenced("def below_zero(operations):\n    return operations == [1, 2, -4, 5]\n"))
    loop = check(fenced(LOOP))
    assert memorised.passed and loop.passed  # both give what the task's examples say
    assert memorised.behaviour != loop.behaviour
    assert ("below_zero([1, 2, -4])", "False") in [(e.call, e.got) for e in memorised.examples]


def test_a_hanging_answer_fails_its_examples_within_the_time_limits() -> None:
    hung = check(fenced("def below_zero(operations):\n    while True:\n        pass\n"))
    assert not hung.passed and [e.got for e in hung.examples if not e.probe] == ["raised Late"] * 2


# The wrong function, and everything it can do to the harness it runs in: replace its comparison, and print a
# report of its own under the harness's mark (of every call, or of every example with its expected value, when
# the harness holds them), then leave before the harness reports.
FORGER = """import __main__, json, os, sys
def below_zero(operations):
    return sum(operations) < 0
__main__.same = lambda got, expected: True
if hasattr(__main__, "EXAMPLES"):
    rows = [[call, expected, expected, True, probe] for call, expected, probe in __main__.EXAMPLES]
    print(__main__.MARK + json.dumps({"parsed": True, "error": "", "examples": rows}), file=sys.__stdout__, flush=True)
else:
    rows = [["True", "True", ""] for _ in __main__.CALLS]
    print(__main__.MARK + json.dumps({"parsed": True, "error": "", "results": rows}), file=sys.__stdout__, flush=True)
os._exit(0)
"""


def test_the_checked_code_cannot_forge_its_verdict() -> None:
    """What the task expects never enters the sandbox, and the verdict is computed outside it: the forger can
    only claim values it returned, and a claim is judged as a return would be."""
    forged = check(fenced(FORGER))
    assert not forged.passed
    assert [(e.got, e.passed) for e in forged.examples if not e.probe] == [("True", False), ("True", True)]


def test_a_long_check_is_work_not_idleness(tmp_path: Path) -> None:
    """Each example takes a second, far past the idle deadline; the check's runs are traced as tool calls,
    which keep the agent alive under their own deadline, as a running command does."""
    slow = "import time\n\n\ndef below_zero(operations):\n    time.sleep(0.6)\n" + LOOP.split(":\n", 1)[1]
    team = team_config(coder("a", slow), coder("b", LOOP), orchestrator=rules("support"), turn_timeout=120,
                       idle_timeout=1, run_timeout=120)
    result = run_team(team, tmp_path, TASK)
    trace = records(result)
    assert not of_type(trace, "AgentRestarting", "DeadlineExpired"), [r["type"] for r in trace]
    checks = [r["payload"] for r in of_type(trace, "ToolCallRequested") if r["sender"].split("#")[0] == "a"]
    assert [c["name"] for c in checks] == ["code_examples"]
    answered = next(r["payload"] for r in of_type(trace, "AnswerAccepted") if r["payload"]["agent"] == "a")
    assert answered["code_check"]["parsed"] and all(e["passed"] for e in answered["code_check"]["examples"]
                                                    if not e["probe"])


# -- in a team ------------------------------------------------------------------------------------------


def coder(agent_id: str, code: str, vote: str | None = None) -> dict[str, Any]:
    """Answers ``code`` first; once every answer is in view, votes for ``vote``."""
    calls: list[list[dict[str, Any]]] = [[step(new_answer=fenced(code))]]
    if vote is not None:
        calls.append([step(when_answers=["agent1", "agent2", "agent3"]), step(vote=vote, reason="it is right")])
    return scripted(agent_id, *calls, check_tools=["code_examples"])


def rules(rule: str) -> dict[str, Any]:
    return {"max_new_answers_per_agent": 1, "final_answer_strategy": "winner_reuse", "winner_rule": rule}


@pytest.mark.parametrize("rule", ["prior", "support"])
def test_a_failing_answer_loses_to_a_passing_one_even_as_the_prior_with_more_votes(tmp_path: Path, rule: str) -> None:
    """a (the prior) and c write the same wrong code; every vote goes to a. b's passing answer wins."""
    team = team_config(coder("a", SUM, "agent1"), coder("b", LOOP, "agent1"), coder("c", SUM_AGAIN, "agent1"),
                       orchestrator=rules(rule), turn_timeout=30)
    result = run_team(team, tmp_path, TASK)
    assert result.status == "completed", result.reason
    trace = records(result)
    accepted = {r["payload"]["agent"]: r["payload"] for r in of_type(trace, "AnswerAccepted")}
    checks = {agent: a["code_check"] for agent, a in accepted.items()}
    assert {agent: [e["passed"] for e in c["examples"] if not e["probe"]] for agent, c in checks.items()} == {
        "a": [True, False], "b": [True, True], "c": [True, False]}
    assert accepted["a"]["result"] == accepted["c"]["result"] != accepted["b"]["result"]  # a and c agree
    assert accepted["b"]["result"].startswith("code behaviour ")
    assert [r["payload"]["target"] for r in of_type(trace, "RecordVote")] == ["a", "a", "a"]
    assert result.winner == "b" and LOOP in (result.final_answer or "")


def test_the_check_runs_on_the_answering_agents_turn_and_is_in_its_proposal(tmp_path: Path) -> None:
    team = team_config(coder("a", LOOP, "agent2"), coder("b", SUM, "agent2"), coder("c", LOOP, "agent2"),
                       orchestrator=rules("support"), turn_timeout=30)
    result = run_team(team, tmp_path, TASK)
    proposals = [r for r in of_type(records(result), "AnswerProposed")]
    assert len(proposals) == 3 and all(p["payload"]["code_check"]["parsed"] for p in proposals)
    assert {p["sender"] for p in proposals} == {"a#1", "b#1", "c#1"}  # sent by the agents, checked already
    assert result.winner in ("a", "c")  # the two passing answers agree: the vote for b cannot make it win


def test_a_first_round_that_passes_with_different_behaviours_is_not_unanimous(tmp_path: Path) -> None:
    memorised = "def below_zero(operations):\n    return operations == [1, 2, -4, 5]\n"
    team = team_config(coder("a", memorised, "agent2"), coder("b", LOOP, "agent2"), coder("c", ACCUMULATE, "agent2"),
                       orchestrator=rules("prior"), turn_timeout=30)
    result = run_team(team, tmp_path, TASK)
    trace = records(result)
    assert not of_type(trace, "UnanimousFirstAnswers") and of_type(trace, "RecordVote")
    assert result.winner == "b"  # b and c agree; a, the prior, voted for b


def test_a_unanimous_code_first_round_ends_the_run_at_three_calls(tmp_path: Path) -> None:
    """Three differently written answers that all pass with one behaviour: no vote round."""
    team = team_config(coder("a", LOOP, "agent1"), coder("b", ACCUMULATE, "agent1"),
                       coder("c", LOOP.replace("balance", "total"), "agent1"), orchestrator=rules("prior"),
                       turn_timeout=30)
    result = run_team(team, tmp_path, TASK)
    assert result.status == "completed", result.reason
    trace = records(result)
    unanimous = [r["payload"] for r in of_type(trace, "UnanimousFirstAnswers")]
    assert len(unanimous) == 1 and unanimous[0]["result"].startswith("code behaviour ")
    assert len(of_type(trace, "ModelCallStarted")) == 3 and not of_type(trace, "RecordVote")
    assert result.winner == "a"


def test_without_code_examples_code_answers_are_compared_as_text(tmp_path: Path) -> None:
    """The same team without the check: nothing runs, and the unanimous round is not found."""
    agents = [coder("a", LOOP, "agent1"), coder("b", ACCUMULATE, "agent1"), coder("c", LOOP, "agent1")]
    for agent in agents:
        agent["backend"]["check_tools"] = []
    result = run_team(team_config(*agents, orchestrator=rules("prior"), turn_timeout=30), tmp_path, TASK)
    trace = records(result)
    assert all(r["payload"].get("code_check") is None for r in of_type(trace, "AnswerAccepted"))
    assert not of_type(trace, "UnanimousFirstAnswers") and len(of_type(trace, "ModelCallStarted")) > 3


def test_a_resumed_run_keeps_what_its_answers_ran(tmp_path: Path) -> None:
    """Cut after the three accepted answers (what a SIGKILL then leaves): resumed, the passing answer
    still wins, from the checks in the trace, without running anything again."""
    team = team_config(coder("a", SUM, "agent1"), coder("b", LOOP, "agent1"), coder("c", SUM_AGAIN, "agent1"),
                       orchestrator=rules("prior"), turn_timeout=30)
    whole = run_team(team, tmp_path / "whole", TASK)
    resumed = resumed_after_last_answer(whole, tmp_path)
    assert (resumed.status, resumed.winner) == ("completed", "b") == (whole.status, whole.winner)
    again = [r["payload"] for r in of_type(records(resumed), "AnswerAccepted")]
    assert {a["agent"]: a["code_check"]["examples"][1]["passed"] for a in again} == {"a": False, "b": True, "c": False}
    assert not of_type(records(resumed), "AnswerProposed")  # nothing was answered, or run, again


def test_an_answer_that_writes_only_the_function_gets_the_tasks_imports() -> None:
    """HumanEval's prompts import what their signatures use; an answer may write just the function."""
    typed = fenced("def below_zero(operations: List[int]) -> bool:\n    return min(accumulate(operations)) < 0\n")
    task = "from typing import List\nfrom itertools import accumulate\nimport os, sys\n\n" + TASK
    found = task_examples(task)
    assert found is not None and found.imports.startswith("from typing import List\nfrom itertools import accumulate\n")
    result = asyncio.run(check_answer(task, typed))
    assert result is not None and result.passed, result


def test_when_the_run_ends_early_the_best_answer_so_far_is_a_passing_one() -> None:
    from massgen.actors.coordination.answers import Coordination
    from massgen.configs.schema import OrchestratorConfig

    coord = Coordination(agents=["a", "b"], labels={"a": "agent1", "b": "agent2"}, rules=OrchestratorConfig())
    coord.add_answer("a", fenced(LOOP), independent=True, code=check(fenced(LOOP)))
    coord.add_answer("b", fenced(SUM), independent=True, code=check(fenced(SUM)))  # newest, failing
    chosen = coord.best_so_far(None)
    assert chosen is not None and chosen.agent == "a"


# -- code_ranking: a checking turn runs every answer in view on the same inputs (CodeT) ----------------------

MEMORISED = "def below_zero(operations):\n    return operations == [1, 2, -4, 5]\n"
BIG_DROP = "def below_zero(operations):\n    return min(operations) < -3\n"  # passes both examples, wrong


def ranker(agent_id: str, code: str) -> dict[str, Any]:
    """Answers ``code``; its script has no vote: a checking turn that calls the model would find it empty."""
    return scripted(agent_id, [step(new_answer=fenced(code))], check_tools=["code_examples", "code_ranking"],
                    on_exhausted="stop")


def test_a_checking_turn_votes_for_the_behaviour_most_answers_share_without_a_model_call(tmp_path: Path) -> None:
    team = team_config(ranker("a", MEMORISED), ranker("b", LOOP), ranker("c", ACCUMULATE),
                       orchestrator=rules("prior"), turn_timeout=30)
    result = run_team(team, tmp_path, TASK)
    assert result.status == "completed", result.reason
    trace = records(result)
    assert len(of_type(trace, "ModelCallStarted")) == 3  # the three first answers; the votes ran code instead
    votes = [r["payload"] for r in of_type(trace, "RecordVote")]
    accepted = {r["payload"]["agent"]: r["payload"]["result"] for r in of_type(trace, "AnswerAccepted")}
    assert [(v["target"], v["own_result"], v["checked"]) for v in votes] == [("b", accepted["b"], True)] * 3
    assert "2 of the 3 that pass the examples behave alike" in votes[0]["reason"]
    assert result.winner == "b"  # over the prior, which passed the examples too


def test_tests_the_answers_write_decide_between_answers_that_pass_the_examples(tmp_path: Path) -> None:
    """c, listed last, writes a test of its own that only its answer passes: it beats the first listed."""
    tested = LOOP + "\n\nassert below_zero([1, -2]) == True\n"
    team = team_config(ranker("a", MEMORISED), ranker("b", BIG_DROP), ranker("c", tested),
                       orchestrator=rules("prior"), turn_timeout=30)
    result = run_team(team, tmp_path, TASK)
    assert result.status == "completed", result.reason
    votes = [r["payload"] for r in of_type(records(result), "RecordVote")]
    assert [v["target"] for v in votes] == ["c"] * 3 and "passing 1 of the 1 written tests" in votes[0]["reason"]
    assert result.winner == "c"
