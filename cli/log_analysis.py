"""``massgen logs tools`` and ``massgen logs analyze``, as upstream MassGen 0.1.97 names them, over our traces.

- ``tools``: every tool the agents called, paired request to result in the trace: calls,
  successes, failures, time (``--sort time|calls``, ``--json``);
- ``analyze --mode prompt`` (the default): a prompt for a coding agent, with the run's numbers
  and the files to read; ``analyze --mode self``: a team (``--config``, else the usual config)
  reads the log directory and writes ``ANALYSIS_REPORT.md`` into it (``--force`` replaces one).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import IO, Any

from massgen import ConfigError, LogProjection, discover_config, summarize_run, tool_stats, with_context_paths
from massgen.cli import exit_codes
from massgen.cli.text import for_terminal

REPORT = "ANALYSIS_REPORT.md"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mode", choices=("prompt", "self"), default="prompt",
                        help="prompt: print an analysis prompt (default); self: a team writes ANALYSIS_REPORT.md")
    parser.add_argument("--config", metavar="FILE", help="with --mode self: the team that analyses (a YAML file "
                        "or @examples/NAME; default: the usual config)")
    parser.add_argument("--ui", choices=("automation", "rich_terminal", "webui"), default="rich_terminal",
                        help="with --mode self: automation lines, or the progress display (default)")
    parser.add_argument("--turn", "-t", type=int, metavar="N", help="the turn to analyse (default: the latest)")
    parser.add_argument("--force", "-f", action="store_true", help="replace an existing ANALYSIS_REPORT.md")


def has_report(log_dir: Path) -> bool:
    return (log_dir / REPORT).is_file() or (log_dir.parent.parent / REPORT).is_file()


def tool_rows(projection: LogProjection, sort: str) -> list[dict[str, Any]]:
    """One row per tool: name, calls, successes, failures, total and mean time in ms."""
    rows = [{"tool": name, **stats} for name, stats in tool_stats(projection)["by_tool"].items()]
    key = "total_execution_time_ms" if sort == "time" else "call_count"
    return sorted(rows, key=lambda row: (-float(row[key]), row["tool"]))


def print_tools(rows: list[dict[str, Any]], log_dir: Path, out: IO[str]) -> None:
    if not rows:
        out.write(f"no tool calls in {log_dir}\n")
        return
    out.write(f"{'tool':<40} {'calls':>5} {'ok':>4} {'failed':>6} {'total ms':>10} {'mean ms':>9}\n")
    for row in rows:
        out.write(for_terminal(f"{row['tool']:<40} {row['call_count']:>5} {row['success_count']:>4} "
                               f"{row['failure_count']:>6} {row['total_execution_time_ms']:>10.1f} "
                               f"{row['avg_execution_time_ms']:>9.1f}") + "\n")


def _turn_dir(log_dir: Path, turn: int | None) -> Path:
    """The newest attempt of turn ``turn`` of the run ``log_dir`` belongs to (itself when no turn is asked)."""
    if turn is None:
        return log_dir
    root = log_dir.parent.parent if log_dir.parent.name.startswith("turn_") else log_dir
    attempts = sorted((root / f"turn_{turn}").glob("attempt_*"), key=lambda p: int(p.name.split("_")[1]))
    if not attempts:
        raise ConfigError(f"--turn {turn}: {root} has no turn_{turn}")
    return attempts[-1]


def analysis_prompt(log_dir: Path) -> str:
    summary = summarize_run(log_dir)
    faults = ", ".join(f"{k} {v}" for k, v in summary["faults"].items() if v) or "none"
    files = "\n".join(f"- {log_dir / name}: {what}" for name, what in (
        ("trace.jsonl", "every message of the run, one JSON record a line (the primary log)"),
        ("status.json", "the final status: agents, answers, votes, tools"),
        ("coordination_events.json", "the timeline"),
        ("vote.json", "every vote and its reason"),
        ("agent_outputs", "every answer of each agent"),
        ("final", "the final answer"),
    ) if (log_dir / name).exists())
    return (
        f"Analyse this MassGen run and write your findings to {log_dir / REPORT}.\n\n"
        f"Question: {summary['question']}\n"
        f"Status: {summary['status']}" + (f" ({summary['reason']})" if summary["reason"] else "") + "\n"
        f"Winner: {summary['winner'] or 'none'}; answers {summary['answers']}, votes {summary['votes']} "
        f"({summary['valid_votes']} counted), tally {json.dumps(summary['vote_tally'])}\n"
        f"Model calls {summary['model_calls']}, tokens {summary['tokens']['input']} in / "
        f"{summary['tokens']['output']} out, {summary['elapsed_s']:.1f} s; faults: {faults}\n\n"
        f"Files:\n{files}\n\n"
        "Report: whether the final answer is right and why the team chose it; where agents disagreed and "
        "whose reasoning held; corrections, failed turns, restarts and tool errors (from trace.jsonl), each "
        "with its record's seq; where the time and tokens went; and what would make the next run better.\n"
    )


def _self_analysis(log_dir: Path, args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    from massgen.cli.oneshot import run_question
    from massgen.cli.run_options import RunOptions

    report = log_dir / REPORT
    if report.exists() and not args.force:
        err.write(f"massgen logs analyze: {report} exists; --force replaces it\n")
        return exit_codes.CONFIG_ERROR
    if args.ui == "webui":
        err.write("massgen logs analyze: --ui webui: not available in this version; use --ui rich_terminal "
                  "or --ui automation\n")
        return exit_codes.USAGE_ERROR
    question = f"{analysis_prompt(log_dir)}\nThe log directory, to read: @{log_dir.resolve()}\n"
    config, _ = discover_config(args.config)
    config = with_context_paths(config, question)
    return run_question(config, question, automation=args.ui == "automation", out=out, err=err,
                        options=RunOptions(output_file=report))


def analyze(log_dir: Path, args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    try:
        target = _turn_dir(log_dir, args.turn)
        if args.mode == "prompt":
            out.write(for_terminal(analysis_prompt(target)))  # the question and reason are text from outside
            return exit_codes.SUCCESS
        return _self_analysis(target, args, out, err)
    except ConfigError as exc:
        err.write(f"massgen logs analyze: {exc}\n")
        return exit_codes.CONFIG_ERROR
