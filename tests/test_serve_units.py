"""The pieces behind ``massgen serve``, without HTTP: client tools in a team, folding a
conversation into a task, model names, and progress text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support import assert_trace_invariants, of_type, records, scripted, step, team_config

from massgen.actors.agent import client_tools
from massgen.actors.run.team import Team
from massgen.cli.serve.catalog import Catalog, quick_backend, served_name
from massgen.cli.serve.completions import ContentText, Progress, answer_of, rest_of_answer
from massgen.cli.serve.errors import ApiError
from massgen.cli.serve.models import Limits, parse_request, to_conversation
from massgen.logs import LogProjection
from massgen.messages import ToolCall, ToolSpec

WEATHER = ToolSpec(name="get_weather", description="Weather in a city.",
                   parameters={"type": "object", "properties": {"city": {"type": "string"}}})


def _request(**body: Any) -> Any:
    import json

    return parse_request(json.dumps({"model": "m", **body}).encode(), Limits())


def test_client_tool_calls_encode_and_decode() -> None:
    calls = [ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"}),
             ToolCall(id="c2", name="get_time", arguments={})]
    text = client_tools.encode(calls)
    assert client_tools.decode(text) == [{"name": "get_weather", "arguments": {"city": "Paris"}},
                                         {"name": "get_time", "arguments": {}}]
    for plain in (None, "", "4", '{"answer": 4}', '{"massgen_tool_calls": []}',
                  '{"massgen_tool_calls": [{"name": 1, "arguments": {}}]}', '{"massgen_tool_calls": [], "x": 1}'):
        assert client_tools.decode(plain) is None
    broken = ToolCall(id="c3", name="get_weather", parse_error="bad JSON")
    assert client_tools.problem([broken]) is not None and client_tools.problem(calls) is None


def test_a_client_tool_call_wins_as_an_answer_and_is_not_presented(tmp_path: Path) -> None:
    config = team_config(
        scripted("caller", [step(text="Need data."), step(tool="get_weather", args={"city": "Paris"})],
                 present="prose that must not replace the call"),
        # Answers too, then (script used up) votes for the first answer in view: the caller's.
        scripted("checker", [step(new_answer="Look it up with get_weather.")]),
    )
    team = Team(config, "Weather?", log_dir=tmp_path / "run", tick_interval_s=0.02, client_tools=(WEATHER,))
    result = team.run()
    assert result.status == "completed" and result.winner == "caller"
    assert client_tools.decode(result.final_answer) == [{"name": "get_weather", "arguments": {"city": "Paris"}}]
    trace = records(result)
    assert_trace_invariants(trace)
    # Offered next to the workflow tools, with the note that calling it is an answer.
    started = of_type(trace, "ModelCallStarted")
    assert "get_weather" in started[0]["payload"]["tools"]
    assert of_type(trace, "FinalPresented")[0]["payload"]["content"] == result.final_answer
    answer = answer_of(result)
    assert answer.finish_reason == "tool_calls" and answer.tool_calls is not None
    assert answer.tool_calls[0]["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}


def test_without_client_tools_the_same_call_is_an_unknown_tool(tmp_path: Path) -> None:
    config = team_config(scripted("caller", [step(tool="get_weather", args={})], [step(new_answer="no tool")]))
    result = Team(config, "Weather?", log_dir=tmp_path / "run", tick_interval_s=0.02).run()
    assert result.final_answer == "no tool"
    results = of_type(records(result), "ToolCallResult")
    assert results[0]["payload"]["is_error"] and "unknown tool" in results[0]["payload"]["content"]


def test_conversation_folds_into_task_and_history() -> None:
    chat = _request(messages=[
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Rome?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'}}]},
        {"role": "tool", "tool_call_id": "a", "content": "rain"},
        {"role": "assistant", "content": "It rains in Rome."},
        {"role": "user", "content": "Also:"},
        {"role": "user", "content": "And Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "b", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": "b", "content": "sun"},
    ], tools=[{"type": "function", "function": {"name": "get_weather"}}])
    conversation = to_conversation(chat)
    assert conversation.task.startswith("Be brief.\n\nAlso:\n\nAnd Paris?\n\nTools you called")
    assert 'get_weather({"city": "Paris"}) returned:\nsun' in conversation.task
    assert conversation.history == (
        ("Weather in Rome?", 'It rains in Rome.\nTool calls:\n- get_weather({"city": "Rome"}) returned:\nrain'),
    ) or conversation.history == (
        ("Weather in Rome?", 'Tool calls:\n- get_weather({"city": "Rome"}) returned:\nrain\nIt rains in Rome.'),
    )
    assert [t.name for t in conversation.client_tools] == ["get_weather"]
    assert conversation.client_tools[0].parameters == {"type": "object", "properties": {}}


@pytest.mark.parametrize(("body", "status"), [
    ({"messages": [{"role": "user", "content": "hi"}], "tools": [
        {"type": "function", "function": {"name": "new_answer"}}]}, 400),
    ({"messages": [{"role": "user", "content": "hi"}], "tools": [
        {"type": "function", "function": {"name": "has space"}}]}, 400),
    ({"messages": [{"role": "user", "content": "hi"}], "tools": [
        {"type": "function", "function": {"name": "t"}}, {"type": "function", "function": {"name": "t"}}]}, 400),
    ({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "prefill"}]}, 400),
    ({"messages": [{"role": "user", "content": "hi"}], "temperature": "hot"}, None),  # ignored, not ours
])
def test_semantic_request_errors(body: dict[str, Any], status: int | None) -> None:
    if status is None:
        assert to_conversation(_request(**body)).task == "hi"
        return
    with pytest.raises(ApiError) as error:
        to_conversation(_request(**body))
    assert error.value.status == status


def test_tool_choice_none_offers_no_tools() -> None:
    chat = _request(messages=[{"role": "user", "content": "hi"}], tool_choice="none",
                    tools=[{"type": "function", "function": {"name": "get_weather"}}])
    assert to_conversation(chat).client_tools == ()


def test_model_names_pick_teams(tmp_path: Path) -> None:
    assert quick_backend("gpt-5") == ("openai", "gpt-5")
    assert quick_backend("claude-sonnet-4-5") == ("claude", "claude-sonnet-4-5")
    assert quick_backend("ollama/llama3.2") == ("ollama", "llama3.2")
    assert quick_backend("meta-llama/Llama-3-8B") == ("chatcompletion", "meta-llama/Llama-3-8B")
    assert served_name("@examples/basic/scripted_three_agents") == "massgen/basic/scripted_three_agents"
    assert served_name("configs/my_team.yaml") == "my_team"

    inside = tmp_path / "inside"
    inside.mkdir()
    (inside / "t.yaml").write_text("agent: {id: a, backend: {type: scripted}}\n")
    (tmp_path / "outside.yaml").write_text("agent: {id: a, backend: {type: scripted}}\n")
    catalog = Catalog(path_roots=(inside,), quick_agents=2, default_model="gpt-5")
    name, config = catalog.resolve(None)
    assert name == "gpt-5" and [a.backend.type for a in config.agents] == ["openai", "openai"]
    assert catalog.resolve("massgen/path:t.yaml")[1].agents[0].id == "a"
    for missing in ("massgen/path:../outside.yaml", f"massgen/path:{tmp_path / 'outside.yaml'}",
                    "massgen/path:nope.yaml", "massgen/nope"):
        with pytest.raises(ApiError) as error:
            catalog.resolve(missing)
        assert error.value.status == 404
    with pytest.raises(ApiError) as no_model:
        Catalog().resolve("")
    assert no_model.value.status == 400


def test_progress_text_from_a_real_trace(tmp_path: Path) -> None:
    config = team_config(
        scripted("a", [step(reasoning="thinking"), step(new_answer="4")], present="Four."),
        scripted("b", [step(new_answer="four")]),
    )
    result = Team(config, "2+2?", log_dir=tmp_path / "run", tick_interval_s=0.02).run()
    progress, projection = Progress(), LogProjection()
    lines: list[str] = []
    content: list[str] = []
    for record in records(result):
        projection.apply(record)
        text = progress(record, projection)
        if text:
            (content if isinstance(text, ContentText) else lines).append(text)
    text = "".join(lines)
    assert "".join(content) == "Four."  # the presenter's words are the answer's content, not progress
    assert text.startswith("Team of 2: a, b.\n")
    assert "[a] thinking" in text and "\na answered (agent1.1): 4\n" in text
    assert "\nb answered (agent2.1): four\n" in text
    assert "\nb votes for agent1.1: script exhausted\n" in text
    assert text.endswith("a presents the final answer.\n")


def test_what_is_left_of_the_answer_after_the_streamed_presentation() -> None:
    assert rest_of_answer("The answer ", "The answer is 4.") == "is 4."
    assert rest_of_answer("\n The answer is 4.\n", "The answer is 4.") == ""  # the answer is the text, stripped
    cut = rest_of_answer("Let me expl", "4")  # the presenter failed; the winner's own answer stands
    assert cut.endswith("\n\n4") and "cut off" in cut
