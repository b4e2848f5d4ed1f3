"""Guards that keep the suite honest: no leaked processes, no leaked non-daemon threads."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

logging.getLogger("pykka").setLevel(logging.CRITICAL)


@pytest.fixture(autouse=True)
def _log_base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MASSGEN_LOG_BASE_DIR", str(tmp_path / "massgen_logs"))


@pytest.fixture(autouse=True)
def _no_leaks() -> Iterator[None]:
    before_threads = {t.ident for t in threading.enumerate() if not t.daemon}
    me = psutil.Process(os.getpid())
    before_children = {p.pid for p in me.children(recursive=True)}
    yield
    leaked_threads = [t.name for t in threading.enumerate()
                      if not t.daemon and t.ident not in before_threads and t.is_alive()]
    assert not leaked_threads, f"non-daemon threads left running: {leaked_threads}"
    gone_or_zombie = (psutil.NoSuchProcess, psutil.ZombieProcess)
    leaked = []
    for child in me.children(recursive=True):
        if child.pid in before_children:
            continue
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                leaked.append(f"{child.pid} {' '.join(child.cmdline())[:120]}")
        except gone_or_zombie:
            continue
    assert not leaked, f"child processes left running: {leaked}"
