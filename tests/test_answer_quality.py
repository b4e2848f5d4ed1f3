"""What makes a team's answer better than one call: reasoning before commitment, agreement counted
as evidence, a judge that weighs independent answers, and no wasted calls.

The models here are scripted (our scripted backend, or a loopback server speaking OpenAI's Chat
Completions wire protocol driven through the official client), so every rule is checked exactly.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support import assert_trace_invariants, of_type, records, run_team, scripted, step, team_config
from wire.protocols import chat_chunk, chat_text, chat_tool_delta, sse
from wire.server import Recorded, Reply, Stream, WireServer

from massgen.actors.coordination.decision import tally as decide
from massgen.actors.coordination.results import final_result, reason_result, stated_result
from massgen.configs import TeamConfig
from massgen.configs.loader import ConfigError
from massgen.messages import AnswerResult

# -- a model server whose reply depends on the request ---------------------------------------------


class TeamServer(WireServer):
    """OpenAI Chat Completions on 127.0.0.1; ``reply(body)`` answers each request by what it asks."""

    def __init__(self, reply: Callable[[dict[str, Any]], list[bytes]]) -> None:
        super().__init__()
        self.reply = reply

    def next_reply(self, recorded: Recorded) -> Reply:
        return Stream(self.reply(recorded.body))

    def bodies(self) -> list[dict[str, Any]]:
        return [r.body for r in self.requests if r.path.endswith("/chat/completions")]


def tool_reply(text: str, name: str, arguments: dict[str, Any]) -> list[bytes]:
    return [
        chat_chunk({"role": "assistant", "content": text}),
        chat_tool_delta(0, id="call_1", name=name, arguments=json.dumps(arguments)),
        chat_chunk({}, "tool_calls"),
        chat_chunk(None, usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}),
        sse("[DONE]"),
    ]


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools") or ()]


def vote_targets(body: dict[str, Any]) -> list[str]:
    for tool in body.get("tools") or ():
        if tool["function"]["name"] == "vote":
            return list(tool["function"]["parameters"]["properties"]["agent_id"]["enum"])
    return []


def agreeing_model(body: dict[str, Any]) -> list[bytes]:
    """Every agent gives the same answer, then votes for the first answer it sees."""
    if "vote" in tool_names(body):
        return tool_reply("Checked: 2 + 2 = 4.", "vote", {"agent_id": vote_targets(body)[0], "reason": "correct"})
    if "new_answer" in tool_names(body):
        return tool_reply("Two plus two: 2 + 2 = 4.", "new_answer", {"content": "Answer: 4"})
    return chat_text("2 + 2 = 4.\nAnswer: 4")


def chat_agent(agent_id: str, server: WireServer, **backend: Any) -> dict[str, Any]:
    return {"id": agent_id, "backend": {"type": "chatcompletion", "base_url": f"{server.url}/v1", "model": "m",
                                        "api_key": "test", **backend}}


def calls(trace: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return of_type(trace, "ModelCallStarted")


# -- no wasted calls -------------------------------------------------------------------------------


def test_three_agreeing_agents_take_seven_calls_in_three_steps(tmp_path: Path) -> None:
    with TeamServer(agreeing_model) as server:
        config = team_config(*(chat_agent(name, server) for name in ("a", "b", "c")))
        result = run_team(config, tmp_path)
    assert result.status == "completed" and result.winner_label == "agent1.1", result.reason
    trace = records(result)
    assert_trace_invariants(trace)
    started = calls(trace)
    assert len(started) == 7 and result.usage["model_calls"] == 7
    # Step 1: three independent answers. Step 2: three votes, each made with all three answers in
    # view. Step 3: the presentation. No agent is asked to look at its own answer alone.
    answers = of_type(trace, "AnswerAccepted")
    assert [a["payload"]["independent"] for a in answers] == [True, True, True]
    answering = [c for c in started if c["payload"]["tools"] == ["new_answer"]]
    voting = [c for c in started if "vote" in c["payload"]["tools"]]
    presenting = [c for c in started if not c["payload"]["tools"]]
    assert (len(answering), len(voting), len(presenting)) == (3, 3, 1)
    assert max(c["seq"] for c in answering) < min(a["seq"] for a in answers[-1:]) < min(c["seq"] for c in voting)
    last_vote = max(v["seq"] for v in of_type(trace, "RecordVote"))
    assert max(c["seq"] for c in voting) < last_vote < presenting[0]["seq"]
    turns = of_type(trace, "TurnStarted")
    assert all(len(t["payload"]["view_labels"]) in (0, 3) for t in turns)


def test_winner_reuse_takes_six_calls(tmp_path: Path) -> None:
    with TeamServer(agreeing_model) as server:
        config = team_config(*(chat_agent(name, server) for name in ("a", "b", "c")),
                             orchestrator={"final_answer_strategy": "winner_reuse"})
        result = run_team(config, tmp_path)
    assert result.status == "completed" and result.usage["model_calls"] == 6
    # the answer carries the work written before the call, not only its final line
    assert result.final_answer == "Two plus two: 2 + 2 = 4.\n\nAnswer: 4"


# -- agreement is evidence -------------------------------------------------------------------------


def test_a_new_answer_equal_to_one_in_view_is_recorded_as_agreement(tmp_path: Path) -> None:
    config = team_config(
        scripted("a", [step(new_answer="The capital is Paris.\nAnswer: Paris")], [step(vote="agent1", reason="mine")]),
        scripted("b", [step(new_answer="Answer: Lyon")],
                 [step(new_answer="Looking again, it is Paris.\nAnswer: **paris**")]),
        orchestrator={"final_answer_strategy": "winner_reuse"},
    )
    result = run_team(config, tmp_path)
    assert result.status == "completed" and result.winner == "a", result.reason
    trace = records(result)
    assert_trace_invariants(trace)
    assert not of_type(trace, "TurnCorrection")  # no correction loop: one call, one vote
    assert set(result.answers) == {"agent1.1", "agent2.1"}
    agreement = next(r["payload"] for r in of_type(trace, "VoteProposed") if r["payload"]["agreement"])
    assert agreement["agreement"] == "Looking again, it is Paris.\nAnswer: **paris**"
    assert agreement["target_content"] == "The capital is Paris.\nAnswer: Paris"
    assert agreement["reason"] == "Looking again, it is Paris.\nAnswer: **paris**"  # the model's words
    recorded = [r["payload"] for r in of_type(trace, "RecordVote")]
    assert {(v["voter"], v["target"], v["agreement"]) for v in recorded} == {("a", "a", False), ("b", "a", True)}


def test_a_vote_reason_that_echoes_our_correction_is_not_stored(tmp_path: Path) -> None:
    echo = ("You did not call new_answer or vote. End your turn with exactly one call of new_answer(content) or"
            " vote(agent_id, reason).")
    config = team_config(
        scripted("a", [step(new_answer="4")], [step(vote="agent1", reason="mine is right")]),
        scripted("b", [step(new_answer="4, since 2 + 2 = 4")], [step(text="hmm")],
                 [step(vote="agent1", reason=echo)]),
        orchestrator={"final_answer_strategy": "winner_reuse"},
    )
    result = run_team(config, tmp_path)
    assert result.status == "completed", result.reason
    trace = records(result)
    assert [r["payload"]["problem"] for r in of_type(trace, "TurnCorrection")] == [
        "You did not call new_answer or vote."]
    reasons = {v["voter"]: v["reason"] for v in result.votes if v["valid"]}
    assert reasons == {"a": "mine is right", "b": ""}
    assert echo not in json.dumps(of_type(trace, "RecordVote"))


# -- reasoning before commitment, in every tool mode ----------------------------------------------


def test_native_mode_keeps_the_reasoning_before_a_call_in_the_conversation(tmp_path: Path) -> None:
    replies = iter([
        tool_reply("Reasoning: 2 + 2 = 4.", "vote", {"agent_id": "agent1", "reason": "x"}),  # nothing to vote for
        tool_reply("So I answer.", "new_answer", {"content": "Answer: 4"}),
        tool_reply("", "vote", {"agent_id": "agent1", "reason": "it is mine and right"}),
        chat_text("Answer: 4"),
    ])
    with TeamServer(lambda body: next(replies)) as server:
        result = run_team(team_config(chat_agent("solo", server)), tmp_path)
        bodies = server.bodies()
    assert result.status == "completed", result.reason
    second = bodies[1]["messages"]
    assert {"role": "assistant", "content": "Reasoning: 2 + 2 = 4."} in second
    assert result.answers["agent1.1"] == "So I answer.\n\nAnswer: 4"


def test_text_mode_reasons_first_and_calls_at_the_end(tmp_path: Path) -> None:
    def model(body: dict[str, Any]) -> list[bytes]:
        system = body["messages"][0]["content"]
        assert "<tool_call>" in system
        if "Current answers:\n<agent1.1" in body["messages"][-1]["content"]:
            call = {"name": "vote", "arguments": {"agent_id": "agent1", "reason": "checked"}}
        else:
            call = {"name": "new_answer", "arguments": {"content": "Answer: 4"}}
        return chat_text(f"Work: 2 + 2 = 4.\n<tool_call>{json.dumps(call)}</tool_call>")

    with TeamServer(model) as server:
        result = run_team(team_config(chat_agent("solo", server, tool_mode="text")), tmp_path)
    assert result.status == "completed", result.reason
    assert result.answers["agent1.1"] == "Work: 2 + 2 = 4.\n\nAnswer: 4"


def test_json_mode_thinks_in_free_text_then_makes_a_short_constrained_decision(tmp_path: Path) -> None:
    def model(body: dict[str, Any]) -> list[bytes]:
        if "response_format" in body:  # the decision, after the free text
            return chat_text(json.dumps({"action": "vote", "agent_id": "agent1", "reason": "mine holds up"}))
        if "Current answers:\n<agent1.1" in body["messages"][-1]["content"]:
            return chat_text("Checking again: 2 + 2 = 5?\nAnswer: 5")  # disagrees: a decision is needed
        return chat_text("2 + 2 = 4.\nAnswer: 4")

    with TeamServer(model) as server:
        result = run_team(team_config(chat_agent("solo", server, tool_mode="json_schema")), tmp_path)
        bodies = server.bodies()
    assert result.status == "completed", result.reason
    assert result.answers == {"agent1.1": "2 + 2 = 4.\nAnswer: 4"}  # the free text is the answer
    free, decision = [b for b in bodies if "response_format" not in b], [b for b in bodies if "response_format" in b]
    assert not any("tools" in b for b in bodies)
    assert len(decision) == 1 and len(free) == 3  # answer, check, presentation
    assert {"role": "assistant", "content": "Checking again: 2 + 2 = 5?\nAnswer: 5"} in decision[0]["messages"]
    assert decision[0]["max_tokens"] <= 200
    assert result.votes[-1]["reason"] == "mine holds up"


def test_json_mode_agreement_needs_no_decision_call(tmp_path: Path) -> None:
    with TeamServer(lambda body: chat_text("2 + 2 = 4.\nAnswer: 4")) as server:
        config = team_config(chat_agent("a", server, tool_mode="json_schema"),
                             chat_agent("b", server, tool_mode="json_schema"),
                             orchestrator={"final_answer_strategy": "winner_reuse"})
        result = run_team(config, tmp_path)
        bodies = server.bodies()
    assert result.status == "completed" and result.usage["model_calls"] == 4
    assert not any("response_format" in b for b in bodies)
    assert all(v["agreement"] for v in result.votes if v["valid"])


# -- the judge -------------------------------------------------------------------------------------


def answer(agent: str, n: int, result: str, independent: bool = True, latest: bool = True) -> AnswerResult:
    return AnswerResult(agent=agent, label=f"{agent}.{n}", result=result, independent=independent, latest=latest)


def test_independent_agreement_counts_as_votes_and_breaks_ties() -> None:
    order = ["x", "y", "z"]
    answers = (answer("x", 1, "42"), answer("y", 1, "42"), answer("z", 1, "41"))
    # one vote each way: "42" also has the agreement of two independent answers
    winner, support = decide({"x": ("z", "41", ""), "z": ("x", "42", "")}, answers, order)
    assert winner == "x" and support == {"42": 2, "41": 1}
    # without votes, agreement alone decides the best answer so far
    assert decide({}, answers, order)[0] == "x"
    # votes still outweigh one agreement
    winner, _ = decide({"x": ("z", "41", ""), "y": ("z", "41", ""), "z": ("z", "41", "")}, answers, order)
    assert winner == "z"


def test_ties_between_results_go_to_the_agent_listed_first() -> None:
    answers = (answer("y", 1, "b"), answer("x", 1, "a"))
    assert decide({"x": ("y", "b", ""), "y": ("x", "a", "")}, answers, ["x", "y"])[0] == "x"
    assert decide({}, answers, ["x", "y"]) == (None, {})  # no evidence at all: the caller takes the newest


def test_final_results_compare_the_answer_line_case_spacing_and_emphasis_aside() -> None:
    assert final_result("Work...\n**Answer: 1,089**") == final_result("answer:   1089.") == "1089"
    assert final_result("9.9 is larger.") == final_result("9.9 IS  larger") != final_result("9.11 is larger")
    assert final_result("so the result is Answer: -12 (see above)") == final_result("The answer is -12.") == "-12"
    assert final_result("Final Answer: \\boxed{42}") == final_result("so 40 + 2 = 42.\nAnswer:\n42") == "42"
    assert final_result("") == ""


# -- the team against one greedy call (issue 20) ---------------------------------------------------

# Endings the 1.5B local model wrote in bench/results/quality-arithmetic-n15-s0/answers.jsonl and
# the traces, with the result each states.
RAW_ENDINGS = {
    "Step 3: 467 - 0 = 467, which is indeed 467": "467",
    "Therefore, the result of the expression \\( 3 + 11 * 13 + 10 - 19 * 20 \\) is -336.": "-336",
    "So, the final answer is:\n\\[\n\\boxed{-336}\n\\]": "-336",
    "Adding these up, the value of the whole expression is 507": "507",
    "Thus, the result of the expression is \\(\\boxed{-367}\\).": "-367",
    "So the final answer is:\n\\[Answer: \\boxed{340}\\]": "340",
    "The final answer is:\nAnswer: \\(-224\\)": "-224",
    "The final answer to the expression \\(12 + 22 * 26 + 25 - 21 * 20\\) is \\(\\boxed{913}\\).": "913",
    "So, the result of 8 + 29 * 17 + 22 - 25 * 19 is 48.": "48",
    "Therefore, the final answer is 'Answer: 124'.": "124",
    "- Subtract 348: 241.25 - 348 = -106.75\n\nTherefore, the final answer is:\n\nAnswer: -106.75": "-106.75",
}


def test_results_are_read_from_the_endings_small_models_write() -> None:
    for text, result in RAW_ENDINGS.items():
        assert stated_result(text) == result, text
        assert final_result(text) == result, text
    # a line that names the answer but states none does not hide the boxed result after it
    assert stated_result("The final answer will be the result of the above calculation.\n\\boxed{585}") == "585"
    # prose states no result: its agreement is still by its last line
    assert stated_result("The capital of France is Paris.") == ""
    assert final_result("The capital of France is Paris.") == "the capital of france is paris"
    assert stated_result("Answer: Paris") == "paris"
    assert stated_result("289 - 165\n124") == ""  # a bare last number after working that does not announce it


def test_the_bench_scores_the_same_results_the_judge_reads() -> None:
    from bench.quality import extract

    for text, result in RAW_ENDINGS.items():
        assert extract(text) == (int(result) if "." not in result else float(result)), text


def differing_team(*votes: list[dict[str, Any]], rule: str = "support") -> TeamConfig:
    """Three agents with three different first answers, then one scripted vote call each."""
    firsts = ["26 * 9 = 234 ... Answer: 457", "26 * 9 = 234 ... Answer: 456", "Answer: 999"]
    return team_config(
        *(scripted(name, [step(new_answer=first)], vote)
          for name, first, vote in zip(("a", "b", "c"), firsts, votes, strict=True)),
        orchestrator={"final_answer_strategy": "winner_reuse", "winner_rule": rule},
    )


def test_each_agent_sees_the_answers_in_its_own_order_and_the_trace_shows_it(tmp_path: Path) -> None:
    config = differing_team(*([step(vote="agent2", reason="ok")] for _ in range(3)))
    result = run_team(config, tmp_path)
    assert result.status == "completed", result.reason
    trace = records(result)
    assert_trace_invariants(trace)
    seen = {t["payload"]["agent"]: t["payload"]["view_labels"] for t in of_type(trace, "TurnStarted")
            if t["payload"]["view_labels"]}
    # labels unchanged; the config order rotated so that each other answer heads one view and one's own comes last
    assert seen == {"a": ["agent2.1", "agent3.1", "agent1.1"], "b": ["agent3.1", "agent1.1", "agent2.1"],
                    "c": ["agent1.1", "agent2.1", "agent3.1"]}
    # what the model was sent is that order too (a replay shows exactly what each agent saw)
    sent = {r["to"].split("#")[0]: [a["label"] for a in r["payload"]["view"]["answers"]]
            for r in of_type(trace, "StartTurn") if r["payload"]["view"]["answers"]}
    assert sent == seen


def test_a_vote_whose_own_result_differs_from_its_target_supports_its_own_result(tmp_path: Path) -> None:
    config = differing_team(
        [step(text="Recomputing: 26 * 9 = 234, so the total is 456."), step(vote="agent1", reason="listed first")],
        [step(text="Checked again: Answer: 456"), step(vote="agent2", reason="mine")],
        [step(text="Checked: the result is 457."), step(vote="agent1", reason="right")],
    )
    result = run_team(config, tmp_path)
    assert result.status == "completed", result.reason
    trace = records(result)
    proposed = {r["sender"].split("#")[0]: r["payload"]["own_result"] for r in of_type(trace, "VoteProposed")}
    assert proposed == {"a": "456", "b": "456", "c": "457"}
    recorded = {r["payload"]["voter"]: (r["payload"]["target_result"], r["payload"]["own_result"])
                for r in of_type(trace, "RecordVote")}
    assert recorded == {"a": ("457", "456"), "b": ("456", "456"), "c": ("457", "457")}
    # two votes for 457's answer, but one of them computed 456: 456 has the support, and wins
    final = of_type(trace, "TallyUpdated")[-1]["payload"]
    assert final["support"] == {"456": 2, "457": 1} and final["winner"] == "b"
    judged = [t["payload"]["vote"] for t in of_type(trace, "TallyUpdated") if t["payload"]["vote"]]
    assert result.winner == "b" and result.votes and {v["own_result"] for v in judged} == {"456", "457"}


def test_the_prior_rule_keeps_the_first_agents_answer_against_agreeing_others() -> None:
    order = ["g", "y", "z"]
    answers = (answer("g", 1, "42"), answer("y", 1, "41"), answer("z", 1, "41"))
    habit = {"g": ("g", "42", ""), "y": ("y", "41", ""), "z": ("y", "41", "")}
    # two hotter agents agreeing on 41 outvote the greedy agent under "support", not under "prior"
    assert decide(habit, answers, order, "support")[0] == "y"
    assert decide(habit, answers, order, "prior")[0] == "g"
    # nor can a vote the greedy agent casts by habit for an answer whose result it did not reach
    assert decide({**habit, "g": ("y", "41", "42")}, answers, order, "prior")[0] == "g"
    # the greedy agent checks, concludes 41 and the others agree: the prior is overturned
    assert decide({**habit, "g": ("y", "41", "")}, answers, order, "prior")[0] == "y"
    # ... but not for a result with less support than its own first answer's
    lone = (answer("g", 1, "42"), answer("y", 1, "41"), answer("z", 1, "42"))
    assert decide({"g": ("y", "41", ""), "y": ("g", "42", ""), "z": ("z", "42", "")}, lone, order, "prior")[0] == "g"
    # no votes yet: the prior is the best so far
    assert decide({}, answers, order, "prior")[0] == "g"


def test_a_bare_vote_for_an_answer_that_states_no_result_keeps_the_prior() -> None:
    """The compare run the calculator's team lost: every answer said 2.76, but the third ended on a
    sentence, so its "result" was that sentence; the greedy agent voted for it with a reason naming no
    number, and that tied support overturned the prior."""
    order = ["g", "y", "z"]
    ending = "this shows that 2.76 is indeed greater than 2.6 by exactly 0.16"
    answers = (answer("g", 1, "2.76"), answer("y", 1, "2.76"),
               AnswerResult(agent="z", label="z.1", result=ending, independent=True, stated=False))
    votes = {"g": ("z", ending, ""), "z": ("z", ending, ""), "y": ("y", "2.76", "")}
    assert decide(votes, answers, order, "prior")[0] == "y"  # 2.76 stands: its holder with a vote
    # the same vote for an answer that states its result is still the greedy agent changing its mind
    stated = (*answers[:2], answer("z", 1, "2.67"))
    assert decide({**votes, "g": ("z", "2.67", ""), "z": ("z", "2.67", "")}, stated, order, "prior")[0] == "z"
    # and a greedy answer that states no result is no prior to keep against it
    vague = (AnswerResult(agent="g", label="g.1", result="it is larger", independent=True, stated=False),
             *answers[1:])
    assert decide({**votes, "g": ("z", ending, "")}, vague, order, "prior")[0] == "z"


def test_unanimous_first_answers_end_a_prior_rule_run_without_a_vote_round(tmp_path: Path) -> None:
    config = team_config(
        *(scripted(name, [step(new_answer=text)]) for name, text in
          (("a", "2 + 2 = 4\nAnswer: 4"), ("b", "So the answer is \\boxed{4}"), ("c", "The sum is 4."))),
        orchestrator={"final_answer_strategy": "winner_reuse", "winner_rule": "prior"},
    )
    result = run_team(config, tmp_path)
    assert result.status == "completed" and result.winner == "a", result.reason
    assert result.usage["model_calls"] == 3 and result.final_answer == "2 + 2 = 4\nAnswer: 4"
    trace = records(result)
    assert_trace_invariants(trace)
    unanimous = [r["payload"] for r in of_type(trace, "UnanimousFirstAnswers")]
    assert len(unanimous) == 1 and unanimous[0]["result"] == "4"
    assert sorted(unanimous[0]["labels"]) == ["agent1.1", "agent2.1", "agent3.1"]
    assert not of_type(trace, "RecordVote")


def test_the_default_local_team_is_two_programs_the_bare_greedy_call_and_two_reserve_programs() -> None:
    from massgen.configs.defaults import default_team

    team = default_team({})
    assert [(a.backend.temperature, a.backend.first_answer) for a in team.agents] == [  # type: ignore[union-attr]
        (0.0, "program"), (0.4, "program"), (0.0, "bare"), (0.7, "program"), (0.7, "program")]
    assert team.orchestrator.after_first_answers == "decide" and team.orchestrator.max_new_answers_per_agent == 1
    assert team.orchestrator.reserve_agents == ["local_4", "local_5"]  # asked only while the first disagree


# -- the README's question: results that are comparisons, votes that say what they computed ---------

# Endings of comparisons, with the number each states: the one the sentence is about.
COMPARISON_ENDINGS = {
    "Final answer: 9.9 is larger than 9.11.": "9.9",
    "Comparing the tenths: 9 > 1, so 9.9 is larger than 9.11.": "9.9",
    "Therefore, 9.11 is larger than 9.9.": "9.11",
    "So **9.9** is greater than 9.11. Let me know if you have any other questions!": "9.9",
    "Thus 9.9 is the larger number.": "9.9",
    "9.9 > 9.11": "9.9",
    "In conclusion, 9.11 is smaller than 9.9.": "9.11",
    # a justification after the claim is not the claim; a conclusion after its justification is
    "9.9 is larger: 9.9 = 9.90, and 0.90 > 0.11.": "9.9",
    "9.11 is larger, because 11 > 9.": "9.11",
    "9.9 is larger since 0.9 is greater than 0.11.": "9.9",
    "0.9 is greater than 0.11, so 9.9 > 9.11.": "9.9",
}


def test_a_comparison_states_the_number_it_is_about() -> None:
    for text, result in COMPARISON_ENDINGS.items():
        assert stated_result(text) == result, text
    # the two sides of the README's question are two results, whatever the wording
    assert final_result("Therefore, 9.9 is larger than 9.11.") == final_result("Answer: 9.9")
    assert final_result("9.11 is larger than 9.9") != final_result("9.9 is larger than 9.11")
    # a comparison inside the working is no conclusion
    assert stated_result("Since 9.9 is larger than 9.11, we keep going.\nThe total is 40.") == "40"


def test_a_vote_reason_states_a_result_only_in_numbers_of_its_own() -> None:
    names = ("agent1.1", "local_1", "agent2.1", "local_2")
    assert reason_result("agent2.1 correctly says that 9.9 is larger than 9.11", names, 2) == "9.9"
    assert reason_result("Agent 1's answer is right: the total is 1118.", names, 2) == "1118"
    # pointing at an answer is no result: labels, agent ids and "answer N" are taken out first
    assert reason_result("agent2.1 is right", names, 2) == ""
    assert reason_result("Answer 2 is correct", names, 2) == ""
    assert reason_result("local_1 computed it correctly", names, 2) == ""
    # words are no result either: only a number is compared with the target's
    assert reason_result("The answer is Paris", names, 2) == ""
    assert reason_result("", names, 2) == ""


def test_votes_that_say_another_result_than_their_target_overturn_the_greedy_prior(tmp_path: Path) -> None:
    """The README run that answered wrongly: the greedy agent said 9.11, the other two 9.9; every vote went
    to the greedy agent's answer, listed first, while its reason said 9.9, and there was no working before
    the call. The reasons are the voters' own results: 9.9 has the support, and the greedy agent's own
    vote concluded it, so the prior is overturned."""
    reason = "The answer correctly explains that 9.9 is larger than 9.11."
    firsts = ["Therefore, 9.11 is larger than 9.9.", "Comparing tenths, 9.9 is larger than 9.11.",
              "So 9.9 is larger than 9.11."]
    config = team_config(
        *(scripted(name, [step(new_answer=first)], [step(vote="agent1", reason=reason)])
          for name, first in zip(("a", "b", "c"), firsts, strict=True)),
        orchestrator={"final_answer_strategy": "winner_reuse", "winner_rule": "prior"},
    )
    result = run_team(config, tmp_path)
    assert result.status == "completed", result.reason
    trace = records(result)
    assert_trace_invariants(trace)
    recorded = {r["payload"]["voter"]: (r["payload"]["target"], r["payload"]["target_result"],
                                        r["payload"]["own_result"]) for r in of_type(trace, "RecordVote")}
    assert recorded == {agent: ("a", "9.11", "9.9") for agent in ("a", "b", "c")}
    final = of_type(trace, "TallyUpdated")[-1]["payload"]
    assert final["counts"] == {"a": 3} and final["support"] == {"9.9": 4}
    assert result.winner == "b" and "9.9 is larger than 9.11" in (result.final_answer or "")


# -- every kind of answer (issue 36) ---------------------------------------------------------------

# The shapes reasoning-gym's answers take (family_relationships, syllogism, word_sorting), each group one
# answer in different wordings; the groups are different answers.
AGREEING_WORDINGS = {
    "yes": ["Answer: Yes", "yes.", "**Yes**", "Answer: yes, it logically follows.", "The answer is: **YES**",
            "\\boxed{\\text{Yes}}", "Answer: <Yes>"],
    "no": ["Answer: No", "No.", "**No**", "Answer: No, some lawyers need not be parents."],
    "mother": ["Answer: the mother", "Mother", "**Mother.**", "Sarah is Elizabeth's **mother**.", "Answer: Mother"],
    "mother-in-law": ["Answer: mother-in-law", "**Mother-in-law**", "Relationship: Mother-in-law.",
                      "Answer: Mother-in-law. Sarah married Elizabeth's son.",
                      "Answer: mother-in-law (Sarah is married to Edward, Elizabeth's son)"],
    "thought sentence federal ambassador only": [
        "Answer: thought, sentence, federal, ambassador, Only",
        "Answer: [thought, sentence, federal, ambassador, Only]",
        "['thought', 'sentence', 'federal', 'ambassador', 'Only']",
        "The sorted list is: thought, sentence, federal, ambassador, Only",
        "Answer: thought sentence federal ambassador Only",
    ],
    # order kept: a sorting task's answers differ by order
    "only ambassador federal sentence thought": ["Answer: Only, ambassador, federal, sentence, thought"],
    "3": ["Answer: 3", "So the letter h appears **3** times.", "Answer: 3 times"],
    # words to sort are words, whatever they are: a number, a yes, words of a sentence
    "100 full let this has": ["Answer: 100, Full, Let, This, has", "100, Full, Let, This, has",
                              "Answer: [100, Full, Let, This, has]"],
    "yes widest often": ["Answer: yes, widest, often", "yes, widest, often"],
}


def test_yes_no_word_and_list_answers_agree_by_what_they_state_not_by_wording() -> None:
    for result, wordings in AGREEING_WORDINGS.items():
        for text in wordings:
            assert final_result(text) == result, text
            assert stated_result(text) == result, text  # stated: unanimous first answers of it end a run
    assert final_result("Answer: Yes") != final_result("Answer: No")
    assert final_result("Answer: mother") != final_result("Answer: mother-in-law")


def test_endings_that_state_no_result_never_agree() -> None:
    """Two different programs that end alike (a fence, a brace, a closing remark, a common last statement)
    are two answers: their endings are no result."""
    closing = "\nLet me know if you need anything else!"
    endings = [
        ("```python\ndef f(x):\n    return x + 1\n```", "```python\ndef f(x):\n    return x - 1\n```"),
        ("```python\ndef f(x):\n    return x + 1\n```" + closing, "```python\ndef f(x):\n    return 2\n```" + closing),
        ("function f(x) {\n  return x + 1;\n});", "function f(x) {\n  return x - 1;\n});"),
        ("Thanks!" + closing, "Hope this helps!" + closing),
    ]
    for first, second in endings:
        assert final_result(first) == final_result(second) == "", (first, second)
        assert stated_result(first) == stated_result(second) == ""
        answers = (AnswerResult(agent="x", label="x.1", result=final_result(first), independent=True),
                   AnswerResult(agent="y", label="y.1", result=final_result(second), independent=True))
        assert decide({}, answers, ["x", "y"]) == (None, {})  # no agreement to count
    # a closing remark is read past: what comes before it is the result, or the line that ends the prose
    assert final_result("Here it is." + closing) != final_result("I am not sure." + closing)
    assert final_result("It is -336.\nHope this helps!") == "-336"
    assert final_result("Answer: No\n\nLet me know if you have any other questions.") == "no"
    # code is not prose: a variable named answer in a program is no Answer: line
    assert stated_result("```python\nanswer = compute(x)\nprint(answer)\n```") == ""


def test_a_new_answer_that_ends_like_one_in_view_but_states_no_result_is_a_new_answer(tmp_path: Path) -> None:
    closing = "```\nLet me know if you need anything else!"
    config = team_config(
        scripted("a", [step(new_answer=f"```python\ndef f(x):\n    return x + 1\n{closing}")],
                 [step(vote="agent1", reason="mine")], [step(vote="agent1", reason="mine")]),
        scripted("b", [step(new_answer="I am not sure.")],
                 [step(new_answer=f"```python\ndef f(x):\n    return x * 2\n{closing}")],
                 [step(vote="agent2", reason="mine")]),
        orchestrator={"final_answer_strategy": "winner_reuse"},
    )
    result = run_team(config, tmp_path)
    assert result.status == "completed", result.reason
    trace = records(result)
    assert_trace_invariants(trace)
    assert "agent2.2" in result.answers  # not recorded as agreement with agent1.1
    assert not [r for r in of_type(trace, "VoteProposed") if r["payload"]["agreement"]]


def test_the_word_answer_used_in_a_sentence_states_no_result() -> None:
    """Vote work written by the local model (bench/results): "answer" as a noun is no ``Answer:`` line. Read as
    one, "correct" was the vote's own result, which no answer holds, so the vote supported nothing."""
    for text in ["Checked: 26 * 9 = 234.\nThe final answer is correct.", "The answer provided by agent1 is correct.",
                 "Correct answer found by agent3.", "The answer is correct and well-explained.",
                 "Answer: <answer>", "(Answer Yes or No)"]:
        assert stated_result(text) == "", text
    assert stated_result("Answer: 457\nThe answer provided by agent1 is correct.") == "457"  # read before it
    assert stated_result("So the answer is indeed 121.") == "121"


