"""``massgen serve`` off loopback needs a key, and with ``--api-key`` the key guards every route.

Each test runs the real ``massgen serve`` process: a non-loopback ``--host`` without a key
exits 1 before binding anything (``--allow-unauthenticated`` is the explicit opt-out), and
with ``--ui --api-key K`` the Web UI's data routes want that same key (``Authorization: Bearer K``, or
the UI token the page gets for it, which is not ``K``), and the printed URL does not show it.
Where it cannot listen (a port in use, a host that does not resolve) it says so naming the
flags, exit 1; a flag's value out of range is a usage error naming the flag, exit 64.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from serve_process import start_server, write_configs

KEY = "sk-serve-test-key-1234"


def _serve(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "MASSGEN_SERVER_API_KEY"}
    return subprocess.run([sys.executable, "-m", "massgen.cli.main", "serve", "--port", "0", *args],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.7", "box.example"])
def test_a_public_address_without_a_key_refuses_to_start(tmp_path: Path, host: str) -> None:
    write_configs(tmp_path)
    done = _serve(tmp_path, "--host", host, "--config", "team.yaml")
    assert done.returncode == 1
    assert f"--host {host} is not a loopback address and no --api-key" in done.stderr
    assert "--allow-unauthenticated" in done.stderr and "Traceback" not in done.stderr
    assert "listening on" not in done.stderr


def test_the_explicit_opt_out_serves_openly_with_a_warning(tmp_path: Path) -> None:
    write_configs(tmp_path)
    server = start_server(tmp_path, "--host", "0.0.0.0", "--allow-unauthenticated", "--config", "team.yaml",
                          env={"MASSGEN_SERVER_API_KEY": ""})
    try:
        port = server.base_url.rsplit(":", 1)[1]
        assert httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=10).status_code == 200
        assert "without an API key (--allow-unauthenticated)" in server.output()
    finally:
        assert server.stop() == -15


def test_loopback_names_need_no_key(tmp_path: Path) -> None:
    write_configs(tmp_path)
    for host in ("localhost", "127.0.0.2", "::1"):
        server = start_server(tmp_path, "--host", host, "--config", "team.yaml", env={"MASSGEN_SERVER_API_KEY": ""})
        assert server.health()["status"] == "ok"
        assert server.stop() == -15


def test_with_ui_and_api_key_every_route_wants_the_key(tmp_path: Path) -> None:
    write_configs(tmp_path)
    server = start_server(tmp_path, "--ui", "--api-key", KEY, "--config", "team.yaml")
    try:
        base = server.base_url
        printed = next(line for line in server.lines if "web UI at" in line)
        assert "/ui?token=<your API key>" in printed and KEY not in server.output()
        with httpx.Client(base_url=base, timeout=10) as client:
            assert client.get("/health").status_code == 200  # for load balancers: no key
            for path in ("/ui/api/runs", "/v1/models"):
                assert client.get(path).status_code == 401, path
                assert client.get(path, headers={"authorization": "Bearer wrong"}).status_code in (401, 403), path
                assert client.get(path, headers={"authorization": f"Bearer {KEY}"}).status_code == 200, path
            # the page and its files hold no data: they load without the key; a wrong key in the URL is refused
            assert client.get("/ui").status_code == 200 and client.get("/ui/static/app.js").status_code == 200
            assert client.get("/ui?token=wrong").status_code == 403
            # the page's sign-in: the key for a UI token that is not the key, and no cookie
            login = client.post("/ui/api/session", json={"token": KEY}, headers={"origin": base})
            assert login.status_code == 200 and "set-cookie" not in login.headers
            ui_token = login.json()["token"]
            assert ui_token != KEY and KEY not in login.text
            assert client.get("/ui/api/runs").status_code == 401  # nothing is remembered between requests
            as_page = {"authorization": f"Bearer {ui_token}", "origin": base}
            assert client.get("/v1/models", headers=as_page).status_code == 401  # the UI token opens /ui only
            started = client.post("/ui/api/runs", json={"question": "What is 2+2?", "config": "team"},
                                  headers=as_page)
            assert started.status_code == 201, started.text
    finally:
        assert server.stop() == -15


def test_a_port_in_use_is_refused_naming_the_flags(tmp_path: Path) -> None:
    write_configs(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _serve(tmp_path, "--config", "team.yaml", "--port", str(port))
    assert done.returncode == 1
    assert f"massgen serve: cannot listen on --host 127.0.0.1 --port {port}: Address already in use" in done.stderr
    assert "Traceback" not in done.stderr and "listening on" not in done.stderr


def test_a_host_that_does_not_resolve_is_refused_naming_it(tmp_path: Path) -> None:
    write_configs(tmp_path)
    done = _serve(tmp_path, "--config", "team.yaml", "--host", "no-such-host.invalid", "--allow-unauthenticated")
    assert done.returncode == 1
    assert "massgen serve: cannot listen on --host no-such-host.invalid --port 0: " in done.stderr
    assert "Traceback" not in done.stderr and "listening on" not in done.stderr


@pytest.mark.parametrize(("flag", "value", "why"), [
    ("--port", "70000", "70000 is not a port number (0-65535; 0 picks a free one)"),
    ("--port", "-1", "-1 is not a port number"),
    ("--keepalive", "0", "0: must be more than 0 seconds"),
    ("--body-timeout", "-1", "-1: must be more than 0 seconds"),
    ("--header-timeout", "nan", "nan: must be a finite number of seconds"),
    ("--shutdown-grace", "-1", "-1: must be 0 seconds or more"),
    ("--max-concurrent-runs", "0", "0: must be at least 1"),
])
def test_a_flag_value_out_of_range_is_a_usage_error_naming_the_flag(tmp_path: Path, flag: str, value: str,
                                                                    why: str) -> None:
    done = _serve(tmp_path, flag, value)
    assert done.returncode == 64
    assert f"massgen serve: error: argument {flag}: {why}" in done.stderr
    assert "Traceback" not in done.stderr and "listening on" not in done.stderr


def test_the_web_port_of_massgen_web_is_checked_as_its_own_flag(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "massgen.cli.main", "--web", "--web-port", "70000", "What is 2+2?"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 64
    assert "argument --web-port: 70000 is not a port number" in done.stderr and "Traceback" not in done.stderr


def test_a_log_dir_that_cannot_hold_logs_is_refused_at_start_not_at_every_run(tmp_path: Path) -> None:
    # It served, then answered every run with a 500.
    write_configs(tmp_path)
    (tmp_path / "a_file").write_text("x\n", encoding="utf-8")
    for given, why in (("a_file", "is not a directory"), ("a_file/logs", "cannot be used as the log directory")):
        done = _serve(tmp_path, "--config", "team.yaml", "--log-dir", given)
        assert done.returncode == 1 and f"massgen serve: --log-dir {given}: {why}" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr and "listening on" not in done.stderr
