"""Upstream MassGen 0.1.97's Python API and LiteLLM names, called as its docs call them.

Teams are scripted, or quick teams on the zero-latency Chat Completions server (real sockets,
real SSE): no model, no key.
"""

from __future__ import annotations

import ast
import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import import_litellm, scripted, step
from upstream_wheel import function_node, shape_of

from bench.zero_latency_openai import ZeroLatencyServer
from massgen.logs import read_trace

litellm = import_litellm()

import massgen  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Item.* `ReadOnly` qualifier:UserWarning")  # litellm's types

QUESTION = "What is 2+2?"
ONE_AGENT = {"agents": [scripted("solo", [step(new_answer="4")], [step(vote="agent1.1")])]}


@pytest.fixture
def zero() -> Iterator[ZeroLatencyServer]:
    with ZeroLatencyServer() as server:
        yield server


def test_build_config_makes_upstreams_agent_ids_and_backends() -> None:
    assert massgen.build_config(num_agents=3, model="gpt-5")["agents"] == [
        {"id": f"agent_{c}", "backend": {"type": "openai", "model": "gpt-5", "cwd": "workspace"}} for c in "abc"]
    built = massgen.build_config(models=["gpt-5", "claude-sonnet-4-5", "groq/llama-3.3-70b"])
    assert [a["backend"]["type"] for a in built["agents"]] == ["openai", "claude", "groq"]
    # groq is a backend type of its own here (a Chat Completions preset with its URL and key name)
    assert built["agents"][2]["backend"] == {"type": "groq", "model": "llama-3.3-70b", "cwd": "workspace"}
    assert massgen.build_config()["agents"][1] == {
        "id": "agent_b", "backend": {"type": "openai", "model": "gpt-5.4", "cwd": "workspace"}}
    with pytest.raises(massgen.ConfigError, match=r"'nowhere' .* is not one this version can talk to"):
        massgen.build_config(model="m", backend="nowhere")


def upstream_backend_cwd() -> str:
    """The ``cwd`` upstream's ``build_config`` gives every agent's backend (its quickstart's local mode)."""
    create = function_node("config_builder.py", "create_agent_backend")
    cwds = {ast.literal_eval(value) for node in ast.walk(create) if isinstance(node, ast.Dict)
            for key, value in zip(node.keys, node.values, strict=True)
            if isinstance(key, ast.Constant) and key.value == "cwd"}
    assert len(cwds) == 1, cwds
    return str(cwds.pop())


def test_build_config_gives_every_agent_upstreams_file_workspace() -> None:
    cwd = upstream_backend_cwd()
    assert cwd == "workspace"
    for built in (massgen.build_config(), massgen.build_config(models=["gpt-5", "groq/llama-3.3-70b"])):
        assert [agent["backend"]["cwd"] for agent in built["agents"]] == [cwd] * len(built["agents"])


def test_a_team_built_by_model_gets_a_workspace_per_agent(zero: ZeroLatencyServer, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MASSGEN_WORKSPACE_BASE_DIR", str(tmp_path / "workspaces"))
    result = massgen.run_sync(QUESTION, models=["chatcompletion/m1", "chatcompletion/m2"], base_url=zero.base_url)
    assert result.status == "completed"
    (run,) = (tmp_path / "workspaces").iterdir()
    assert sorted(p.name for p in run.iterdir()) == ["agent_a", "agent_b"]


def test_run_returns_a_plain_dict_with_upstreams_keys_that_json_saves(tmp_path: Path) -> None:
    result = asyncio.run(massgen.run(QUESTION, config_dict=ONE_AGENT, log_dir=tmp_path / "run"))
    assert isinstance(result, dict)
    saved = json.loads(json.dumps(result))  # what a script written for upstream does with it
    upstream_keys = shape_of(function_node("__init__.py", "run"), "result")
    assert set(upstream_keys) <= set(saved), set(upstream_keys) - set(saved)
    assert saved["final_answer"] == "4" and saved["selected_agent"] == "solo"
    assert saved == dict(result)
    assert result.final_answer == "4" and result.winner == "solo"  # our callers read attributes


def test_run_with_config_dict_returns_upstreams_keys(tmp_path: Path) -> None:
    result = asyncio.run(massgen.run(QUESTION, config_dict=ONE_AGENT, output_file=str(tmp_path / "out.txt"),
                                     log_dir=tmp_path / "run"))
    assert result["final_answer"] == "4" and result.get("selected_agent") == "solo"
    assert result["log_directory"] == str(tmp_path / "run") and "vote_results" in result  # log_dir= named it
    assert result["vote_results"]["vote_counts"] == {"solo": 1} and result["vote_results"]["winner"] == "solo"
    assert Path(result["final_answer_path"], "solo", "answer.txt").read_text() == "4\n"
    assert (tmp_path / "out.txt").read_text() == "4"


def test_run_with_model_builds_one_agent_on_the_named_server(zero: ZeroLatencyServer) -> None:
    result = asyncio.run(massgen.run(QUESTION, model="chatcompletion/zero", base_url=zero.base_url,
                                     system_message="Be brief."))
    assert result["final_answer"] == "The answer is 4: two and two make four."
    agents = read_trace(result.log_dir)[0]["payload"]["config"]["agents"]
    assert [(a["id"], a["backend"]["model"], a["backend"]["base_url"], a["system_message"]) for a in agents] == [
        ("agent_a", "zero", zero.base_url, "Be brief.")]
    assert zero.requests >= 2


def test_run_sync_with_models_and_history_as_upstream_passes_them(zero: ZeroLatencyServer) -> None:
    history = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}]
    result = massgen.run_sync(QUESTION, models=["chatcompletion/m1", "chatcompletion/m2"], base_url=zero.base_url,
                              conversation_history=history)
    started = read_trace(result.log_dir)[0]["payload"]
    assert [a["id"] for a in started["config"]["agents"]] == ["agent_a", "agent_b"]
    assert [list(turn) for turn in started["history"]] == [["Hi", "Hello."]]
    assert result.status == "completed"


