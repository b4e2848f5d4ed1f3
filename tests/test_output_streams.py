"""Where the ``massgen`` command's output goes when it cannot go there: an ``--output-file`` that cannot be
written, a reader of stdout that left (``| head -1``), a stream the shell closed (``>&-``, ``2>&-``), a
terminal whose locale cannot encode the text. A real process each time, as a user runs it; a run that
worked is never reported as failed, and what it produced (the answer, the session turn) is kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

EXAMPLE = "@examples/basic/scripted_three_agents"
QUESTION = "Which is larger, 9.11 or 9.9?"
ANSWER = "9.9 is larger"
TIMEOUT = 90  # seconds any one command may take; a scripted run takes about 2

# One agent whose answer holds text an ASCII terminal cannot show, a C1 control (8-bit CSI) and a
# bidirectional override: what a model may write.
UNICODE_TEAM = """\
agents:
  - id: a
    backend:
      type: scripted
      script:
        - - {new_answer: "Ünïcødé ✓ 你好 \\u009b31m C1 \\u202eBIDI"}
        - - {vote: agent1, reason: "ok ✓"}
"""
UNICODE_ANSWER = "Ünïcødé ✓ 你好 \u009b31m C1 \u202eBIDI"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs"),
           "MASSGEN_SESSIONS_DIR": str(tmp_path / "sessions"), **extra}
    env.pop("PYTHONIOENCODING", None)  # the locale alone decides the streams' encoding
    return env


def massgen(*args: str, tmp_path: Path, shell_redirect: str = "", stdout: Any = subprocess.PIPE,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``massgen ARGS`` in ``tmp_path``; ``shell_redirect`` (``>&-``) is applied by a shell that then
    becomes the command (``exec``), so the command starts with that stream closed."""
    command = [sys.executable, "-m", "massgen.cli.main", *args]
    if shell_redirect:
        command = ["sh", "-c", f'exec "$@" {shell_redirect}', "sh", *command]
    return subprocess.run(command, stdout=stdout, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                          env=env or _env(tmp_path), timeout=TIMEOUT)