@pytest.mark.parametrize("firsts", [
    ("Answer: the mother", "So Sarah is her **Mother**.", "Mother."),
    ("Answer: Yes", "**Yes**", "Answer: yes, it follows."),
    ("Answer: b, a, c", "Answer: [b, a, c]", "The sorted list is: 'b', 'a', 'c'"),
], ids=["words", "yes-no", "list"])
def test_unanimous_first_answers_of_words_end_a_prior_rule_run_at_three_calls(
        tmp_path: Path, firsts: tuple[str, str, str]) -> None:
    config = team_config(
        *(scripted(name, [step(new_answer=text)], [step(vote="agent1", reason="ok")])
          for name, text in zip(("a", "b", "c"), firsts, strict=True)),
        orchestrator={"final_answer_strategy": "winner_reuse", "winner_rule": "prior"},
    )
    result = run_team(config, tmp_path)
    assert result.status == "completed" and result.winner == "a", result.reason
    assert result.usage["model_calls"] == 3 and result.final_answer == firsts[0]
    trace = records(result)
    assert_trace_invariants(trace)
    assert len(of_type(trace, "UnanimousFirstAnswers")) == 1 and not of_type(trace, "RecordVote")


def test_first_answers_ending_in_code_are_not_unanimous(tmp_path: Path) -> None:
    code = "```python\ndef f(x):\n    return x {}\n```\nHope this helps!"
    config = team_config(
        *(scripted(name, [step(new_answer=code.format(op))], [step(vote="agent1", reason="ok")])
          for name, op in (("a", "+ 1"), ("b", "- 1"), ("c", "* 2"))),
        orchestrator={"final_answer_strategy": "winner_reuse", "winner_rule": "prior"},
    )
    result = run_team(config, tmp_path)
    assert result.status == "completed", result.reason
    trace = records(result)
    assert not of_type(trace, "UnanimousFirstAnswers") and len(of_type(trace, "RecordVote")) == 3
    assert {r["payload"]["result"] for r in of_type(trace, "AnswerAccepted")} == {""}


