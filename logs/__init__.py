"""The log directory: everything but ``trace.jsonl`` is derived from it."""

from massgen.logs.files import TRACE_FILE, read_trace, rebuild_from_trace, render_all, write_all, write_atomic
from massgen.logs.projection import LogProjection

__all__ = ["TRACE_FILE", "LogProjection", "read_trace", "rebuild_from_trace", "render_all", "write_all",
           "write_atomic"]
