"""Check tools: an agent checking the answers in view may compute a result instead of rereading one.

The calculator is model-facing, so its input is hostile: every expression that is not plain arithmetic,
or that would be too large to compute at once, is a tool error with the reason, never an exception or a
hang. In a team, check tools are offered only in turns with answers in view (first answers stay the
model's own work), a computed result that equals an answer in view is agreement with it, and a vote
after a check carries the computed result as its own.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from support import of_type, records, run_team, team_config
from test_answer_quality import TeamServer, chat_agent
from wire.protocols import chat_text

from massgen.actors.agent.check_tools import (
    CALCULATE,
    CALCULATOR_SPEC,
    CalculationError,
    CheckTools,
    calculate,
    comparison_meaning,
    computed,
)
from massgen.actors.coordination.decision import tally as decide
from massgen.actors.coordination.results import final_result
from massgen.configs import ConfigError, validate_data
from massgen.messages import AnswerResult


@pytest.mark.parametrize(("expression", "shown"), [
    ("3 - 4 - 3 + 2 + 5", "3 - 4 - 3 + 2 + 5 = 3"),
    ("17 + 23 * 5 + 8 - 29 * 14", "17 + 23 * 5 + 8 - 29 * 14 = -266"),
    ("  12 +\n 7 ", "12 + 7 = 19"),
    ("6 / 3", "6 / 3 = 2"),  # a whole quotient is written as an answer writes it
    ("7 / 2", "7 / 2 = 3.5"),
    ("2 ^ 10", "2 ^ 10 = 1024"),  # what people write for a power
    ("max(9.11, 9.9)", "max(9.11, 9.9) = 9.9"),
    ("9.11 > 9.9", "9.11 > 9.9 = False"),
    ("round(2 / 3, 2) + abs(-1) + min(4, 5) // 2 % 3", "round(2 / 3, 2) + abs(-1) + min(4, 5) // 2 % 3 = 3.67"),
    ("1,089 + 1", None),  # a thousands comma is a tuple in Python: refused, not misread
])
def test_the_calculator_evaluates_arithmetic_exactly(expression: str, shown: str | None) -> None:
    if shown is None:
        with pytest.raises(CalculationError):
            calculate(expression)
    else:
        assert calculate(expression) == shown


@pytest.mark.parametrize(("expression", "why"), [
    ("", "empty"),
    ("__import__('os').system('true')", "cannot calculate"),
    ("open('/etc/passwd').read()", "cannot calculate"),
    ("(1).__class__", "cannot calculate"),
    ("x + 1", "cannot calculate"),
    ("'a' * 10", "only numbers"),
    ("[1, 2] * 3", "cannot calculate"),
    ("9 ** 9 ** 9", "too large"),
    ("10 ** 5000", "too large"),
    ("(10 ** 1000) * (10 ** 1000) * (10 ** 1000) * (10 ** 1000)", "bits"),
    ("1e308 * 10", "overflows"),
    ("1 / 0", "division by zero"),
    ("round(1.5, 1000)", "round"),
    ("max()", "cannot calculate"),
    ("1 +", "not an arithmetic expression"),
    ("-" * 5000 + "1", "longer than"),
    ("(" * 400 + "1" + ")" * 400, "nested|cannot calculate"),
    ("lambda: 1", "cannot calculate"),
])
def test_anything_but_bounded_arithmetic_is_refused_with_the_reason(expression: str, why: str) -> None:
    with pytest.raises(CalculationError, match=why):
        calculate(expression)


def test_the_tool_answers_every_call_with_a_result_or_an_error() -> None:
    tools = CheckTools(["calculator", "calculator"])
    assert tools.specs() == (CALCULATOR_SPEC,)

    async def calls() -> list[tuple[str, bool]]:
        chained = tools.chain(None)
        return [await chained("calculate", {"expression": "2 + 2"}), await chained("calculate", {"expression": "2 +"}),
                await chained("other", {})]

    ok, bad, unknown = asyncio.run(calls())
    assert ok == ("2 + 2 = 4", False)
    assert bad[1] and bad[0].startswith("calculate: not an arithmetic expression")
    assert unknown == ("unknown tool 'other'", True)


def test_a_check_tool_the_config_does_not_know_is_a_config_error_naming_the_key() -> None:
    with pytest.raises(ConfigError, match="check_tools"):
        validate_data({"agents": [{"id": "a", "backend": {"type": "scripted", "check_tools": ["shell"]}}]}, "team.yaml")


# -- in a team ------------------------------------------------------------------------------------------


def _checking_model(check: str) -> Any:
    """First answers 4 and 5 (free text); a check turn calculates ``check``, then votes for agent2.1."""
    def model(body: dict[str, Any]) -> list[bytes]:
        last = body["messages"][-1]["content"]
        if "response_format" not in body:
            if "Current answers" in body["messages"][-1]["content"] and "You present" in body["messages"][0]["content"]:
                return chat_text("2 + 2 = 4.\nAnswer: 4")  # the presentation
            first = "2 + 2 = 4.\nAnswer: 4" if "agent_a" in body["messages"][0]["content"] else "2 + 2 = 5.\nAnswer: 5"
            return chat_text(first)
        if "Result of tool calculate" in last:
            return chat_text(json.dumps({"action": "vote", "agent_id": "agent2.1", "reason": "it holds"}))
        return chat_text(json.dumps({"action": "calculate", "expression": check}))
    return model


def _agents(server: TeamServer) -> list[dict[str, Any]]:
    return [{**chat_agent(name, server, tool_mode="json_schema", check_tools=["calculator"]),
             "system_message": f"You are {name}."} for name in ("agent_a", "agent_b")]


def test_first_answers_get_no_check_tools_and_a_computed_result_in_view_is_agreement(tmp_path: Path) -> None:
    with TeamServer(_checking_model("2 + 2")) as server:
        result = run_team(team_config(*_agents(server), orchestrator={
            "max_new_answers_per_agent": 1, "final_answer_strategy": "winner_reuse"}), tmp_path)
        bodies = server.bodies()
    assert result.status == "completed", result.reason
    firsts = [b for b in bodies if "Current answers" not in b["messages"][-1]["content"]]
    assert len(firsts) == 2 and not any("response_format" in b for b in firsts)  # free text, no tools
    checks = [b for b in bodies if "response_format" in b]
    assert checks and all("calculate" in json.dumps(b["response_format"]) for b in checks)
    assert all("calculate(expression)" in b["messages"][0]["content"] for b in checks)
    trace = records(result)
    results = [r["payload"] for r in of_type(trace, "ToolCallResult")]
    assert [(r["name"], r["content"], r["is_error"]) for r in results] == [("calculate", "2 + 2 = 4", False)] * 2
    votes = [r["payload"] for r in of_type(trace, "VoteProposed")]
    # the computed 4 agrees with agent1.1: no decision call, whatever the model would have voted for
    assert [(v["target"], v["own_result"], v["agreement"], v["checked"]) for v in votes] == [
        ("agent1", "4", "2 + 2 = 4", True)] * 2
    counted = [r["payload"] for r in of_type(trace, "RecordVote")]
    assert [(v["own_result"], v["checked"]) for v in counted] == [("4", True)] * 2
    assert result.winner == "agent_a" and result.final_answer.endswith("Answer: 4")


def test_a_vote_after_a_check_carries_the_computed_result_as_its_own(tmp_path: Path) -> None:
    with TeamServer(_checking_model("2 * 3")) as server:  # computes 6: no answer in view states it
        result = run_team(team_config(*_agents(server), orchestrator={
            "max_new_answers_per_agent": 1, "final_answer_strategy": "winner_reuse"}), tmp_path)
    assert result.status == "completed", result.reason
    votes = [r["payload"] for r in of_type(records(result), "VoteProposed")]
    assert votes and all(v["target"] == "agent2" and v["own_result"] == "6" and not v["agreement"] for v in votes)
    # a vote whose own result differs from its target's supports neither answer: the first answers decide
    assert all(not v["agreement"] for v in result.votes)


def test_a_refused_expression_is_a_tool_error_and_the_turn_goes_on(tmp_path: Path) -> None:
    with TeamServer(_checking_model("__import__('os').getcwd()")) as server:
        result = run_team(team_config(*_agents(server), orchestrator={
            "max_new_answers_per_agent": 1, "final_answer_strategy": "winner_reuse"}), tmp_path)
    assert result.status == "completed", result.reason
    trace = records(result)
    errors = [r["payload"] for r in of_type(trace, "ToolCallResult") if r["payload"]["name"] == "calculate"]
    assert errors and all(r["is_error"] and "cannot calculate" in r["content"] for r in errors)
    assert [v["payload"]["target"] for v in of_type(trace, "VoteProposed")] == ["agent2", "agent2"]


# -- the judge ------------------------------------------------------------------------------------------


def _answers(*results: str) -> tuple[AnswerResult, ...]:
    return tuple(AnswerResult(agent=f"a{i}", label=f"a{i}.1", result=r, independent=True, latest=True)
                 for i, r in enumerate(results, 1))


ORDER = ["a1", "a2", "a3"]


def test_a_result_check_tools_computed_wins_over_the_prior_and_over_votes_by_habit() -> None:
    answers = _answers("6418", "6398", "6408")  # the greedy first agent a1 is wrong
    habit = {"a1": ("a1", "6418", ""), "a2": ("a2", "6398", ""), "a3": ("a2", "6398", "")}
    assert decide(habit, answers, ORDER, "prior")[0] == "a1"  # without checks the prior stands
    computed = {"a2": "6398", "a3": "6398"}
    assert decide(habit, answers, ORDER, "prior", computed)[0] == "a2"
    assert decide(habit, answers, ORDER, "support", computed)[0] == "a2"


def test_computed_results_no_answer_states_or_that_tie_leave_the_decision_to_the_rule() -> None:
    answers = _answers("233", "154", "234")
    votes = {"a1": ("a1", "233", ""), "a2": ("a1", "233", "301"), "a3": ("a3", "234", "")}
    assert decide(votes, answers, ORDER, "prior", {"a2": "301"})[0] == "a1"  # 301 is no answer in view
    tie = {"a2": "154", "a3": "234"}
    assert decide(votes, answers, ORDER, "prior", tie)[0] == decide(votes, answers, ORDER, "prior")[0] == "a1"
    assert decide(votes, answers, ORDER, "prior", {"a1": "234", "a2": "154", "a3": "234"})[0] == "a3"


def test_in_a_team_a_computed_result_overturns_the_greedy_agents_vote_for_itself(tmp_path: Path) -> None:
    """The prior (first) agent answers 5 and votes for itself without a check; the other computes 4."""
    def model(body: dict[str, Any]) -> list[bytes]:
        system, last = body["messages"][0]["content"], body["messages"][-1]["content"]
        prior = "You are agent_a" in system
        if "response_format" not in body:
            if "You present" in system:
                return chat_text("2 + 2 = 4.\nAnswer: 4")
            return chat_text("2 + 2 = 5.\nAnswer: 5" if prior else "2 + 2 = 4.\nAnswer: 4")
        if prior or "Result of tool calculate" in last:
            return chat_text(json.dumps({"action": "vote", "agent_id": "agent1.1", "reason": "mine is right"}))
        return chat_text(json.dumps({"action": "calculate", "expression": "2+2"}))

    with TeamServer(model) as server:
        result = run_team(team_config(*_agents(server), orchestrator={
            "max_new_answers_per_agent": 1, "final_answer_strategy": "winner_reuse", "winner_rule": "prior"}), tmp_path)
    assert result.status == "completed", result.reason
    by_voter = {r["payload"]["voter"]: r["payload"] for r in of_type(records(result), "RecordVote")}
    assert not by_voter["agent_a"]["checked"] and by_voter["agent_b"]["checked"]
    assert by_voter["agent_b"]["own_result"] == "4"
    assert result.winner == "agent_b" and result.final_answer.endswith("Answer: 4")


# -- a calculated comparison states which number it shows larger or smaller ---------------------------


@pytest.mark.parametrize(("expression", "meaning"), [
    ("9.11 > 9.9", "9.9 is larger than 9.11"),  # False: the other number is the larger
    ("(9.9 > 9.11)", "9.9 is larger than 9.11"),
    ("4.68 < 4.9", "4.68 is smaller than 4.9"),
    ("4.9 <= 4.68", "4.68 is smaller than 4.9"),
    ("9.90 >= 9.11", "9.90 is larger than 9.11"),  # the numbers as written
    ("(-1.5) > (-2)", "-1.5 is larger than -2"),
    ("2 > 2", ""),  # equal numbers show neither larger
    ("1 < 2 < 3", ""),  # a chain names no one number
    ("2 == 2", ""),
    ("2 + 3 > 4", ""),  # a comparison of a calculation is arithmetic checked, not two numbers ordered
    ("2 + 3", ""),
])
def test_a_calculated_comparison_of_two_numbers_reads_as_the_number_it_shows(expression: str, meaning: str) -> None:
    line = calculate(expression)
    assert comparison_meaning(line) == meaning
    assert computed(CALCULATE, line) == (meaning or line)  # the model still reads the calculator's line
    assert final_result(computed(CALCULATE, line)) == (final_result(meaning) if meaning else final_result(line))


def test_in_a_team_a_calculated_comparison_overturns_the_prior_it_refutes(tmp_path: Path) -> None:
    """The README's question, as the default team's trace showed it: the prior (first) agent says 9.11 and
    votes for itself; the other calculates 9.11 > 9.9, gets False, and would vote for the prior by habit."""
    def model(body: dict[str, Any]) -> list[bytes]:
        system, last = body["messages"][0]["content"], body["messages"][-1]["content"]
        prior = "You are agent_a" in system
        if "response_format" not in body:
            return chat_text("Comparing the decimals, 9.11 is larger than 9.9." if prior
                             else "9.9 = 9.90 and 90 > 11, so 9.9 is larger than 9.11.")
        if prior or "Result of tool calculate" in last:
            return chat_text(json.dumps({"action": "vote", "agent_id": "agent1.1", "reason": "it matches"}))
        return chat_text(json.dumps({"action": "calculate", "expression": "9.11 > 9.9"}))

    with TeamServer(model) as server:
        result = run_team(team_config(*_agents(server), orchestrator={
            "max_new_answers_per_agent": 1, "final_answer_strategy": "winner_reuse", "winner_rule": "prior"}), tmp_path)
    assert result.status == "completed", result.reason
    trace = records(result)
    shown = [r["payload"]["content"] for r in of_type(trace, "ToolCallResult")]
    assert shown == ["9.11 > 9.9 = False"]  # what the model read: the calculator's line
    by_voter = {r["payload"]["voter"]: r["payload"] for r in of_type(trace, "RecordVote")}
    assert (by_voter["agent_b"]["own_result"], by_voter["agent_b"]["checked"]) == ("9.9", True)
    assert result.winner == "agent_b" and (result.final_answer or "").endswith("9.9 is larger than 9.11.")
