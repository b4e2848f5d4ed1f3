"""Where a user keeps configs and keys, as upstream MassGen 0.1.97 looks for them.

Upstream reads ``.env`` files from ``~/.massgen/.env``, ``~/.config/massgen/.env``, ``./configs/.env``
and ``./.env`` (``massgen/cli/env.py``: its docstring says later files win), and finds ``--config NAME``
as a path, then in ``~/.config/massgen/agents/`` (``cli/config_loading.py``). The user config folder is
``$XDG_CONFIG_HOME/massgen`` when that is set, else ``~/.config/massgen`` (upstream's).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["dotenv_files", "global_dotenv", "named_config", "user_config_dir"]


def user_config_dir() -> Path:
    """``~/.config/massgen`` (or under ``$XDG_CONFIG_HOME``)."""
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "massgen"


def global_dotenv() -> Path:
    """``~/.massgen/.env``: upstream's recommended place for keys every directory sees."""
    return Path.home() / ".massgen" / ".env"


def dotenv_files() -> list[Path]:
    """The ``.env`` files keys are read from, weakest first: a nearer file wins over a global one."""
    return [global_dotenv(), user_config_dir() / ".env", Path.cwd() / "configs" / ".env", Path.cwd() / ".env"]


def named_config(ref: str) -> Path | None:
    """``--config NAME`` that is no path: ``~/.config/massgen/agents/NAME`` or ``NAME.yaml`` there."""
    agents = user_config_dir() / "agents"
    candidates = [agents / ref]
    if not ref.endswith((".yaml", ".yml")):
        candidates.append(agents / f"{ref}.yaml")
    return next((path for path in candidates if path.is_file()), None)
