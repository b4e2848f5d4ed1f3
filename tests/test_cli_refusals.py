"""What the ``massgen`` command cannot do is said in one line naming the thing, with an exit code; never a traceback.

Each case here once ended in a Python traceback, a hang or a silent surprise (a probe of the command with
hostile and broken input, 2026-12-07).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = "@examples/basic/scripted_three_agents"


def massgen(*args: str, cwd: Path, env: dict[str, str] | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "MASSGEN_LOG_BASE_DIR": str(cwd / "logs"), **(env or {})}
    return subprocess.run([sys.executable, "-m", "massgen.cli.main", *args], capture_output=True, text=True,
                          env=environment, timeout=timeout, cwd=cwd)


def refused(done: subprocess.CompletedProcess[str], code: int, *words: str) -> None:
    assert done.returncode == code, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    for word in words:
        assert word in done.stderr, done.stderr


def test_a_log_directory_that_cannot_be_made_is_named_with_exit_1(tmp_path: Path) -> None:
    in_the_way = tmp_path / "a_file"
    in_the_way.write_text("not a directory\n", encoding="utf-8")
    done = massgen("--config", EXAMPLE, "q", cwd=tmp_path, env={"MASSGEN_LOG_BASE_DIR": str(in_the_way)})
    refused(done, 1, "massgen: the log directory", str(in_the_way), "Not a directory")


@pytest.mark.parametrize("count", ["0", "-1", "100000000"])
def test_a_generated_team_size_out_of_range_is_refused_at_once_naming_the_flag(tmp_path: Path, count: str) -> None:
    # 0 was silently "one agent", -1 was reported as 0, and 10**8 built that many agents before the check.
    done = massgen("--generate-config", "team.yaml", "--config-backend", "openai", "--config-model", "gpt-5",
                   "--config-agents", count, cwd=tmp_path, timeout=30)
    refused(done, 1, f"massgen: --config-agents: between 1 and 10 agents, not {count}")
    assert not (tmp_path / "team.yaml").exists()


@pytest.mark.parametrize("flag", ["--config", "--model", "--backend", "--base-url", "--output-file", "--session-id"])
def test_an_empty_name_or_path_is_a_usage_error_not_the_default(tmp_path: Path, flag: str) -> None:
    # `--config ""` and `--model ""` ran the default team (the local model) without a word.
    done = massgen(flag, " ", "q", cwd=tmp_path, timeout=30)
    refused(done, 64, f"argument {flag}: empty; give a value or leave the flag out")
    assert not (tmp_path / "logs").exists()  # no run began


def test_an_at_mention_of_a_symlink_loop_stays_text_and_the_run_answers(tmp_path: Path) -> None:
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    done = massgen("--config", EXAMPLE, "summarize @loop1", cwd=tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr


def _without_root_override() -> list[str]:
    """A prefix that makes root obey file modes as a user does (CI runs as root; users do not)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("root without setpriv cannot be made to obey file modes")
    caps = "-dac_override,-dac_read_search"
    return ["setpriv", "--bounding-set", caps, "--inh-caps", caps, "--"]


def test_a_writable_context_this_user_cannot_read_is_named_before_the_run(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "notes.txt").write_text("x\n", encoding="utf-8")
    locked.chmod(0o300)  # enterable and writable, not listable
    try:
        done = subprocess.run([*_without_root_override(), sys.executable, "-m", "massgen.cli.main", "--config", EXAMPLE,
                               "--cwd-context", "rw", "q"], capture_output=True, text=True, timeout=60, cwd=locked,
                              env={**os.environ, "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs")})
    finally:
        locked.chmod(0o700)
    refused(done, 1, f"{locked}: cannot be read (Permission denied); a writable context path must be readable")


