"""Text for the read-only commands, computed from the live projection or the trace file.

Nothing here talks to the team: these views read what the trace already recorded,
so ``/votes`` in the middle of a run shows exactly what ``vote.json`` will hold.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

from massgen import LogProjection, RunResult, TeamConfig

_EVENT_SKIP = {"seq", "ts", "type", "from", "to", "view_labels"}


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.rstrip("\n").splitlines()) or prefix


def answers_text(projection: LogProjection) -> str:
    answers = list(projection.answers)
    if not answers:
        return "no answers yet"
    blocks = [f"{a['label']} ({a['agent']}, round {a['round']}):\n{_indent(str(a['content']))}" for a in answers]
    return "\n".join(blocks)


def votes_text(projection: LogProjection) -> str:
    votes = list(projection.votes)
    labels = {a: v.label for a, v in projection.agents.items()}
    valid = [v for v in votes if v["valid"]]
    lines = [f"{labels.get(v['voter'], v['voter'])} ({v['voter']}) -> {v['target_label']}: {v['reason']}"
             for v in valid]
    if not lines:
        lines.append("no votes in the current round")
    tally = projection.tally()
    if tally:
        lines.append("tally: " + ", ".join(f"{labels.get(a, a)} ({a}) {n}" for a, n in tally.items()))
    stale = len(votes) - len(valid)
    if stale:
        lines.append(f"({stale} earlier vote{'s' if stale > 1 else ''} withdrawn by newer answers)")
    return "\n".join(lines)


def events_text(projection: LogProjection, last: int | None = None, width: int | None = None) -> str:
    """The coordination events, one per line, or wrapped at words to ``width`` under their type."""
    events = list(projection.events)
    if not events:
        return "no events yet"
    start = float(events[0]["ts"])
    shown = events[-last:] if last else events
    lines = []
    for event in shown:
        detail = " ".join(f"{k}={_short(v)}" for k, v in event.items() if k not in _EVENT_SKIP)
        route = f"{event['from']} -> {event['to']}" if event["to"] else event["from"]
        head = f"+{float(event['ts']) - start:7.2f}s #{event['seq']:<5} {event['type']:<18} "
        lines.append(_wrapped(head, f"{route} {detail}", width))
    return "\n".join(lines)


def _wrapped(head: str, body: str, width: int | None) -> str:
    """``head + body``, wrapped at words to ``width`` with the body's lines under its first word.

    A terminal wraps a long line wherever the column ends, mid-word; this breaks it where a person would.
    """
    if width is None or len(head) + len(body) <= width:
        return head + body
    indent = " " * (len(head) if width - len(head) >= 30 else 4)
    return textwrap.fill(body, width, initial_indent=head, subsequent_indent=indent,
                         break_on_hyphens=False)


def _short(value: Any, limit: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def trace_text(records: list[dict[str, Any]], count: int, width: int | None = None) -> str:
    if not records:
        return "the trace is empty"
    lines = []
    for r in records[-count:]:
        route = f"{r['sender']} -> {r['to']}" if r["to"] else r["sender"]
        head = f"#{r['seq']:<5} {r['kind']:<11} {r['type']:<18} "
        lines.append(_wrapped(head, f"{route} {_short(r['payload'], 140)}", width))
    return "\n".join(lines)


def config_text(config: TeamConfig, source: str, timeout: float | None) -> str:
    t = config.timeout_settings
    lines = [f"config: {source}"]
    for i, agent in enumerate(config.agents, 1):
        backend = agent.backend
        model = f" {backend.model}" if backend.model else ""
        lines.append(f"  agent{i:<3} {agent.id:<16} {backend.type}{model}")
    run_limit = timeout if timeout is not None else t.orchestrator_timeout_seconds
    lines.append(f"  run deadline {run_limit:g} s, turn {t.turn_timeout_seconds:g} s, "
                 f"idle stream {t.idle_stream_timeout_seconds:g} s")
    lines.append(f"  final answer: {config.orchestrator.final_answer_strategy}")
    return "\n".join(lines)


def context_text(history: list[tuple[str, str]]) -> str:
    if not history:
        return "no context: the next question starts a new conversation"
    lines = [f"the next turn sees {len(history)} earlier turn{'s' if len(history) > 1 else ''}:"]
    for i, (question, answer) in enumerate(history, 1):
        lines.append(f"  {i}. Q: {_short(question, 100)}")
        lines.append(f"     A: {_short(answer, 100)}")
    return "\n".join(lines)


def result_text(result: RunResult) -> str:
    """How a finished turn is shown: the answer, then one line on where it came from."""
    usage = result.usage
    tokens = int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))
    facts = f"{result.elapsed_s:.1f}s · {usage.get('model_calls', 0)} calls · {tokens} tokens · logs {result.log_dir}"
    if result.final_answer is None:
        return f"no answer ({result.status}): {result.reason}\n{facts}"
    if result.partial:
        head = f"── best answer so far ({result.winner_label}); the run ended early ({result.status}): {result.reason}"
    else:
        head = f"── final answer ({result.winner_label}, by {result.winner})"
    return f"{head}\n{result.final_answer.rstrip()}\n── {facts}"
