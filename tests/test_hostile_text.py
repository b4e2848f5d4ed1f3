"""Hostile text at every edge: escaped once where it enters, escaped again where it leaves for a terminal.

A lone surrogate (the JSON escape ``\\ud800``) or a NUL from a model, an MCP server, a question
or an old trace never costs an agent or a reader; a control sequence in an answer, a vote
reason or a question reaches a real terminal (tmux) as visible text, never as an action;
a request or a trace record the server or resume cannot use is a 4xx or a skipped record,
never a traceback. Real sockets (a Chat Completions server on 127.0.0.1, ``massgen serve``),
real processes and a real terminal.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from serve_process import ServerProcess, start_server, write_configs
from support import FACTOR, records, run_team, scripted, step, team_config, unavailable
from tmux_screen import TmuxScreen
from wire.server import Recorded, Reply, Stream
from wire.team_chat import TeamChatServer, _vote_targets, tool_call

from massgen.actors.record.resume import resume_point
from massgen.actors.run.team import Team

SURROGATE_ANSWER = '{"content": "2 + 2 = 4 \\ud800 (a stray half of a pair)"}'  # JSON text: \ud800 escaped


class SurrogateServer(TeamChatServer):
    """The shared endpoint; the model ``surrogate`` answers with a lone surrogate in ``new_answer``."""

    def next_reply(self, recorded: Recorded) -> Reply:
        body = recorded.body if isinstance(recorded.body, dict) else {}
        if body.get("model") == "surrogate" and body.get("tools") and not _vote_targets(body):
            return Stream(tool_call("new_answer", SURROGATE_ANSWER))
        return super().next_reply(recorded)


def _agent(agent_id: str, base_url: str, model: str) -> dict[str, Any]:
    return {"id": agent_id, "backend": {"type": "chatcompletion", "base_url": base_url, "api_key": "sk-test",
                                        "model": model, "timeout_seconds": 5.0}}


def massgen(*args: str, cwd: Path, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MASSGEN_LOG_BASE_DIR": str(cwd / "logs")}
    return subprocess.run([sys.executable, "-m", "massgen.cli.main", *args], capture_output=True, text=True,
                          env=env, timeout=timeout * FACTOR, cwd=cwd)


def fields(output: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in output.splitlines() if ": " in line)


def ui_client(server: ServerProcess) -> httpx.Client:
    """A client as the page is (``ServerProcess.ui_client``)."""
    return server.ui_client()


def records_streamed(ui: httpx.Client, run_id: str) -> list[dict[str, Any]]:
    """The records of a run's event stream, read to its end."""
    with ui.stream("GET", f"/ui/api/runs/{run_id}/events") as response:
        assert response.status_code == 200
        data = [json.loads(line[len("data: "):]) for line in response.iter_lines() if line.startswith("data: ")]
    return [record for event in data for record in event.get("records", ())]


def assert_the_ui_renders(server: ServerProcess, question: str, label: str, shown: str) -> None:
    with ui_client(server) as ui:
        listed = ui.get("/ui/api/runs")
        assert listed.status_code == 200, listed.text
        run_id = next(r["id"] for r in listed.json()["runs"] if r["question"].startswith(question))
        answer = ui.get(f"/ui/api/runs/{run_id}/answers/{label}")
        assert answer.status_code == 200, answer.text
        assert shown in answer.json()["content"]
        streamed = records_streamed(ui, run_id)
        assert streamed[0]["type"] == "RunStarted" and streamed[-1]["type"] == "RunFinished"


def assert_the_page_renders(server: ServerProcess, question: str) -> None:
    """The run opened in a real browser (Chromium): its header, question and final answer drawn, no page error."""
    chromium = shutil.which("chromium-headless-shell") or "/usr/bin/chromium-headless-shell"
    if not Path(chromium).exists():
        unavailable("chromium-headless-shell is not installed (apt-get install chromium-headless-shell)")
    from playwright.sync_api import sync_playwright

    with ui_client(server) as ui:
        run_id = next(r["id"] for r in ui.get("/ui/api/runs").json()["runs"] if r["question"].startswith(question))
    url = server.ui_url()
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium)
        try:
            page = browser.new_page()
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.set_default_timeout(30_000 * FACTOR)
            page.goto(f"{url}&run={run_id}")
            page.wait_for_selector("[data-testid=run-header]")
            page.wait_for_selector("[data-testid=final-answer]")
            assert question in page.locator("[data-testid=run-header] .question").inner_text()
            assert page.locator("[data-testid=final-answer]").inner_text().strip()
        finally:
            browser.close()
    assert not errors, errors


