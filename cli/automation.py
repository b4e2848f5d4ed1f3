"""``massgen --automation``: the lines upstream MassGen 0.1.97 prints for scripts and agents, then ours.

At the start (flushed at once, so a background caller can follow the run)::

    LOG_DIR: <the run's log_<stamp> root, absolute>    as upstream: the folder holding turn_N/
    STATUS: <LOG_DIR>/turn_N/attempt_M/status.json     rewritten while the run goes on
    ATTEMPT_DIR: <LOG_DIR>/turn_N/attempt_M            this version's: trace.jsonl, status.json, final/
    QUESTION: <the question, on one line>
    [Coordination in progress - monitor status.json for real-time updates]

At the end, upstream's lines in upstream's order, then this version's::

    WINNER: <agent id> | none
    ANSWER_FILE: <ATTEMPT_DIR>/final/<winner>/answer.txt | none
    DURATION: 12.3s
    TIMELINE:                              each counted vote, then the tally
      [VOTE] agent_a -> agent_b
             Reason: <its first 50 characters>
      [RESULTS]
        agent_b: 3 votes (winner)
    ANSWER_PREVIEW: <the answer's first 200 characters, on one line>
    COMPLETED: 3 agents, 12.3s total
    ANSWER: <LOG_DIR>/turn_N/final/<winner>/answer.txt   only when there is an answer
    OUTPUT_FILE: <path>                    only with --output-file
    FINAL_DIR: <ATTEMPT_DIR>/final         only when there is an answer
    RUN_STATUS: completed | partial | timeout | budget | interrupted | failed
    WINNER_LABEL: agent2.1 | none          the answer's anonymous label
    REASON: <why the run ended early>      only when RUN_STATUS is not completed
    PRESENTATION_NOT_USED: <why>           only when the answer is the winner's as written, not its
                                           presentation (it changed the agreed result, failed, timed out)

With ``--stream-events`` stdout is the event stream, so these lines go to stderr, as upstream's do.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

from massgen import LogLayout, RunResult
from massgen.cli.text import for_terminal

PREVIEW_CHARS = 200
_REASON_CHARS = 50  # upstream's TIMELINE shows this much of each vote's reason


def _one_line(text: str) -> str:
    """``text`` on one line, safe for a terminal (a model's or a user's text may hold control sequences)."""
    return for_terminal(" ".join(text.split()))


def print_start(log_dir: Path, question: str, out: IO[str]) -> None:
    layout = LogLayout(log_dir.resolve())
    out.write(f"LOG_DIR: {layout.run_root}\nSTATUS: {layout.status}\nATTEMPT_DIR: {layout.log_dir}\n"
              f"QUESTION: {_one_line(question)}\n"
              "[Coordination in progress - monitor status.json for real-time updates]\n")
    out.flush()


def timeline(result: RunResult) -> list[str]:
    """Upstream's TIMELINE block: each counted vote (voter -> agent voted for, the reason's head), then the
    tally, most votes first, the winner marked (and "tie-broken" when the top count was shared)."""
    votes = result.vote_results()
    lines = ["TIMELINE:"]
    for voted_for, voters in votes["voter_details"].items():
        for voter in voters:
            lines.append(f"  [VOTE] {_one_line(str(voter['voter']))} -> {_one_line(voted_for)}")
            reason = _one_line(str(voter["reason"]))
            if reason:
                head = reason[:_REASON_CHARS] + ("..." if len(reason) > _REASON_CHARS else "")
                lines.append(f"         Reason: {head}")
    if votes["vote_counts"]:
        lines.append("  [RESULTS]")
        for agent, count in sorted(votes["vote_counts"].items(), key=lambda item: -item[1]):
            mark = " (winner)" if agent == result.winner else ""
            tie = " (tie-broken)" if votes["is_tie"] and agent == result.winner else ""
            lines.append(f"    {_one_line(agent)}: {count} vote{'s' if count != 1 else ''}{mark}{tie}")
    return lines


def print_end(result: RunResult, agents: int, out: IO[str], output_file: Path | None = None) -> None:
    layout = LogLayout(result.log_dir.resolve())
    has_answer = result.final_answer is not None
    answer_file = layout.final_answer(result.winner) if has_answer else None
    lines = [f"WINNER: {result.winner or 'none'}", f"ANSWER_FILE: {answer_file or 'none'}",
             f"DURATION: {result.elapsed_s:.1f}s", *timeline(result)]
    if result.final_answer is not None:
        preview = _one_line(result.final_answer)
        lines.append(f"ANSWER_PREVIEW: {preview[:PREVIEW_CHARS]}{'...' if len(preview) > PREVIEW_CHARS else ''}")
    lines.append(f"COMPLETED: {agents} agents, {result.elapsed_s:.1f}s total")
    if has_answer:
        lines.append(f"ANSWER: {layout.turn_final_answer(result.winner)}")
        if output_file is not None:
            lines.append(f"OUTPUT_FILE: {output_file.resolve()}")
        lines.append(f"FINAL_DIR: {layout.final_dir}")
    lines += [f"RUN_STATUS: {result.status}", f"WINNER_LABEL: {result.winner_label or 'none'}"]
    if result.status != "completed":
        lines.append(f"REASON: {_one_line(result.reason)}")
    if result.presentation_not_used:
        lines.append(f"PRESENTATION_NOT_USED: {_one_line(result.presentation_not_used)}")
    out.write("\n".join(lines) + "\n")
    out.flush()


def print_abandoned(reason: str, out: IO[str]) -> None:
    """The end lines when the user stopped waiting before the team finished: no result exists, but a
    script still gets every key it parses, with the run's status as ``interrupted``."""
    out.write(f"WINNER: none\nANSWER_FILE: none\nRUN_STATUS: interrupted\nWINNER_LABEL: none\n"
              f"REASON: {_one_line(reason)}\n")
    out.flush()
