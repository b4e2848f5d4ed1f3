"""The actors of a run and the handle that starts them."""

from massgen.actors.run.team import Team, new_log_dir
from massgen.outcome.result import RunResult

__all__ = ["RunResult", "Team", "new_log_dir"]
