"""A team as a LiteLLM model, through LiteLLM's own completion functions."""

from __future__ import annotations

import asyncio
import re
import socket
import time
from pathlib import Path

import pytest
import yaml
from support import FACTOR, import_litellm, scripted, step
from wire.team_chat import TeamChatServer

litellm = import_litellm()

import massgen  # noqa: E402
from massgen.litellm_provider import config_ref, conversation  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Item.* `ReadOnly` qualifier:UserWarning")  # litellm's types

EXAMPLE = "massgen/basic/scripted_three_agents"
QUESTION = [{"role": "user", "content": "Which is larger, 9.11 or 9.9?"}]


@pytest.fixture(autouse=True)
def _provider() -> None:
    massgen.register_with_litellm()


def test_completion_runs_the_team_and_returns_its_final_answer() -> None:
    response = litellm.completion(model=EXAMPLE, messages=QUESTION)
    answer = response.choices[0].message.content
    assert answer.startswith("9.9 is larger")
    assert response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0
    log_dir = Path(response._hidden_params["massgen"]["log_dir"])
    assert (log_dir / "final" / "agent_b" / "answer.txt").read_text().startswith("9.9 is larger")


def test_streaming_yields_the_final_answer_in_chunks() -> None:
    chunks = list(litellm.completion(model=EXAMPLE, messages=QUESTION, stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text.startswith("9.9 is larger")
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_async_completion_and_streaming() -> None:
    async def both() -> tuple[str, str]:
        response = await litellm.acompletion(model=EXAMPLE, messages=QUESTION)
        stream = await litellm.acompletion(model=EXAMPLE, messages=QUESTION, stream=True)
        text = "".join([c.choices[0].delta.content or "" async for c in stream])
        return response.choices[0].message.content, text

    answer, streamed = asyncio.run(both())
    assert answer == streamed and answer.startswith("9.9 is larger")


def test_a_config_file_by_path_and_the_conversation_as_history(tmp_path: Path) -> None:
    path = tmp_path / "solo.yaml"
    path.write_text(yaml.safe_dump({
        "agents": [scripted("solo", [step(new_answer="from the file")], [step(vote="agent1", reason="ok")])],
        "orchestrator": {"final_answer_strategy": "winner_reuse"},
    }))
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "first?"},
        {"role": "assistant", "content": "one"},
        {"role": "user", "content": [{"type": "text", "text": "second?"}]},
    ]
    response = litellm.completion(model=f"massgen/path:{path}", messages=messages)
    assert response.choices[0].message.content == "from the file"
    log_dir = Path(response._hidden_params["massgen"]["log_dir"])
    started = (log_dir / "execution_metadata.yaml").read_text()
    assert "Be brief." in started and "second?" in started


def test_model_names_and_messages_map_to_a_config_and_a_conversation() -> None:
    assert config_ref("basic/scripted_three_agents") == "@examples/basic/scripted_three_agents"
    assert config_ref("massgen/path:/tmp/team.yaml") == "/tmp/team.yaml"
    question, history = conversation([
        {"role": "user", "content": "a?"}, {"role": "assistant", "content": "A"},
        {"role": "user", "content": "b?"},
    ])
    assert question == "b?" and history == (("a?", "A"),)


def test_an_unknown_example_is_a_clear_error() -> None:
    with pytest.raises(Exception, match="no example named"):
        litellm.completion(model="massgen/no_such_team", messages=QUESTION)


@pytest.mark.parametrize("keyword", ["base_url", "api_base"])
def test_base_url_and_api_base_given_to_litellm_send_every_agent_to_that_server(keyword: str) -> None:
    """``litellm.completion(..., base_url=URL)`` (or ``api_base=``) is where the team's agents call their model,
    not the provider's default endpoint."""
    with TeamChatServer() as server:
        response = litellm.completion(model="massgen/model:chatcompletion/healthy", messages=QUESTION,
                                      **{keyword: server.url})
        # The agents of a team built from a model have upstream's file workspace, so the presenter is offered
        # file tools and this scripted server answers those calls as a turn: the answer comes back as written.
        assert response.choices[0].message.content in ("The answer is 4 (presented by healthy).",
                                                       "2 + 2 = 4, says healthy")
        assert server.requests, "no request reached the server given as " + keyword


def test_base_url_given_twice_with_different_servers_is_a_clear_error() -> None:
    with pytest.raises(Exception, match="two servers given"):
        litellm.completion(model="massgen/model:chatcompletion/healthy", messages=QUESTION,
                           base_url="http://127.0.0.1:9/v1", optional_params={"base_url": "http://127.0.0.1:8/v1"})


