"""``massgen serve --ui`` against hostile input, over real sockets on 127.0.0.1.

A body of the wrong shape is a 4xx naming the field, never a 500 with a traceback; a Web UI
control's body is bounded in size and in time exactly as ``/v1``'s is (413 as soon as it is known
to be too big, 408 when it stalls); and a model name cannot carry terminal controls or bidi
overrides, neither into a run nor onto the operator's terminal.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import yaml
from serve_process import SLOW, ServerProcess, start_server, wait_until
from support import FACTOR

# The served config's name holds U+009B (an 8-bit CSI: ESC [ to a terminal); its file is the operator's.
CONFIG = "sl\u009bow"
BODY_TIMEOUT_S = 1.0
UI_BODY_CAP = 64 * 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    workdir = tmp_path_factory.mktemp("serve_hostile")
    (workdir / f"{CONFIG}.yaml").write_text(yaml.safe_dump(SLOW), encoding="utf-8")
    process = start_server(workdir, "--ui", "--config", f"{CONFIG}.yaml", "--body-timeout", str(BODY_TIMEOUT_S),
                           "--log-level", "info")
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture(scope="module")
def ui(server: ServerProcess) -> Iterator[httpx.Client]:
    """A client holding the UI token and sending the page's Origin, as the page's own POSTs do."""
    with server.ui_client() as client:
        yield client


@pytest.fixture(scope="module")
def live_run(server: ServerProcess, ui: httpx.Client) -> Iterator[str]:
    """The id of a run of the slow team, started in the UI and live for the module's tests."""
    reply = ui.post("/ui/api/runs", json={"question": "Take your time.", "config": CONFIG})
    assert reply.status_code == 201, reply.text
    run_id = str(reply.json()["id"])
    yield run_id
    ui.post(f"/ui/api/runs/{run_id}/cancel")
    server.wait_idle(30)


def _raw_request(server: ServerProcess, ui: httpx.Client, path: str, headers: str) -> socket.socket:
    """A socket that has sent a POST's head (with the UI's token and Origin) and nothing of its body."""
    port = int(server.base_url.rsplit(":", 1)[1])
    sock = socket.create_connection(("127.0.0.1", port), timeout=10 * FACTOR)
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
            f"authorization: {ui.headers['authorization']}\r\norigin: {server.base_url}\r\n{headers}\r\n")
    sock.sendall(head.encode("ascii"))
    return sock


def _reply(sock: socket.socket, deadline_s: float) -> tuple[int, dict[str, Any]]:
    """The status and JSON body of the response, which must be complete within ``deadline_s``."""
    sock.settimeout(deadline_s * FACTOR)
    data = b""
    while True:
        head, found, body = data.partition(b"\r\n\r\n")
        if found:
            length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), None)
            if length is not None and len(body) >= length:
                return int(head.split(b" ", 2)[1]), json.loads(body[:length])
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            raise AssertionError(f"no complete reply within {deadline_s} s; got {data[:200]!r}") from None
        if not chunk:
            raise AssertionError(f"the connection closed before a complete reply; got {data[:200]!r}")
        data += chunk


def _assert_no_traceback(server: ServerProcess, since: int) -> None:
    """No traceback in what the server wrote since line ``since`` (the lines of this test's requests)."""
    assert "Traceback" not in "".join(server.lines[since:]), server.output()


# -- 1. the note's fields are type-checked ------------------------------------------------------------


@pytest.mark.parametrize("agent", [["slowpoke"], {"id": "slowpoke"}, 5, True])
def test_a_note_addressed_to_something_other_than_an_agent_id_is_a_422_naming_agent(
        server: ServerProcess, ui: httpx.Client, live_run: str, agent: Any) -> None:
    since = len(server.lines)
    reply = ui.post(f"/ui/api/runs/{live_run}/notes", json={"text": "hello", "agent": agent})
    assert reply.status_code == 422, reply.text
    error = reply.json()["error"]
    assert error["param"] == "agent" and "agent" in error["message"]
    _assert_no_traceback(server, since)


def test_a_note_to_an_agent_of_the_run_or_to_everyone_is_accepted(ui: httpx.Client, live_run: str) -> None:
    for agent in ("slowpoke", None, ""):
        reply = ui.post(f"/ui/api/runs/{live_run}/notes", json={"text": "hello", "agent": agent})
        assert reply.status_code == 202, (agent, reply.text)


@pytest.mark.parametrize("config", [0, False, ["team"], {"name": CONFIG}])
def test_a_run_started_with_a_config_that_is_not_a_name_is_a_422_naming_config(
        server: ServerProcess, ui: httpx.Client, config: Any) -> None:
    since = len(server.lines)
    reply = ui.post("/ui/api/runs", json={"question": "Which config?", "config": config})
    assert reply.status_code == 422, reply.text
    assert reply.json()["error"]["param"] == "config"
    _assert_no_traceback(server, since)


# -- 2. a control's body is read with /v1's bounds -----------------------------------------------------


def test_a_control_body_declared_larger_than_64_kib_is_refused_413_before_any_of_it_is_sent(
        server: ServerProcess, ui: httpx.Client) -> None:
    with _raw_request(server, ui, "/ui/api/runs", f"content-length: {10**9}\r\n") as sock:
        status, body = _reply(sock, 10)
    assert status == 413 and body["error"]["code"] == "request_too_large"


