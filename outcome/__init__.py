"""What a call into massgen ends in: the result a run hands back, or an error a caller can catch.

The bottom layer: it imports nothing of ours, so every layer may raise these errors and the run handle
may build its result without an import running back up. The face re-exports both (``massgen.RunResult``,
``massgen.ConfigError``, ...); this package is where they are defined.
"""
