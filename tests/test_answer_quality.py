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

from support import assert_trace_invariants, of_type, records, run_team, scripted, step, team_config
from wire.protocols import chat_chunk, chat_text, chat_tool_delta, sse
from wire.server import Recorded, Reply, Stream, WireServer

from massgen.actors.judge import decide
from massgen.actors.results import final_result
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
    # the answer carries the work written before the call, not only its final line; that work already
    # concludes 4 ("2 + 2 = 4."), so the bare "Answer: 4" is not appended to it
    assert result.final_answer == "Two plus two: 2 + 2 = 4."


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
    # the work before the call already concludes 4, so the bare "Answer: 4" is not appended to it
    assert result.answers["agent1.1"] == "Work: 2 + 2 = 4."


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
