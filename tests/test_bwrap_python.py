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
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import psutil
import pytest
from process_watch import descendants, left_running, wait_for
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
    assert lines[0] == "ok /tmp", result.text()  # its own /tmp, in the sandbox's memory
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


# -- what a run may use, whoever runs massgen: each scenario returns plain data (so a process run as a normal
# user can print it), checked by one function; tests/test_bwrap_python_as_users.py runs them as nobody.

FILL = ("import os\nplaces = {'cwd': '.', 'tmp': '/tmp', 'shm': '/dev/shm', 'dev': '/dev', 'root': '/',\n"
        "          'program': '/program', 'home': os.path.expanduser('~')}\nfor name, place in places.items():\n"
        "    n = 0\n    try:\n        while n < 48:\n"
        "            with open(os.path.join(place, f'fill-{name}-{n}'), 'wb') as f:\n"
        "                f.write(bytes(1 << 20))\n            n += 1\n"
        "    except OSError:\n        pass\n    print(name, n)\n")


def filled() -> dict[str, Any]:
    """A program writes MiB after MiB (at most 48 in each) in every place it might write, with 8 MiB of scratch."""
    ran = run(FILL, scratch_bytes=8 << 20, wall_seconds=30 * FACTOR)
    written = {name: int(n) for name, n in (line.split() for line in ran.stdout.splitlines())}
    return {"written": written, "text": ran.text()}


def check_filled(found: dict[str, Any]) -> None:
    written = found["written"]
    assert len(written) == 7, found["text"]
    # the working folder, /tmp and home are one place, /dev/shm another: together they hold the scratch limit
    assert written["cwd"] + written["shm"] <= 8 and written["cwd"] >= 4 and written["shm"] >= 1, found
    assert written["tmp"] == written["home"] == 0, found  # already full: the same place
    assert written["dev"] == written["root"] == written["program"] == 0, found


def test_everything_a_program_writes_is_in_ram_capped_in_total_by_its_scratch_limit() -> None:
    check_filled(filled())


MARK_CODE = "import time\nMARK = {mark!r}\nprint(MARK, flush=True)\ntime.sleep(120)\n"


def killed_mid_run() -> dict[str, Any]:
    """A massgen process killed (SIGKILL) while its program runs: what of the program the host's temporary folder
    held meanwhile (a file naming its mark), and what is left there and running afterwards."""
    mark = f"massgen-mark-{uuid.uuid4().hex}"
    top = Path(tempfile.gettempdir())
    before = {p.name for p in top.iterdir()}
    script = ("import asyncio\nfrom massgen.files import confined\n"
              f"asyncio.run(confined.run_python({MARK_CODE.format(mark=mark)!r}, confined.Limits(wall_seconds=120)))\n")
    caller = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env={**os.environ, "MASSGEN_PYTHON_SANDBOX": "bubblewrap"})
    try:
        program = wait_for(lambda: descendants(caller.pid, matching="main.py"), 60 * FACTOR, "the program")
        sandbox = [p.pid for p in psutil.Process(caller.pid).children(recursive=True)]
        holding = []
        for name in {p.name for p in top.iterdir()} - before:
            for path in [top / name, *(top / name).rglob("*")] if (top / name).is_dir() else [top / name]:
                try:
                    if path.is_file() and mark.encode() in path.read_bytes():
                        holding.append(str(path))
                except OSError:
                    holding.append(f"{path} (unreadable to massgen's own user)")
    finally:
        caller.kill()
        caller.wait()
    running = left_running(sandbox, 20 * FACTOR)
    left = sorted(n for n in {p.name for p in top.iterdir()} - before if n.startswith("massgen-"))
    return {"program": len(program), "holding": holding, "running": running, "left": left}


def check_killed_mid_run(found: dict[str, Any]) -> None:
    assert found["program"] >= 1, found  # it ran (bubblewrap, the shell, python: each names it)
    assert found["holding"] == [], found  # the program's text is in no file of the host: none to read, none to leave
    assert found["running"] == [] and found["left"] == [], found


def test_a_killed_massgen_leaves_nothing_behind_and_the_program_was_in_no_host_file() -> None:
    check_killed_mid_run(killed_mid_run())


HOLD = ("import os\nfor n in range(64):\n    try:\n        if os.fork() == 0:\n"
        "            os.execv('/bin/sleep', [{token!r}, '120'])\n    except OSError:\n        break\n"
        "os.execv('/bin/sleep', [{token!r} + '-full', '120'])\n")
