"""The server's runs: admission (concurrency limit, shutdown), the thread bridge, cancellation.

A team lives on actor threads; the HTTP side lives on one event loop. Each run gets a
daemon thread that starts the team and blocks in ``Team.wait``; it and the trace
writer's subscriber hand everything to the loop with ``call_soon_threadsafe`` and
nothing else crosses over. ``Team.wait`` closes the trace before it returns, so every
progress item is queued before the result: the stream never loses the end of the log.

A run counts against the limit until its team has finished, not until its HTTP request
ends, so a client that disconnects frees its slot only once the cancelled team has
stopped. Threads are daemons: a wedged run cannot keep the process from exiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from massgen import ConfigError, LogProjection, QuestionError, RunResult, TeamConfig, TraceRecord, messages, new_team
from massgen.cli.serve.errors import ApiError
from massgen.cli.serve.models import Conversation
from massgen.cli.text import for_terminal

log = logging.getLogger("massgen.serve")

Describe = Callable[[TraceRecord, LogProjection], "str | None"]
Watcher = Callable[[TraceRecord], None]
_FAILED = messages.RecordSubset[messages.ChildFailed](messages.ChildFailed)


class ServedRun:
    """One team run started for one request."""

    def __init__(self, loop: asyncio.AbstractEventLoop, config: TeamConfig, conversation: Conversation, *,
                 model: str, request_id: str, log_base: Path | None, describe: Describe | None) -> None:
        self.loop = loop
        self.model = model
        self.request_id = request_id
        self.progress: asyncio.Queue[str | None] = asyncio.Queue()
        self.result: asyncio.Future[RunResult] = loop.create_future()
        self._describe = describe
        self._lock = threading.Lock()
        self._started = False
        self._cancel_reason: str | None = None
        self.watchers: list[Watcher] = []  # called on the trace writer thread with each record
        self._agents = frozenset(agent.id for agent in config.agents)
        # Agents whose failure no restart could help (an unreachable model server, a refused key or model).
        self._failed_for_good: set[str] = set()
        self.team = new_team(config, conversation.task, history=conversation.history, log_base=log_base,
                             subscribers=[self._on_record], client_tools=conversation.client_tools)

    @property
    def log_dir(self) -> Path:
        return self.team.log_dir

    def prepare(self) -> None:
        """The team's checks before it starts (``Team.prepare``), as the caller's errors: a question that is
        blank or too large (400 ``empty_question``, 413), a team none of whose agents can run (400
        ``invalid_config``). The backends built here are the ones the agents use: nothing is built twice."""
        try:
            self.team.prepare()
        except QuestionError as exc:
            status, code = (413, "request_too_large") if exc.limit is not None else (400, "empty_question")
            self._discard_log_dir()
            raise ApiError(status, str(exc), code=code, param="messages") from None
        except ConfigError as exc:  # a team none of whose agents can run is the caller's config error
            self._discard_log_dir()
            raise ApiError(400, str(exc), code="invalid_config", param="model") from None

    def _discard_log_dir(self) -> None:
        """A refused request leaves no log folder: its ``attempt_1``, ``turn_1`` and ``log_<stamp>`` while empty."""
        folder = self.log_dir
        for _ in range(3):
            with contextlib.suppress(OSError):  # not empty (or gone): kept
                folder.rmdir()
            folder = folder.parent

    def no_answer(self, result: RunResult, *, shutting_down: bool) -> ApiError:
        """Why ``result`` has no answer, for the client: 503 while the server shuts down; 502
        ``backend_unavailable`` when every agent failed for good on its model server (nothing answered
        there, or it refused the key or the model): no retry of the same request can help, so
        ``x-should-retry: false``; else 500 ``run_failed``. Read once the run is over (its trace is closed)."""
        message = f"the team produced no answer: {result.reason}"
        if shutting_down:
            return ApiError(503, message, code="run_failed")
        if result.status == "failed" and self._agents and self._agents <= self._failed_for_good:
            return ApiError(502, message, code="backend_unavailable")
        return ApiError(500, message, code="run_failed")

    def start(self) -> None:
        threading.Thread(target=self._run, name=f"serve-run-{self.team.run_id}", daemon=True).start()

    def cancel(self, reason: str) -> None:
        """Ask the team to stop (best answer so far is kept); safe before the team has started."""
        if self.result.done():
            return
        with self._lock:
            if self._cancel_reason is not None:
                return
            self._cancel_reason = reason
            started = self._started
        if started:
            self.team.cancel(reason)

    # -- on other threads ----------------------------------------------------------------------

    def _post(self, callback: Callable[..., Any], *args: Any) -> None:
        try:
            self.loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:  # the loop is closed: the server is gone, nobody is listening
            pass

    def _on_record(self, record: TraceRecord, projection: LogProjection) -> None:
        """Trace writer thread: turn a record into progress text for the stream, if anyone streams."""
        for watch in self.watchers:
            watch(record)
        failed = _FAILED.message(record) if record.kind == "tell" else None
        if failed is not None and failed.permanent:
            self._failed_for_good.add(failed.name)
        if self._describe is None:
            return
        text = self._describe(record, projection)
        if text:
            self._post(self.progress.put_nowait, text)

    def _run(self) -> None:
        try:
            self.team.start()
            with self._lock:
                self._started = True
                reason = self._cancel_reason
            if reason is not None:
                self.team.cancel(reason)
            result = self.team.wait()
        except BaseException as exc:
            error = exc if isinstance(exc, Exception) else RuntimeError(f"run thread stopped: {exc!r}")
            self._post(self._settle, None, error)
        else:
            self._post(self._settle, result, None)

    # -- on the loop -----------------------------------------------------------------------------

    def _settle(self, result: RunResult | None, error: BaseException | None) -> None:
        if not self.result.done():
            if error is not None:
                self.result.set_exception(error)
            else:
                assert result is not None
                self.result.set_result(result)
        self.progress.put_nowait(None)


class RunRegistry:
    """Admits runs up to a limit, counts them, and cancels them all on shutdown."""

    def __init__(self, *, max_runs: int, retry_after_s: int, log_base: Path | None) -> None:
        self.max_runs = max_runs
        self.retry_after_s = retry_after_s
        self.log_base = log_base
        self.runs: set[ServedRun] = set()
        self.shutting_down = False
        # Called with each admitted run before it starts (the Web UI keeps its records).
        self.observers: list[Callable[[ServedRun], None]] = []

    @property
    def in_progress(self) -> int:
        return len(self.runs)

    def admit(self, config: TeamConfig, conversation: Conversation, *, model: str, request_id: str,
              describe: Describe | None) -> ServedRun:
        """Start a run, or refuse: 503 while shutting down, 429 at the concurrency limit, 400/413 for what
        ``ServedRun.prepare`` refuses."""
        if self.shutting_down:
            raise ApiError(503, "the server is shutting down", code="shutting_down")
        if len(self.runs) >= self.max_runs:
            raise ApiError(429, f"{len(self.runs)} runs in progress, the limit of this server; retry later",
                           code="concurrent_runs_exceeded", headers={"retry-after": str(self.retry_after_s)})
        run = ServedRun(asyncio.get_running_loop(), config, conversation, model=model, request_id=request_id,
                        log_base=self.log_base, describe=describe)
        run.prepare()
        self.runs.add(run)
        run.result.add_done_callback(lambda _future: self._finished(run))
        for observe in self.observers:
            observe(run)
        # The model name and the log path come from a request or a file name: escaped, they cannot
        # drive the operator's terminal (colours, cursor moves, a bidi override that reorders the line).
        log.info("run started request_id=%s model=%s run_id=%s log_dir=%s",
                 request_id, for_terminal(model), run.team.run_id, for_terminal(str(run.log_dir)))
        run.start()
        return run

    def _finished(self, run: ServedRun) -> None:
        self.runs.discard(run)
        if run.result.cancelled() or run.result.exception() is not None:
            log.error("run failed request_id=%s log_dir=%s", run.request_id, for_terminal(str(run.log_dir)))
            return
        result = run.result.result()
        log.info("run finished request_id=%s status=%s winner=%s elapsed_s=%.3f log_dir=%s",
                 run.request_id, result.status, for_terminal(str(result.winner_label)), result.elapsed_s,
                 for_terminal(str(result.log_dir)))

    def begin_shutdown(self, grace_s: float) -> None:
        """Refuse new runs now; give running ones ``grace_s`` to finish, then cancel them."""
        if self.shutting_down:
            return
        self.shutting_down = True
        log.info("shutting down: %d runs in progress, %.1f s to finish", len(self.runs), grace_s)
        asyncio.get_running_loop().call_later(grace_s, self.cancel_all, "the server is shutting down")

    def cancel_all(self, reason: str) -> None:
        for run in list(self.runs):
            run.cancel(reason)

    async def drain(self, timeout_s: float) -> None:
        """Cancel what still runs and wait (bounded) until every team has finished its logs."""
        self.shutting_down = True
        self.cancel_all("the server is shutting down")
        pending = [run.result for run in self.runs]
        if pending:
            _done, still = await asyncio.wait(pending, timeout=timeout_s)
            if still:
                log.error("%d runs did not finish within %.1f s of shutdown", len(still), timeout_s)
