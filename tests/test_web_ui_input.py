"""The Web UI's routes against hostile requests and hostile files under the log root, over real HTTP.

A request the UI cannot use is a 4xx that names what was wrong, never a 500; a trace that is not a
run is listed as "unreadable" and the rest of the list still loads; nothing outside the log root is
ever read, however a symlink points.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from serve_process import ServerProcess, start_server, trace_of, write_configs
from support import FACTOR

QUESTION = "What is 2+2? (input)"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    workdir = tmp_path_factory.mktemp("webui_input")
    write_configs(workdir)
    process = start_server(workdir, "--ui", "--config", "team.yaml")
    yield process
    process.stop()


@pytest.fixture(scope="module")
def ui(server: ServerProcess) -> Iterator[httpx.Client]:
    """A client sending the UI token in its Authorization header, as the page does after signing in."""
    with httpx.Client(base_url=server.base_url, headers={"authorization": f"Bearer {server.ui_token()}"},
                      timeout=30 * FACTOR) as client:
        yield client


@pytest.fixture(scope="module")
def finished_run(server: ServerProcess, ui: httpx.Client) -> str:
    """The id of one real, finished run of the served team."""
    reply = httpx.post(f"{server.api_url}/chat/completions", timeout=60 * FACTOR,
                       json={"model": "team", "messages": [{"role": "user", "content": QUESTION}]})
    assert reply.status_code == 200, reply.text
    server.wait_idle()
    runs = ui.get("/ui/api/runs").json()["runs"]
    return str(next(r["id"] for r in runs if r["question"] == QUESTION))


def plant(server: ServerProcess, stamp: str) -> Path:
    """A run directory under the server's log root, as a crashed or hostile process could leave one."""
    directory = server.log_dir / f"log_{stamp}" / "turn_1" / "attempt_1"
    directory.mkdir(parents=True)
    return directory


def record(seq: int, type_: str, payload: dict[str, Any]) -> str:
    return json.dumps({"seq": seq, "ts": 1.0, "kind": "event", "type": type_, "to": "", "msg_id": f"m-{seq}",
                       "run_id": "r", "sender": "supervisor#1", "causation_id": None, "payload": payload})


def stream_events(ui: httpx.Client, path: str, **kwargs: Any) -> tuple[int, list[dict[str, Any]]]:
    """The status and the (name, data) of each event of an events stream read to its end."""
    with ui.stream("GET", path, **kwargs) as response:
        if response.status_code != 200:
            response.read()
            return response.status_code, [response.json()]
        found: list[dict[str, Any]] = []
        name = ""
        for line in response.iter_lines():
            if line.startswith("event: "):
                name = line[len("event: "):]
            elif line.startswith("data: "):
                found.append({"event": name, "data": json.loads(line[len("data: "):])})
        return 200, found


@pytest.mark.parametrize(("query", "shown"), [
    ("after=%C2%B2", "'²'"),  # a digit to str.isdigit(), not to int()
    ("after=" + "9" * 5000, "'9999"),  # past int()'s 4,300-digit limit
    ("after=-1", "'-1'"),
    ("after=1e3", "'1e3'"),
], ids=["superscript-two", "5000-digits", "negative", "exponent"])
def test_a_malformed_after_is_a_400_naming_the_parameter(ui: httpx.Client, finished_run: str,
                                                         query: str, shown: str) -> None:
    status, body = stream_events(ui, f"/ui/api/runs/{finished_run}/events?{query}")
    assert status == 400
    error = body[0]["error"]
    assert error["param"] == "after" and error["code"] == "invalid_value"
    assert "a trace seq" in error["message"] and shown in error["message"]


@pytest.mark.parametrize("value", [b"\xb2", b"9" * 5000, b"12 34"],
                         ids=["latin1-superscript-two", "5000-digits", "space"])
def test_a_malformed_last_event_id_is_a_400_naming_the_header(ui: httpx.Client, finished_run: str,
                                                              value: bytes) -> None:
    status, body = stream_events(ui, f"/ui/api/runs/{finished_run}/events", headers={"last-event-id": value})
    assert status == 400
    assert body[0]["error"]["param"] == "Last-Event-ID" and "a trace seq" in body[0]["error"]["message"]


