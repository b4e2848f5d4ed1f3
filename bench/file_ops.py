"""What the file guard rails cost: a checked read/write against a plain one, a snapshot, a sandboxed command.

Per operation: ``FileOps`` (the permission check, the descriptor walk with ``O_NOFOLLOW``
and the ``fstat`` re-check) against ``Path.read_text``/``write_text`` on the same file, three
directories deep. A snapshot of a workspace of N small files (clone or copy, digests), and
``run_command`` of ``true`` in bubblewrap against ``/bin/sh -c true``. Run: python -m bench.file_ops
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from massgen.files import PathGuard, Root
from massgen.files.file_tools import FileOps
from massgen.files.sandbox import run_command
from massgen.files.snapshots import take


def _per_op_us(fn: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        samples.append((time.perf_counter() - start) / repeat * 1e6)
    return statistics.median(samples)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "ws"
        (workspace / "a" / "b").mkdir(parents=True)
        target = workspace / "a" / "b" / "f.txt"
        target.write_text("x" * 1024)
        ops = FileOps(lambda: PathGuard(Root.make("workspace", workspace, writable=True)))
        rows = [
            ("read 1 KiB, checked", _per_op_us(lambda: ops.run("read_file", {"path": "a/b/f.txt"}), 2000)),
            ("read 1 KiB, plain", _per_op_us(target.read_text, 2000)),
            ("write 1 KiB, checked", _per_op_us(
                lambda: ops.run("write_file", {"path": "a/b/f.txt", "content": "y" * 1024}), 2000)),
            ("write 1 KiB, plain", _per_op_us(lambda: target.write_text("y" * 1024), 2000)),
        ]
        print(f"{'operation':<24}{'us/op':>10}")
        for name, us in rows:
            print(f"{name:<24}{us:>10.1f}")

        for count in (100, 1000):
            source = Path(tmp) / f"src{count}"
            for index in range(count):
                path = source / f"d{index % 10}" / f"f{index}.py"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f"x = {index}\n" * 20)
            start = time.perf_counter()
            info = take(source, Path(tmp) / f"snap{count}")
            elapsed = (time.perf_counter() - start) * 1000
            print(f"snapshot of {count} files ({info.bytes} bytes, copy-on-write: {info.cloned}): {elapsed:.0f} ms")

        if shutil.which("bwrap"):
            def sandboxed() -> object:
                return asyncio.run(run_command("true", mode="sandbox", workspace=workspace, read_only=(),
                                               timeout_s=10))

            def plain() -> object:
                return subprocess.run(["/bin/sh", "-c", "true"], check=True)

            print(f"run_command 'true' in bubblewrap: {_per_op_us(sandboxed, 10) / 1000:.1f} ms; "
                  f"plain sh: {_per_op_us(plain, 10) / 1000:.1f} ms")
        else:
            print("bubblewrap is not installed: no sandbox timing")


if __name__ == "__main__":
    main()
