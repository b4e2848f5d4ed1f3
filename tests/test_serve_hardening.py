"""``massgen serve`` answers every bad body with a 4xx in OpenAI's error shape, never a 500 or a hang."""

from __future__ import annotations

import json
import random
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from serve_process import ServerProcess, start_server, write_configs
from support import FACTOR


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    workdir = tmp_path_factory.mktemp("serve_hardening")
    write_configs(workdir)
    proc = start_server(workdir, "--config", "team.yaml", "--body-timeout", "1", "--header-timeout", "1")
    try:
        yield proc
    finally:
        proc.stop()


def _post(server: ServerProcess, body: bytes) -> httpx.Response:
    return httpx.post(f"{server.api_url}/chat/completions", content=body,
                      headers={"content-type": "application/json"}, timeout=15.0)


def _assert_openai_error(response: httpx.Response, status: int) -> dict[str, object]:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["type"] == "invalid_request_error"
    return dict(error)


def test_deep_json_is_refused_before_parsing(server: ServerProcess) -> None:
    error = _assert_openai_error(_post(server, b"[" * 1000 + b"]" * 1000), 400)
    assert "deeper than 64 levels" in str(error["message"])
    nested = b'{"messages": [{"role": "user", "content": "hi", "x": ' + b"{\"a\":" * 200 + b"1" + b"}" * 201 + b"]}"
    _assert_openai_error(_post(server, nested), 400)


def test_a_lone_surrogate_is_refused_naming_the_field(server: ServerProcess) -> None:
    body = b'{"messages": [{"role": "user", "content": "caf\\ud800"}]}'
    error = _assert_openai_error(_post(server, body), 400)
    assert error["param"] == "messages[0].content"


def test_a_huge_model_name_is_a_400(server: ServerProcess) -> None:
    body = json.dumps({"model": "m" * 100_000, "messages": [{"role": "user", "content": "hi"}]}).encode()
    error = _assert_openai_error(_post(server, body), 400)
    assert error["param"] == "model"


def test_a_half_sent_body_is_answered_408_and_does_not_hold_the_connection(server: ServerProcess) -> None:
    parts = urlsplit(server.api_url)
    with socket.create_connection((parts.hostname, parts.port), timeout=15) as sock:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n{\"messages\":")
        reply = b""
        while b"\r\n\r\n" not in reply or not reply.rstrip().endswith(b"}"):
            chunk = sock.recv(4096)
            if not chunk:
                break
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), reply
    assert json.loads(body)["error"]["code"] == "request_timeout"


def test_headers_that_never_finish_get_a_408_and_the_connection_closed(server: ServerProcess) -> None:
    parts = urlsplit(server.api_url)
    with socket.create_connection((parts.hostname, parts.port), timeout=15) as sock:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Le")
        reply = b""
        while chunk := sock.recv(4096):  # ends when the server closes the connection
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), reply
    assert json.loads(body)["error"]["code"] == "request_timeout"
    assert httpx.get(f"{server.base_url}/health", timeout=5).status_code == 200  # the server is fine


def test_fuzzed_bodies_are_4xx_never_5xx(server: ServerProcess) -> None:
    rng = random.Random(10)
    valid = json.dumps({"model": "massgen", "messages": [{"role": "user", "content": "hi"}],
                        "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]}).encode()
    bodies = [valid[:cut] for cut in range(0, len(valid), 7)]
    bodies += [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 80))) for _ in range(40)]
    for _ in range(40):
        mutated = bytearray(valid)
        for _ in range(rng.randrange(1, 4)):
            mutated[rng.randrange(len(mutated))] = rng.choice(b'{}[]",:\\\x00\xff0a')
        bodies.append(bytes(mutated))
    bodies += [b'{"messages": "' + b"\\ud83d" * 3 + b'"}', b'{"messages": [{"role": "user", "content": 5}]}',
               b'{"\\udc00": 1, "messages": []}', b"\xef\xbb\xbf{}"]
    statuses = {}
    for body in bodies:
        statuses[body] = _post(server, body).status_code
    server_errors = {b[:60]: s for b, s in statuses.items() if s >= 500}
    assert not server_errors


def _runs_started(server: ServerProcess) -> int:
    return sum(1 for _ in server.log_dir.rglob("trace.jsonl"))


def test_a_request_naming_another_host_is_refused_on_every_route(server: ServerProcess) -> None:
    """A DNS-rebinding page reaches 127.0.0.1 under its own name: it reads nothing and runs nothing."""
    before = _runs_started(server)
    evil = {"host": "evil.example"}
    asked = {
        "GET /health": httpx.get(f"{server.base_url}/health", headers=evil, timeout=5),
        "GET /v1/models": httpx.get(f"{server.api_url}/models", headers=evil, timeout=5),
        "GET /v1/models/team": httpx.get(f"{server.api_url}/models/team", headers=evil, timeout=5),
        "POST /v1/chat/completions": httpx.post(
            f"{server.api_url}/chat/completions", headers=evil, timeout=15,
            json={"model": "team", "messages": [{"role": "user", "content": "hi"}]}),
    }
    for route, response in asked.items():
        assert _assert_openai_error(response, 403)["code"] == "forbidden_host", route
    assert _runs_started(server) == before
    assert httpx.get(f"{server.api_url}/models", timeout=5).status_code == 200  # its own name still works


