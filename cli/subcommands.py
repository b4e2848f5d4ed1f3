"""The subcommands: ``serve`` (cli/serve/), ``logs`` (cli/log_tools.py), and upstream MassGen 0.1.97's
``export``, ``viewer`` and ``shares``, over our log directories.

- ``massgen export [RUN]``: the run's log directory as a ``.tar.gz`` archive (upstream uploads a
  GitHub Gist; this version writes the archive and uploads nothing). Upstream's flags parse:
  ``--turns``, ``--no-workspace``, ``--workspace-limit``, ``--yes``, ``--dry-run``, ``--verbose``,
  ``--json``; ``--output PATH`` names the archive.
- ``massgen viewer [RUN]``: the run's summary, its timeline and its final answer, printed;
  ``--replay-speed N`` plays the timeline back at N times its real pace (0: at once).
- ``massgen shares``: not available (no Gists are made, so there are none to list or delete).

RUN is what ``massgen logs`` takes: a log directory (a ``log_*`` run, a turn or an attempt), a
run's folder name under the log base, a number from ``massgen logs list``, or a run id.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import tarfile
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from massgen import TRACE_FILE, TraceError, default_log_base, summarize_run
from massgen.cli import exit_codes
from massgen.cli.log_tools import LogsError, print_summary, print_timeline, select, timeline
from massgen.cli.text import for_terminal
from massgen.cli.usage import UsageParser

WORKSPACE_DIRS = ("snapshots", "context_baseline")  # the agents' files, beside the logs
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMG]?B)?\s*$", re.IGNORECASE)
_UNITS = {"B": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3}


def _export_parser() -> argparse.ArgumentParser:
    parser = UsageParser(prog="massgen export", allow_abbrev=False,
                         description="Write a run's log directory as a .tar.gz archive (nothing is uploaded).")
    parser.add_argument("log_dir", nargs="?", help="the run (default: the latest): a log directory, its name, "
                        "a number from `massgen logs list`, or a run id")
    parser.add_argument("--turns", "-t", default="all", help='the turns: "all" (default), "N" (1..N), "N-M" '
                        'or "latest"')
    parser.add_argument("--no-workspace", action="store_true", help="leave out the agents' workspace snapshots")
    parser.add_argument("--workspace-limit", default="500KB",
                        help="leave out an answer's workspace snapshot above this size (default 500KB)")
    parser.add_argument("--yes", "-y", action="store_true", help="ask nothing; replace an existing archive at --output")
    parser.add_argument("--dry-run", action="store_true", help="list what would be archived; write nothing")
    parser.add_argument("--verbose", "-v", action="store_true", help="list every file")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--output", "-o", metavar="PATH", help="the archive (default: ./<run>.tar.gz)")
    return parser


def _viewer_parser() -> argparse.ArgumentParser:
    parser = UsageParser(prog="massgen viewer", allow_abbrev=False,
                         description="Show a finished run: its summary, timeline and final answer.")
    parser.add_argument("log_dir", nargs="?", help="the run (default: the latest)")
    parser.add_argument("--turn", type=int, metavar="N", help="the turn (default: the latest)")
    parser.add_argument("--attempt", type=int, metavar="N", help="the attempt (default: the latest)")
    parser.add_argument("--replay-speed", type=float, default=0.0, metavar="X",
                        help="play the timeline back at X times its pace (0, the default: at once)")
    parser.add_argument("--pick", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--web", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--no-browser", action="store_true", help="nothing to switch off: no browser is opened")
    return parser


def _run_root(path: Path) -> Path:
    """The ``log_*`` folder a log directory belongs to."""
    for folder in (path, *path.parents):
        if folder.name.startswith("log_"):
            return folder
    return path


def _find(ref: str | None) -> Path:
    """An attempt directory, from what ``massgen logs`` takes, or a run's folder name under the log base."""
    base = default_log_base()
    if ref is not None and not Path(ref).expanduser().exists() and (base / ref).exists():
        ref = str(base / ref)
    return select(ref, base)


