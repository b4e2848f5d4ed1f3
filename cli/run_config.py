"""What a question runs with, resolved once from the command line: ``resolve(args)`` -> ``RunConfig``.

Every step between the flags and the team is here, in order, and nowhere else: the environment
(with ``./.env``) read once, the session the turn joins, the team config with every override the
flags make (``flags.team_config``: the quick-team flags, the mode flags, ``--ray``), its notices,
the display the config asks for, and the key check. The one-shot run, ``--web``, the REPL and the
full screen all take the one value; the question's own context paths (``@path``) are the last
override, applied per question (``RunConfig.for_question``). ``--resume DIR`` goes the same way: the
run's config (its trace's, or ``--config``'s with the same overrides as a question) gets the same
notices and key check, and ``RunConfig.resume`` carries where the run continues from.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from massgen.cli import exit_codes

if TYPE_CHECKING:
    from massgen import ResumePoint, Session, TeamConfig
    from massgen.cli.request import Request


@dataclass(frozen=True)
class RunConfig:
    """The team config a question runs with, where it came from, and the session the turn joins."""

    request: Request  # the command line, with the display the config asks for
    config: TeamConfig
    source: str  # how the config was chosen (a reference, never a secret)
    session: Session | None
    context: str | None  # --cwd-context: ro | rw | None
    parse_at_references: bool  # False with --no-parse-at-references: @tokens are plain text
    resume: ResumePoint | None = None  # --resume: the run this one continues (its question, its state)

    def for_question(self, question: str) -> TeamConfig:
        """The config with the context paths this question names (``@path[:w]``, ``--cwd-context``); a
        mention that names nothing to attach stays text, and a note on stderr says so."""
        from massgen import with_context_paths
        from massgen.cli.text import for_terminal

        left_as_text: list[str] = []
        config = with_context_paths(self.config, question if self.parse_at_references else "", self.context,
                                    left_as_text=left_as_text)
        for note in left_as_text:
            print(f"massgen: note: {for_terminal(note)}; left as text", file=sys.stderr)
        return config


def resolve(args: Request) -> RunConfig | int:
    """The ``RunConfig`` the flags ask for, or the exit code after saying why not (a config error, a
    missing key)."""
    from pathlib import Path

    from massgen import ConfigError, ResumeError, config_environment, resume_point
    from massgen.cli import flags

    env = config_environment()  # ./.env read once, for the config and the key check
    point: ResumePoint | None = None
    try:
        session = _session(args)
        if args.resume:
            point = resume_point(Path(args.resume))
        traced = _traced_config(point) if point is not None and not args.config else None
        config, source = traced or flags.team_config(args, session, env)
    except (ConfigError, ResumeError) as exc:
        print(f"massgen: {exc}", file=sys.stderr)
        return exit_codes.CONFIG_ERROR
    flags.say_notices(config, source)
    missing_key = flags.check_keys(config, env=env)
    if missing_key is not None:
        return missing_key
    return RunConfig(request=args.with_config_display(config.ui.display_type), config=config, source=source,
                     session=session, context=args.cwd_context, parse_at_references=args.parse_at_references,
                     resume=point)


def _session(request: Request) -> Session | None:
    """The session a run joins: ``--continue`` (the latest), ``--session-id`` (made if new), or none."""
    from massgen import sessions

    if request.continue_session:
        from massgen.cli.text import for_terminal

        skipped: list[str] = []
        session = sessions.latest(skipped=skipped)  # refused when the newest session file is the unreadable one
        for why in skipped:
            print(for_terminal(f"massgen: warning: skipped {why}"), file=sys.stderr)
        return session
    if request.session_id:
        return sessions.open_or_create(request.session_id, config=request.stored_config())
    return None


def _traced_config(point: ResumePoint) -> tuple[TeamConfig, str]:
    """``--resume DIR`` without ``--config``: the config the run's trace holds, unless its secrets were
    redacted there (then ``--config`` must give it again)."""
    from massgen import ConfigError, validate_data

    if point.redacted:
        raise ConfigError(f"{point.log_dir}: the trace holds the run's config with its secrets redacted "
                          f"({', '.join(point.redacted)}); give the run's config again with --config FILE")
    source = f"{point.log_dir}/trace.jsonl (the run's config)"
    return validate_data(point.config, source), source


__all__ = ["RunConfig", "resolve"]
