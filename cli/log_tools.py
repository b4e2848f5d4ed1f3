"""``massgen logs list|summary|show|tools|analyze|open [RUN] [--json]``: past runs, read from their traces.

RUN is a log directory (an ``attempt_N`` folder, or a ``log_*`` folder for its latest
attempt), a number from ``massgen logs list`` (1 = the newest run), or a run id; no RUN
means the newest run. Everything shown is computed from ``trace.jsonl``. ``--log-dir`` is the base
the runs are looked up in; a run's own directory works there too (upstream MassGen's ``--log-dir DIR``
names one run: its newest attempt is the one shown).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from massgen import TRACE_FILE, MassGenError, TraceError, find_runs
from massgen import project_run as project
from massgen import summarize_run as summarize
from massgen.cli import exit_codes
from massgen.cli import log_analysis as analysis
from massgen.cli.text import for_terminal
from massgen.cli.usage import UsageParser, positive_int


class LogsError(MassGenError):
    """A run that cannot be found or read; the message is for the user."""


def build_parser() -> argparse.ArgumentParser:
    common = UsageParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print JSON instead of text")
    common.add_argument("--log-dir", metavar="DIR",
                        help="base of the run logs (default $MASSGEN_LOG_BASE_DIR or .massgen/massgen_logs)")
    parser = UsageParser(prog="massgen logs", description="Look at past runs (computed from each run's trace).",
                         allow_abbrev=False)
    commands = parser.add_subparsers(dest="command", required=True,
                                     metavar="{list,summary,show,tools,analyze,open}")
    listing = commands.add_parser("list", help="the latest runs, newest first", parents=[common])
    listing.add_argument("--limit", type=positive_int, default=20, metavar="N", help="show at most N runs (default 20)")
    listing.add_argument("--analyzed", action="store_true", help="only runs with an ANALYSIS_REPORT.md")
    listing.add_argument("--unanalyzed", action="store_true", help="only runs without an ANALYSIS_REPORT.md")
    subs = {}
    for name, what in (("summary", "agents, answers, votes, winner, calls, tokens, cost, time, faults"),
                       ("show", "the summary, the timeline and the final answer"),
                       ("tools", "every tool the agents called: calls, failures, time"),
                       ("analyze", "an analysis prompt for the run (--mode prompt), or a team's report on it "
                                   "(--mode self, written to ANALYSIS_REPORT.md)"),
                       ("open", "open the log directory in the file manager (else print its path)")):
        subs[name] = commands.add_parser(name, help=what, parents=[common])
        subs[name].add_argument("run", nargs="?",
                                help="a log directory, a number from `massgen logs list`, or a run id")
    subs["tools"].add_argument("--sort", choices=("time", "calls"), default="time", help="order (default time)")
    analysis.add_arguments(subs["analyze"])
    subs["show"].add_argument("--tui", action="store_true",
                              help="draw the run's screens in the full-screen view, from its trace (needs a terminal)")
    return parser


def _base(args: argparse.Namespace) -> Path:
    from massgen import default_log_base

    return Path(args.log_dir) if args.log_dir else default_log_base()


def _attempt_dir(path: Path) -> Path:
    """A log directory itself, or the newest attempt inside a session or turn folder."""
    if (path / TRACE_FILE).is_file():
        return path
    inside = find_runs(path)
    if not inside:
        raise LogsError(f"{path}: no run logs here (no {TRACE_FILE})")
    return inside[-1]


def select(ref: str | None, base: Path) -> Path:
    path = Path(ref).expanduser() if ref else None
    if path is not None and path.exists():
        return _attempt_dir(path)
    runs = find_runs(base)
    if not runs:
        raise LogsError(f"no runs logged in {base}")
    if ref is None:
        return runs[-1]
    if ref.isdigit():
        index = int(ref)
        if not 1 <= index <= len(runs):
            raise LogsError(f"run {index}: there are {len(runs)} runs in {base} (1 is the newest)")
        return runs[-index]
    for log_dir in reversed(runs):
        started = _first_record(log_dir)
        if started.get("run_id") == ref:
            return log_dir
    raise LogsError(f"no run {ref!r}: not a log directory, a number from `massgen logs list`, or a run id in {base}")


def _first_record(log_dir: Path) -> dict[str, Any]:
    try:
        with open(log_dir / TRACE_FILE, encoding="utf-8") as handle:
            record: dict[str, Any] = json.loads(handle.readline())
            return record
    except (OSError, ValueError):
        return {}


def _when(ts: float | None) -> str:
    return _dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S") if ts else "?"


def _short(text: Any, width: int = 60) -> str:
    flat = " ".join(("" if text is None else str(text)).split())
    return flat if len(flat) <= width else flat[:width - 3] + "..."


def list_runs(base: Path, limit: int, analyzed: bool | None = None) -> list[dict[str, Any]]:
    """The newest ``limit`` runs; ``analyzed``: only runs with (True) or without (False) an analysis report."""
    runs = find_runs(base)
    rows: list[dict[str, Any]] = []
    for index, log_dir in enumerate(reversed(runs), 1):
        if len(rows) >= limit:
            break
        if analyzed is not None and analysis.has_report(log_dir) != analyzed:
            continue
        try:
            summary = summarize(log_dir)
        except TraceError as exc:  # a trace this massgen cannot read (a newer format): listed with the reason
            summary = {"run_id": None, "status": f"unreadable: {exc}", "winner": None, "elapsed_s": 0.0,
                       "question": None, "log_dir": str(log_dir)}
        first = _first_record(log_dir)
        rows.append({"index": index, "started_at": _when(first.get("ts")), **{
            k: summary[k] for k in ("run_id", "status", "winner", "elapsed_s", "question", "log_dir")}})
    return rows


def print_summary(s: dict[str, Any], out: IO[str]) -> None:
    faults = ", ".join(f"{k} {v}" for k, v in s["faults"].items() if v) or "none"
    winner = f"{s['winner']} ({s['winner_label']})" if s["winner"] else "none"
    out.write(for_terminal(f"run {s['run_id']}  {s['log_dir']}\n"
              f"question: {_short(s['question'], 100)}\n"
              f"status:   {s['status']}" + (f" ({s['reason']})" if s["reason"] else "") + "\n"
              f"winner:   {winner}\n"
              f"answers:  {s['answers']}   votes: {s['votes']} ({s['valid_votes']} counted)   "
              f"tally: {s['vote_tally'] or '-'}\n"
              f"calls:    {s['model_calls']}   tokens: {s['tokens']['input']} in / {s['tokens']['output']} out   "
              f"cost: ${s['cost_usd']:.4f}   time: {s['elapsed_s']:.2f} s\n"
              f"faults:   {faults}\n"
              "agents:\n"))
    for agent_id, a in s["agents"].items():
        out.write(for_terminal(f"  {a['label']:<8} {agent_id:<24} {a['status']:<10} answers {a['answers']}  calls "
                  f"{a['model_calls']}  tokens {a['input_tokens']}/{a['output_tokens']}  restarts {a['restarts']}\n"))


def timeline(log_dir: Path) -> list[dict[str, Any]]:
    return list(project(log_dir).events)


def print_timeline(events: list[dict[str, Any]], out: IO[str], start: float | None = None) -> None:
    """One line per event, its time counted from ``start`` (default: the first event's)."""
    if start is None:
        start = float(events[0]["ts"]) if events else 0.0
    skip = {"seq", "ts", "type", "from", "to", "run_id", "msg_id", "causation_id"}
    for event in events:
        detail = ", ".join(f"{k}={_short(v, 40)}" for k, v in event.items() if k not in skip)
        out.write(for_terminal(f"  +{float(event['ts']) - start:7.3f}s  {event['type']:<18} {event['from']} -> "
                               f"{event['to']}{'  ' + detail if detail else ''}") + "\n")


def _open(log_dir: Path) -> bool:
    opener = "open" if sys.platform == "darwin" else "xdg-open"
    if shutil.which(opener) is None or (sys.platform != "darwin" and not os.environ.get("DISPLAY")
                                        and not os.environ.get("WAYLAND_DISPLAY")):
        return False
    subprocess.Popen([opener, str(log_dir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True)
    return True


def _show_tui(log_dir: Path, err: IO[str]) -> int:
    """``logs show RUN --tui``: the same screen the live run drew, folded from its trace."""
    from massgen import read_trace

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        err.write("massgen logs: show --tui needs a terminal on stdin and stdout (without it: logs show RUN)\n")
        return exit_codes.CONFIG_ERROR
    from massgen.cli.tui import replay_tui

    return replay_tui(read_trace(log_dir), str(log_dir))


def main(argv: Sequence[str], out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    """``massgen logs``. ``--json`` is ASCII (``\\uXXXX``), so it stays valid JSON in any locale; a reader
    that stops early (``| head -1``) and a non-UTF-8 locale are the entry point's (``fast_exit.exit_after``)."""
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(list(argv))
    base = _base(args)
    try:
        if args.command == "list":
            if args.analyzed and args.unanalyzed:
                err.write("massgen logs list: --analyzed and --unanalyzed: give one\n")
                return exit_codes.USAGE_ERROR
            rows = list_runs(base, args.limit, analyzed=True if args.analyzed else False if args.unanalyzed else None)
            if args.json:
                out.write(json.dumps(rows, indent=2, ensure_ascii=True) + "\n")
            elif not rows:
                which = "analyzed " if args.analyzed else "unanalyzed " if args.unanalyzed else ""
                out.write(f"no {which}runs logged in {base}\n")
            for row in [] if args.json else rows:
                winner = row["winner"] or "-"
                out.write(for_terminal(f"{row['index']:>3}  {row['started_at']}  {row['status']:<11} {winner:<16} "
                                       f"{row['elapsed_s']:7.2f}s  {_short(row['question'], 50)}") + "\n")
            return exit_codes.SUCCESS
        log_dir = select(args.run, base)
        if args.command == "summary":
            summary = summarize(log_dir)
            if args.json:
                out.write(json.dumps(summary, indent=2, ensure_ascii=True) + "\n")
            else:
                print_summary(summary, out)
        elif args.command == "show" and args.tui:
            return _show_tui(log_dir, err)
        elif args.command == "tools":
            rows = analysis.tool_rows(project(log_dir), args.sort)
            if args.json:
                out.write(json.dumps(rows, indent=2, ensure_ascii=True) + "\n")
            else:
                analysis.print_tools(rows, log_dir, out)
        elif args.command == "analyze":
            return analysis.analyze(log_dir, args, out, err)
        elif args.command == "show":
            summary, events = summarize(log_dir), timeline(log_dir)
            if args.json:
                out.write(json.dumps({"summary": summary, "events": events}, indent=2, ensure_ascii=True) + "\n")
            else:
                print_summary(summary, out)
                out.write("timeline:\n")
                print_timeline(events, out)
                out.write("final answer:\n" + for_terminal((summary["final_answer"] or "(none)").rstrip("\n")) + "\n")
        else:
            opened = _open(log_dir)
            if args.json:
                out.write(json.dumps({"log_dir": str(log_dir), "opened": opened}) + "\n")
            else:
                out.write(f"{log_dir}\n")
    except BrokenPipeError:
        raise  # not the run's logs failing: the reader of stdout left (main ends quietly)
    except (LogsError, OSError, TraceError) as exc:  # a damaged record is named, as a damaged line is
        err.write(f"massgen logs: {exc}\n")
        return exit_codes.CONFIG_ERROR
    return exit_codes.SUCCESS