def _turns(root: Path, spec: str) -> list[Path]:
    turns = sorted((p for p in root.glob("turn_*") if p.name[5:].isdigit()), key=lambda p: int(p.name[5:]))
    if not turns:
        return [root]
    if spec == "all":
        return turns
    if spec == "latest":
        return turns[-1:]
    match = re.fullmatch(r"(\d+)(?:-(\d+))?", spec)
    if match is None:
        raise LogsError(f'--turns {spec!r}: give "all", "latest", "N" or "N-M"')
    low, high = (1, int(match[1])) if match[2] is None else (int(match[1]), int(match[2]))
    chosen = [t for t in turns if low <= int(t.name[5:]) <= high]
    if not chosen:
        raise LogsError(f"--turns {spec}: {root} has turns 1-{turns[-1].name[5:]}")
    return chosen


def _size_limit(text: str) -> int:
    match = _SIZE.match(text)
    if match is None:
        raise LogsError(f"--workspace-limit {text!r}: give a size such as 500KB or 1MB")
    return int(float(match[1]) * _UNITS[(match[2] or "B").upper()])


def _files_under(top: Path) -> list[Path]:
    """Every regular file under ``top`` (links left out), sorted; a loop, not a recursion.

    ``Path.rglob`` recurses once per folder level, so a workspace an agent nested 1,500 folders
    deep (one ``mkdir -p``) ended the export in ``RecursionError``.
    """
    found: list[Path] = []
    folders = [top]
    while folders:
        folder = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue  # vanished or unreadable: what can be read is still archived
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                folders.append(Path(entry.path))
            elif entry.is_file(follow_symlinks=False):
                found.append(Path(entry.path))
    return sorted(found)


def _tree_size(path: Path) -> int:
    return sum(p.lstat().st_size for p in _files_under(path))


def _export_files(args: argparse.Namespace) -> tuple[Path, list[Path], list[str]]:
    """The run's root, the files to archive, and what was left out (and why)."""
    root = _run_root(_find(args.log_dir))
    limit = _size_limit(args.workspace_limit)
    files: list[Path] = []
    left_out: list[str] = []
    sizes: dict[Path, int] = {}  # one walk per answer's workspace, not one per file in it
    for turn in _turns(root, args.turns):
        for path in _files_under(turn):
            inside = path.relative_to(turn).parts
            workspace = next((i for i, part in enumerate(inside) if part in WORKSPACE_DIRS), None)
            if workspace is not None:
                if args.no_workspace:
                    continue
                if len(inside) > workspace + 2:  # snapshots/<answer>/...: one answer's workspace
                    answer = turn.joinpath(*inside[:workspace + 2])
                    if answer not in sizes:
                        sizes[answer] = _tree_size(answer)
                    if sizes[answer] > limit:
                        note = f"{answer.relative_to(root)} (over --workspace-limit {args.workspace_limit})"
                        if note not in left_out:
                            left_out.append(note)
                        continue
            files.append(path)
    if not any(p.name == TRACE_FILE for p in files):
        raise LogsError(f"{root}: no {TRACE_FILE} in the chosen turns")
    return root, files, left_out


def export(argv: Sequence[str], out: IO[str]) -> int:
    args = _export_parser().parse_args(list(argv))
    root, files, left_out = _export_files(args)
    archive = Path(args.output) if args.output else Path(f"{root.name}.tar.gz")
    if not args.dry_run and archive.exists() and not args.yes:  # it may be the user's work: replaced only when asked
        raise LogsError(f"{archive} exists; --yes replaces it, or name another with --output")
    if not args.dry_run:
        archive.parent.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archive, "w:gz") as tar:
            for path in files:
                tar.add(path, arcname=str(Path(root.name) / path.relative_to(root)), recursive=False)
    total = sum(p.stat().st_size for p in files)
    if args.json:
        out.write(json.dumps({"archive": None if args.dry_run else str(archive.resolve()), "run": str(root),
                              "files": len(files), "bytes": total, "left_out": left_out,
                              "dry_run": args.dry_run}, indent=2) + "\n")
        return exit_codes.SUCCESS
    if args.verbose or args.dry_run:
        out.writelines(f"  {p.relative_to(root)}\n" for p in files)
    for note in left_out:
        out.write(f"left out: {note}\n")
    what = "would archive" if args.dry_run else f"wrote {archive}:"
    out.write(f"{what} {len(files)} files, {total} bytes, of {root} (nothing is uploaded)\n")
    return exit_codes.SUCCESS


