"""The log directory: everything but ``trace.jsonl`` is derived from it."""

from massgen.logs.calls import RecordedCall, model_calls
from massgen.logs.derived_files import (
    TRACE_FILE,
    TraceWarning,
    read_trace,
    rebuild_from_trace,
    render_all,
    write_all,
    write_atomic,
)
from massgen.logs.projection import LogProjection
from massgen.logs.reading import TraceRead, TraceReadError, read_trace_file

__all__ = ["TRACE_FILE", "LogProjection", "RecordedCall", "TraceRead", "TraceReadError", "TraceWarning",
           "model_calls", "read_trace", "read_trace_file", "rebuild_from_trace", "render_all", "write_all",
           "write_atomic"]
