"""The ``massgen`` command as a user runs it: a real process, real exit codes, real signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from signal_process import stop_one_shot

CONFIGS = Path(__file__).parent / "configs"
EXAMPLE = "@examples/basic/scripted_three_agents"


def massgen(*args: str, tmp_path: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs")}
    return subprocess.run([sys.executable, "-m", "massgen.cli.main", *args], capture_output=True, text=True,
                          env=env, timeout=timeout, cwd=tmp_path)


def lines(output: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in output.splitlines() if ": " in line)


def test_a_question_prints_the_final_answer_on_stdout(tmp_path: Path) -> None:
    done = massgen("--config", EXAMPLE, "Which is larger, 9.11 or 9.9?", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("9.9 is larger.")
    assert "Traceback" not in done.stderr


def test_automation_mode_prints_machine_readable_lines(tmp_path: Path) -> None:
    done = massgen("--automation", "--config", EXAMPLE, "Which is larger, 9.11 or 9.9?", tmp_path=tmp_path)
    assert done.returncode == 0
    fields = lines(done.stdout)
    assert fields["RUN_STATUS"] == "completed" and fields["WINNER_LABEL"] == "agent2.1"
    log_dir = tmp_path / fields["ATTEMPT_DIR"]
    assert log_dir.is_dir() and log_dir.parts[-2:] == ("turn_1", "attempt_1")
    assert (tmp_path / fields["ANSWER_FILE"]).read_text().startswith("9.9 is larger.")
    assert json.loads((log_dir / "status.json").read_text())["result"]["status"] == "completed"


def test_every_agent_failing_exits_2_with_logs(tmp_path: Path) -> None:
    done = massgen("--automation", "--config", str(CONFIGS / "all_crash.yaml"), "q", tmp_path=tmp_path)
    assert done.returncode == 2
    fields = lines(done.stdout)
    assert fields["RUN_STATUS"] == "failed" and fields["ANSWER_FILE"] == "none"
    assert "no agent produced an answer" in fields["REASON"]
    assert (tmp_path / fields["ATTEMPT_DIR"] / "execution_metadata.yaml").is_file()


def test_the_run_deadline_exits_3_with_the_best_answer_marked(tmp_path: Path) -> None:
    done = massgen("--config", str(CONFIGS / "slow_team.yaml"), "--orchestrator-timeout", "1", "q",
                   tmp_path=tmp_path)
    assert done.returncode == 3
    assert done.stdout == "draft from quick\n"
    assert "best answer so far" in done.stderr and "deadline" in done.stderr


def test_ctrl_c_keeps_the_best_answer_exits_4_and_completes_the_logs(tmp_path: Path) -> None:
    stopped = stop_one_shot(tmp_path, signal.SIGINT)
    assert stopped.returncode == 4, stopped.err
    assert lines(stopped.out)["RUN_STATUS"] == "interrupted"
    assert (stopped.log_dir / "final" / "quick" / "answer.txt").read_text() == "draft from quick\n"
    records = stopped.records
    assert records[-1]["type"] == "RunFinished" and records[-1]["payload"]["status"] == "interrupted"
    assert any(r["type"] == "CancelRun" for r in records)


def test_validate_reports_errors_with_exit_code_1(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("agents:\n  - id: a\n    backend: {type: scripted, colour: blue}\n")
    done = massgen("--validate", str(bad), tmp_path=tmp_path)
    assert done.returncode == 1
    assert f"{bad}: invalid config" in done.stderr and "agents[0].backend.colour: unknown key" in done.stderr
    assert "Traceback" not in done.stderr
    good = massgen("--validate", EXAMPLE, tmp_path=tmp_path)
    assert good.returncode == 0 and "valid (3 agents" in good.stdout


def test_list_examples_names_usable_references(tmp_path: Path) -> None:
    done = massgen("--list-examples", tmp_path=tmp_path)
    assert done.returncode == 0 and EXAMPLE in [line.split()[0] for line in done.stdout.splitlines()]


def test_list_examples_describes_each_example_in_one_line(tmp_path: Path) -> None:
    listed = massgen("--list-examples", tmp_path=tmp_path).stdout.splitlines()
    assert len(listed) >= 30
    described = dict(line.split(None, 1) for line in listed)
    assert all(len(text) <= 100 and text.strip() for text in described.values()), described
    assert described[EXAMPLE].startswith("Three scripted agents answer")
    assert described["@examples/basic/single/single_claude"] == (
        "One Anthropic agent (Messages API). Needs ANTHROPIC_API_KEY.")


@pytest.mark.parametrize("args", [["--orchestrator-timeout", "-1", "q"], ["--orchestrator-timeout", "inf", "q"],
                                  ["--orchestrator-timeout", "nan", "q"], ["--config", "missing.yaml", "q"]])
def test_bad_flags_and_files_exit_1_without_a_traceback(tmp_path: Path, args: list[str]) -> None:
    done = massgen(*args, tmp_path=tmp_path)
    assert done.returncode == 1 and done.stderr.startswith("massgen: ") and "Traceback" not in done.stderr


def test_help_does_not_import_provider_sdks(tmp_path: Path) -> None:
    code = ("import sys; from massgen.cli.main import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = [m for m in ('openai', 'anthropic', 'google.genai', 'mcp', 'httpx') if m in sys.modules]\n"
            "print('HEAVY', heavy)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "HEAVY []" in done.stdout, done.stdout


def test_resume_starts_a_new_attempt_with_the_answers_of_the_stopped_run(tmp_path: Path) -> None:
    first = massgen("--automation", "--config", str(CONFIGS / "slow_team.yaml"), "--orchestrator-timeout", "1",
                    "What is 2+2?", tmp_path=tmp_path)
    assert first.returncode == 3
    old_dir = tmp_path / lines(first.stdout)["ATTEMPT_DIR"]

    resumed = massgen("--automation", "--resume", str(old_dir), "--config", str(CONFIGS / "resume_team.yaml"),
                      tmp_path=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    fields = lines(resumed.stdout)
    new_dir = tmp_path / fields["ATTEMPT_DIR"]
    assert new_dir == old_dir.parent / "attempt_2"
    assert fields["RUN_STATUS"] == "completed" and fields["WINNER_LABEL"] == "agent1.1"
    assert "resuming with 1 earlier answers" in resumed.stderr
    records = [json.loads(line) for line in (new_dir / "trace.jsonl").read_text().splitlines()]
    started = records[0]["payload"]
    assert started["question"] == "What is 2+2?" and started["attempt"] == 2
    assert started["resumed_from"] == str(old_dir)
    seeded = [r["payload"] for r in records if r["type"] == "AnswerAccepted"]
    assert seeded[0]["content"] == "draft from quick" and seeded[0]["label"] == "agent1.1"
    assert (new_dir / "final" / "quick" / "answer.txt").read_text() == "draft from quick\n"


def test_resume_of_a_directory_without_a_trace_is_a_clear_error(tmp_path: Path) -> None:
    done = massgen("--resume", str(tmp_path), tmp_path=tmp_path)
    assert done.returncode == 1 and "no trace.jsonl here" in done.stderr


def test_validate_counts_agents_in_words_a_person_would_write(tmp_path: Path) -> None:
    one = tmp_path / "one.yaml"
    one.write_text("agents:\n  - id: solo\n    backend: {type: scripted, script: [[{new_answer: '4'}]]}\n")
    done = massgen("--validate", str(one), tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "valid (1 agent: solo)" in done.stdout
    assert "valid (3 agents: " in massgen("--validate", EXAMPLE, tmp_path=tmp_path).stdout