def _pick_attempt(log_dir: Path, turn: int | None, attempt: int | None) -> Path:
    if turn is None and attempt is None:
        return log_dir
    root = _run_root(log_dir)
    turn_dir = root / f"turn_{turn}" if turn is not None else log_dir.parent
    attempt_dir = turn_dir / f"attempt_{attempt}" if attempt is not None else None
    if attempt_dir is None:
        attempts = sorted(turn_dir.glob("attempt_*"), key=lambda p: int(p.name.split("_")[1]))
        attempt_dir = attempts[-1] if attempts else turn_dir / "attempt_1"
    if not (attempt_dir / TRACE_FILE).is_file():
        raise LogsError(f"{attempt_dir}: no such turn/attempt in {root}")
    return attempt_dir


def viewer(argv: Sequence[str], out: IO[str], err: IO[str]) -> int:
    args = _viewer_parser().parse_args(list(argv))
    for flag, given, why in (("--web", args.web or args.port is not None, "the web UI shows the runs it starts "
                              "(massgen --web \"question\"); this command prints the run"),
                             ("--pick", args.pick, "no interactive picker; give the run, or a number from "
                              "`massgen logs list`")):
        if given:
            err.write(f"massgen viewer: error: {flag}: not available in this version: {why}\n")
            return exit_codes.USAGE_ERROR
    if args.replay_speed < 0:
        err.write("massgen viewer: error: --replay-speed must be 0 or more\n")
        return exit_codes.USAGE_ERROR
    log_dir = _pick_attempt(_find(args.log_dir), args.turn, args.attempt)
    summary: dict[str, Any] = summarize_run(log_dir)
    print_summary(summary, out)
    out.write("timeline:\n")
    events = timeline(log_dir)
    start = previous = float(events[0]["ts"]) if events else 0.0
    for event in events:
        if args.replay_speed > 0:  # the pace of the run itself, from the records' own times
            time.sleep(max(0.0, float(event["ts"]) - previous) / args.replay_speed)
            previous = float(event["ts"])
        print_timeline([event], out, start=start)
        out.flush()
    out.write("final answer:\n" + for_terminal((summary["final_answer"] or "(none)").rstrip("\n")) + "\n")
    return exit_codes.SUCCESS


def shares(err: IO[str]) -> int:
    err.write("massgen shares: not available in this version: runs are never uploaded, so there are no shared "
              "sessions to list or delete; `massgen export` writes a run as a .tar.gz archive\n")
    return exit_codes.USAGE_ERROR


NAMES = ("serve", "logs", "export", "viewer", "shares")  # the first word that makes a command a subcommand


def main(command: str, argv: Sequence[str], out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    """``massgen COMMAND ...`` for each of ``NAMES``: each has its own parser."""
    if command == "serve":  # loads the HTTP stack only when serving
        from massgen.cli.serve import main as serve_main

        return serve_main(list(argv))
    out = out or sys.stdout
    err = err or sys.stderr
    with _warnings_said(command, err):
        if command == "logs":
            from massgen.cli.log_tools import main as logs_main

            return logs_main(list(argv))
        try:
            if command == "export":
                return export(argv, out)
            if command == "viewer":
                return viewer(argv, out, err)
            return shares(err)
        except BrokenPipeError:
            raise  # not the command failing: the reader of its output left (the entry point ends quietly)
        except (LogsError, OSError, TraceError) as exc:  # a damaged record is named, as a damaged line is
            err.write(f"massgen {command}: {exc}\n")
            return exit_codes.CONFIG_ERROR


@contextlib.contextmanager
def _warnings_said(command: str, err: IO[str]) -> Iterator[None]:
    """Warnings (a damaged trace's skipped lines) as one line each in the command's voice: Python's own
    format shows a line of our source, which tells a user nothing."""
    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: IO[str] | None = None, line: str | None = None) -> None:
        err.write(f"massgen {command}: warning: {for_terminal(str(message))}\n")

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield
