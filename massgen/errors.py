"""``massgen.errors``, as users have imported it: the errors are defined in ``massgen.outcome.errors``."""

from massgen.outcome.errors import *  # noqa: F403  (every name of its __all__, the very classes)
from massgen.outcome.errors import __all__ as __all__
