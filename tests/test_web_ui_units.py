"""The Web UI's server parts on their own: coalescing, resuming, the end event, run ids, access."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from starlette.requests import Request

from massgen.cli.serve.errors import ApiError
from massgen.cli.serve.ui import StreamSettings, UiAccess
from massgen.cli.serve.ui.runlog import RecordLog, RunIndex
from massgen.cli.serve.ui.stream import coalesce, events


def rec(seq: int, type_: str, sender: str, **payload: Any) -> dict[str, Any]:
    return {"seq": seq, "ts": float(seq), "kind": "tell", "type": type_, "to": "supervisor#1",
            "msg_id": f"m{seq}", "run_id": "r", "sender": sender, "causation_id": None, "payload": payload}


def chunk(seq: int, sender: str, text: str, turn: int = 1) -> dict[str, Any]:
    return rec(seq, "AgentChunk", sender, turn_id=turn, kind="text", text=text)


def test_text_deltas_of_one_agent_merge_and_keep_each_part() -> None:
    batch = [chunk(1, "a#1", "Two "), chunk(2, "b#1", "Four"), chunk(3, "a#1", "plus "), chunk(4, "a#1", "two")]
    out = coalesce(batch)
    assert [(e["seq"], e["last_seq"], e["payload"]["text"]) for e in out] == [(1, 4, "Two plus two"), (2, 2, "Four")]
    assert out[0]["parts"] == [[1, 4], [3, 5], [4, 3]]


def test_anything_else_the_agent_does_ends_its_merged_text() -> None:
    batch = [chunk(1, "a#1", "draft"), rec(2, "AnswerProposed", "a#1", turn_id=1, content="x", view_version=0),
             chunk(3, "a#1", "more", turn=2)]
    assert [e["seq"] for e in coalesce(batch)] == [1, 2, 3]


def collect(log: RecordLog, after: int, settings: StreamSettings) -> list[tuple[int | None, str, Any]]:
    async def run() -> list[tuple[int | None, str, Any]]:
        out: list[tuple[int | None, str, Any]] = []
        async for raw in events(log, after, settings):
            fields = dict(line.split(": ", 1) for line in raw.decode().strip().split("\n") if ": " in line)
            if "event" in fields:
                out.append((int(fields["id"]) if "id" in fields else None, fields["event"], json.loads(fields["data"])))
        return out

    return asyncio.run(run())


def finished_log(n: int) -> RecordLog:
    log = RecordLog()
    for seq in range(1, n):
        log.append(rec(seq, "TurnStarted", "supervisor#1"))
    log.append(rec(n, "RunFinished", "supervisor#1", status="completed", partial=False))
    log.finish()
    return log


def test_a_dropped_stream_resumes_after_its_last_id_with_nothing_lost_or_repeated() -> None:
    log = finished_log(1200)  # more than one batch
    dropping = StreamSettings(drop_every=1)
    seen: list[int] = []
    after = 0
    for _ in range(10):
        got = collect(log, after, dropping)
        if got and got[-1][1] == "end":
            assert got[-1][2] == {"status": "completed", "partial": False, "last_seq": 1200}
            break
        assert len(got) == 1 and got[0][1] == "records"  # dropped after one event, with no end
        seen += [r["seq"] for r in got[0][2]["records"]]
        after = got[0][0] or 0
        assert after == seen[-1]
    assert seen == list(range(1, 1201))


def test_a_live_log_streams_as_records_arrive_and_ends_after_the_last() -> None:
    async def run() -> list[str]:
        log = RecordLog()
        names: list[str] = []

        async def feed() -> None:
            for seq in range(1, 4):
                await asyncio.sleep(0.01)
                log.append(rec(seq, "TurnStarted", "supervisor#1"))
            log.finish()

        task = asyncio.ensure_future(feed())
        async for raw in events(log, 0, StreamSettings(coalesce_s=0.001)):
            names += [line.split(": ", 1)[1] for line in raw.decode().split("\n") if line.startswith("event: ")]
        await task
        return names

    names = asyncio.run(run())
    assert names[-1] == "end" and names.count("end") == 1 and "records" in names


def test_run_ids_resolve_only_inside_the_log_root(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    run = root / "log_20260101_000000_000001" / "turn_1" / "attempt_1"
    run.mkdir(parents=True)
    (run / "trace.jsonl").write_text(json.dumps(rec(1, "RunStarted", "supervisor#1")) + "\n")
    outside = tmp_path / "elsewhere" / "turn_1" / "attempt_1"
    outside.mkdir(parents=True)
    (outside / "trace.jsonl").write_text("{}\n")
    (root / "log_link").symlink_to(tmp_path / "elsewhere")
    index = RunIndex(root=root.resolve())
    assert index.directory("log_20260101_000000_000001~turn_1~attempt_1") == run.resolve()
    assert [rid for rid, _ in index.on_disk()] == ["log_20260101_000000_000001~turn_1~attempt_1"]
    for bad in ("log_link~turn_1~attempt_1", "..~..~etc", "log_x~turn_1~attempt_1~..", "log_../x~turn_1~attempt_1"):
        assert index.directory(bad) is None, bad


def request(method: str, path: str, headers: dict[str, str]) -> Request:
    raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    scope = {"type": "http", "method": method, "path": path, "raw_path": path.encode(), "query_string": b"",
             "headers": raw, "scheme": "http", "server": ("127.0.0.1", 8000)}
    return Request(scope)


@pytest.mark.parametrize(("method", "headers", "status"), [
    ("GET", {"host": "127.0.0.1:8000"}, 401),
    ("GET", {"host": "127.0.0.1:8000", "cookie": "massgen_ui_8000=secret"}, 401),  # a cookie is no credential
    ("GET", {"host": "127.0.0.1:8000", "authorization": "Bearer wrong"}, 403),
    ("GET", {"host": "evil.example:8000", "authorization": "Bearer secret"}, 403),
    ("POST", {"host": "127.0.0.1:8000", "authorization": "Bearer secret"}, 403),
    ("POST", {"host": "127.0.0.1:8000", "authorization": "Bearer secret", "origin": "http://evil.example"}, 403),
])
def test_access_is_refused_without_the_token_host_or_origin(method: str, headers: dict[str, str], status: int) -> None:
    with pytest.raises(ApiError) as caught:
        UiAccess(token="secret").check(request(method, "/ui/api/runs", headers))
    assert caught.value.status == status


def test_access_is_granted_with_the_token_in_the_header_and_own_origin() -> None:
    headers = {"host": "localhost:8000", "authorization": "Bearer secret", "origin": "http://localhost:8000"}
    UiAccess(token="secret").check(request("POST", "/ui/api/runs", headers))


def test_the_page_trades_the_token_for_a_ui_token_that_is_not_it() -> None:
    """With --api-key the token is the key: the page keeps and sends another token, never the key."""
    access = UiAccess(token="the-api-key")
    own = {"host": "127.0.0.1:8000", "origin": "http://127.0.0.1:8000"}
    session = access.trade(request("POST", "/ui/api/session", own), "the-api-key")
    assert session != "the-api-key" and len(session) >= 32
    access.check(request("GET", "/ui/api/runs", {"host": "127.0.0.1:8000", "authorization": f"Bearer {session}"}))
    for given, status in (("wrong", 403), ("", 401), (None, 401)):
        with pytest.raises(ApiError) as caught:
            access.trade(request("POST", "/ui/api/session", own), given)
        assert caught.value.status == status
    with pytest.raises(ApiError) as caught:  # another origin may not sign in, even with the right token
        access.trade(request("POST", "/ui/api/session", {**own, "origin": "http://127.0.0.1:8001"}), "the-api-key")
    assert caught.value.status == 403


def test_an_idle_stream_pings_and_a_run_without_its_end_record_ends_incomplete() -> None:
    async def run() -> list[bytes]:
        log = RecordLog()
        log.append(rec(1, "RunStarted", "supervisor#1"))
        out: list[bytes] = []

        async def stop_later() -> None:
            while not any(b.startswith(b": ping") for b in out):
                await asyncio.sleep(0.01)
            log.finish()  # the run's writer stopped without RunFinished (a crash)

        task = asyncio.ensure_future(stop_later())
        async for raw in events(log, 0, StreamSettings(ping_s=0.05, coalesce_s=0.001)):
            out.append(raw)
        await task
        return out

    out = asyncio.run(run())
    assert b": ping\n\n" in out
    assert out[-1].decode().startswith("id: 1\nevent: end\n")
    assert json.loads(out[-1].decode().split("data: ", 1)[1]) == {"status": "incomplete", "partial": True,
                                                                  "last_seq": 1}


def test_bound_to_every_address_any_host_name_may_reach_the_ui_but_the_token_is_still_needed() -> None:
    access = UiAccess(token="secret", bind_host="0.0.0.0")
    access.check(request("GET", "/ui/api/runs", {"host": "box.lan:8000", "authorization": "Bearer secret"}))
    with pytest.raises(ApiError) as caught:
        access.check(request("GET", "/ui/api/runs", {"host": "box.lan:8000"}))
    assert caught.value.status == 401


def test_the_ui_off_loopback_without_an_api_key_is_refused(capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from massgen.cli import exit_codes
    from massgen.cli.serve import main

    monkeypatch.delenv("MASSGEN_SERVER_API_KEY", raising=False)
    assert main(["--ui", "--host", "0.0.0.0", "--config", "@examples/basic/scripted_three_agents"]) == (
        exit_codes.CONFIG_ERROR)
    err = capsys.readouterr().err
    assert "--ui on --host 0.0.0.0" in err and "needs --api-key" in err


def test_without_ui_the_routes_do_not_exist() -> None:
    from starlette.testclient import TestClient

    from massgen.cli.serve.app import ServerState, build_app
    from massgen.cli.serve.catalog import Catalog
    from massgen.cli.serve.runs import RunRegistry

    state = ServerState(catalog=Catalog(), registry=RunRegistry(max_runs=1, retry_after_s=1, log_base=None))
    with TestClient(build_app(state), base_url="http://127.0.0.1") as client:  # its own host name
        assert client.get("/ui").status_code == 404
        assert client.get("/ui/static/app.js").status_code == 404
        assert client.get("/health").status_code == 200
