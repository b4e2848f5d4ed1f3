"""Every benchmark program and replay imports: a rule renamed or removed in ``decide`` must not leave a replay
that fails only when someone runs it (issue 48 removed three rules some replays named)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
MODULES = sorted(
    ".".join(path.relative_to(BENCH.parent).with_suffix("").parts)
    for path in BENCH.rglob("*.py") if "results" not in path.parts and path.name != "__init__.py")


@pytest.mark.parametrize("module", MODULES)
def test_the_bench_module_imports(module: str) -> None:
    importlib.import_module(module)
