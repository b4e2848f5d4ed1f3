"""The bubblewrap runner's limits on a run, held whoever runs massgen: each scenario of ``test_bwrap_python``
run again by a process dropped to a normal user (``nobody``: uid 65534, no groups, no capabilities), where
bubblewrap makes a user namespace instead of dropping root (CI runs as root, users do not).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from support import unavailable
from test_bwrap_python import (
    check_cpu_limited,
    check_filled,
    check_killed_mid_run,
    check_stderr_flooded,
    check_two_runs_at_once,
)
from test_confinement_as_users import as_nobody, shared

__all__ = ["shared"]  # the fixture, used by name

if shutil.which("bwrap") is None:
    unavailable("bubblewrap (bwrap) is not installed (Debian package bubblewrap)", module=True)


def as_a_user(scenario: str, folder: Path) -> dict[str, object]:
    """``test_bwrap_python.<scenario>()`` run by nobody, with the bubblewrap runner: what it returned."""
    script = (f"import json, sys\nsys.path.insert(0, {str(Path(__file__).parent)!r})\n"
              f"from test_bwrap_python import {scenario}\nprint(json.dumps({scenario}()))\n")
    printed = as_nobody(script, folder, {"MASSGEN_PYTHON_SANDBOX": "bubblewrap", "TMPDIR": "/tmp"})
    if "setting up uid map" in printed or "No permissions to create" in printed:
        unavailable(f"unprivileged user namespaces are disabled on this kernel: {printed.strip()}")
    found: dict[str, object] = json.loads(printed.strip().splitlines()[-1])
    return found


@pytest.fixture(autouse=True)
def _as_root() -> None:
    if os.geteuid() != 0:
        unavailable("dropping to a normal user needs root (CI runs as root); run as a user, test_bwrap_python is this")


def test_as_a_user_everything_a_program_writes_is_in_ram_capped_in_total(shared: Path) -> None:
    check_filled(as_a_user("filled", shared))


def test_as_a_user_a_killed_massgen_leaves_nothing_behind(shared: Path) -> None:
    check_killed_mid_run(as_a_user("killed_mid_run", shared))


def test_as_a_user_one_runs_processes_do_not_count_against_another_run(shared: Path) -> None:
    check_two_runs_at_once(as_a_user("two_runs_at_once", shared))


def test_as_a_user_a_busy_loop_stopped_by_its_cpu_limit_is_told_so(shared: Path) -> None:
    check_cpu_limited(as_a_user("cpu_limited", shared))


def test_as_a_user_a_flood_on_standard_error_hides_nothing_of_standard_output(shared: Path) -> None:
    check_stderr_flooded(as_a_user("stderr_flooded", shared))