# -- never below the bare greedy call (issue 36) ---------------------------------------------------


@pytest.mark.parametrize("mode", [{}, {"tool_mode": "json_schema"}], ids=["native-tools", "two-phase"])
def test_a_bare_prior_first_answer_is_asked_as_one_greedy_call_is(tmp_path: Path, mode: dict[str, str]) -> None:
    """``prior_first_answer: bare``: the prior agent's first request is the question alone, no team prompt and
    no tools, as bench.quality asks its greedy baseline; the other agents are asked as the team asks."""
    question = "Does it follow? (Answer Yes or No)"

    def model(body: dict[str, Any]) -> list[bytes]:
        if "tools" not in body:
            return chat_text("All parents are lawyers, so yes.\nAnswer: Yes")
        return tool_reply("Checked.", "new_answer", {"content": "Answer: yes"})

    with TeamServer(model) as server:
        config = team_config(chat_agent("prior", server, model="greedy", temperature=0.0, **mode),
                             chat_agent("b", server, **mode), chat_agent("c", server, **mode),
                             orchestrator={"final_answer_strategy": "winner_reuse", "winner_rule": "prior",
                                           "prior_first_answer": "bare"})
        result = run_team(config, tmp_path, question)
        bodies = server.bodies()
    assert result.status == "completed" and result.winner == "prior", result.reason
    greedy = [b for b in bodies if b["model"] == "greedy"]
    assert len(greedy) == 1 and greedy[0]["messages"] == [{"role": "user", "content": question}]
    assert "tools" not in greedy[0] and greedy[0]["temperature"] == 0.0
    others = [b for b in bodies if b["model"] == "m"]
    assert len(others) == 2 and all("several agents" in b["messages"][0]["content"] for b in others)
    # the trace says how each was asked; the bare reply is the prior's first answer, as written
    trace = records(result)
    assert_trace_invariants(trace)
    first_requests: dict[str, list[str]] = {}
    for r in of_type(trace, "ModelRequestSent"):
        first_requests.setdefault(r["sender"].split("#")[0], [m["role"] for m in r["payload"]["messages"]])
    assert first_requests == {"prior": ["user"], "b": ["system", "user"], "c": ["system", "user"]}
    assert result.answers["agent1.1"] == "All parents are lawyers, so yes.\nAnswer: Yes"
    assert result.usage["model_calls"] == 3  # the three first answers agree: yes


def test_a_bare_prior_first_answer_needs_the_prior_rule() -> None:
    with pytest.raises(ConfigError, match="prior_first_answer: bare needs winner_rule: prior"):
        team_config(scripted("a", [step(new_answer="4")]), orchestrator={"prior_first_answer": "bare"})
