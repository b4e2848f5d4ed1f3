"""The Python API: ``await massgen.run(...)``, ``massgen.run_sync(...)``, ``massgen.stream(...)``.

A run is a ``Team`` of actors on their own threads. Waiting for it blocks, so the
async functions wait on a worker thread (``asyncio.to_thread``) and never block the
caller's event loop on a Pykka future. Every call builds its own team: its own
actors, run id and log directory, so concurrent runs in one process do not meet.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncGenerator
from typing import Any

from massgen.actors.team import Team
from massgen.events import Event, FinalAnswerEvent, events_from_record
from massgen.launch import ConfigLike, History, new_team
from massgen.launch import resolve_config as resolve_config  # re-exported: massgen.api.resolve_config
from massgen.logs import LogProjection
from massgen.result import RunResult
from massgen.sessions import Session, open_or_create


def _session(session_id: str | None, config: ConfigLike, history: History) -> tuple[Session | None, ConfigLike,
                                                                                 History]:
    """The stored session ``session_id`` (made if new): its turns come before ``history``, and a session
    started from a config file or ``@examples/NAME`` keeps using it when ``config`` is not given."""
    if session_id is None:
        return None, config, history
    ref = os.fspath(config) if isinstance(config, str | os.PathLike) else None
    session = open_or_create(session_id, config={"config": ref} if ref else {})
    if config is None and session.config.get("config"):
        config = str(session.config["config"])
    return session, config, (*session.history(), *history)


async def _finish(team: Team) -> RunResult:
    """Wait for a started team off the event loop; if our caller is cancelled, cancel the run first."""
    waiting = asyncio.ensure_future(asyncio.to_thread(team.wait))
    try:
        return await asyncio.shield(waiting)
    except asyncio.CancelledError:
        team.cancel("the caller cancelled the run")
        with contextlib.suppress(asyncio.CancelledError):
            await waiting  # the logs are complete before the cancellation goes on
        raise


async def run(
    query: str,
    config: ConfigLike = None,
    *,
    history: History = (),
    log_dir: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
    session_id: str | None = None,
) -> RunResult:
    """Run the team on ``query`` and return the result (final answer, winner, votes, answers, logs, usage).

    ``config``: a YAML path, ``"@examples/NAME"``, a dict shaped like the YAML, or a
    ``TeamConfig``. ``history``: earlier (question, answer) pairs the team should see.
    ``timeout``: the whole-run deadline in seconds. ``session_id``: a stored session
    (``.massgen/sessions/``, shared with ``massgen --session-id``) whose turns are the
    history; this turn is added to it. The result also reads like upstream MassGen's
    dict: ``result["final_answer"]``, ``result.as_dict()``.
    """
    session, config, history = _session(session_id, config, history)
    team = new_team(config, query, history=history, log_dir=log_dir, timeout=timeout)
    team.start()  # spawns the actors and returns; nothing here waits on them
    result = await _finish(team)
    if session is not None:
        session.add_turn(query, result)
    return result


def run_sync(
    query: str,
    config: ConfigLike = None,
    *,
    history: History = (),
    log_dir: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
    session_id: str | None = None,
) -> RunResult:
    """``run`` for plain scripts: blocks until the answer is in. Ctrl-C cancels the run, waits, re-raises."""
    session, config, history = _session(session_id, config, history)
    team = new_team(config, query, history=history, log_dir=log_dir, timeout=timeout).start()
    try:
        result: RunResult = team.wait()
    except KeyboardInterrupt:
        team.cancel("interrupted by Ctrl-C")
        team.wait()
        raise
    if session is not None:
        session.add_turn(query, result)
    return result


async def stream(
    query: str,
    config: ConfigLike = None,
    *,
    history: History = (),
    log_dir: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
    chunks: bool = True,
    session_id: str | None = None,
) -> AsyncGenerator[Event, None]:
    """Run the team and yield typed events as they happen; the last one is ``FinalAnswerEvent``.

    Events come from a trace subscriber on the trace writer's thread and cross into
    the caller's loop through ``call_soon_threadsafe``. Closing the iterator early
    (``aclose()``, or leaving an ``async with contextlib.aclosing(...)`` block)
    cancels the run and waits until its logs are complete. ``chunks=False`` leaves
    out the streamed text of the agents. ``session_id``: as for ``run``.
    """
    session, config, history = _session(session_id, config, history)
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Event | None] = asyncio.Queue()

    def on_record(record: dict[str, Any], projection: LogProjection) -> None:
        for event in events_from_record(record, projection, chunks=chunks):
            loop.call_soon_threadsafe(queue.put_nowait, event)
        if record["type"] == "RunFinished":
            loop.call_soon_threadsafe(queue.put_nowait, None)

    team = new_team(config, query, history=history, log_dir=log_dir, timeout=timeout, subscribers=[on_record])
    team.start()  # spawns the actors and returns; nothing here waits on them
    waiting = asyncio.ensure_future(asyncio.to_thread(team.wait))
    finished = False
    try:
        while True:
            getting = asyncio.ensure_future(queue.get())
            done, _ = await asyncio.wait({getting, waiting}, return_when=asyncio.FIRST_COMPLETED)
            if getting not in done:
                getting.cancel()
                # The team ended; drain what its subscriber sent before the end.
                while not queue.empty() and (event := queue.get_nowait()) is not None:
                    yield event
                break
            event = getting.result()
            if event is None:
                break
            yield event
        result = await asyncio.shield(waiting)
        finished = True
        if session is not None:
            session.add_turn(query, result)
        yield FinalAnswerEvent(result=result)
    finally:
        if not finished and not waiting.done():
            team.cancel("the event stream was closed early")
            with contextlib.suppress(asyncio.CancelledError):
                await waiting
