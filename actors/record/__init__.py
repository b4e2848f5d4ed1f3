"""The run's record, the trace, below every actor that writes to it: its one writer
(``trace_writer.py``: ``TraceWriter``), each model call recorded and, on resume, answered from it
(``replay.py``: ``CallRecorder``, wrapped around an agent's backend), and reading it back to resume a
run (``resume.py``). Imports no other actor package, so the agent, the supervisor and the handle all
may use it."""
