"""A hostile or broken config file is a prompt, clear error: never a hang, a traceback or an echo.

Each file below once ran at 100 % CPU (an alias bomb), or ended in a traceback (UTF-16,
deep nesting, a recursive alias). Now ``massgen --validate`` (a real process) exits 1 at
once, naming the file and what is wrong; through ``serve`` the same file is a 400 that
names neither the file's lines nor its secrets, and ``/health`` answers meanwhile.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from serve_process import ServerProcess, start_server, write_configs

from massgen.configs import ConfigError, load_config, safe_yaml

# 9 aliases, each repeating the last 9 times: 9^9 (387 million) values once expanded, 1 KB on disk.
BILLION_LAUGHS = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{','.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8))

HOSTILE: dict[str, tuple[bytes, str]] = {
    "billion_laughs": (BILLION_LAUGHS.encode(), "expands to more than 100,000 values"),
    "recursive_alias": (b"a: &a [*a]\n", "an alias refers to a value that contains it"),
    "nested_flow": (b"[" * 5000, "nested more than 64 levels deep"),
    "nested_block": (b"- " * 3000 + b"x\n", "nested more than 64 levels deep"),  # 3,000 block sequences
    "nested_mapping": ("".join(" " * i + "k:\n" for i in range(1000)).encode(), "nested more than 64 levels deep"),
    "utf16": ("agents: []\n".encode("utf-16"), "UTF-16-encoded; config files must be UTF-8"),
    "latin1": ("agents:\n  - id: caf\xe9\n".encode("latin-1"), "line 2: byte 0xe9 is not UTF-8"),
    "huge": (b"# padding\n" * 200_000, "larger than 1024 KiB"),
    # Issue 37: a second top-level key silently replaced the first (YAML keeps the last).
    "duplicate_key": (b"agents:\n  - id: a\nagents:\n  - id: b\n",
                      "line 3, column 1: this key is already written at line 1, column 1, in the same mapping"),
    "duplicate_nested_key": (b"agents:\n  - id: a\n    backend: {type: scripted}\n    backend: {type: openai}\n",
                             "line 4, column 5: this key is already written at line 3, column 5"),
    # YAML's reader refuses these before it parses a token: that error escaped as a traceback.
    "nul_character": (b"agents:\n  - id: a\x00\n", "line 2, column 10: the character U+0000 is not allowed in YAML"),
    "c1_control": ("agents:\n  - id: a\u009b\n".encode(), "line 2, column 10: the character U+009B is not allowed"),
}


@pytest.fixture
def hostile_files(tmp_path: Path) -> dict[str, Path]:
    paths = {}
    for name, (data, _) in HOSTILE.items():
        paths[name] = tmp_path / f"{name}.yaml"
        paths[name].write_bytes(data)
    return paths


@pytest.mark.parametrize("name", list(HOSTILE))
def test_validate_refuses_a_hostile_file_at_once_with_exit_1(name: str, hostile_files: dict[str, Path]) -> None:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "massgen.cli.main", "--validate", str(hostile_files[name])],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert str(hostile_files[name]) in done.stderr and HOSTILE[name][1] in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert time.monotonic() - started < 30  # process start on a loaded machine; the check itself is ms


def test_the_bounds_are_checked_before_anything_walks_the_data(hostile_files: dict[str, Path]) -> None:
    started = time.monotonic()
    for path in hostile_files.values():
        with pytest.raises(ConfigError, match=str(path)):
            load_config(str(path))
    assert time.monotonic() - started < 5  # the 387-million-value bomb is refused, not expanded


def test_aliases_within_the_bounds_still_work(tmp_path: Path) -> None:
    path = tmp_path / "team.yaml"
    path.write_text("x-backend: &backend {type: scripted}\n"
                    "agents:\n  - {id: a, backend: *backend}\n  - {id: b, backend: *backend}\n",
                    encoding="utf-8")
    with pytest.raises(ConfigError, match="x-backend: unknown key"):  # the anchor's key itself is not a field
        load_config(str(path))
    path.write_text("agents:\n  - &one {id: a, backend: {type: scripted}}\n  - {<<: *one, id: b}\n",
                    encoding="utf-8")
    config, _ = load_config(str(path))
    assert [a.id for a in config.agents] == ["a", "b"] and config.agents[1].backend.type == "scripted"


def test_yaml_errors_give_the_line_but_never_the_text_of_the_file(tmp_path: Path) -> None:
    path = tmp_path / "secrets.yaml"
    path.write_text("ANTHROPIC_API_KEY=sk-ant-very-secret: 4\n  - oops: [\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(str(path))
    message = str(caught.value)
    assert "line 2, column" in message and "sk-ant-very-secret" not in message


def test_every_upstream_example_config_is_within_the_bounds() -> None:
    upstream = Path("/tmp/upstream/x/massgen/configs")
    shipped = Path(safe_yaml.__file__).parent / "examples"
    files = [*upstream.rglob("*.yaml"), *shipped.rglob("*.yaml")]
    assert len(files) > 10
    for path in files:
        safe_yaml.read(path)  # no ConfigError: real configs are far from every bound


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    write_configs(tmp_path)
    for name, (data, _) in HOSTILE.items():
        (tmp_path / f"{name}.yaml").write_bytes(data)
    (tmp_path / "dotenv.yaml").write_text("ANTHROPIC_API_KEY=sk-ant-very-secret: 4\nOPENAI_API_KEY=sk-2\n",
                                          encoding="utf-8")
    proc = start_server(tmp_path, "--config", "team.yaml")
    try:
        yield proc
    finally:
        proc.stop()


def test_serve_answers_a_hostile_config_with_a_400_that_echoes_nothing(server: ServerProcess) -> None:
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        for name in [*HOSTILE, "dotenv"]:
            started = time.monotonic()
            reply = client.post("/v1/chat/completions", json={
                "model": f"massgen/path:{name}.yaml", "messages": [{"role": "user", "content": "hi"}]})
            assert reply.status_code == 400, (name, reply.text)
            error = reply.json()["error"]
            assert error["code"] == "invalid_config" and error["param"] == "model"
            assert f"massgen/path:{name}.yaml is not a valid team config" in error["message"]
            assert "sk-ant" not in reply.text and "ANTHROPIC_API_KEY" not in reply.text and "lol" not in reply.text
            assert time.monotonic() - started < 10
            assert client.get("/health").json()["status"] == "ok"


def test_health_answers_while_hostile_configs_are_being_refused(server: ServerProcess) -> None:
    async def scenario() -> tuple[list[int], list[float]]:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
            async def hostile() -> int:
                reply = await client.post("/v1/chat/completions", json={
                    "model": "massgen/path:billion_laughs.yaml", "messages": [{"role": "user", "content": "x"}]})
                return reply.status_code

            async def health() -> float:
                started = time.monotonic()
                assert (await client.get("/health")).status_code == 200
                return time.monotonic() - started

            results = await asyncio.gather(*[hostile() for _ in range(8)], *[health() for _ in range(8)])
            return [int(r) for r in results[:8]], [float(r) for r in results[8:]]

    statuses, health_s = asyncio.run(scenario())
    assert statuses == [400] * 8
    assert max(health_s) < 10
    server.proc.terminate()  # SIGTERM is heard at once: nothing holds the loop
    assert server.proc.wait(timeout=30) == -15
