"""What a model's program may use, and how its run ended: shared by every confinement (``files/confined.py``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Limits", "ProgramRun"]


@dataclass(frozen=True)
class Limits:
    """What one run may use; the defaults fit a check (a few seconds, little memory).

    ``scratch_bytes``: what the program may write, all places together: memory (tmpfs), on top of
    ``memory_bytes``. The bubblewrap runner splits it between its ``/tmp`` (three quarters: its working
    folder and home) and ``/dev/shm``; under WebAssembly nothing is writable, so it is not used.
    ``output_bytes`` is per stream (standard output, standard error)."""

    wall_seconds: float = 10.0
    cpu_seconds: int = 5
    memory_bytes: int = 512 << 20
    processes: int = 32
    output_bytes: int = 16 * 1024
    scratch_bytes: int = 64 << 20


@dataclass(frozen=True)
class ProgramRun:
    """How a run ended: ``exit_code`` None when it was stopped (deadline, its output cut, a trap of the runtime)."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    cut_at: int | None = None  # the output was cut at this many bytes (the rest was never kept)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and self.cut_at is None

    def status(self) -> str:
        if self.timed_out:
            return "[killed at the deadline]"
        if self.cut_at is not None and self.exit_code is None:
            return "[stopped: too much output]"
        return "[stopped]" if self.exit_code is None else f"[exit code {self.exit_code}]"

    def text(self) -> str:
        """The run as a model reads it: status first, standard error, then standard output last."""
        parts = [self.status()]
        if self.stderr:
            parts.append(f"stderr:\n{self.stderr.rstrip()}")
        parts.append(self.stdout.rstrip() if self.stdout.strip() else "(no output)")
        if self.cut_at is not None:
            parts.append(f"[output cut at {self.cut_at} bytes]")
        return "\n".join(parts)
