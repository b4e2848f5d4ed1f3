"""The Python API: run, run_sync and stream on scripted teams, and runs side by side."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import FACTOR, assert_trace_invariants, of_type, scripted, step, team_config

import massgen
from massgen.logs import read_trace

WAIT = 15.0 * FACTOR


def pair(prefix: str, answer: str) -> dict[str, Any]:
    """A two-agent team as YAML-shaped data: the first answers, both vote for it."""
    return {
        "agents": [
            scripted(f"{prefix}_a", [step(reasoning=f"{prefix} thinking "), step(new_answer=answer)],
                     [step(vote="agent1", reason="right")]),
            scripted(f"{prefix}_b", [step(delay=0.05), step(when_answers=["agent1"]), step(vote="agent1", reason="ok")],
                     [step(vote="agent1", reason="ok")]),
        ],
        "orchestrator": {"final_answer_strategy": "winner_reuse"},
    }


def slow_team() -> massgen.TeamConfig:
    """One agent that answers, one that thinks for 30 s: a run that only ends when it is stopped."""
    return team_config(
        scripted("quick", [step(new_answer="4")], [step(vote="agent1", reason="mine")]),
        scripted("slow", [step(text="hmm "), step(delay=30), step(new_answer="late")]),
        run_timeout=60, turn_timeout=45, idle_timeout=45,
    )


def test_run_returns_the_answer_votes_logs_and_usage() -> None:
    result = asyncio.run(massgen.run("Which is larger, 9.11 or 9.9?", "@examples/basic/scripted_three_agents"))
    assert result.status == "completed" and result.winner == "agent_b"
    assert result.final_answer is not None and result.final_answer.startswith("9.9 is larger")
    data = result.as_dict()
    for key in ("final_answer", "winner", "votes", "answers", "log_directory", "log_dir", "usage"):
        assert key in data
    assert result["final_answer"] == result.final_answer
    assert Path(data["log_dir"]) == result.log_dir and (result.log_dir / "trace.jsonl").is_file()
    assert Path(data["log_directory"]) == result.log_dir.parent.parent  # upstream's: the log_<stamp> root
    assert data["usage"]["model_calls"] > 0 and result.answers.keys() == {"agent1.1", "agent2.1", "agent3.1"}
    assert {a["label"] for a in data["answers"]} == set(result.answers)  # upstream's list of answers
    assert {v["target_label"] for v in data["votes"] if v["valid"]} == {"agent2.1"}


def test_run_sync_accepts_a_dict_a_yaml_file_or_a_team_config(tmp_path: Path) -> None:
    data = pair("dict", "from a dict")
    assert massgen.run_sync("q", data).final_answer == "from a dict"
    path = tmp_path / "team.yaml"
    path.write_text(yaml.safe_dump(pair("file", "from a file")))
    assert massgen.run_sync("q", path).final_answer == "from a file"
    assert massgen.run_sync("q", str(path), history=[("earlier?", "yes")]).final_answer == "from a file"
    config = massgen.resolve_config(pair("model", "from a TeamConfig"))
    result = massgen.run_sync("q", config, log_dir=tmp_path / "mine", timeout=20)
    assert result.final_answer == "from a TeamConfig" and result.log_dir == tmp_path / "mine"
    with pytest.raises(massgen.ConfigError, match="unknown key"):
        massgen.run_sync("q", {"agents": [], "bogus": 1})


def test_stream_yields_typed_events_in_trace_order_and_ends_with_the_final_answer() -> None:
    async def collect() -> list[massgen.Event]:
        return [event async for event in massgen.stream("q", pair("s", "streamed"))]

    events = asyncio.run(collect())
    assert isinstance(events[0], massgen.RunStartedEvent)
    assert events[0].agents == {"s_a": "agent1", "s_b": "agent2"}
    final = events[-1]
    assert isinstance(final, massgen.FinalAnswerEvent) and final.final_answer == "streamed"
    chunks = [e for e in events if isinstance(e, massgen.ChunkEvent)]
    assert chunks and chunks[0].text == "s thinking " and chunks[0].label == "agent1"
    answers = [e for e in events if isinstance(e, massgen.AnswerEvent)]
    assert [(a.agent, a.label, a.content) for a in answers] == [("s_a", "agent1.1", "streamed")]
    votes = [e for e in events if isinstance(e, massgen.VoteEvent)]
    assert {v.target_label for v in votes} == {"agent1.1"}
    assert events.index(answers[0]) < events.index(votes[0]) < len(events) - 1
    assert final.as_dict()["type"] == "final_answer" and votes[0].as_dict()["type"] == "vote"


def test_stream_reports_restarts_and_failures() -> None:
    crashing = team_config(
        scripted("steady", [step(new_answer="ok")], [step(vote="agent1", reason="ok")]),
        scripted("crashy", [step(fault="raise", incarnations=[1]), step(new_answer="recovered")],
                 [step(vote="agent1", reason="ok")]),
        orchestrator={"final_answer_strategy": "winner_reuse"},
    )

    async def collect() -> list[massgen.Event]:
        return [event async for event in massgen.stream("q", crashing, chunks=False)]

    events = asyncio.run(collect())
    failures = [e for e in events if isinstance(e, massgen.FailureEvent)]
    restarts = [e for e in events if isinstance(e, massgen.RestartEvent)]
    assert failures and failures[0].agent == "crashy" and not failures[0].permanent
    assert restarts and restarts[0].agent == "crashy" and restarts[0].incarnation == 1
    assert not [e for e in events if isinstance(e, massgen.ChunkEvent)]
    assert isinstance(events[-1], massgen.FinalAnswerEvent)


def test_closing_the_stream_early_cancels_the_run_and_completes_its_logs() -> None:
    async def first_answer_then_close() -> Path:
        log_dir = None
        events = massgen.stream("q", slow_team())
        async with contextlib.aclosing(events):
            async for event in events:
                if isinstance(event, massgen.RunStartedEvent):
                    log_dir = event.log_dir
                if isinstance(event, massgen.AnswerEvent):
                    break
        assert log_dir is not None
        return log_dir

    log_dir = asyncio.run(asyncio.wait_for(first_answer_then_close(), WAIT))
    trace = read_trace(log_dir)
    assert_trace_invariants(trace)
    finished = of_type(trace, "RunFinished")[0]["payload"]
    assert finished["status"] == "interrupted" and finished["reason"] == "the event stream was closed early"
    assert (log_dir / "final" / "quick" / "answer.txt").read_text() == "4\n"


def test_run_does_not_block_the_event_loop_and_cancelling_it_cancels_the_team() -> None:
    async def start_then_cancel() -> None:
        task = asyncio.create_task(massgen.run("q", slow_team()))
        await asyncio.sleep(0)  # one loop iteration: a blocking run would have finished by now
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(start_then_cancel())
    base = Path(os.environ["MASSGEN_LOG_BASE_DIR"])
    traces = list(base.rglob("trace.jsonl"))
    assert len(traces) == 1
    trace = read_trace(traces[0].parent)
    assert of_type(trace, "CancelRun")[0]["payload"]["reason"] == "the caller cancelled the run"
    # Cancelled at once, usually before any answer: then the run is interrupted with no answer, the reason kept.
    finished = of_type(trace, "RunFinished")[0]["payload"]
    assert finished["reason"].startswith("the caller cancelled the run")


def test_two_concurrent_runs_are_isolated() -> None:
    async def both() -> tuple[massgen.RunResult, massgen.RunResult]:
        return await asyncio.gather(massgen.run("first?", pair("one", "answer one")),
                                    massgen.run("second?", pair("two", "answer two")))

    first, second = asyncio.run(both())
    assert (first.final_answer, second.final_answer) == ("answer one", "answer two")
    assert first.run_id != second.run_id and first.log_dir != second.log_dir
    for result, prefix, question in ((first, "one", "first?"), (second, "two", "second?")):
        trace = read_trace(result.log_dir)
        assert_trace_invariants(trace)
        assert {r["run_id"] for r in trace} == {result.run_id}
        assert of_type(trace, "RunStarted")[0]["payload"]["question"] == question
        senders = {r["sender"].rpartition("#")[0] for r in trace} - {"supervisor", "judge", "user", "system"}
        assert senders == {f"{prefix}_a", f"{prefix}_b"}


def test_run_and_run_sync_show_one_set_of_arguments_upstream_s_first() -> None:
    run, run_sync = inspect.signature(massgen.run), inspect.signature(massgen.run_sync)
    assert run.parameters == run_sync.parameters
    assert list(run.parameters)[:13] == ["query", "config", "config_dict", "model", "models", "num_agents",
                                         "use_docker", "enable_filesystem", "enable_logging", "output_file",
                                         "verbose", "conversation_history", "parse_at_references"]
    assert inspect.iscoroutinefunction(massgen.run) and not inspect.iscoroutinefunction(massgen.run_sync)


@pytest.mark.parametrize("timeout", [0.0, -5.0, float("inf"), float("nan")])
def test_a_run_deadline_must_be_positive_and_finite(tmp_path: Path, timeout: float) -> None:
    with pytest.raises(massgen.ConfigError, match="timeout: must be a positive, finite number of seconds"):
        massgen.run_sync("What is 2+2?", "@examples/basic/scripted_three_agents", timeout=timeout,
                         log_dir=tmp_path / "run")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("timeout", ["10", True, [1.0]])
def test_a_run_deadline_that_is_not_a_number_is_named(tmp_path: Path, timeout: object) -> None:
    with pytest.raises(massgen.ConfigError, match="timeout: must be a number of seconds, not "):
        massgen.run_sync("What is 2+2?", "@examples/basic/scripted_three_agents", timeout=timeout,  # type: ignore[arg-type]
                         log_dir=tmp_path / "run")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(("argument", "value", "said"), [
    ("context_paths", "/tmp", "context_paths: must be a list of paths"),  # was split: writes to "/", "t", "m", "p"
    ("models", "gpt-4o", "models: must be a list of names, not str"),  # was six agents: g, p, t, -, 4, o
    ("models", [1, 2], "models: must be a list of names (non-empty strings)"),
    ("num_agents", "3", "num_agents: must be a whole number, not str"),
    ("num_agents", True, "num_agents: must be a whole number, not bool"),
    ("output_file", 5, "output_file: must be a path, not int"),  # was a TypeError after the whole run
    ("log_dir", 5, "log_dir: must be a path, not int"),
    ("session_id", 5, "session_id: must be a session id, not int"),
    ("verbose", "yes", "verbose: must be True or False, not str"),
    ("model", "", "model: empty; leave it out for the default"),
])
def test_an_argument_of_the_wrong_type_is_named_before_anything_runs(tmp_path: Path, argument: str, value: object,
                                                                      said: str) -> None:
    with pytest.raises(massgen.ConfigError, match=re.escape(said)):
        massgen.run_sync("What is 2+2?", "@examples/basic/scripted_three_agents", **{argument: value},
                         log_dir=tmp_path / "run") if argument != "log_dir" else massgen.run_sync(
            "What is 2+2?", "@examples/basic/scripted_three_agents", log_dir=value)
    assert not (tmp_path / "run").exists()


def test_a_log_dir_that_is_a_file_is_refused_before_the_run(tmp_path: Path) -> None:
    in_the_way = tmp_path / "a_file"
    in_the_way.write_text("x\n", encoding="utf-8")
    with pytest.raises(massgen.LogDirError, match="a file is in the way"):
        massgen.run_sync("What is 2+2?", "@examples/basic/scripted_three_agents", log_dir=in_the_way)
    assert in_the_way.read_text(encoding="utf-8") == "x\n"


def test_a_team_runs_once_and_is_waited_for_only_once_started(tmp_path: Path) -> None:
    team = massgen.Team(massgen.resolve_config("@examples/basic/scripted_three_agents"), "What is 2+2?",
                        log_dir=tmp_path / "run")
    with pytest.raises(massgen.ConfigError, match="has not been started"):
        team.wait()
    assert team.run().status == "completed"
    with pytest.raises(massgen.ConfigError, match="already been started"):  # it ran a second team into one trace
        team.start()
    assert len([r for r in massgen.read_trace(tmp_path / "run") if r["type"] == "RunStarted"]) == 1


def test_zero_agents_of_a_model_is_refused_not_one(tmp_path: Path) -> None:
    with pytest.raises(massgen.ConfigError, match="num_agents: between 1 and 10 agents, not 0"):
        massgen.run_sync("What is 2+2?", model="gpt-5-mini", num_agents=0, log_dir=tmp_path / "run")


def test_a_log_dir_that_holds_a_run_is_not_run_into_again(tmp_path: Path) -> None:
    first = massgen.run_sync("What is 2+2?", "@examples/basic/scripted_three_agents", log_dir=tmp_path / "run")
    with pytest.raises(massgen.LogDirError, match="it holds a run already"):  # the two runs were one trace
        massgen.run_sync("What is 3+3?", "@examples/basic/scripted_three_agents", log_dir=tmp_path / "run")
    assert [r["run_id"] for r in massgen.read_trace(tmp_path / "run") if r["type"] == "RunStarted"] == [
        first.run_id]


# -- conversation_history as upstream's callers write it -----------------------------------------------


def test_conversation_history_given_as_openai_content_parts_is_their_text(tmp_path: Path) -> None:
    result = massgen.run_sync("And 3+3?", "@examples/basic/scripted_three_agents", log_dir=tmp_path / "run",
                              conversation_history=[
                                  {"role": "user", "content": [{"type": "text", "text": "What is "},
                                                               {"type": "text", "text": "2+2?"}]},
                                  {"role": "assistant", "content": [{"type": "text", "text": "4"}]},
                              ])
    started = of_type(read_trace(result.log_dir), "RunStarted")[0]["payload"]
    assert [tuple(pair) for pair in started["history"]] == [("What is 2+2?", "4")]  # not "[{'type': 'text', ..."


@pytest.mark.parametrize(("history", "said"), [
    ([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}]},
      {"role": "assistant", "content": "a cat"}],
     "conversation_history[0].content[0]: a part of type 'image_url'; only text parts"),
    ([{"role": "user", "content": [{"type": "text", "text": 5}]}], "conversation_history[0].content[0].text: "),
    ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": ["4"]}],
     "conversation_history[1].content[0]: must be a part"),
    ([{"role": "user", "content": 5}], "conversation_history[0].content: must be text or a list of content parts"),
    ("hello", "conversation_history: must be a list of messages"),
    ([{"role": "user", "content": "hi"}, "4"], "conversation_history[1]: must be a message"),
])
def test_conversation_history_that_is_not_text_is_refused_naming_where(tmp_path: Path, history: object,
                                                                       said: str) -> None:
    with pytest.raises(massgen.ConfigError, match=re.escape(said)):
        massgen.run_sync("q", "@examples/basic/scripted_three_agents", conversation_history=history,  # type: ignore[arg-type]
                         log_dir=tmp_path / "run")
    assert not (tmp_path / "run").exists()


# -- a run refused before it starts leaves nothing behind -------------------------------------------------


def test_a_run_refused_before_it_starts_leaves_no_empty_log_directory(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    base = tmp_path / "logs"
    monkeypatch.setenv("MASSGEN_LOG_BASE_DIR", str(base))
    base.mkdir()
    keyless = {"agents": [{"id": "a", "backend": {"type": "openai", "model": "gpt-4o"}}]}
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)  # no ./.env with a key in it
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(massgen.ConfigError, match="OPENAI_API_KEY"):  # the preflight: no key
        massgen.run_sync("What is 2+2?", keyless)
    with pytest.raises(massgen.QuestionError, match="the question is empty"):
        massgen.run_sync("   ", "@examples/basic/scripted_three_agents")
    assert list(base.iterdir()) == []  # was log_<stamp>/turn_1/attempt_1/snapshots/, empty, each time
    # A conversation's folder, kept: only what the refused turn made is taken away again.
    root = base / "log_conversation"
    (root / "turn_1" / "attempt_1").mkdir(parents=True)
    team = massgen.new_team("@examples/basic/scripted_three_agents", "   ", run_root=root, turn=2)
    with pytest.raises(massgen.QuestionError):
        team.start()
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*")) == ["turn_1", "turn_1/attempt_1"]


# -- Ctrl-C twice: the second one during run_sync's cleanup --------------------------------------------

# A script that calls run_sync and presses Ctrl-C twice, real SIGINTs to its main thread: once the run is under
# way (the verbose printer prints the first answer), and again as run_sync's cleanup waits for the cancelled
# run to close (the moment ``Team.wait`` is entered again, seen by a profile hook: nothing is replaced). Then it
# reports what is still open.
_TWICE = r"""
import json, os, signal, sys, threading
import massgen
from massgen.actors.run.team import Team