def test_an_unreachable_base_url_fails_in_bounded_time_naming_the_server() -> None:
    """Nothing listens there: the call fails within the deadline it was given, saying what it could not reach."""
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(Exception) as failed:
        litellm.completion(model="massgen/model:chatcompletion/m", messages=QUESTION,
                           base_url=f"http://127.0.0.1:{port}/v1")
    assert time.monotonic() - started < 60 * FACTOR
    assert f"127.0.0.1:{port}" in str(failed.value), str(failed.value)


# -- what a caller asks for is done, or refused as a bad request: never retried, never dropped -----------------

CONFIGS = Path(__file__).parent / "configs"
WEATHER_TOOL = {"type": "function", "function": {"name": "get_weather", "description": "The weather in a city",
                                                 "parameters": {"type": "object", "properties": {}}}}


@pytest.mark.parametrize(("model", "options", "said"), [
    ("massgen/build", {"model": "gpt-4o", "num_agents": "2"}, "num_agents: must be a whole number"),
    ("massgen/build", {"models": [1, 2]}, "models: must be a list of names"),
    (EXAMPLE, {"output_file": 5}, "output_file: must be a path"),  # was an APIConnectionError after the whole run
    (EXAMPLE, {"session_id": "s1"}, "session_id"),  # was silently ignored
    (EXAMPLE, {"frobnicate": 1}, "frobnicate"),
    (EXAMPLE, {"models": ["gpt-4o"]}, "models: only massgen/build"),  # was silently ignored
])
def test_a_bad_option_is_a_bad_request_naming_it_not_a_retryable_error(model: str, options: dict[str, object],
                                                                        said: str) -> None:
    with pytest.raises(litellm.BadRequestError, match=re.escape(said)) as refused:
        litellm.completion(model=model, messages=QUESTION, optional_params=options)
    assert refused.value.status_code == 400
    assert not isinstance(refused.value, litellm.APIConnectionError)  # a router would have tried it again


def test_an_openai_parameter_the_team_cannot_follow_is_refused_unless_the_caller_drops_it() -> None:
    with pytest.raises(litellm.UnsupportedParamsError, match="temperature"):
        litellm.completion(model=EXAMPLE, messages=QUESTION, temperature=0.2)
    response = litellm.completion(model=EXAMPLE, messages=QUESTION, temperature=0.2, drop_params=True)
    assert response.choices[0].message.content.startswith("9.9 is larger")  # dropped, because the caller said so


@pytest.mark.parametrize("asked", [{"tools": [WEATHER_TOOL]}, {"tools": [WEATHER_TOOL], "tool_choice": "auto"},
                                   {"functions": [WEATHER_TOOL["function"]]}])
def test_tools_are_refused_with_a_clear_message_not_dropped(asked: dict[str, object]) -> None:
    for drop in (False, True):  # a tool call is an answer the caller asked for: never dropped, even when told to
        with pytest.raises(litellm.UnsupportedParamsError, match="massgen serve") as refused:
            litellm.completion(model=EXAMPLE, messages=QUESTION, drop_params=drop, **asked)
        assert next(iter(asked)) in str(refused.value)


def test_a_content_part_that_is_not_text_is_a_bad_request_naming_it() -> None:
    messages = [{"role": "user", "content": [{"type": "text", "text": "What is in this picture?"},
                                             {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]}]
    with pytest.raises(litellm.BadRequestError, match=re.escape("messages[0].content[1]: a part of type 'image_url'")):
        litellm.completion(model=EXAMPLE, messages=messages)


def test_litellm_s_timeout_bounds_the_run() -> None:
    started = time.monotonic()
    with pytest.raises(litellm.Timeout, match="within the call's timeout of 2 s") as timed_out:
        litellm.completion(model=f"massgen/path:{CONFIGS / 'no_answer_team.yaml'}", messages=QUESTION, timeout=2)
    assert time.monotonic() - started < 2 + 10 * FACTOR  # the team would have worked for 30 s
    assert timed_out.value.status_code == 408


@pytest.mark.parametrize("timeout", [-1, float("inf")])
def test_a_timeout_that_is_no_time_is_a_bad_request(timeout: float) -> None:
    with pytest.raises(litellm.BadRequestError, match="timeout: must be a positive, finite number of seconds"):
        litellm.completion(model=EXAMPLE, messages=QUESTION, timeout=timeout)