START_ONE = ("import subprocess\ntry:\n    print(subprocess.run(['echo', 'started a process'], capture_output=True, "
             "text=True).stdout.strip())\nexcept OSError as e:\n    print('refused', e)\n")


def two_runs_at_once() -> dict[str, Any]:
    """Run A starts processes until its limit (8) refuses one, and holds them all; meanwhile run B, with the same
    limit, starts one process. What B printed."""
    token = f"massgen-hold-{uuid.uuid4().hex[:12]}"
    limits = Limits(processes=8, wall_seconds=120)

    def holding(suffix: str) -> list[psutil.Process]:
        return [p for p in psutil.process_iter(["cmdline"]) if (p.info["cmdline"] or [""])[0] == token + suffix]

    async def both() -> str:
        first = asyncio.ensure_future(run_python(HOLD.format(token=token), limits))
        try:
            deadline = time.monotonic() + 60 * FACTOR
            while not holding("-full"):  # another run's processes: polled, no event tells their start
                assert time.monotonic() < deadline and not first.done(), "run A never held its processes"
                await asyncio.sleep(0.05)
            other = await run_python(START_ONE, Limits(processes=8, wall_seconds=30 * FACTOR))
            said: str = other.text()
            return said
        finally:
            first.cancel()
            await asyncio.wait({first})

    said = asyncio.run(both())
    left = left_running([p.pid for p in holding("") + holding("-full")], 10 * FACTOR)
    return {"b": said, "left": left}


def check_two_runs_at_once(found: dict[str, Any]) -> None:
    assert found["b"] == "[exit code 0]\nstarted a process", found  # A's processes do not count against B's
    assert found["left"] == [], found


def test_one_runs_processes_do_not_count_against_another_run_at_the_same_time() -> None:
    check_two_runs_at_once(two_runs_at_once())


def cpu_limited() -> dict[str, Any]:
    ran = run("while True:\n    pass", cpu_seconds=1, wall_seconds=30 * FACTOR)
    return {"exit_code": ran.exit_code, "ok": ran.ok, "timed_out": ran.timed_out, "text": ran.text()}


def check_cpu_limited(found: dict[str, Any]) -> None:
    assert not found["ok"] and not found["timed_out"] and found["exit_code"] is None, found
    assert "[the program was stopped by SIGXCPU (its CPU-time limit, 1 s)]" in found["text"], found


def test_a_busy_loop_stopped_by_its_cpu_limit_is_told_so() -> None:
    check_cpu_limited(cpu_limited())


ERR_FLOOD = ("import sys\nprint('before', flush=True)\nfor _ in range(20):\n    sys.stderr.write('E' * (1 << 20))\n"
             "print('done')\n")
ERR_FLOOD_ENDLESS = "import sys\nprint('before', flush=True)\nwhile True:\n    sys.stderr.write('E' * 65536)\n"


def stderr_flooded() -> dict[str, Any]:
    """A program writes 20 MiB to standard error between two lines of standard output, and one writes standard
    error without end after one line; each with 4 KiB of output per stream."""
    found: dict[str, Any] = {}
    for name, code in (("flood", ERR_FLOOD), ("endless", ERR_FLOOD_ENDLESS)):
        started = time.monotonic()
        ran = run(code, output_bytes=4096, wall_seconds=60 * FACTOR, cpu_seconds=60)
        found[name] = {"stdout": ran.stdout, "stderr": len(ran.stderr), "cut_at": ran.cut_at, "ok": ran.ok,
                       "took": time.monotonic() - started, "text": ran.text()[-200:]}
    return found


def check_stderr_flooded(found: dict[str, Any]) -> None:
    flood, endless = found["flood"], found["endless"]
    assert flood["stdout"] == "before\ndone\n" and flood["stderr"] == 4096 and flood["cut_at"] == 4096, found
    assert flood["text"].endswith("done\n[output cut at 4096 bytes]") and not flood["ok"], found
    # without end: stopped long before its deadline, and what it printed on standard output is kept
    assert endless["stdout"] == "before\n" and endless["stderr"] == 4096 and endless["cut_at"] == 4096, found
    assert endless["took"] < 30 * FACTOR, found


def test_a_flood_on_standard_error_hides_nothing_of_standard_output() -> None:
    check_stderr_flooded(stderr_flooded())