main = threading.main_thread().ident
presses = []

def press(when):
    presses.append(when)
    signal.pthread_kill(main, signal.SIGINT)

class Printed:
    def write(self, text):
        if text.startswith("[massgen] answer:") and not presses:
            press("the run is under way")
        return len(text)

    def flush(self):
        pass

def watch(frame, event, arg):
    if event == "call" and frame.f_code is Team.wait.__code__ and len(presses) == 1:
        press("run_sync is closing the run")

sys.stdout = Printed()
threading.setprofile(watch)
sys.setprofile(watch)
try:
    massgen.run_sync("What is 2+2?", sys.argv[1], log_dir=sys.argv[2], verbose=True)
    raised = False
except KeyboardInterrupt:
    raised = True
sys.setprofile(None)
threading.setprofile(None)
writers = [t for t in threading.enumerate() if "-actors-" in t.name]  # the run's actor threads, the writer's too
for writer in writers:
    writer.join(timeout=10)  # still running once run_sync has returned: a leak, however slow the machine
def target(fd):
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""
open_traces = [fd for fd in os.listdir("/proc/self/fd") if target(fd).endswith("trace.jsonl")]
print(json.dumps({"raised": raised, "presses": presses, "writers_alive": [t.name for t in writers if t.is_alive()],
                  "open_traces": len(open_traces)}), file=sys.__stdout__, flush=True)
