"""What a question runs with, resolved once from the command line: ``resolve(args)`` -> ``RunConfig``.

Every step between the flags and the team is here, in order, and nowhere else: the environment
(with ``./.env``) read once, the session the turn joins, the team config with every override the
flags make (``flags.team_config``: the quick-team flags, the mode flags, ``--ray``), its notices,
the display the config asks for, and the key check. The one-shot run, ``--web``, the REPL and the
full screen all take the one value; the question's own context paths (``@path``) are the last
override, applied per question (``RunConfig.for_question``).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from massgen.cli import exit_codes

if TYPE_CHECKING:
    from massgen import Session, TeamConfig


@dataclass(frozen=True)
class RunConfig:
    """The team config a question runs with, where it came from, and the session the turn joins."""

    config: TeamConfig
    source: str  # how the config was chosen (a reference, never a secret)
    session: Session | None
    context: str | None  # --cwd-context: ro | rw | None
    parse_at_references: bool  # False with --no-parse-at-references: @tokens are plain text

    def for_question(self, question: str) -> TeamConfig:
        """The config with the context paths this question names (``@path[:w]``, ``--cwd-context``)."""
        from massgen import with_context_paths

        return with_context_paths(self.config, question if self.parse_at_references else "", self.context)


def resolve(args: argparse.Namespace) -> RunConfig | int:
    """The ``RunConfig`` the flags ask for, or the exit code after saying why not (a config error, a
    missing key)."""
    from massgen import ConfigError, config_environment
    from massgen.cli import display, flags

    env = config_environment()  # ./.env read once, for the config and the key check
    try:
        session = flags.session_of(args)
        config, source = flags.team_config(args, session, env)
    except ConfigError as exc:
        print(f"massgen: {exc}", file=sys.stderr)
        return exit_codes.CONFIG_ERROR
    flags.say_notices(config, source)
    display.from_config(args, config.ui.display_type)
    missing_key = flags.check_keys(config, env=env)
    if missing_key is not None:
        return missing_key
    return RunConfig(config=config, source=source, session=session, context=args.cwd_context,
                     parse_at_references=args.parse_at_references)


__all__ = ["RunConfig", "resolve"]