def test_a_well_formed_resume_point_still_resumes(server: ServerProcess, ui: httpx.Client,
                                                  finished_run: str) -> None:
    trace = trace_of(server.log_dir.joinpath(*finished_run.split("~")))
    status, events = stream_events(ui, f"/ui/api/runs/{finished_run}/events",
                                   headers={"last-event-id": str(trace[-3]["seq"])})
    assert status == 200
    sent = [r["seq"] for e in events if e["event"] == "records" for r in e["data"]["records"]]
    assert sent == [r["seq"] for r in trace[-2:]]
    assert events[-1] == {"event": "end", "data": {"status": "completed", "partial": False,
                                                   "last_seq": trace[-1]["seq"]}}


def test_a_trace_that_is_not_a_run_is_listed_as_unreadable_and_the_list_still_loads(
        server: ServerProcess, ui: httpx.Client, finished_run: str) -> None:
    (plant(server, "20000101_000000_000001") / "trace.jsonl").write_text("[1]\n", encoding="utf-8")
    (plant(server, "20000101_000000_000002") / "trace.jsonl").write_bytes(b"\xff\xfe{\n")
    (plant(server, "20000101_000000_000003") / "trace.jsonl").write_text('{"seq": 1}\n', encoding="utf-8")
    # A run whose first line is good and whose later lines are junk: the good records are shown.
    mixed = plant(server, "20000101_000000_000004") / "trace.jsonl"
    mixed.write_bytes("\n".join([
        record(1, "RunStarted", {"question": "mixed", "agents": ["a"], "labels": ["agent1"], "config": {}}),
        "[1]", '{"seq": "2", "type": "X"}', "\xb2", record(3, "RunFinished", {}), "{oops",
    ]).encode("utf-8") + b"\n\xff\n")

    listed = ui.get("/ui/api/runs")
    assert listed.status_code == 200
    runs = {r["id"]: r for r in listed.json()["runs"]}
    assert runs[finished_run]["status"] == "completed" and runs[finished_run]["question"] == QUESTION
    for stamp in ("000001", "000002", "000003"):
        bad = f"log_20000101_000000_{stamp}~turn_1~attempt_1"
        assert runs[bad]["status"] == "unreadable" and runs[bad]["question"] == ""
        assert ui.get(f"/ui/api/runs/{bad}").json()["status"] == "unreadable"
        status, events = stream_events(ui, f"/ui/api/runs/{bad}/events")
        assert status == 200 and events == [{"event": "end", "data": {"status": "incomplete", "partial": True,
                                                                      "last_seq": 0}}]
        assert ui.get(f"/ui/api/runs/{bad}/answers/agent1.1").status_code == 404
    mixed_id = "log_20000101_000000_000004~turn_1~attempt_1"
    assert runs[mixed_id]["question"] == "mixed" and runs[mixed_id]["status"] == "incomplete"
    status, events = stream_events(ui, f"/ui/api/runs/{mixed_id}/events")
    assert status == 200
    assert [r["seq"] for e in events if e["event"] == "records" for r in e["data"]["records"]] == [1, 3]
    assert events[-1]["data"] == {"status": "incomplete", "partial": True, "last_seq": 3}


def test_a_trace_symlinked_out_of_the_log_root_is_never_read(server: ServerProcess, ui: httpx.Client,
                                                             tmp_path: Path) -> None:
    secret = tmp_path / "elsewhere" / "turn_1" / "attempt_1"
    secret.mkdir(parents=True)
    (secret / "trace.jsonl").write_text(
        record(1, "RunStarted", {"question": "SECRET outside the root", "agents": [], "labels": [], "config": {}})
        + "\n" + record(2, "AnswerAccepted", {"label": "agent1.1", "content": "SECRET"}) + "\n", encoding="utf-8")
    linked_file = plant(server, "20000101_000000_000010")
    (linked_file / "trace.jsonl").symlink_to(secret / "trace.jsonl")
    linked_dir = server.log_dir / "log_20000101_000000_000011"
    linked_dir.symlink_to(tmp_path / "elsewhere", target_is_directory=True)

    listed = ui.get("/ui/api/runs")
    assert listed.status_code == 200 and "SECRET" not in listed.text
    for run_id in ("log_20000101_000000_000010~turn_1~attempt_1", "log_20000101_000000_000011~turn_1~attempt_1"):
        for path in (f"/ui/api/runs/{run_id}", f"/ui/api/runs/{run_id}/events",
                     f"/ui/api/runs/{run_id}/answers/agent1.1"):
            reply = ui.get(path)
            assert reply.status_code == 404 and reply.json()["error"]["code"] == "run_not_found", path
            assert "SECRET" not in reply.text
    shutil.rmtree(linked_file.parent.parent)
    linked_dir.unlink()
