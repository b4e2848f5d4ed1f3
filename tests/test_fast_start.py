"""A fast start: provider SDKs load only for configs that use them, and leaving skips interpreter
teardown without skipping what must run at exit. (Timings live in bench/cli_startup.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bench.zero_latency_openai import ZeroLatencyServer

# The provider SDKs, and the HTTP stacks only they bring (httpx2 under openai/anthropic, aiohttp under google-genai).
SDKS = ("openai", "anthropic", "google.genai", "httpx2", "aiohttp")
PROBE = f"""
import json, sys
from massgen.cli.main import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:  # --help
    code = exc.code
print(json.dumps({{"code": code, "loaded": [m for m in {SDKS!r} if m in sys.modules],
                  "chat_resources": "openai.resources.chat" in sys.modules}}))
"""


def probe(tmp_path: Path, *args: str) -> dict[str, object]:
    env = {**os.environ, "MASSGEN_LOG_BASE_DIR": str(tmp_path / "logs")}
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_import_massgen_and_help_load_no_provider_sdk(tmp_path: Path) -> None:
    script = (f"import json, sys, massgen; massgen.run; massgen.Team; massgen.TeamConfig; "
              f"print(json.dumps([m for m in {SDKS!r} if m in sys.modules]))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
    assert probe(tmp_path, "--help") == {"code": 0, "loaded": [], "chat_resources": False}


def test_a_scripted_run_loads_no_provider_sdk(tmp_path: Path) -> None:
    seen = probe(tmp_path, "--config", "@examples/basic/scripted_three_agents", "Which is larger, 9.11 or 9.9?")
    assert seen == {"code": 0, "loaded": [], "chat_resources": False}
    assert probe(tmp_path, "--validate", "@examples/basic/multi/three_agents_default")["loaded"] == []


def test_an_openai_compatible_team_loads_no_sdk(tmp_path: Path) -> None:
    with ZeroLatencyServer() as server:
        seen = probe(tmp_path, "--model", "chatcompletion/zero", "--base-url", server.base_url, "q")
    assert seen == {"code": 0, "loaded": [], "chat_resources": False}


def test_leaving_fast_still_runs_exit_handlers_and_keeps_the_exit_code(tmp_path: Path) -> None:
    marker = tmp_path / "atexit_ran"
    script = (f"import atexit, sys; atexit.register(lambda: open({str(marker)!r}, 'w').write('yes'));"
              "sys.argv[1:] = ['--validate', 'missing.yaml'];"
              "from massgen.cli.main import entry; entry()")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert done.returncode == 1 and "config file not found: missing.yaml" in done.stderr
    assert marker.read_text() == "yes"