def massgen_reader_gone(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``massgen ARGS`` writing to a pipe whose reader has already left (``| head -0``): every write to
    stdout meets a broken pipe, from the first one on, whatever the timing."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return massgen(*args, tmp_path=tmp_path, stdout=write_end)
    finally:
        os.close(write_end)


def turns(tmp_path: Path, session: str) -> list[dict[str, Any]]:
    stored: list[dict[str, Any]] = json.loads(
        (tmp_path / "sessions" / session / "session.json").read_text(encoding="utf-8"))["turns"]
    return stored


def quiet(stderr: str) -> None:
    assert "Traceback" not in stderr and "Broken pipe" not in stderr, stderr


# --output-file ------------------------------------------------------------------------------------------


def test_an_output_file_that_is_a_directory_is_refused_before_the_run(tmp_path: Path) -> None:
    done = massgen("--config", EXAMPLE, "--output-file", str(tmp_path), QUESTION, tmp_path=tmp_path)
    assert done.returncode == 1  # a config error: nothing ran
    assert done.stderr == f"massgen: --output-file {tmp_path}: is a directory\n"
    assert done.stdout == "" and not (tmp_path / "logs").exists()


def test_an_output_file_behind_a_file_is_refused_before_the_run(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine\n")
    target = tmp_path / "notes.txt" / "answer.md"
    done = massgen("--config", EXAMPLE, "--output-file", str(target), QUESTION, tmp_path=tmp_path)
    assert done.returncode == 1
    assert done.stderr == f"massgen: --output-file {target}: {tmp_path / 'notes.txt'} is not a directory\n"
    assert not (tmp_path / "logs").exists() and (tmp_path / "notes.txt").read_text() == "mine\n"


def test_an_output_file_in_missing_folders_is_written_with_its_folders(tmp_path: Path) -> None:
    target = tmp_path / "new" / "deeper" / "answer.md"  # as upstream: the folders are made
    done = massgen("--config", EXAMPLE, "--output-file", str(target), QUESTION, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert target.read_text() == done.stdout


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (a device that is always full)")
def test_an_output_file_that_fails_after_the_run_keeps_the_answer_the_exit_code_and_the_session_turn(
        tmp_path: Path) -> None:
    done = massgen("--config", EXAMPLE, "--automation", "--session-id", "kept", "--output-file", "/dev/full",
                   QUESTION, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr  # the run's own code: it completed
    quiet(done.stderr)
    said = [line for line in done.stderr.splitlines() if line.startswith("massgen: --output-file")]
    assert len(said) == 1 and said[0].startswith("massgen: --output-file /dev/full: no space left on device; "
                                                 "the answer is in "), done.stderr
    answer_file = Path(said[0].rsplit("the answer is in ", 1)[1])
    assert answer_file.read_text().startswith(ANSWER)
    assert "OUTPUT_FILE:" not in done.stdout  # automation names only a file that was written
    assert "RUN_STATUS: completed" in done.stdout
    assert len(turns(tmp_path, "kept")) == 1  # the turn is stored after the failed write


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (a device that is always full)")
def test_with_no_logs_a_failed_output_file_keeps_the_answer_file_it_names(tmp_path: Path) -> None:
    done = massgen("--config", EXAMPLE, "--no-logs", "--output-file", "/dev/full", QUESTION, tmp_path=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith(ANSWER)
    answer_file = Path(done.stderr.split("the answer is in ", 1)[1].splitlines()[0])
    assert answer_file.read_text().startswith(ANSWER)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (a device that is always full)")
def test_the_python_api_returns_the_result_and_warns_when_output_file_cannot_be_written(tmp_path: Path,
                                                                                    monkeypatch: Any) -> None:
    import massgen as api

    monkeypatch.setenv("MASSGEN_LOG_BASE_DIR", str(tmp_path / "logs"))
    for target in ("/dev/full", str(tmp_path)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = api.run_sync(QUESTION, EXAMPLE, output_file=target)
        assert result.final_answer is not None and result.final_answer.startswith(ANSWER)
        from massgen.api import OutputFileWarning

        [warning] = [w for w in caught if issubclass(w.category, OutputFileWarning)]
        assert f"output_file {target!r} was not written" in str(warning.message)
        assert str(result.log_dir) in str(warning.message)


# A reader that left, a stream the shell closed ------------------------------------------------------------


@pytest.mark.parametrize("mode", ["--automation", "--stream-events"])
def test_machine_output_into_a_pipe_whose_reader_left_ends_quietly_and_still_keeps_the_turn_and_file(
        tmp_path: Path, mode: str) -> None:
    done = massgen_reader_gone("--config", EXAMPLE, mode, "--session-id", "piped",
                               "--output-file", "out.txt", QUESTION, tmp_path=tmp_path)
    assert done.returncode == 0
    quiet(done.stderr)
    assert (tmp_path / "out.txt").read_text().startswith(ANSWER)
    assert len(turns(tmp_path, "piped")) == 1


@pytest.fixture
def logged(tmp_path: Path) -> Path:
    """``tmp_path`` with one finished run (its answer not ASCII) in its log base."""
    (tmp_path / "uni.yaml").write_text(UNICODE_TEAM, encoding="utf-8")
    done = massgen("--config", "uni.yaml", "frage ü", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    return tmp_path


@pytest.mark.parametrize("command", [["logs", "list"], ["logs", "show"], ["logs", "show", "--json"]])
def test_logs_into_a_pipe_whose_reader_left_end_quietly(logged: Path, command: list[str]) -> None:
    done = massgen_reader_gone(*command, tmp_path=logged)
    assert done.returncode == 0
    assert done.stderr == ""


def test_a_closed_stdout_is_no_error_and_the_output_file_is_still_written(tmp_path: Path) -> None:
    done = massgen("--config", EXAMPLE, "--output-file", "out.txt", QUESTION, tmp_path=tmp_path,
                   shell_redirect=">&-")
    assert done.returncode == 0, done.stderr
    quiet(done.stderr)
    assert (tmp_path / "out.txt").read_text().startswith(ANSWER)


def test_a_closed_stderr_does_not_keep_the_answer_from_stdout(tmp_path: Path) -> None:
    done = massgen("--config", EXAMPLE, QUESTION, tmp_path=tmp_path, shell_redirect="2>&-")
    assert done.returncode == 0
    assert done.stdout.startswith(ANSWER)
    assert "logs:" not in done.stdout  # stderr's lines do not move to stdout


# A locale that cannot encode the text -------------------------------------------------------------------

ASCII_LOCALE = {"LC_ALL": "C", "PYTHONUTF8": "0"}  # no UTF-8 mode: stdout's encoding is ASCII


@pytest.mark.parametrize("command", [["logs", "list"], ["logs", "show"]])
def test_logs_in_an_ascii_locale_escape_what_the_terminal_cannot_show(logged: Path, command: list[str]) -> None:
    done = massgen(*command, tmp_path=logged, env=_env(logged, **ASCII_LOCALE))
    assert done.returncode == 0, done.stderr
    quiet(done.stderr)
    assert "frage \\xfc" in done.stdout


@pytest.mark.parametrize("command", [["logs", "show", "--json"], ["logs", "list", "--json"]])
def test_logs_json_in_an_ascii_locale_is_valid_json_with_the_text_unchanged(logged: Path,
                                                                           command: list[str]) -> None:
    done = massgen(*command, tmp_path=logged, env=_env(logged, **ASCII_LOCALE))
    assert done.returncode == 0, done.stderr
    assert "frage ü" in json.dumps(json.loads(done.stdout), ensure_ascii=False)


def test_stream_events_are_valid_json_in_an_ascii_locale_and_keep_the_text_exactly(tmp_path: Path) -> None:
    (tmp_path / "uni.yaml").write_text(UNICODE_TEAM, encoding="utf-8")
    done = massgen("--config", "uni.yaml", "--stream-events", "q", tmp_path=tmp_path,
                   env=_env(tmp_path, **ASCII_LOCALE))
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[-1]["type"] == "final_answer" and events[-1]["final_answer"] == UNICODE_ANSWER


def test_stream_events_lines_are_ascii_so_no_c1_control_or_bidi_override_reaches_a_terminal(
        tmp_path: Path) -> None:
    (tmp_path / "uni.yaml").write_text(UNICODE_TEAM, encoding="utf-8")
    done = massgen("--config", "uni.yaml", "--stream-events", "q", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.isascii()
    assert "\\u009b31m C1 \\u202eBIDI" in done.stdout  # JSON's own escapes: a parser reads the same text
    assert json.loads(done.stdout.splitlines()[-1])["final_answer"] == UNICODE_ANSWER
