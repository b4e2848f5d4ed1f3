"""Multi-turn sessions on disk: one store for the REPL, ``--session-id``, ``--continue`` and the API.

A session is ``.massgen/sessions/<id>/session.json``: the config it was started with (a
reference such as ``@examples/NAME`` or the quick-team flags, never a secret) and one
entry per finished turn (question, final answer, status, winner, log directory). Each
turn is written atomically as soon as it ends, so a later process (``massgen
--continue``, ``massgen.run(..., session_id=...)``) picks the conversation up with
every earlier turn as history; a crash loses at most the turn in flight.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from massgen.logs.derived_files import write_atomic
from massgen.outcome.errors import ConfigError

if TYPE_CHECKING:
    from massgen.outcome.result import RunResult

SESSION_FILE = "session.json"
LOCK_FILE = ".lock"
_LOCK_TIMEOUT_S = 10.0
_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")  # the whole id (fullmatch: no "$" before a "\n")


class SessionError(ConfigError):
    """A session that cannot be used (bad id, none to continue, unreadable file); the message is for the user."""


def sessions_dir() -> Path:
    """``$MASSGEN_SESSIONS_DIR``; else next to the logs when their base is set; else ``./.massgen/sessions``."""
    explicit = os.environ.get("MASSGEN_SESSIONS_DIR")
    if explicit:
        return Path(explicit).expanduser()
    logs = os.environ.get("MASSGEN_LOG_BASE_DIR")
    if logs:
        return Path(logs).expanduser().resolve().parent / "sessions"
    return Path(".massgen") / "sessions"


def new_session_id() -> str:
    return "session_" + _dt.datetime.now().strftime("%Y%m%d_%H%M%S_%f")


def check_session_id(session_id: str) -> str:
    if not isinstance(session_id, str) or not _ID_PATTERN.fullmatch(session_id):
        raise SessionError(f"--session-id {session_id!r}: use letters, digits, '_', '.' and '-' "
                           "(at most 128, starting with a letter or digit)")
    return session_id


@dataclass
class Session:
    """One conversation; ``turns`` are plain dicts as stored."""

    id: str
    path: Path
    created_at: str
    config: dict[str, Any] = field(default_factory=dict)
    turns: list[dict[str, Any]] = field(default_factory=list)
    context_from: int = 0  # turns before this index are not context any more (the REPL's /reset)

    @property
    def updated_at(self) -> str:
        return str(self.turns[-1]["finished_at"]) if self.turns else self.created_at

    @property
    def next_turn(self) -> int:
        return len(self.turns) + 1

    def history(self) -> tuple[tuple[str, str], ...]:
        """(question, answer) pairs the next turn's team sees: every answered turn since the last reset."""
        return tuple((t["question"], t["answer"]) for t in self.turns[self.context_from:]
                     if t.get("answer") is not None)

    def add_turn(self, question: str, result: RunResult, *, keep_log_dir: bool = True) -> dict[str, Any]:
        """Record a finished turn and write the session file at once.

        Under a lock, after reading the file again: a turn another process added meanwhile
        (two terminals on one session) is kept, not overwritten.
        """
        with _locked(self.path):
            self._reload()
            return self._append(question, result, keep_log_dir)

    def _reload(self) -> None:
        if (self.path / SESSION_FILE).is_file():
            fresh = _read(self.path)
            self.turns, self.context_from = fresh.turns, fresh.context_from

    def _append(self, question: str, result: RunResult, keep_log_dir: bool) -> dict[str, Any]:
        turn = {
            "turn": self.next_turn,
            "question": question,
            "answer": result.final_answer,
            "status": result.status,
            "winner": result.winner,
            "winner_label": result.winner_label,
            "run_id": result.run_id,
            "log_dir": str(Path(result.log_dir).resolve()) if keep_log_dir else None,
            "finished_at": _now(),
        }
        self.turns.append(turn)
        self.save()
        return turn

    def reset_context(self) -> None:
        with _locked(self.path):
            self._reload()
            self.context_from = len(self.turns)
            self.save()

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "created_at": self.created_at, "updated_at": self.updated_at,
                "config": self.config, "context_from": self.context_from, "turns": self.turns}

    def save(self) -> None:
        write_atomic(self.path / SESSION_FILE, json.dumps(self.as_dict(), indent=2, ensure_ascii=False) + "\n")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on the session for a read-modify-write (``flock``; none where it is missing)."""
    path.mkdir(parents=True, exist_ok=True)
    with open(path / LOCK_FILE, "a+b") as handle:
        try:
            import fcntl
        except ImportError:  # not POSIX: last writer wins
            yield
            return
        deadline = time.monotonic() + _LOCK_TIMEOUT_S
        while True:  # another writer holds it only while it rewrites the file
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise SessionError(f"session {path.name}: another process has been saving a turn for over "
                                       f"{_LOCK_TIMEOUT_S:.0f} s; try again") from None
                time.sleep(0.01)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds")


def _read(path: Path) -> Session:
    file = path / SESSION_FILE
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        turns = data.get("turns") or []
        if not isinstance(turns, list) or not all(_is_turn(turn) for turn in turns):
            raise ValueError("turns: each is an object with a question, its answer (or null) and finished_at")
        return Session(id=str(data["id"]), path=path, created_at=str(data["created_at"]),
                       config=dict(data.get("config") or {}), turns=turns,
                       context_from=int(data.get("context_from", 0)))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise SessionError(f"{file}: not a readable session file ({type(exc).__name__}: {exc})") from None


def _is_turn(turn: object) -> bool:
    """A stored turn as ``_append`` writes it, as far as history and listing read it."""
    return (isinstance(turn, dict) and isinstance(turn.get("question"), str) and "finished_at" in turn
            and (turn.get("answer") is None or isinstance(turn.get("answer"), str)))


def load(session_id: str, base: Path | None = None) -> Session:
    """An existing session; ``SessionError`` when there is none by that id."""
    path = (base or sessions_dir()) / check_session_id(session_id)
    if not (path / SESSION_FILE).is_file():
        raise SessionError(f"no session {session_id!r} in {path.parent} (see `massgen --list-sessions`)")
    return _read(path)


def open_or_create(session_id: str | None = None, *, config: dict[str, Any] | None = None,
                   base: Path | None = None) -> Session:
    """The session ``session_id`` if it exists, else a new one (a fresh id when none is given)."""
    base = base or sessions_dir()
    session_id = check_session_id(session_id) if session_id else new_session_id()
    path = base / session_id
    if (path / SESSION_FILE).is_file():
        return _read(path)
    session = Session(id=session_id, path=path, created_at=_now(), config=dict(config or {}))
    try:
        session.save()
    except OSError as exc:  # a full disk, a file where the sessions folder should be, no permission
        raise SessionError(f"cannot create session {session_id!r} in {base}: "
                           f"{exc.strerror or exc}{f' ({exc.filename})' if exc.filename else ''}") from None
    return session


def list_sessions(base: Path | None = None, skipped: list[str] | None = None) -> list[Session]:
    """Every readable session, most recently updated last; why each unreadable one was skipped goes to
    ``skipped`` when given (one damaged file must not hide the others, nor itself without a word)."""
    found, unreadable = _scan(base or sessions_dir())
    if skipped is not None:
        skipped += [why for _, why in unreadable]
    return found


def _scan(base: Path) -> tuple[list[Session], list[tuple[Path, str]]]:
    """The readable sessions (most recently updated last), and each unreadable one's folder and why."""
    found: list[Session] = []
    unreadable: list[tuple[Path, str]] = []
    if base.is_dir():
        for path in base.iterdir():
            if (path / SESSION_FILE).is_file():
                try:
                    found.append(_read(path))
                except SessionError as exc:
                    unreadable.append((path, str(exc)))
    return sorted(found, key=lambda s: (s.updated_at, s.id)), unreadable


def latest(base: Path | None = None, skipped: list[str] | None = None) -> Session:
    """The most recently updated session, for ``--continue``.

    A session file that cannot be read is never passed over in silence: when it was written after the
    newest readable one (it may well be the conversation the user means), ``--continue`` is refused, naming
    it (``--session-id`` continues another one explicitly); an older one is named in ``skipped``."""
    base = base or sessions_dir()
    sessions, unreadable = _scan(base)
    newest = _written_at(sessions[-1].path) if sessions else float("-inf")
    for path, why in unreadable:
        if _written_at(path) >= newest:
            raise SessionError(f"{why}; it was written after every readable session, so --continue would join "
                               "an older conversation: repair or remove it, or name the session with --session-id")
        if skipped is not None:
            skipped.append(why)
    if not sessions:
        raise SessionError(f"no session to continue in {base}; "
                           "start one with `massgen --session-id NAME \"question\"` or the interactive session")
    return sessions[-1]


def _written_at(path: Path) -> float:
    try:
        return (path / SESSION_FILE).stat().st_mtime
    except OSError:
        return float("-inf")
