"""Local model servers on Ray: a Ray actor of their own, placed by a resource, reached over HTTP.

One scenario on a real three-node cluster (a head for the agents, two nodes with `llama: 1`)
in a private network namespace, with the real llama.cpp server and Gemma 3 270M: an
uninterrupted run; the same run with the server's node removed without grace after the
first answer; the server's process SIGKILLed after the first answer; a run that asks for a
resource no node has.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest
from ray_cluster import TINY_PAIR
from support import FACTOR, assert_trace_invariants, of_type, unavailable
from test_ray_runtime import _scenario, _trace, assert_causal_order

from massgen.configs import ConfigError, validate_data

# About 140 s on an idle machine (2 cores); a busy one makes the model many times slower: raise
# MASSGEN_TEST_TIMEOUT_FACTOR there (it scales the scenario's waits and the runs' deadlines too).
pytestmark = [pytest.mark.ray, pytest.mark.slow, pytest.mark.timeout(int(1000 * FACTOR))]

SERVER = "model:gemma3-270m"


def test_the_model_server_resources_are_a_runtime_field() -> None:
    config = validate_data(TINY_PAIR, "test")
    assert config.runtime.model_server_resources == {"llama": 1}
    with pytest.raises(ConfigError, match="model_server_resources"):
        validate_data({**TINY_PAIR, "runtime": {"type": "ray", "model_server_resources": {"llama": "x"}}}, "test")


@pytest.fixture(scope="module")
def model_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if importlib.util.find_spec("llama_cpp") is None:
        unavailable("llama_cpp is not importable: install `massgen-actors[local]`")
    return _scenario("model_server", tmp_path_factory.mktemp("ray-model"), timeout=900 * FACTOR)


def _by(trace: list[dict[str, Any]], kind: str, name: str = SERVER) -> dict[int, dict[str, Any]]:
    return {r["payload"]["incarnation"]: r["payload"] for r in of_type(trace, kind) if r["payload"]["name"] == name}


def test_local_agents_reach_a_model_server_placed_on_a_llama_node(model_run: dict[str, Any]) -> None:
    out = model_run
    trace = _trace(out, "uninterrupted")
    assert out["uninterrupted"]["status"] == "completed", out["uninterrupted"]["reason"]
    assert (out["uninterrupted"]["final_answer"] or "").strip()

    # One server for the two agents, on a node with the resource, bound to that node's address.
    placed, ready = _by(trace, "Placed"), _by(trace, "ModelServerReady")
    assert set(placed) == set(ready) == {1}
    assert placed[1]["node"] in out["llama_nodes"] and placed[1]["resources"] == {"llama": 1}
    assert ready[1]["node"] == placed[1]["node"] and ready[1]["base_url"].startswith("http://127.0.0.1:")
    # The agents themselves run on the head, by their own resources.
    agents = {r["payload"]["name"]: r["payload"] for r in of_type(trace, "Placed") if r["payload"]["name"] != SERVER}
    assert set(agents) == {"tiny_1", "tiny_2"} and all(a["node"] == out["head"] for a in agents.values())
    assert of_type(trace, "ModelCallFinished") and not of_type(trace, "Down")
    assert_trace_invariants(trace)
    assert_causal_order(trace)
    assert out["uninterrupted"]["open_after"] == []  # the port is closed at the run's end


def test_losing_the_model_servers_node_restarts_it_on_another_and_the_run_completes(
        model_run: dict[str, Any]) -> None:
    out = model_run
    trace = _trace(out, "node_loss")
    assert out["node_loss"]["status"] == "completed", out["node_loss"]["reason"]
    assert (out["node_loss"]["final_answer"] or "").strip()

    # The server is Down with its node, then placed (incarnation 2) on the other llama node.
    downs = _by(trace, "Down")
    assert downs[1]["reason"] in ("node_lost", "unavailable")
    placed, ready = _by(trace, "Placed"), _by(trace, "ModelServerReady")
    assert placed[1]["node"] == out["removed"]
    assert placed[2]["node"] in out["llama_nodes"] and placed[2]["node"] != out["removed"]
    assert ready[2]["base_url"] != ready[1]["base_url"]
    # Each agent using it is told Down and restarted by our supervisor; it stays on the head.
    agent_downs = [r["payload"] for r in of_type(trace, "Down") if r["payload"]["name"] != SERVER]
    assert agent_downs and {d["reason"] for d in agent_downs} == {"model_server_lost"}
    restarted = {(r["payload"]["name"], r["payload"]["incarnation"]) for r in of_type(trace, "AgentRestarting")}
    assert {(d["name"], d["incarnation"]) for d in agent_downs} <= restarted
    assert not of_type(trace, "AgentMarkedFailed")
    assert_trace_invariants(trace)
    assert_causal_order(trace)
    assert out["node_loss"]["open_after"] == []


def test_a_killed_server_process_is_restarted_with_its_agents(model_run: dict[str, Any]) -> None:
    out = model_run
    trace = _trace(out, "process_killed")
    assert len(out["killed_pids"]) == 1  # one server for both agents
    assert out["process_killed"]["status"] == "completed", out["process_killed"]["reason"]
    downs = _by(trace, "Down")
    assert downs[1]["reason"] == "killed" and "the server process exited" in downs[1]["detail"]
    assert set(_by(trace, "ModelServerReady")) == {1, 2}
    agent_downs = [r["payload"] for r in of_type(trace, "Down") if r["payload"]["name"] != SERVER]
    assert agent_downs and {d["reason"] for d in agent_downs} == {"model_server_lost"}
    assert not of_type(trace, "AgentMarkedFailed")
    assert_trace_invariants(trace)
    assert_causal_order(trace)
    assert out["process_killed"]["open_after"] == []


def test_no_node_with_the_resource_is_a_clear_failure(model_run: dict[str, Any]) -> None:
    out = model_run
    trace = _trace(out, "nowhere")
    assert out["nowhere"]["status"] == "failed" and out["nowhere"]["final_answer"] is None
    failed = [r["payload"] for r in of_type(trace, "AgentMarkedFailed")]
    assert {f["name"] for f in failed} == {"tiny_1", "tiny_2"}
    expected = "no live Ray node in the cluster has the resources {big_gpu: 1} that runtime.model_server_resources"
    assert all(expected in f["reason"] for f in failed), failed
    assert not of_type(trace, "AgentRestarting")  # no restart can place it: each agent fails at once
    assert expected in out["nowhere"]["reason"]  # what the user sees
    assert not _by(trace, "Placed")  # nothing started


def test_nothing_of_the_servers_is_left(model_run: dict[str, Any]) -> None:
    assert model_run["exit"] == 0, model_run["stderr"][-4000:]
    assert model_run["left"] == []  # the llama.cpp processes carry the scenario's tag too
