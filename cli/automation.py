"""``massgen --automation``: the lines upstream MassGen 0.1.97 prints for scripts and agents, then ours.

At the start (flushed at once, so a background caller can follow the run)::

    LOG_DIR: <the run's log directory, absolute>
    STATUS: <LOG_DIR>/status.json        rewritten while the run goes on
    QUESTION: <the question, on one line>

At the end, upstream's lines, then this version's::

    WINNER: <agent id> | none
    ANSWER_FILE: <LOG_DIR>/final/<winner>/answer.txt | none
    DURATION: 12.3s
    ANSWER_PREVIEW: <the answer's first 200 characters, on one line>
    ANSWER: <the answer file>              only when there is an answer
    OUTPUT_FILE: <path>                    only with --output-file
    COMPLETED: 3 agents, 12.3s total
    RUN_STATUS: completed | partial | timeout | budget | interrupted | failed
    WINNER_LABEL: agent2.1 | none          the answer's anonymous label
    REASON: <why the run ended early>      only when RUN_STATUS is not completed

With ``--stream-events`` stdout is the event stream, so these lines go to stderr, as upstream's do.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

from massgen import LogLayout, RunResult
from massgen.cli.text import for_terminal

PREVIEW_CHARS = 200


def _one_line(text: str) -> str:
    """``text`` on one line, safe for a terminal (a model's or a user's text may hold control sequences)."""
    return for_terminal(" ".join(text.split()))


def print_start(log_dir: Path, question: str, out: IO[str]) -> None:
    absolute = log_dir.resolve()
    out.write(f"LOG_DIR: {absolute}\nSTATUS: {LogLayout(absolute).status}\nQUESTION: {_one_line(question)}\n")
    out.flush()


def print_end(result: RunResult, agents: int, out: IO[str], output_file: Path | None = None) -> None:
    layout = LogLayout(result.log_dir.resolve())
    answer_file = layout.final_answer(result.winner) if result.final_answer is not None else None
    lines = [f"WINNER: {result.winner or 'none'}", f"ANSWER_FILE: {answer_file or 'none'}",
             f"DURATION: {result.elapsed_s:.1f}s"]
    if result.final_answer is not None:
        preview = _one_line(result.final_answer)
        lines.append(f"ANSWER_PREVIEW: {preview[:PREVIEW_CHARS]}{'...' if len(preview) > PREVIEW_CHARS else ''}")
        lines.append(f"ANSWER: {answer_file}")
        if output_file is not None:
            lines.append(f"OUTPUT_FILE: {output_file.resolve()}")
    lines += [f"COMPLETED: {agents} agents, {result.elapsed_s:.1f}s total", f"RUN_STATUS: {result.status}",
              f"WINNER_LABEL: {result.winner_label or 'none'}"]
    if result.status != "completed":
        lines.append(f"REASON: {_one_line(result.reason)}")
    out.write("\n".join(lines) + "\n")
    out.flush()


def print_abandoned(reason: str, out: IO[str]) -> None:
    """The end lines when the user stopped waiting before the team finished: no result exists, but a
    script still gets every key it parses, with the run's status as ``interrupted``."""
    out.write(f"WINNER: none\nANSWER_FILE: none\nRUN_STATUS: interrupted\nWINNER_LABEL: none\n"
              f"REASON: {_one_line(reason)}\n")
    out.flush()