"""


def test_a_second_ctrl_c_during_run_sync_s_cleanup_still_closes_the_trace(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    log_dir = tmp_path / "run"
    slow = Path(__file__).parent / "configs" / "slow_team.yaml"
    env = {**os.environ, "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs"), "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", _TWICE, str(slow), str(log_dir)], capture_output=True, text=True,
                          env=env, timeout=60 * FACTOR, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["presses"] == ["the run is under way", "run_sync is closing the run"]
    assert report["raised"]  # Ctrl-C reaches the caller, once the run is closed
    assert report["writers_alive"] == [] and report["open_traces"] == 0  # the writer's thread and its file
    finished = of_type(read_trace(log_dir), "RunFinished")
    assert len(finished) == 1 and finished[0]["payload"]["status"] == "interrupted"


# -- a trace that cannot be written ------------------------------------------------------------------


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (every write fails as on a full disk)")
def test_a_run_whose_trace_cannot_be_written_says_why_and_where(tmp_path: Path) -> None:
    log_dir = tmp_path / "run"
    team = massgen.new_team("@examples/basic/scripted_three_agents", "What is 2+2?", log_dir=log_dir)
    log_dir.mkdir()
    (log_dir / "trace.jsonl").symlink_to("/dev/full")  # the disk is full: every write of the trace fails
    result = team.run(timeout=WAIT)
    assert result.status == "failed" and result.final_answer is None
    # Was "the trace could not be written", and the user could not tell a full disk from a bug.
    assert result.reason == f"the trace could not be written: No space left on device ({log_dir / 'trace.jsonl'})"
