"""The walk of one question, measured: which of our modules the main thread passes through, and how often
control crosses from one to another, from the command to the printed answer.

Why: ``docs/architecture.md`` draws the walk of ``massgen "question"``; a drawing counted by hand drifts from
the code. This runs the command in-process (``massgen.cli.main.main``) with a profile hook on the main thread
only (the actors' threads are the run, not the walk) and counts, for calls whose caller and callee are both
``massgen.*`` modules of different names: the modules seen, the distinct caller -> callee module pairs, and
the calls. Imports are left out (a module's first import runs its body: loading, not walking).

    python -m bench.question_walk [--config @examples/basic/scripted_three_agents] [QUESTION]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import threading
from collections import Counter
from types import FrameType
from typing import Any

__all__ = ["walk"]


def _module(frame: FrameType | None) -> str:
    return str(frame.f_globals.get("__name__", "")) if frame is not None else ""


def walk(argv: list[str]) -> tuple[set[str], Counter[tuple[str, str]]]:
    """Run ``massgen ARGV`` in this process; our modules on the main thread, and the calls between them."""
    from massgen.cli.main import main

    seen: set[str] = set()
    edges: Counter[tuple[str, str]] = Counter()
    main_thread = threading.main_thread()

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if event != "call" or threading.current_thread() is not main_thread:
            return
        callee, caller = _module(frame), _module(frame.f_back)
        if frame.f_code.co_name == "<module>":  # a module body run by its import
            return
        if callee.startswith("massgen") and caller.startswith("massgen"):
            seen.update((callee, caller))
            if callee != caller:
                edges[(caller, callee)] += 1

    out = io.StringIO()
    sys.setprofile(profile)
    try:
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            main(argv)
    finally:
        sys.setprofile(None)
    return seen, edges


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="@examples/basic/scripted_three_agents")
    parser.add_argument("question", nargs="?", default="Which is larger, 9.11 or 9.9?")
    parser.add_argument("--edges", action="store_true", help="list every caller -> callee pair")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as logs:
        import os

        os.environ["MASSGEN_LOG_BASE_DIR"] = logs
        seen, edges = walk(["--config", args.config, args.question])
    print(f"modules on the main thread: {len(seen)}")
    print(f"caller -> callee module pairs: {len(edges)}")
    print(f"calls across modules: {sum(edges.values())}")
    print(f"cli modules: {len([m for m in seen if m.startswith('massgen.cli')])}")
    if args.edges:
        for (caller, callee), count in sorted(edges.items()):
            print(f"  {caller} -> {callee}: {count}")


if __name__ == "__main__":
    main()
