"""Any text in, any text out: bytes that are not UTF-8, lone surrogates and long ids never stop a run."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml
from support import assert_trace_invariants, of_type, records, run_team, scripted, step, team_config

from massgen.actors.run.team import Team
from massgen.cli.oneshot import print_result
from massgen.logs.paths import path_part


def test_a_question_with_bytes_that_are_not_utf8_is_traced_escaped_and_answered(tmp_path: Path) -> None:
    team = tmp_path / "team.yaml"
    team.write_text(yaml.safe_dump({"agents": [
        scripted("a", [step(new_answer="Café, with an accent")], [step(vote="agent1")])]}))
    env = {**os.environ, "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs"), "LC_ALL": "C.UTF-8"}
    done = subprocess.run([sys.executable.encode(), b"-m", b"massgen.cli.main", b"--automation", b"--config",
                           str(team).encode(), b"caf\xe9?"], capture_output=True, env=env, timeout=60)
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr.decode()
    assert "RUN_STATUS: completed" in out.splitlines()
    log_dir = Path(next(ln for ln in out.splitlines() if ln.startswith("ATTEMPT_DIR: ")).split(": ", 1)[1])
    trace = [json.loads(line) for line in (log_dir / "trace.jsonl").read_text(encoding="utf-8").splitlines()]
    assert trace[0]["payload"]["question"] == "caf\\xe9?"
    answer_file = Path(next(ln for ln in out.splitlines() if ln.startswith("ANSWER_FILE: ")).split(": ", 1)[1])
    assert answer_file.read_text(encoding="utf-8") == "Café, with an accent\n"


def test_lone_surrogates_are_escaped_once_where_they_enter_and_said(tmp_path: Path) -> None:
    question = "what is \ud800 plus \udce9?"
    config = team_config(scripted("a", [step(new_answer="it is \udfff")], [step(vote="agent1")]))
    assert config.notices == ("agents.0.backend.script.0.0.new_answer: 1 lone surrogate (U+DFFF) escaped "
                              "(not valid text: no provider accepts it)",)
    result = run_team(config, tmp_path, question=question)
    assert result.status == "completed" and result.final_answer == "it is \\udfff"
    trace = records(result)
    assert_trace_invariants(trace)
    assert trace[0]["payload"]["question"] == "what is \\ud800 plus \\udce9?"
    assert trace[0]["payload"]["escaped"] == ["question: 2 lone surrogates (U+D800, U+DCE9) escaped"]
    assert (result.log_dir / "final" / "a" / "answer.txt").read_text(encoding="utf-8") == "it is \\udfff\n"
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace")
    assert print_result(result, False, out, io.StringIO()) == 0


def test_long_and_odd_agent_ids_get_safe_folders(tmp_path: Path) -> None:
    long_a, long_b = "a" * 300, "a" * 299 + "b"
    config = team_config(scripted(long_a, [step(new_answer="4")], [step(vote="agent1")]),
                         scripted(long_b, [step(vote="agent1")]), scripted("..", [step(vote="agent1")]))
    result = Team(config, "2+2?", log_dir=tmp_path / "run", tick_interval_s=0.02).run()
    assert result.status == "completed" and result.winner == long_a
    errors = [r["payload"]["error"] for r in of_type(records(result), "ChildFailed")]
    assert not [e for e in errors if "too long" in e or "OSError" in e]
    outputs = sorted(p.name for p in (result.log_dir / "agent_outputs").iterdir())
    assert len(outputs) == 3 and all(len(name) <= 104 for name in outputs)
    assert (result.log_dir / "final" / path_part(long_a) / "answer.txt").read_text() == "4\n"
    assert path_part(long_a) != path_part(long_b) and path_part("..") not in (".", "..")
    assert not (tmp_path / "agent_outputs").exists()  # nothing climbed out of the log directory
    assert path_part("agent_b") == "agent_b"  # ordinary ids keep their folders
