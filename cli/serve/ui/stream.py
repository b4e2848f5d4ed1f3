"""One SSE stream per tab over a run's shared log: resumable, coalesced, and ended explicitly.

- ``id:`` is the ``seq`` of the last trace record in the event, so a reconnecting client
  that sends it back as ``Last-Event-ID`` (the page does; so does an ``EventSource``) resumes
  after exactly that record: no record is sent twice and none is skipped. How soon to
  reconnect is the client's choice (the page backs off while the server does not answer).
- Records go out in batches (``event: records``) at most every ``coalesce_s`` (75 ms):
  text deltas of one agent's turn in one batch are merged into one entry that keeps
  ``parts`` (``[seq, length]`` of each delta), so the page can still cut the text at
  any ``seq`` when it replays.
- A ``: ping`` comment every ``ping_s`` keeps proxies from closing an idle stream.
- ``event: end`` (the last ``seq`` and how the run ended) is the last event, sent once
  the run is over and the tab has every record; the page then stops reading.

Each tab owns its cursor and awaits the log itself, so a slow tab only lags itself.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from massgen import messages, sender_name
from massgen.cli.serve.ui.runlog import RecordLog

_MAX_BATCH = 500


@dataclass(frozen=True)
class StreamSettings:
    coalesce_s: float = 0.075
    ping_s: float = 15.0
    # Fault injection for tests: end the response after this many events (the page must resume).
    drop_every: int = 0


def _event(name: str, data: Any, event_id: int | None = None) -> bytes:
    head = f"id: {event_id}\n" if event_id is not None else ""
    # Records are escaped where their text entered; backslashreplace keeps a stray surrogate a JSON escape.
    return f"{head}event: {name}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n".encode(
        "utf-8", "backslashreplace")


def _agent_of(record: dict[str, Any]) -> str:
    return sender_name(str(record.get("sender", "")))


def coalesce(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Merge text deltas of one (agent, turn, kind) in a batch, unless that agent did something in between."""
    out: list[dict[str, Any]] = []
    open_chunk: dict[tuple[str, Any, Any], dict[str, Any]] = {}
    open_of: dict[str, list[tuple[str, Any, Any]]] = {}  # each agent's open keys: closed without a pass over all
    for record in records:
        agent = _agent_of(record)
        if messages.message_class(record) is messages.AgentChunk and record["kind"] == "tell":
            payload = record["payload"]
            key = (str(record["sender"]), payload.get("turn_id"), payload.get("kind"))
            merged = open_chunk.get(key)
            text = str(payload.get("text", ""))
            if merged is not None:
                merged["payload"]["text"] += text
                merged["parts"].append([record["seq"], len(text)])
                merged["last_seq"] = record["seq"]
                continue
            entry = {**record, "payload": {**payload}, "parts": [[record["seq"], len(text)]],
                     "last_seq": record["seq"]}
            open_chunk[key] = entry
            open_of.setdefault(agent, []).append(key)
            out.append(entry)
            continue
        for key in open_of.pop(agent, ()):
            del open_chunk[key]  # this agent did something else: later text starts a new entry
        out.append(record)
    return out


def end_status(log: RecordLog) -> dict[str, Any]:
    """How the run ended, from its ``RunFinished`` record ("incomplete" without one)."""
    finished = next((r for r in reversed(log.records) if messages.message_class(r) is messages.RunFinished), None)
    if finished is None:
        return {"status": "incomplete", "partial": True}
    payload = finished["payload"]  # a trace read from disk may hold anything: keep to what is there
    return {"status": str(payload.get("status", "incomplete")), "partial": payload.get("partial", True)}


async def events(log: RecordLog, after_seq: int, settings: StreamSettings) -> AsyncIterator[bytes]:
    """The stream for one tab, starting after the record ``after_seq``."""
    cursor = log.index_after(after_seq)
    sent = 0
    loop = asyncio.get_running_loop()
    while True:
        if cursor < len(log.records):
            batch = log.records[cursor:cursor + _MAX_BATCH]
            cursor += len(batch)
            yield _event("records", {"records": coalesce(batch)}, int(batch[-1]["seq"]))
            sent += 1
            if settings.drop_every and sent >= settings.drop_every:
                return  # the injected fault: the connection ends mid-run
            if cursor >= len(log.records) and not log.finished:
                await asyncio.sleep(settings.coalesce_s)  # let deltas gather into one event
            continue
        if log.finished:
            last = int(log.records[-1]["seq"]) if log.records else 0
            yield _event("end", {**end_status(log), "last_seq": last}, last)
            return
        started = loop.time()
        await log.wait(settings.ping_s)
        if cursor >= len(log.records) and not log.finished and loop.time() - started >= settings.ping_s:
            yield b": ping\n\n"
