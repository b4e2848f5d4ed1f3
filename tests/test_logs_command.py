"""``massgen logs``: past runs listed, summarised, shown and opened, all computed from their traces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from massgen.cli.main import main

CONFIGS = Path(__file__).parent / "configs"


def run_counted(capsys: pytest.CaptureFixture[str], question: str = "What is 2+2?") -> Path:
    assert main(["--automation", "--config", str(CONFIGS / "counted_team.yaml"), question]) == 0
    fields = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines() if ": " in line)
    return Path(fields["ATTEMPT_DIR"])


def logs(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["logs", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_summary_json_has_the_scripted_runs_known_counts(capsys: pytest.CaptureFixture[str]) -> None:
    log_dir = run_counted(capsys)
    code, out, _ = logs(capsys, "summary", "--json")
    assert code == 0
    summary = json.loads(out)
    assert Path(summary["log_dir"]).resolve() == log_dir.resolve()
    assert summary["status"] == "completed" and summary["question"] == "What is 2+2?"
    assert summary["winner"] == "alpha" and summary["winner_label"] == "agent1.1"
    assert list(summary["agents"]) == ["alpha", "beta"]
    assert summary["answers"] == 2 and summary["votes"] == 2 and summary["valid_votes"] == 2
    assert summary["vote_tally"] == {"alpha": 2}
    assert summary["model_calls"] == 5 and summary["tokens"] == {"input": 50, "output": 0, "total": 50}
    assert summary["cost_usd"] == 0.0 and summary["elapsed_s"] > 0
    assert summary["faults"] == {"agent_failures": 1, "restarts": 1, "agents_out": 0, "turn_failures": 0,
                                 "deadlines": 0, "dead_letters": 0}
    assert summary["agents"]["beta"]["restarts"] == 1
    assert summary["final_answer"] == "The answer is 4."
    # The same numbers as the run's own status file, which the live projection wrote.
    status = json.loads((log_dir / "status.json").read_text())
    assert status["vote_tally"] == summary["vote_tally"] and sorted(status["answers"]) == ["agent1.1", "agent2.1"]


def test_list_show_and_open_pick_runs_by_number_path_or_id(capsys: pytest.CaptureFixture[str]) -> None:
    first = run_counted(capsys, "first question")
    second = run_counted(capsys, "second question")
    code, out, _ = logs(capsys, "list", "--json")
    rows = json.loads(out)
    assert code == 0 and [r["question"] for r in rows] == ["second question", "first question"]
    assert [r["index"] for r in rows] == [1, 2] and rows[0]["status"] == "completed"
    code, out, _ = logs(capsys, "list")
    assert "second question" in out.splitlines()[0]

    code, out, _ = logs(capsys, "show", "2")
    assert code == 0 and "question: first question" in out
    assert "timeline:" in out and "RecordVote" in out and "AgentRestarting" in out
    assert out.rstrip().endswith("The answer is 4.")
    shown = json.loads(logs(capsys, "show", str(first), "--json")[1])
    assert shown["summary"]["question"] == "first question"
    assert [e["type"] for e in shown["events"]][-1] == "RunFinished"

    run_id = json.loads((second / "status.json").read_text())["run_id"]
    opened = json.loads(logs(capsys, "open", run_id, "--json")[1])
    assert Path(opened["log_dir"]).resolve() == second.resolve()
    # A session folder (log_<stamp>) stands for its newest attempt.
    assert json.loads(logs(capsys, "summary", str(first.parent.parent), "--json")[1])["question"] == "first question"


def test_unknown_runs_and_empty_logs_are_clear_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = logs(capsys, "summary")
    assert code == 1 and "no runs logged in" in err
    run_counted(capsys)
    code, _, err = logs(capsys, "show", "7")
    assert code == 1 and "there are 1 runs" in err
    code, _, err = logs(capsys, "summary", "nope")
    assert code == 1 and "no run 'nope'" in err
    with pytest.raises(SystemExit) as usage:
        main(["logs", "frobnicate"])
    assert usage.value.code == 64
