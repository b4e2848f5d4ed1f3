"""An actor's own asyncio loop, on a thread beside the actor's, and how it ends.

Agents and MCP connections do their async work (model streams, MCP sessions) on such a
loop. Ending one must leave nothing pending (no task destroyed while pending, no coroutine
never awaited) even when the machine is too loaded for the loop's thread to answer in time:
so the thread finishes its own loop once it stops (``run_loop``), and a closer that cannot
wait for it leaves the rest to that thread, not to the garbage collector.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

from massgen.actors.runtime.dispatcher import blocking

CLOSE_TIMEOUT_S = 2.0  # how long a closer waits for the loop's thread, at each step

# Each loop's own tasks. ``asyncio.all_tasks(loop)`` walks every task of the process (every agent's)
# to pick one loop's: closing a thousand agents' loops walked all of them a thousand times.
_TASKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, weakref.WeakSet[asyncio.Task[Any]]] = (
    weakref.WeakKeyDictionary())


def _track_tasks(loop: asyncio.AbstractEventLoop) -> None:
    """Every task ``loop`` creates from now on is kept in its own set (a task factory; the loop is new)."""
    tasks: weakref.WeakSet[asyncio.Task[Any]] = weakref.WeakSet()

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, /, **options: Any) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.Task(coro, loop=loop, **options)
        tasks.add(task)
        return task

    if loop.get_task_factory() is None:
        loop.set_task_factory(factory)
        _TASKS[loop] = tasks


def _tasks_of(loop: asyncio.AbstractEventLoop) -> set[asyncio.Task[Any]]:
    """``loop``'s tasks not done: from its own set when ``run_loop`` tracks them, else ``all_tasks``."""
    tracked = _TASKS.get(loop)
    if tracked is None:
        return asyncio.all_tasks(loop)
    return {task for task in list(tracked) if not task.done()}


def run_loop(loop: asyncio.AbstractEventLoop) -> None:
    """The loop thread's target: run until stopped, then finish what is left and close."""
    _track_tasks(loop)
    try:
        loop.run_forever()
    finally:
        if not loop.is_closed():
            _finish_stopped(loop)
            loop.close()


def close_loop(loop: asyncio.AbstractEventLoop, thread: threading.Thread | None,
               first: Callable[[], Awaitable[object]] | None = None) -> None:
    """Stop and close an incarnation's loop: its tasks, async generators, executor, selector and
    self-pipe go with it. A loop whose thread is stuck in a blocking call is abandoned instead.
    ``first`` (an agent's backend closing its clients) is called and awaited on the running loop
    before the rest is cancelled, in the same hand-off (a thousand agents stopping paid one more
    round trip each); a loop that is no longer running never calls it.

    On a loaded machine the drain may not finish in time, or not even start before the loop
    stops; then the loop, stopped, is run once more on this thread to finish what is left
    (the drain's own task and callbacks included), so no task is destroyed while pending and
    no coroutine is left never awaited."""
    if loop.is_running():
        drained = asyncio.run_coroutine_threadsafe(_cancel_the_rest(loop, executor=True, first=first), loop)
        try:
            with blocking():  # a closer on a dispatcher's worker: others run meanwhile
                drained.result(2 * CLOSE_TIMEOUT_S)  # ``first``'s bound, then the drain's
        except Exception:
            drained.cancel()  # finished below, once the loop has stopped
        try:
            loop.call_soon_threadsafe(loop.stop)
        except RuntimeError:  # already closed
            return
    if thread is not None and thread is not threading.current_thread():
        with blocking():
            thread.join(CLOSE_TIMEOUT_S)
        if thread.is_alive():
            return  # busy or stuck: a thread running ``run_loop`` finishes and closes it when it can
    if not loop.is_running() and not loop.is_closed():
        _finish_stopped(loop)
        loop.close()


async def _cancel_the_rest(loop: asyncio.AbstractEventLoop, *, executor: bool,
                           first: Callable[[], Awaitable[object]] | None = None) -> None:
    """Await ``first`` (bounded; its failure is its own), then cancel every other task of ``loop``,
    await them (bounded), and close its async generators."""
    if first is not None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(first(), CLOSE_TIMEOUT_S)
    tasks = [t for t in _tasks_of(loop) if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=CLOSE_TIMEOUT_S)
    await loop.shutdown_asyncgens()
    if executor:
        await loop.shutdown_default_executor()


def _finish_stopped(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel and await, on this thread, whatever a stopped loop still holds (bounded).

    A drain queued before the stop may start only now, and cancel this very pass; so passes
    are run until no task is left (three at most: the drain cancels once, then is done)."""
    async def finish() -> None:
        await asyncio.sleep(0)  # callbacks queued before the stop (a drain not yet begun) run first
        await _cancel_the_rest(loop, executor=False)

    for _ in range(3):
        with contextlib.suppress(Exception, asyncio.CancelledError):
            loop.run_until_complete(finish())
        if not _tasks_of(loop):
            return