def test_a_streamed_control_body_is_refused_413_once_past_64_kib_while_the_client_still_sends(
        server: ServerProcess, ui: httpx.Client) -> None:
    """The refusal comes with the body unfinished (no last chunk): the server stopped reading at the cap."""
    with _raw_request(server, ui, "/ui/api/runs", "transfer-encoding: chunked\r\n") as sock:
        piece = b" " * 8192
        for _ in range(2 * UI_BODY_CAP // len(piece)):
            sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
        status, body = _reply(sock, 10)
    assert status == 413 and body["error"]["code"] == "request_too_large"


def test_a_control_body_that_stalls_is_answered_408_within_the_body_timeout(
        server: ServerProcess, ui: httpx.Client, live_run: str) -> None:
    for path in ("/ui/api/runs", f"/ui/api/runs/{live_run}/notes"):
        with _raw_request(server, ui, path, "content-length: 100\r\n") as sock:
            sock.sendall(b"{")  # 1 of 100 bytes, then nothing
            started = time.monotonic()
            status, body = _reply(sock, BODY_TIMEOUT_S + 9)
        assert status == 408 and body["error"]["code"] == "request_timeout", (path, body)
        assert time.monotonic() - started >= BODY_TIMEOUT_S * 0.9


# -- 3. model names: no terminal controls in, none raw out --------------------------------------------


@pytest.mark.parametrize(("model", "code_point"), [
    ("ollama/x\u009b31mRED\u009b0m", "U+009B"),  # C1 CSI
    ("ollama/x\u0085y", "U+0085"),  # C1 NEL
    ("ollama/x\u202egol.exe", "U+202E"),  # right-to-left override
    ("ollama/x\u2066y", "U+2066"),  # left-to-right isolate
    ("ollama/x\u200by", "U+200B"),  # zero width space
])
def test_a_model_name_holding_a_control_or_format_character_is_a_400_naming_model_and_the_code_point(
        server: ServerProcess, model: str, code_point: str) -> None:
    reply = httpx.post(f"{server.api_url}/chat/completions", timeout=10 * FACTOR,
                       json={"model": model, "messages": [{"role": "user", "content": "hi"}]})
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["param"] == "model" and code_point in error["message"]


def test_the_run_started_log_line_shows_the_model_name_escaped(server: ServerProcess, live_run: str) -> None:
    wait_until(lambda: any("run started" in line for line in server.lines), 10, "the run started line")
    line = next(line for line in server.lines if "run started" in line)
    assert "model=sl\\x9bow" in line and "\u009b" not in line, ascii(line)



# -- 4. /v1's error texts name the client's real mistake ----------------------------------------------


def _chat(server: ServerProcess, **fields: Any) -> httpx.Response:
    body = {"messages": [{"role": "user", "content": "hi"}], **fields}
    return httpx.post(f"{server.api_url}/chat/completions", json=body, timeout=10 * FACTOR)


@pytest.mark.parametrize(("content", "param", "says"), [
    ([{"text": "hi"}], "messages.0.content.0.type", "Field required"),
    ([{"type": "text", "text": 5}], "messages.0.content.0.text", "valid string"),
    (5, "messages.0.content", "a valid string or a valid list"),
])
def test_a_wrong_content_is_a_422_naming_the_place_in_the_clients_json(
        server: ServerProcess, content: Any, param: str, says: str) -> None:
    reply = _chat(server, messages=[{"role": "user", "content": content}])
    assert reply.status_code == 422, reply.text
    error = reply.json()["error"]
    assert error["param"] == param and says in error["message"], error


def test_a_text_part_without_its_text_is_a_400_saying_the_text_is_missing(server: ServerProcess) -> None:
    reply = _chat(server, messages=[{"role": "user", "content": [{"type": "text"}]}])
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["param"] == "messages.0.content.0.text" and "needs its 'text'" in error["message"], error


@pytest.mark.parametrize(("tool_choice", "param"), [
    ("banana", "tool_choice"),
    ({"type": "function", "function": {"name": "zzz"}}, "tool_choice.function.name"),
    ({"type": "function"}, "tool_choice"),
])
def test_a_tool_choice_openai_would_refuse_is_a_400_naming_it(
        server: ServerProcess, tool_choice: Any, param: str) -> None:
    tools = [{"type": "function", "function": {"name": "get_weather"}}]
    reply = _chat(server, tools=tools, tool_choice=tool_choice)
    assert reply.status_code == 400, reply.text
    assert reply.json()["error"]["param"] == param


def test_a_number_too_long_to_read_is_a_400_that_gives_no_advice_meant_for_the_server(
        server: ServerProcess) -> None:
    body = b'{"messages": [{"role": "user", "content": "hi"}], "n": ' + b"9" * 5000 + b"}"
    reply = httpx.post(f"{server.api_url}/chat/completions", content=body, timeout=10 * FACTOR,
                       headers={"content-type": "application/json"})
    assert reply.status_code == 400, reply.text
    message = reply.json()["error"]["message"]
    assert "5000 digits" in message and "sys." not in message, message
