"""The bubblewrap runner (``MASSGEN_PYTHON_SANDBOX=bubblewrap``): real bubblewrap, real processes, real limits.

No network (not even the host's loopback), writes only in a fresh scratch folder that is gone
afterwards, a fork bomb held to a few processes and killed at the deadline, a sleep killed at the
wall clock, an output flood cut with a visible note, a memory hog refused; and where no sandbox
can be had, ``unavailable`` says why instead of running anything unconfined.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import time
from pathlib import Path

import psutil
import pytest
from support import FACTOR, unavailable

from massgen.files.confined import Limits, ProgramRun, run_python
from massgen.files.confined import unavailable as sandbox_unavailable

if shutil.which("bwrap") is None:
    unavailable("bubblewrap (bwrap) is not installed (Debian package bubblewrap)", module=True)


@pytest.fixture(autouse=True)
def _bubblewrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MASSGEN_PYTHON_SANDBOX", "bubblewrap")


def run(code: str, **limits: float) -> ProgramRun:
    return asyncio.run(run_python(code, Limits(**limits)))  # type: ignore[arg-type]


def scratch_folders() -> set[str]:
    return {p.name for p in Path("/tmp").glob("massgen-python-*")}




def test_a_program_runs_and_its_output_and_exit_code_come_back() -> None:
    result = run("import sys\nprint(sum(range(10)))\nprint('a warning', file=sys.stderr)\nsys.exit(3)")
    assert (result.exit_code, result.stdout, result.stderr) == (3, "45\n", "a warning\n")
    assert result.text() == "[exit code 3]\nstderr:\na warning\n45"


def test_the_program_cannot_reach_the_network_not_even_the_hosts_loopback(listener: int) -> None:
    probe = (f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {listener}), timeout=2)\n"
             "    print('CONNECTED')\nexcept OSError as e:\n    print('NO NETWORK', e)\n")
    with socket.create_connection(("127.0.0.1", listener), timeout=2):
        pass  # reachable from the host
    result = run(probe)
    assert result.stdout.startswith("NO NETWORK"), result.text()


def test_the_program_writes_only_in_its_scratch_folder_which_is_gone_afterwards(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("host's\n")
    before = scratch_folders()
    code = ("import os\nopen('mine.txt', 'w').write('ok')\nprint(open('mine.txt').read(), os.getcwd())\n"
            f"for path in ({str(outside)!r}, '/usr/pwned', '/etc/pwned', os.path.expanduser('~/../pwned')):\n"
            "    try:\n        open(path, 'w').write('x')\n        print('WROTE', path)\n"
            "    except OSError as e:\n        print('refused', type(e).__name__)\n")
    result = run(code)
    lines = result.stdout.splitlines()
    assert lines[0].startswith("ok /tmp/massgen-python-"), result.text()
    assert "WROTE" not in result.stdout and lines.count("refused FileNotFoundError") + lines.count(
        "refused OSError") + lines.count("refused PermissionError") == 4, result.text()
    assert outside.read_text() == "host's\n" and not Path("/usr/pwned").exists() and not Path("/etc/pwned").exists()
    assert scratch_folders() == before  # removed afterwards


def nobody_processes() -> list[psutil.Process]:
    return [p for p in psutil.process_iter(["uids", "cmdline"]) if p.info["cmdline"]
            and "massgen-bomb" in " ".join(p.info["cmdline"])]


def test_a_fork_bomb_is_held_to_a_few_processes_and_killed_at_the_deadline() -> None:
    code = ("import os, sys\nsys.argv[0] = 'massgen-bomb'\nn = 0\nwhile True:\n    try:\n        os.fork()\n"
            "    except OSError:\n        n += 1\n        if n == 50:\n            print('fork refused', flush=True)\n")
    started = time.monotonic()
    result = run(code, wall_seconds=3 * FACTOR, processes=16)
    took = time.monotonic() - started
    assert result.timed_out and result.exit_code is None and "killed at the deadline" in result.text()
    assert "fork refused" in result.stdout  # the process limit held, inside the sandbox
    assert took < 3 * FACTOR + 10
    assert nobody_processes() == []  # nothing of it is left on the host
    after = run("print('still fine')")  # and the machine runs the next program as usual
    assert after.ok and after.stdout == "still fine\n"


def test_a_sleep_past_the_wall_clock_is_killed_at_the_deadline() -> None:
    before = {p.pid for p in psutil.Process(os.getpid()).children(recursive=True)}
    started = time.monotonic()
    result = run("import time\nprint('started', flush=True)\ntime.sleep(300)\nprint('never')", wall_seconds=1.5)
    assert time.monotonic() - started < 1.5 + 5 * FACTOR
    assert result.timed_out and result.stdout == "started\n" and result.text().startswith("[killed at the deadline]")
    left = [p for p in psutil.Process(os.getpid()).children(recursive=True)
            if p.pid not in before and p.status() != psutil.STATUS_ZOMBIE]
    assert left == []


def test_a_flood_of_output_is_cut_with_a_visible_note_and_the_program_stopped() -> None:
    started = time.monotonic()
    result = run("while True:\n    print('x' * 100)", wall_seconds=30 * FACTOR, output_bytes=4096)
    assert time.monotonic() - started < 10 * FACTOR  # stopped at the cap, not at the deadline
    assert result.cut_at == 4096 and len(result.stdout) + len(result.stderr) == 4096
    assert result.text().endswith("\n[output cut at 4096 bytes]") and not result.ok


def test_a_memory_hog_is_refused_its_memory() -> None:
    result = run("data = bytearray(2 << 30)\nprint('got it')", memory_bytes=256 << 20)
    assert "MemoryError" in result.stderr and "got it" not in result.stdout and result.exit_code == 1


def test_a_busy_loop_is_stopped_by_its_cpu_limit() -> None:
    result = run("while True:\n    pass", cpu_seconds=1, wall_seconds=30 * FACTOR)
    assert not result.ok and not result.timed_out and result.exit_code != 0


def test_without_bubblewrap_no_sandbox_can_be_had_and_the_reason_says_so(monkeypatch: pytest.MonkeyPatch,
                                                                         tmp_path: Path) -> None:
    assert sandbox_unavailable() is None  # here it can
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH with no bwrap on it
    assert "bubblewrap (bwrap) is not installed" in (sandbox_unavailable() or "")