def _a_run(tmp_path: Path) -> Path:
    """The attempt folder of a finished scripted run, under ``tmp_path``."""
    done = massgen("--automation", "--config", EXAMPLE, "What is 2+2?", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return next((tmp_path / "logs").glob("log_*/turn_1/attempt_1"))


def test_a_trace_line_nested_past_any_record_is_skipped_with_a_one_line_warning(tmp_path: Path) -> None:
    attempt = _a_run(tmp_path)
    with (attempt / "trace.jsonl").open("a", encoding="utf-8") as trace:
        trace.write("[" * 100_000 + "]" * 100_000 + "\n")  # json.loads: RecursionError
    done = massgen("logs", "summary", str(attempt), cwd=tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("massgen logs: warning: ") and "nested too deeply to be a trace record" in done.stderr
    assert len(done.stderr.splitlines()) == 1  # not Python's format, with a line of our source under it


def test_a_record_whose_fields_are_the_wrong_types_is_named_by_logs_and_viewer(tmp_path: Path) -> None:
    attempt = _a_run(tmp_path)
    trace = attempt / "trace.jsonl"
    records = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    turn = next(r for r in records if r["type"] == "TurnStarted")
    turn["payload"]["agent"] = [{"not": "a name"}]
    trace.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    for command in (["logs", "summary"], ["viewer"]):
        done = massgen(*command, str(attempt), cwd=tmp_path)
        refused(done, 1, f"massgen {command[0]}: trace record {turn['seq']} (TurnStarted): agent: ")


@pytest.mark.parametrize("turns", ['"x"', '[{"question": null, "answer": 5, "finished_at": "t"}]', "[7]"])
def test_a_damaged_session_file_is_named_and_spares_the_others(tmp_path: Path, turns: str) -> None:
    sessions = tmp_path / "sessions"
    (sessions / "bad").mkdir(parents=True)
    (sessions / "bad" / "session.json").write_text(
        f'{{"id": "bad", "created_at": "2026-12-07T00:00:00", "turns": {turns}}}', encoding="utf-8")
    env = {"MASSGEN_SESSIONS_DIR": str(sessions)}
    assert massgen("--config", EXAMPLE, "--session-id", "good", "q", cwd=tmp_path, env=env).returncode == 0
    listed = massgen("--list-sessions", cwd=tmp_path, env=env)
    assert listed.returncode == 0 and "good" in listed.stdout and "Traceback" not in listed.stderr, listed.stderr
    assert "massgen: skipped " in listed.stderr and "bad/session.json: not a readable session file" in listed.stderr
    continued = massgen("--config", EXAMPLE, "--continue", "next", cwd=tmp_path, env=env)
    assert continued.returncode == 0 and "Traceback" not in continued.stderr, continued.stderr
    refused(massgen("--config", EXAMPLE, "--session-id", "bad", "next", cwd=tmp_path, env=env), 1,
            "bad/session.json: not a readable session file", "turns: each is an object")


def test_a_config_that_is_a_symlink_loop_or_a_fifo_is_named_for_what_it_is(tmp_path: Path) -> None:
    # Both were "config file not found", about a file that is there.
    (tmp_path / "loop.yaml").symlink_to(tmp_path / "loop2.yaml")
    (tmp_path / "loop2.yaml").symlink_to(tmp_path / "loop.yaml")
    os.mkfifo(tmp_path / "fifo.yaml")
    refused(massgen("--config", "loop.yaml", "q", cwd=tmp_path), 1,
            "massgen: loop.yaml: cannot be read (Too many levels of symbolic links)")
    refused(massgen("--config", "fifo.yaml", "q", cwd=tmp_path), 1,
            "massgen: fifo.yaml: is not a regular file (give a YAML file)")


@pytest.mark.parametrize("limit", ["0", "-5"])
def test_a_list_limit_below_one_is_a_usage_error_not_an_empty_list(tmp_path: Path, limit: str) -> None:
    _a_run(tmp_path)  # there is a run to list: "no runs logged" would be false
    refused(massgen("logs", "list", "--limit", limit, cwd=tmp_path), 64,
            f"argument --limit: {limit}: must be at least 1")


def test_resuming_from_a_file_that_is_not_a_trace_names_that_file(tmp_path: Path) -> None:
    # It read ./trace.jsonl beside it instead, and named that.
    (tmp_path / "team.yaml").write_text("agents: []\n", encoding="utf-8")
    refused(massgen("--config", EXAMPLE, "--resume", "team.yaml", cwd=tmp_path), 1,
            "massgen: team.yaml: is a file, not a run's log directory")


def test_validate_names_the_unset_variable_a_number_field_could_not_read(tmp_path: Path) -> None:
    (tmp_path / "team.yaml").write_text(
        "agents:\n  - id: a\n    backend: {type: scripted, script: [[{new_answer: x}]]}\n"
        "timeout_settings:\n  orchestrator_timeout_seconds: ${MASSGEN_TEST_UNSET_SECONDS}\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "MASSGEN_TEST_UNSET_SECONDS"}
    done = subprocess.run([sys.executable, "-m", "massgen.cli.main", "--validate", "team.yaml"], capture_output=True,
                          text=True, timeout=60, cwd=tmp_path, env=env)
    refused(done, 1, "timeout_settings.orchestrator_timeout_seconds: Input should be a valid number",
            "timeout_settings.orchestrator_timeout_seconds: environment variable ${MASSGEN_TEST_UNSET_SECONDS} is "
            "not set")


@pytest.mark.parametrize(("block", "key"), [("timeout_settings:\n  orchestrator_timeout_seconds: true\n",
                                             "orchestrator_timeout_seconds"),
                                            ("orchestrator:\n  max_new_answers_global: false\n",
                                             "max_new_answers_global")])
def test_a_truth_value_where_a_number_goes_is_refused_not_read_as_one(tmp_path: Path, block: str, key: str) -> None:
    # `true` was a deadline of 1 second.
    (tmp_path / "team.yaml").write_text(
        "agents:\n  - id: a\n    backend: {type: scripted, script: [[{new_answer: x}]]}\n" + block, encoding="utf-8")
    refused(massgen("--validate", "team.yaml", cwd=tmp_path), 1, f"{key}: a number is needed, not ")


def test_the_session_list_shows_a_questions_escape_sequences_as_text(tmp_path: Path) -> None:
    env = {"MASSGEN_SESSIONS_DIR": str(tmp_path / "sessions")}
    assert massgen("--config", EXAMPLE, "--session-id", "s", "\x1b]0;owned\x07 What is 2+2?", cwd=tmp_path,
                   env=env).returncode == 0
    listed = massgen("--list-sessions", cwd=tmp_path, env=env)
    assert "\x1b" not in listed.stdout and "\\x1b]0;owned\\x07 What is 2+2?" in listed.stdout, listed.stdout


@pytest.mark.parametrize("args", [[], ["--web"]])
def test_no_question_without_a_terminal_is_a_usage_error_as_an_empty_question_is(
        tmp_path: Path, args: list[str]) -> None:
    """A missing positional is a usage error (64), not a config error (1); the message still says what to give."""
    done = subprocess.run([sys.executable, "-m", "massgen.cli.main", "--config", EXAMPLE, *args],
                          capture_output=True, text=True, cwd=tmp_path, timeout=60, input="q\n",
                          env={**os.environ, "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs")})
    refused(done, 64, "massgen: ", "give a question" if not args else "--web needs a question",
            'e.g. massgen ' + ("--web " if args else "") + '"Which is larger, 9.11 or 9.9?"')
    assert not (tmp_path / "logs").exists()
    empty = massgen("--config", EXAMPLE, "", cwd=tmp_path)
    refused(empty, 64, "the question is empty")


def test_an_at_mention_that_attaches_nothing_stays_text_with_one_note_each(tmp_path: Path) -> None:
    """``@missing.txt``, a device, a FIFO and ``@file:x`` are left in the question as text, as before, and each is
    named once on stderr; a file that is there is attached and gets no note."""
    (tmp_path / "ok.txt").write_text("present\n", encoding="utf-8")
    os.mkfifo(tmp_path / "fifo")
    done = massgen("--config", EXAMPLE, "compare @missing.txt, @/dev/zero and @fifo with @ok.txt and @ok.txt:x "
                   "and again @missing.txt", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if line.startswith("massgen: note: @")]
    assert notes == ["massgen: note: @missing.txt: no such file; left as text",
                     "massgen: note: @/dev/zero: not a regular file or folder; left as text",
                     "massgen: note: @fifo: not a regular file or folder; left as text",
                     "massgen: note: @ok.txt:x: no such file; left as text"], done.stderr
    plain = massgen("--no-parse-at-references", "--config", EXAMPLE, "compare @missing.txt", cwd=tmp_path)
    assert plain.returncode == 0 and "note:" not in plain.stderr, plain.stderr