def test_model_with_a_scripted_config_keeps_the_script() -> None:
    result = massgen.run_sync(QUESTION, config="@examples/basic/scripted_three_agents", model="gpt-5")
    assert result["final_answer"].startswith("9.9 is larger")


def test_parse_at_references_makes_context_paths(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    result = massgen.run_sync(f"Read @{tmp_path / 'notes'} please", config_dict=ONE_AGENT, parse_at_references=True)
    paths = read_trace(result.log_dir)[0]["payload"]["config"]["orchestrator"]["context_paths"]
    assert [p["path"] for p in paths] == [str(tmp_path / "notes")]


def test_an_unknown_argument_is_a_config_error_naming_it() -> None:
    with pytest.raises(massgen.ConfigError, match="unknown argument\\(s\\) colour"):
        massgen.run_sync(QUESTION, config_dict=ONE_AGENT, colour="blue")


@pytest.fixture
def provider() -> None:
    massgen.register_with_litellm()


@pytest.mark.usefixtures("provider")
def test_litellm_massgen_model_is_one_agent(zero: ZeroLatencyServer) -> None:
    response = litellm.completion(model="massgen/model:chatcompletion/zero", messages=[
        {"role": "user", "content": QUESTION}], optional_params={"base_url": zero.base_url})
    assert response.choices[0].message.content == "The answer is 4: two and two make four."
    log_dir = Path(response._hidden_params["massgen"]["log_dir"])
    assert [a["id"] for a in read_trace(log_dir)[0]["payload"]["config"]["agents"]] == ["agent_a"]


@pytest.mark.usefixtures("provider")
def test_litellm_massgen_build_takes_the_team_from_optional_params(zero: ZeroLatencyServer) -> None:
    response = litellm.completion(model="massgen/build", messages=[{"role": "user", "content": QUESTION}],
                                  optional_params={"models": ["chatcompletion/a", "chatcompletion/b"],
                                                   "base_url": zero.base_url})
    log_dir = Path(response._hidden_params["massgen"]["log_dir"])
    agents = read_trace(log_dir)[0]["payload"]["config"]["agents"]
    assert [(a["id"], a["backend"]["model"]) for a in agents] == [("agent_a", "a"), ("agent_b", "b")]
    with pytest.raises(litellm.BadRequestError, match="massgen/build needs optional_params"):
        litellm.completion(model="massgen/build", messages=[{"role": "user", "content": QUESTION}])


@pytest.mark.usefixtures("provider")
def test_litellm_upstream_example_names_resolve_to_ours(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY", "XAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    # massgen/basic_multi is upstream's default three-agent team: ours needs three providers' keys
    with pytest.raises(litellm.BadRequestError, match="GEMINI_API_KEY"):
        litellm.completion(model="massgen/basic_multi", messages=[{"role": "user", "content": QUESTION}])
    assert massgen.example_path("@examples/basic_multi").name == "three_agents_default.yaml"