def test_a_cross_site_simple_post_does_not_run_the_team(server: ServerProcess) -> None:
    """A form or ``fetch`` of another site may post ``text/plain`` without a preflight: refused, unread."""
    before = _runs_started(server)
    body = json.dumps({"model": "team", "messages": [{"role": "user", "content": "spend my budget"}]})
    cross_site = httpx.post(f"{server.api_url}/chat/completions", content=body, timeout=15,
                            headers={"origin": "http://evil.example", "content-type": "text/plain"})
    assert _assert_openai_error(cross_site, 403)["code"] == "forbidden_origin"
    foreign_origin = httpx.post(f"{server.api_url}/chat/completions", content=body, timeout=15,
                                headers={"origin": "http://evil.example", "content-type": "application/json"})
    assert _assert_openai_error(foreign_origin, 403)["code"] == "forbidden_origin"
    plain_text = httpx.post(f"{server.api_url}/chat/completions", content=body, timeout=15,
                            headers={"content-type": "text/plain"})
    error = _assert_openai_error(plain_text, 415)
    assert error["code"] == "unsupported_media_type" and "application/json" in str(error["message"])
    read_cross_site = httpx.get(f"{server.api_url}/models", headers={"origin": "http://evil.example"}, timeout=5)
    assert _assert_openai_error(read_cross_site, 403)["code"] == "forbidden_origin"
    assert _runs_started(server) == before
    own = urlsplit(server.base_url)
    same_site = httpx.get(f"{server.api_url}/models", headers={"origin": f"http://{own.netloc}"}, timeout=5)
    assert same_site.status_code == 200


def _chat(server: ServerProcess, model: str) -> httpx.Response:
    return httpx.post(f"{server.api_url}/chat/completions", timeout=30,
                      json={"model": model, "messages": [{"role": "user", "content": "hi"}]})


def test_a_model_name_that_is_a_file_path_is_one_400_that_reveals_nothing(server: ServerProcess) -> None:
    """Whether a file exists on the server, or what it holds, never shows in the answer."""
    before = _runs_started(server)
    names = ["local//etc/passwd", "local//etc/no_such_file_here", "chatcompletion/../../etc/passwd",
             "/etc/passwd", "vllm/~/.ssh/id_rsa", "ollama/C:\\Windows\\win.ini"]
    errors = [_assert_openai_error(_chat(server, name), 400) for name in names]
    assert {e["code"] for e in errors} == {"invalid_model"} and {e["param"] for e in errors} == {"model"}
    assert len({e["message"] for e in errors}) == 1  # one answer, whatever the file system holds
    assert not any(word in str(errors[0]["message"]) for word in ("passwd", "exist", "root:"))
    assert _runs_started(server) == before


def test_a_request_may_not_start_a_program_on_the_server(server: ServerProcess) -> None:
    """The bundled local model (llama.cpp) and agent CLIs start only for a team the operator chose."""
    before = _runs_started(server)
    for model in ("local/default", "claude_code/sonnet", "massgen/basic/single/single_local"):
        error = _assert_openai_error(_chat(server, model), 403)
        assert error["code"] == "model_not_allowed" and "--config" in str(error["message"]), model
    assert _runs_started(server) == before
    listed = [m["id"] for m in httpx.get(f"{server.api_url}/models", timeout=10).json()["data"]]
    assert "massgen/basic/scripted_three_agents" in listed and "team" in listed
    assert "massgen/basic/single/single_local" not in listed
    assert _chat(server, "massgen/basic/scripted_three_agents").status_code == 200  # a team of model APIs runs


def test_a_team_whose_model_server_is_not_running_is_a_quick_502_naming_it(tmp_path: Path) -> None:
    """Three agents on one local model server where nothing listens (``ollama/llama3.2`` with no Ollama
    running): the client waited 61 s (circuit-breaker cool-downs) for a 500 that read as our bug. Refused
    connections where nothing ever answered are permanent: the answer comes within seconds, a 502 (the
    server behind this one failed) with ``x-should-retry: false`` (an immediate retry would get the same)."""
    with socket.socket() as sock:  # a port that was free a moment ago and has no listener
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    agents = [{"id": f"local_{n}", "backend": {"type": "vllm", "model": "llama3.2",
                                               "base_url": f"http://127.0.0.1:{port}/v1"}} for n in (1, 2, 3)]
    (tmp_path / "local.yaml").write_text(json.dumps({"agents": agents}), encoding="utf-8")
    server = start_server(tmp_path, "--config", "local.yaml")
    try:
        started = time.monotonic()
        reply = httpx.post(f"{server.api_url}/chat/completions", timeout=30.0 * FACTOR,
                           json={"model": "local", "messages": [{"role": "user", "content": "hi"}]})
        waited = time.monotonic() - started
    finally:
        server.stop()
    assert reply.status_code == 502, reply.text
    assert reply.headers["x-should-retry"] == "false"
    error = reply.json()["error"]
    assert error["code"] == "backend_unavailable" and error["type"] == "server_error"
    assert f"cannot reach http://127.0.0.1:{port}" in error["message"] and "is the server running" in error["message"]
    assert waited < 15.0 * FACTOR, waited
