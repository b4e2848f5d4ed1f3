"""Sessions: every turn of the REPL, of ``--session-id`` and of ``massgen.run(session_id=...)`` is stored
in one place, and a later process continues the conversation with the earlier turns as history."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import scripted, step, team_config
from test_repl import session as repl_session

import massgen
from massgen.cli.main import main
from massgen.logs import read_trace
from massgen.sessions import list_sessions, load

EXAMPLE = "@examples/basic/scripted_three_agents"
FIRST = "Which is larger, 9.11 or 9.9?"
ANSWER = "9.9 is larger. Written with the same number of decimals, 9.9 = 9.90 and 9.90 > 9.11."


def massgen_process(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MASSGEN_LOG_BASE_DIR": str(tmp_path / "massgen_logs")}
    return subprocess.run([sys.executable, "-m", "massgen.cli.main", *args], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=60)


def started(log_dir: str | Path) -> dict[str, Any]:
    payload: dict[str, Any] = read_trace(Path(log_dir))[0]["payload"]
    return payload


def test_a_session_is_continued_in_a_new_process_with_its_first_turn(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    first = massgen_process(tmp_path, "--config", EXAMPLE, "--session-id", "work", FIRST)
    assert first.returncode == 0 and "session: work (turn 1" in first.stderr
    second = massgen_process(tmp_path, "--continue", "--automation", "And which is smaller?")
    assert second.returncode == 0, second.stderr
    log_dir = dict(line.split(": ", 1) for line in second.stdout.splitlines() if ": " in line)["ATTEMPT_DIR"]
    assert started(tmp_path / log_dir)["history"] == [[FIRST, ANSWER]]  # the first process's turn is context

    stored = json.loads((tmp_path / "sessions" / "work" / "session.json").read_text())
    assert stored["config"] == {"config": EXAMPLE}  # --continue reused the session's config
    assert [t["question"] for t in stored["turns"]] == [FIRST, "And which is smaller?"]
    assert all(t["status"] == "completed" and Path(t["log_dir"]).is_dir() for t in stored["turns"])

    assert main(["--list-sessions"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[0].split()[:3] == ["work", "2", "turns"]


def test_the_repl_stores_every_turn_and_a_new_process_continues_it(tmp_path: Path) -> None:
    config = team_config(scripted("solo", [step(new_answer="4")]), run_timeout=30)
    with repl_session(config, tmp_path) as d:
        d.line("What is 2+2?")
        d.expect("── final answer")
        stored = list_sessions()
        assert len(stored) == 1 and [t["answer"] for t in stored[0].turns] == ["4"]  # on disk at once
        d.line("/quit")
        d.expect("massgen --continue picks it up")
    code = main(["--continue", "--automation", "--config", EXAMPLE, "And times three?"])
    assert code == 0
    session = load(stored[0].id)
    assert [t["question"] for t in session.turns] == ["What is 2+2?", "And times three?"]
    assert started(session.turns[1]["log_dir"])["history"] == [["What is 2+2?", "4"]]


def test_the_api_and_the_command_line_share_one_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = massgen.run_sync(FIRST, EXAMPLE, session_id="api")
    second = massgen.run_sync("Are you sure?", session_id="api")  # the session's config is used again
    assert started(second.log_dir)["history"] == [[FIRST, first.final_answer]]
    assert main(["--session-id", "api", "--automation", "Third?"]) == 0
    log_dir = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines() if ": " in line)["ATTEMPT_DIR"]
    assert [q for q, _ in started(log_dir)["history"]] == [FIRST, "Are you sure?"]

    async def streamed() -> list[Any]:
        return [event async for event in massgen.stream("Fourth?", session_id="api", chunks=False)]

    final = asyncio.run(streamed())[-1]
    assert [q for q, _ in started(final.result.log_dir)["history"]] == [FIRST, "Are you sure?", "Third?"]
    assert [t["question"] for t in load("api").turns] == [FIRST, "Are you sure?", "Third?", "Fourth?"]


def test_session_errors_name_the_problem(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--continue", "--config", EXAMPLE, "q"]) == 1
    assert "no session to continue" in capsys.readouterr().err
    assert main(["--session-id", "../elsewhere", "--config", EXAMPLE, "q"]) == 1
    assert "--session-id '../elsewhere'" in capsys.readouterr().err


def test_two_writers_on_one_session_keep_both_turns(tmp_path: Path) -> None:
    from massgen.actors.run.team import RunResult
    from massgen.sessions import open_or_create

    def result(answer: str) -> RunResult:
        return RunResult(status="completed", reason="", final_answer=answer, winner="a", winner_label="agent1.1",
                         partial=False, log_dir=tmp_path, run_id=answer)

    here, there = open_or_create("shared"), open_or_create("shared")  # two terminals, one session
    here.add_turn("q1", result("a1"))
    there.add_turn("q2", result("a2"))  # did not see q1 when it opened the session
    assert [(t["turn"], t["question"]) for t in load("shared").turns] == [(1, "q1"), (2, "q2")]
    assert load("shared").history() == (("q1", "a1"), ("q2", "a2"))


def test_continue_never_joins_an_older_conversation_when_the_newest_session_file_cannot_be_read(
    tmp_path: Path
) -> None:
    """``--continue`` is refused, naming the file, when the session written last is the unreadable one: the
    question would otherwise join an older conversation. An older unreadable one is named and passed over."""
    for name in ("older", "newer"):
        made = massgen_process(tmp_path, "--config", EXAMPLE, "--session-id", name, FIRST)
        assert made.returncode == 0, made.stderr
    newer = tmp_path / "sessions" / "newer" / "session.json"
    newer.write_text(newer.read_text()[:40])  # cut short

    refused = massgen_process(tmp_path, "--continue", "And which is smaller?")

    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert f"{newer}: not a readable session file" in refused.stderr and "--session-id" in refused.stderr
    assert len(load("older", tmp_path / "sessions").turns) == 1  # nothing joined the older conversation

    older = tmp_path / "sessions" / "older" / "session.json"
    newer.write_text(json.dumps({**json.loads(older.read_text()), "id": "newer"}))  # repaired, written last
    older.write_text("{")
    os.utime(older, (1, 1))  # and the damaged one is the older file
    continued = massgen_process(tmp_path, "--continue", "And which is smaller?")
    assert continued.returncode == 0, continued.stderr
    assert f"massgen: warning: skipped {older}: not a readable session file" in continued.stderr
    assert "session: newer (turn 2" in continued.stderr


def test_a_session_that_cannot_be_created_is_named_with_its_cause_and_exit_1(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "notadir"
    not_a_folder.write_text("")
    done = subprocess.run([sys.executable, "-m", "massgen.cli.main", "--config", EXAMPLE, "--session-id", "brandnew",
                           FIRST], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                          env={**os.environ, "MASSGEN_SESSIONS_DIR": str(not_a_folder),
                               "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs")})
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"cannot create session 'brandnew' in {not_a_folder}: Not a directory" in done.stderr
    assert not (tmp_path / "logs").exists()  # refused before the run: nothing paid for


def test_a_turn_that_could_not_be_saved_keeps_its_answer_printed_and_exits_1(tmp_path: Path) -> None:
    made = massgen_process(tmp_path, "--config", EXAMPLE, "--session-id", "s", FIRST)
    assert made.returncode == 0, made.stderr
    lock = tmp_path / "sessions" / "s" / ".lock"
    lock.unlink()
    lock.mkdir()  # the session cannot be written any more (a full disk behaves alike)

    done = massgen_process(tmp_path, "--session-id", "s", "And which is smaller?")

    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stdout.strip()  # the answer, which was paid for, is printed all the same
    assert "massgen: the turn was not saved to session s" in done.stderr
    assert len(load("s", tmp_path / "sessions").turns) == 1


@pytest.mark.parametrize("odd", ["nl\n", "nl\r\n", "\nnl"])
def test_a_session_id_with_a_line_break_is_refused(odd: str) -> None:
    from massgen.sessions import SessionError, check_session_id

    with pytest.raises(SessionError, match="--session-id"):
        check_session_id(odd)
    assert check_session_id("nl") == "nl"
