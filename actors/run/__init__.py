"""A run as callers see it: the handle (``team.py``: ``Team``), what a run needs besides its config
(``run_spec.py``), the checks before it starts (``question.py``, ``preflight.py``), its trace
(``trace_writer.py``), and resuming it from that trace (``resume.py``, ``replay.py``)."""