# -- finding 1: a lone surrogate ------------------------------------------------------------------


def test_a_lone_surrogate_in_one_models_answer_costs_no_agent_and_every_reader_renders_the_run(
        tmp_path: Path) -> None:
    with SurrogateServer() as wire:
        url = f"{wire.url}/v1"
        team = tmp_path / "team.yaml"
        team.write_text(yaml.safe_dump({
            "agents": [_agent("a", url, "healthy#1"), _agent("b", url, "healthy#2"), _agent("c", url, "surrogate")],
            "timeout_settings": {"orchestrator_timeout_seconds": 60 * FACTOR}}))
        done = massgen("--automation", "--config", str(team), "What is 2+2?", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "RUN_STATUS: completed" in done.stdout.splitlines()
    log_dir = tmp_path / fields(done.stdout)["ATTEMPT_DIR"]
    trace = [json.loads(line) for line in (log_dir / "trace.jsonl").read_text(encoding="utf-8").splitlines()]
    assert not [r for r in trace if r["type"] in ("ChildFailed", "AgentMarkedFailed", "AgentRestarting")]
    answer = next(r["payload"] for r in trace if r["type"] == "AnswerAccepted" and r["payload"]["agent"] == "c")
    assert answer["content"] == "2 + 2 = 4 \\ud800 (a stray half of a pair)"  # escaped once, visibly
    notes = [n for r in trace if r["type"] == "ModelReplyRecorded" for n in r["payload"]["escaped"]]
    assert notes == ["tool call 0 (new_answer) arguments/content: 1 lone surrogate (U+D800) escaped"]

    shown = massgen("logs", "show", str(log_dir), cwd=tmp_path)
    assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr
    assert "final answer:" in shown.stdout
    write_configs(tmp_path)
    server = start_server(tmp_path, "--ui", "--config", "team.yaml")
    try:
        label = answer["label"]
        assert_the_ui_renders(server, "What is 2+2?", label, "\\ud800")
        assert_the_page_renders(server, "What is 2+2?")
    finally:
        server.stop()


def _plant_old_surrogates(log_dir: Path) -> None:
    """Rewrite a trace as a version before the escape rule wrote it: raw lone surrogates as JSON escapes."""
    lines = []
    for line in (log_dir / "trace.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["type"] == "RunStarted":
            record["payload"]["question"] = "old \ud800 question"
        if record["type"] == "AnswerAccepted":
            record["payload"]["content"] += " \udfff"
        lines.append(json.dumps(record))  # ensure_ascii: the surrogates are written as \\ud800
    (log_dir / "trace.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_trace_written_before_the_escape_rule_still_reads_in_logs_viewer_web_ui_and_resume(
        tmp_path: Path) -> None:
    config = team_config(scripted("a", [step(new_answer="4")], [step(vote="agent1")]))
    log_dir = tmp_path / "logs" / "log_20260101_000000_000000" / "turn_1" / "attempt_1"
    result = Team(config, "2+2?", log_dir=log_dir, tick_interval_s=0.02).run()
    _plant_old_surrogates(result.log_dir)

    for command in (["logs", "show", str(result.log_dir)], ["logs", "list"], ["viewer", str(result.log_dir)]):
        done = massgen(*command, cwd=tmp_path)
        assert done.returncode == 0 and "Traceback" not in done.stderr, (command, done.stderr)
        assert "\\ud800" in done.stdout or "\\udfff" in done.stdout, command
    point = resume_point(result.log_dir)
    assert point.question == "old \\ud800 question"
    assert point.state.answers[0][1] == "4 \\udfff"
    write_configs(tmp_path)
    server = start_server(tmp_path, "--ui", "--config", "team.yaml")
    try:
        assert_the_ui_renders(server, "old \\ud800 question", "agent1.1", "4 \\udfff")
        assert_the_page_renders(server, "old \\ud800 question")
    finally:
        server.stop()


def test_a_question_with_a_lone_surrogate_is_escaped_once_and_the_run_says_so(tmp_path: Path) -> None:
    config = team_config(scripted("a", [step(new_answer="4")], [step(vote="agent1")]))
    result = run_team(config, tmp_path, question="what is \ud800 plus \x00?")
    assert result.status == "completed"
    started = records(result)[0]["payload"]
    assert started["question"] == "what is \\ud800 plus \\x00?"
    assert started["escaped"] == ["question: 1 lone surrogate (U+D800), 1 NUL escaped"]


def test_a_config_with_a_lone_surrogate_is_escaped_with_a_warning_naming_the_field(tmp_path: Path) -> None:
    team = tmp_path / "team.yaml"
    team.write_text('agents:\n  - id: a\n    system_message: "be \\ud800 brief"\n'
                    '    backend: {type: scripted, script: [[{new_answer: "4"}], [{vote: agent1}]]}\n')
    done = massgen("--automation", "--config", str(team), "2+2?", cwd=tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "agents.0.system_message: 1 lone surrogate (U+D800) escaped (not valid text" in done.stderr
    trace = (tmp_path / fields(done.stdout)["ATTEMPT_DIR"] / "trace.jsonl").read_text(encoding="utf-8")
    assert json.loads(trace.splitlines()[0])["payload"]["config"]["agents"][0]["system_message"] == "be \\ud800 brief"


# -- finding 1 and 8: what the Web UI and /v1 take in ------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    workdir = tmp_path_factory.mktemp("hostile_serve")
    write_configs(workdir)
    process = start_server(workdir, "--ui", "--config", "team.yaml")
    yield process
    process.stop()


def test_a_web_ui_question_with_a_lone_surrogate_is_a_400_naming_it_and_the_run_list_still_loads(
        served: ServerProcess) -> None:
    with ui_client(served) as ui:
        refused = ui.post("/ui/api/runs", content=b'{"question": "\\ud800", "config": "team"}',
                          headers={"content-type": "application/json"})
        assert refused.status_code == 400, refused.text
        assert "question" in refused.json()["error"]["message"]
        assert ui.get("/ui/api/runs").status_code == 200


def test_a_web_ui_body_nested_ten_thousand_deep_is_a_400_naming_the_nesting(served: ServerProcess) -> None:
    with ui_client(served) as ui:
        body = b'{"question": ' + b"[" * 10_000 + b"]" * 10_000 + b"}"
        refused = ui.post("/ui/api/runs", content=body, headers={"content-type": "application/json"})
        assert refused.status_code == 400, refused.text
        assert "nests arrays/objects deeper than" in refused.json()["error"]["message"]


def test_a_static_name_too_long_for_the_file_system_is_a_404(served: ServerProcess) -> None:
    with ui_client(served) as ui:
        missing = ui.get("/ui/static/" + "x" * 5000)
        assert missing.status_code == 404, missing.text
        assert missing.json()["error"]["message"] == "no such file"


def test_a_model_name_with_a_nul_is_a_400_naming_the_model(served: ServerProcess) -> None:
    reply = httpx.post(f"{served.api_url}/chat/completions", timeout=30 * FACTOR,
                       json={"model": "massgen/path:team.yaml\u0000", "messages": [{"role": "user", "content": "q"}]})
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["param"] == "model" and "control character" in error["message"]
    assert "Traceback" not in served.output()


# -- finding 12: resume past records it cannot use ------------------------------------------------------


def test_resume_skips_and_names_a_record_with_a_bad_seq_and_one_that_is_not_its_message(tmp_path: Path) -> None:
    config = tmp_path / "team.yaml"
    config.write_text(yaml.safe_dump({"agents": [
        scripted("a", [step(new_answer="4")], [step(vote="agent1", reason="right")]),
        scripted("b", [step(new_answer="four")], [step(vote="agent1", reason="digits")])]}))
    first = massgen("--automation", "--config", str(config), "2+2?", cwd=tmp_path)
    old_dir = tmp_path / fields(first.stdout)["ATTEMPT_DIR"]
    lines = (old_dir / "trace.jsonl").read_text(encoding="utf-8").splitlines()
    cut = next(i for i, line in enumerate(lines) if '"type": "RecordVote"' in line)
    lines = lines[:cut]  # the run stopped before any vote, as a kill would leave it
    started = next(i for i, line in enumerate(lines) if '"type": "ChildStarted"' in line)
    record = json.loads(lines[started])
    record["payload"]["incarnation"] = "one"  # valid JSON, not a ChildStarted
    lines[started] = json.dumps(record)
    chunk = next(i for i, line in enumerate(lines) if '"type": "TurnStarted"' in line)
    record = json.loads(lines[chunk])
    record["seq"] = "x"
    lines[chunk] = json.dumps(record)
    (old_dir / "trace.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")

    resumed = massgen("--automation", "--resume", str(old_dir), cwd=tmp_path)

    assert resumed.returncode == 0 and "Traceback" not in resumed.stderr, resumed.stderr
    assert "RUN_STATUS: completed" in resumed.stdout.splitlines()
    assert f"skipped line {chunk + 1}: seq is not a whole number above 0 ('x')" in resumed.stderr
    assert f"skipped trace record {started + 1} (ChildStarted): incarnation" in resumed.stderr
    new_trace = [json.loads(line) for line in
                 (tmp_path / fields(resumed.stdout)["ATTEMPT_DIR"] / "trace.jsonl").read_text().splitlines()]
    skipped = next(r for r in new_trace if r["type"] == "RunResumed")["payload"]["skipped"]
    assert [why.split(":")[0] for why in skipped] == [f"line {chunk + 1}", f"trace record {started + 1} (ChildStarted)"]


# -- findings 2 and 15: what reaches a terminal -----------------------------------------------------------

HOSTILE = "\x1b]52;c;cHduZWQ=\x07 \x1b]0;TITLE\x07 \x1b[2J"


def test_control_sequences_in_answers_reasons_and_questions_reach_a_real_terminal_as_visible_text(
        tmp_path: Path) -> None:
    team = tmp_path / "team.yaml"
    team.write_text(yaml.safe_dump({"agents": [
        scripted("a", [step(new_answer=f"owned {HOSTILE} end of answer")],
                 [step(vote="agent1", reason=f"reason {HOSTILE} end of reason")])]}))
    question = "question \x1b]0;QTITLE\x07 \x1b[2J end of question"
    script = tmp_path / "run.sh"
    script.write_text(
        "echo FIRST-LINE-STAYS\n"
        f'{sys.executable} -m massgen.cli.main --display simple --config team.yaml "$Q" 2>&1\n'
        f'{sys.executable} -m massgen.cli.main --automation --config team.yaml "$Q" | grep -a -e PREVIEW -e QUESTION\n'
        f"{sys.executable} -m massgen.cli.main logs show 2>&1 | grep -a -e question: -e 'final answer' -A1\n"
        f"{sys.executable} -m massgen.cli.main logs list\n"
        f"{sys.executable} -m massgen.cli.main logs analyze | grep -a Question:\n"
        "echo ALL-DONE\n")
    env = {"Q": question, "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs")}
    screen = TmuxScreen(tmp_path, ["sh", str(script)], columns=220, rows=60, env=env, name="hostile")
    try:
        screen._tmux("set-option", "-g", "set-clipboard", "on")  # OSC 52 would fill a tmux buffer
        text = screen.expect("ALL-DONE", timeout=120 * FACTOR)
        title = screen._tmux("display-message", "-p", "-t", screen.name, "#{pane_title}").strip()
        buffers = screen._tmux("list-buffers")
    finally:
        screen.close()
    assert "FIRST-LINE-STAYS" in text  # the screen was not cleared
    assert title not in ("TITLE", "QTITLE") and buffers == ""
    visible = "\\x1b]52;c;cHduZWQ=\\x07 \\x1b]0;TITLE\\x07 \\x1b[2J"
    assert f"owned {visible} end of answer" in text  # the answer on stdout
    assert f"reason {visible}" in text  # the vote reason on stderr
    assert f"ANSWER_PREVIEW: owned {visible} end of answer" in text
    assert "QUESTION: question \\x1b]0;QTITLE\\x07 \\x1b[2J end of question" in text  # --automation
    assert "question: question \\x1b]0;QTITLE\\x07 \\x1b[2J end of question" in text  # logs show
    assert "question \\x1b]0;QTITLE\\x07" in text.split("final answer")[-1]  # logs list
    assert "Question: question \\x1b]0;QTITLE\\x07 \\x1b[2J end of question" in text  # logs analyze (retitled before)


# -- finding 1: an MCP server's reply ------------------------------------------------------------------


def test_an_mcp_result_with_a_nul_is_escaped_once_with_a_note_the_model_reads(tmp_path: Path) -> None:
    server = {"name": "odd", "type": "stdio", "command": sys.executable,
              "args": [str(Path(__file__).parent / "mcp_servers" / "odd_text.py")]}
    config = team_config(scripted("a", [step(tool="mcp__odd__status", args={})],
                                  [step(new_answer="status: {last_tool_result}")], mcp_servers=[server]))
    result = run_team(config, tmp_path)
    assert result.status == "completed"
    [done] = [r["payload"] for r in records(result) if r["type"] == "ToolCallResult"]
    assert done["content"] == ("up\\x00down \x1b[2J since noon\n"
                               "[note: MCP result: 1 NUL escaped]")  # the raw ESC stays for the files
    assert not done["is_error"]
