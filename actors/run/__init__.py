"""A run as callers see it, the top of ``actors/``: the handle (``team.py``: ``Team``) and the checks
before it starts (``question.py``, ``preflight.py``). What it starts lives below: the supervisor (which
holds ``RunSpec``, what a run needs besides its config) and the trace (``actors/record/``)."""
