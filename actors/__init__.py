"""The actors of a run and the handle that starts them."""

from massgen.actors.team import RunResult, Team, new_log_dir

__all__ = ["RunResult", "Team", "new_log_dir"]
