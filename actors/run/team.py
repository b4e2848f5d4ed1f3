"""A run of the team, as callers see it: start, observe, steer, wait for the result.

The handle is the only thing outside the actors that talks to them. It starts the
trace writer and the supervisor, sends control messages (cancel, answer now, ...) as
the user, and builds the result from the trace once ``RunFinished`` is on disk.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import platform
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pykka

from massgen.actors.agent import check_tools
from massgen.actors.agent.actor import AgentSpec, FirstBackend
from massgen.actors.agent.turn_io import TurnSettings
from massgen.actors.coordination import voting_guidance
from massgen.actors.record.resume import ResumePoint, carried_calls
from massgen.actors.record.trace_writer import Subscriber, TraceWriter, WriteFailure
from massgen.actors.run import preflight
from massgen.actors.run.question import check_question, check_text
from massgen.actors.runtime.dispatcher import Dispatcher
from massgen.actors.runtime.port import Peer, RunContext, Runtime
from massgen.actors.supervisor.actor import RunSpec, Supervisor
from massgen.backends.circuit import BreakerRegistry
from massgen.backends.preload import preload
from massgen.configs import uploads
from massgen.configs.defaults import environment
from massgen.configs.loader import ConfigError
from massgen.configs.schema import AgentConfig, OrchestratorConfig, TeamConfig
from massgen.files import RunFiles, confined
from massgen.logs import LogProjection
from massgen.logs.layout import TRACE_FILE, attempt_dir, run_root_of, turn_dir_of
from massgen.logs.layout import default_log_base as default_log_base  # re-exported
from massgen.logs.layout import new_log_dir as new_log_dir  # re-exported
from massgen.logs.run_lock import RunInUse, RunLock, hold_run
from massgen.messages import (
    AnswerNow,
    CancelRun,
    KillAgent,
    Message,
    RestartAgent,
    RunFinished,
    Sender,
    SendNote,
    SetRunTimeout,
    ToolSpec,
)
from massgen.messages.text import escape_text
from massgen.messages.trace import RecordSubset, TraceRecord
from massgen.messages.trace_writer_inbox import Flush
from massgen.outcome.errors import LogDirError, translate
from massgen.outcome.result import RunResult

USER = Sender(name="user", incarnation=0)
_GRACE_S = 15.0
_ENDS = RecordSubset[RunFinished](RunFinished)  # the handle reads one record type: the end


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {"python": platform.python_version()}
    for package in ("massgen-actors", "pykka", "pydantic"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = "unknown"
    return found


def result_from_projection(projection: LogProjection, log_dir: Path) -> RunResult:
    finished = projection.finished or {}
    started = projection.started or {}
    return RunResult(
        status=str(finished.get("status", "failed")),
        reason=str(finished.get("reason", "the run did not finish")),
        final_answer=finished.get("final_answer"),
        winner=finished.get("winner"),
        winner_label=finished.get("winner_label"),
        partial=bool(finished.get("partial", True)),
        log_dir=log_dir,
        run_id=str(started.get("run_id", "")),
        answers={a["label"]: a["content"] for a in projection.answers},
        votes=[dict(v) for v in projection.votes],
        usage={
            "model_calls": finished.get("model_calls", 0),
            "input_tokens": finished.get("input_tokens", 0),
            "output_tokens": finished.get("output_tokens", 0),
            "cost_usd": finished.get("cost_usd", 0.0),
        },
        elapsed_s=float(finished.get("elapsed_s", 0.0)),
        presentation_not_used=str(finished.get("presentation_not_used") or ""),
        log_root=run_root_of(log_dir),
        labels={agent_id: view.label for agent_id, view in projection.agents.items()},
    )


def first_answer(agent: AgentConfig, index: int, rules: OrchestratorConfig) -> str:
    """How the agent listed ``index``-th asks its first answer, resolved once from its backend's ``first_answer``
    and ``orchestrator.prior_first_answer`` (which names the first agent's, when it is the prior)."""
    if index == 1 and rules.prior_first_answer == "bare" and agent.backend.first_answer == "team":
        return "bare"
    # "program" needs the sandbox; where none can be had, the bare question (withheld_check_tools says so): a
    # program agent then answers as one plain call of its model does, so the team is never below that call.
    if agent.backend.first_answer == "program" and confined.unavailable() is not None:
        return "bare"
    return agent.backend.first_answer


def agent_specs(
    config: TeamConfig, client_tools: tuple[ToolSpec, ...] = (), resume: ResumePoint | None = None
) -> list[AgentSpec]:
    """One spec per agent; ``client_tools`` are a caller's tools (see ``actors/agent/client_tools.py``)."""
    rules = config.orchestrator
    return [
        AgentSpec(
            agent_id=agent.id,
            label=f"agent{index}",
            config=agent,
            settings=TurnSettings(
                system_message=voting_guidance.system_message(agent.system_message, rules),
                own_system_message=agent.system_message,
                temperature=agent.backend.temperature,
                max_tokens=agent.backend.max_tokens,
                max_attempts=rules.max_attempts_per_turn,
                max_tool_rounds=rules.max_tool_rounds,
                client_tools=client_tools,
                attachments=tuple(uploads.attachment(f.entry()) for f in agent.backend.upload_files),
                first_answer=first_answer(agent, index, rules),
            ),
            carried=carried_calls(resume, config, agent.id),
        )
        for index, agent in enumerate(config.agents, 1)
    ]


def attach_files(files: RunFiles, specs: list[AgentSpec]) -> list[AgentSpec]:
    """The specs with ``files`` set, each agent's workspace note in its system message, and each CLI
    backend's ``cwd`` moved to its workspace (here, not in ``files/``, which sits below the agents)."""
    files.labels = {s.agent_id: s.label for s in specs}
    attached = []
    for spec in specs:
        if spec.agent_id not in files.with_workspace:
            attached.append(spec)
            continue
        backend = spec.config.backend.model_copy(update={"cwd": str(files.workspace(spec.agent_id))})
        config = spec.config.model_copy(update={"backend": backend})
        note = files.note(spec.agent_id)
        system = f"{spec.settings.system_message}\n\n{note}" if spec.settings.system_message else note
        settings = dataclasses.replace(spec.settings, system_message=system)
        attached.append(dataclasses.replace(spec, config=config, settings=settings, files=files))
    return attached


def _runtime(config: TeamConfig) -> Runtime | None:
    """Pykka unless the config asks for Ray; Ray is imported only then (the [ray] extra)."""
    if config.runtime.type != "ray":
        return None
    try:
        from massgen.actors.runtime.ray_runtime import RayRuntime
    except ImportError as exc:
        raise ConfigError("runtime.type: ray needs the [ray] extra: pip install 'massgen-actors[ray]'") from exc
    try:
        return RayRuntime(config.runtime)
    except Exception as exc:  # no cluster at that address, a version mismatch, ...
        raise ConfigError(f"runtime.address: could not join the Ray cluster at {config.runtime.address}: "
                          f"{str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}") from exc


def withheld_check_tools(config: TeamConfig) -> tuple[str, ...]:
    """One line, for the whole run, when check tools that run code are not offered: no sandbox here."""
    wanted = sorted({n for a in config.agents for n in a.backend.check_tools if n in check_tools.NEEDS_SANDBOX})
    programs = [a.id for a in config.agents if a.backend.first_answer == "program"]
    why = check_tools.withheld(wanted) if wanted else confined.unavailable() if programs else None
    if why is None:
        return ()
    lines = []
    if wanted:
        agents = [a.id for a in config.agents if check_tools.NEEDS_SANDBOX.intersection(a.backend.check_tools)]
        lines.append(f"check_tools: {', '.join(wanted)} not applied for {', '.join(agents)}: {why}")
    if programs:
        lines.append(f"first_answer: program not applied for {', '.join(programs)}: they answer in plain words "
                     f"instead of with a program, since {why}")
    return tuple(lines)


def _first_missing(path: Path) -> Path | None:
    """The highest of ``path`` and its parents that does not exist yet: what making ``path`` creates."""
    missing = None
    for folder in (path, *path.parents):
        if folder.exists():
            break
        missing = folder
    return missing


@dataclasses.dataclass(frozen=True)
class _Prepared:
    """What ``Team.prepare`` checked and built, for ``Team.start`` to use as it is."""

    escaped: tuple[str, ...]
    files: RunFiles | None
    specs: list[AgentSpec]
    breakers: BreakerRegistry
    runtime: Runtime | None


class Team:
    """One run of a team on one question. Use ``start()`` then ``wait()``, or ``run()``."""

    def __init__(
        self,
        config: TeamConfig,
        question: str,
        *,
        history: tuple[tuple[str, str], ...] = (),
        log_dir: Path | None = None,
        log_base: Path | None = None,
        run_root: Path | None = None,
        subscribers: list[Subscriber] | None = None,
        tick_interval_s: float = 0.05,
        turn: int = 1,
        client_tools: tuple[ToolSpec, ...] = (),
        resume: ResumePoint | None = None,
        runtime: Runtime | None = None,
    ) -> None:
        """``log_dir``: this run's log directory; else the next attempt beside a resumed run, else
        ``turn_N/attempt_1`` in ``run_root`` (the folder of a conversation's earlier turns: the REPL and
        the full screen), else a new ``log_<stamp>/turn_N/attempt_1`` under ``log_base`` (default
        ``default_log_base()``): the one place a run's log directory is chosen, on every surface (an
        ``OSError`` making it is a ``LogDirError``).
        ``client_tools``: tools the caller runs itself; a winning call of one is the final answer.
        ``runtime``: where the agents run, instead of the one ``config.runtime`` names (the seam a
        test uses to lose an agent the way a cluster does)."""
        self.config = config
        self.question = question
        self.history = history
        self.turn = resume.turn if resume else turn
        self.client_tools = client_tools
        self.resume = resume
        self._runtime = runtime
        # The folder this Team makes for its logs (the highest one that did not exist), taken away again if
        # the run is refused before it starts and nothing was written into it (``_remove_unused_log_dir``).
        self._made_log_dir: Path | None = None
        # The run's lock (logs/run_lock.py), held while this process runs it: a resume takes it here, before it
        # chooses its attempt folder (one resume at a time, none of a run still going); a fresh run in start().
        self._lock: RunLock | None = None
        if resume is not None:
            with translate({OSError: LogDirError}, "the run's lock file"):
                self._lock = hold_run(run_root_of(resume.log_dir), exclusive=True)  # RunInUse: a ResumeError
        try:
            self._make_log_dir(resume, log_dir, log_base, run_root, turn)
        except BaseException:
            self._release_lock()
            raise
        self.run_id = uuid.uuid4().hex[:12]
        self._subscribers = [self._watch, *(subscribers or [])]
        self._tick = tick_interval_s
        self._done = threading.Event()
        self._result: RunResult | None = None
        self._ctx: RunContext | None = None
        self._trace: pykka.ActorRef[Any] | None = None
        self._write_failure = WriteFailure()  # why the trace writer stopped, if it did: said in the result
        self._supervisor: Peer | None = None
        self._run_spec: RunSpec | None = None
        self._prepared: _Prepared | None = None  # what prepare() checked and built, for start()
        # What the config asks for that this run cannot do here (set by start; see withheld_check_tools).
        self.warnings: tuple[str, ...] = ()

    def _make_log_dir(self, resume: ResumePoint | None, log_dir: Path | None, log_base: Path | None,
                      run_root: Path | None, turn: int) -> None:
        with translate({OSError: LogDirError}, "the log directory"):  # a read-only or full disk, a file in the way
            if resume is not None:
                log_dir = log_dir or resume.next_log_dir()
                self._made_log_dir = _first_missing(log_dir)
                log_dir.mkdir(parents=True, exist_ok=True)
            elif log_dir is None and run_root is not None:
                log_dir = attempt_dir(run_root, turn)
                self._made_log_dir = _first_missing(log_dir)
                log_dir.mkdir(parents=True, exist_ok=False)
            elif log_dir is None:
                log_dir = new_log_dir(log_base, turn=turn)
                self._made_log_dir = run_root_of(log_dir)  # the new log_<stamp>, never the base beside others
            else:
                self._made_log_dir = _first_missing(log_dir)  # made by the run's files or its trace writer
            self.log_dir = log_dir
            if self.log_dir.exists() and not self.log_dir.is_dir():  # else the whole run, then "no trace"
                raise NotADirectoryError(errno.ENOTDIR, "a file is in the way", str(self.log_dir))
            if (self.log_dir / TRACE_FILE).exists():  # appended to, it would hold two runs as one
                raise FileExistsError(errno.EEXIST, "it holds a run already (trace.jsonl); give a new one",
                                      str(self.log_dir))

    def _attempt(self) -> int:
        """This attempt's number: its folder's (``attempt_K``; a resume skips an attempt that stopped before it
        recorded anything), else the one after the attempt it resumes."""
        if self.resume is None:
            return 1
        if turn_dir_of(self.log_dir) is not None:
            return int(self.log_dir.name.removeprefix("attempt_"))
        return self.resume.attempt + 1

    def _release_lock(self) -> None:
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()

    def _watch(self, record: TraceRecord, projection: LogProjection) -> None:
        if _ENDS.message(record) is not None:
            self._result = result_from_projection(projection, self.log_dir)
            self._done.set()

    def prepare(self) -> Team:
        """Every check before an actor starts, done once; raises ``QuestionError`` or ``ConfigError``.

        The question is escaped and checked, each agent's backend is built for its first incarnation
        (``_with_first_backends``) and the runtime is joined. ``start`` prepares when it has not been
        done; a caller that must tell a bad request from a failed run (``serve``: a 400, not a failed
        stream) prepares first, so nothing is checked, and no backend built, twice."""
        if self._prepared is not None:
            return self
        try:
            self._prepared = self._prepare()
        except BaseException:
            self._remove_unused_log_dir()
            raise
        return self

    def _prepare(self) -> _Prepared:
        escaped: list[str] = []  # the edge where the question enters: escaped once, and traced in RunStarted
        check_text(self.question, self.history)  # QuestionError: a question or history that is not text
        self.question = escape_text(self.question, "question", escaped)
        self.history = tuple((escape_text(q, f"history {n} question", escaped),
                              escape_text(a, f"history {n} answer", escaped))
                             for n, (q, a) in enumerate(self.history, 1))
        check_question(self.question, self.history)  # QuestionError (a ConfigError): blank, or too large
        preload(agent.backend.type for agent in self.config.agents)  # once per process; see backends/preload.py
        files = RunFiles.prepare(self.config, self.run_id, self.log_dir)
        specs = agent_specs(self.config, self.client_tools, self.resume)
        if files is not None:
            specs = attach_files(files, specs)
            if self.config.runtime.type == "ray":
                raise ConfigError("runtime.type: ray does not run file workflows yet (workspaces, context paths, "
                                  "command_execution): their paths are on this machine")
        breakers = BreakerRegistry()
        specs = self._with_first_backends(specs, breakers)  # ConfigError, before any actor, if no agent can run
        # Before anything starts: a cluster that is not there is a config error.
        runtime = self._runtime or _runtime(self.config)
        return _Prepared(tuple(escaped), files, specs, breakers, runtime)

    def _remove_unused_log_dir(self) -> None:
        """A run refused before it starts leaves no log directory behind: the folders this Team made for it
        are removed while they hold only empty folders (the run's files make ``snapshots/``); a file in
        them, or a folder that was there before, is never touched."""
        self._release_lock()
        made = self._made_log_dir
        if made is None or not made.is_dir():
            return
        for folder, _, _ in os.walk(made, topdown=False):
            with contextlib.suppress(OSError):  # not empty: something was written there, so it stays
                os.rmdir(folder)

    def start(self) -> Team:
        if self._trace is not None:  # a second start ran a second team into the same trace
            raise ConfigError("Team.start: this Team has already been started; a new run needs a new Team")
        prepared = self.prepare()._prepared
        assert prepared is not None
        if self._lock is None:  # a fresh run (a resume holds it already): a REPL's turns share their root's
            try:
                with translate({OSError: LogDirError}, "the run's lock file"):
                    self.log_dir.mkdir(parents=True, exist_ok=True)  # a folder a caller named is made here
                    self._lock = hold_run(run_root_of(self.log_dir), exclusive=False)
            except RunInUse as exc:
                self._remove_unused_log_dir()
                raise LogDirError(str(exc)) from exc
        try:
            dispatcher = Dispatcher(self.run_id)  # the threads every actor of this run is run on
            self._trace = TraceWriter.start(self.log_dir, self._subscribers, self._write_failure, dispatcher)
        except BaseException:
            self._release_lock()
            raise
        self._ctx = RunContext(self.run_id, self._trace, runtime=prepared.runtime, breakers=prepared.breakers,
                               dispatcher=dispatcher)
        self.warnings = withheld_check_tools(self.config)
        spec = RunSpec(run_id=self.run_id, question=self.question, log_dir=str(self.log_dir),
                       versions=versions(), history=self.history, tick_interval_s=self._tick, turn=self.turn,
                       escaped=prepared.escaped,
                       attempt=self._attempt(),
                       resume=self.resume.state if self.resume else None,
                       resumed_from=str(self.resume.log_dir) if self.resume else None, files=prepared.files,
                       warnings=self.warnings)
        ref = Supervisor.start(self._ctx, self.config, spec, prepared.specs)
        self._run_spec = spec
        self._supervisor = Peer("supervisor", 1, ref)
        return self

    def _with_first_backends(self, specs: list[AgentSpec], breakers: BreakerRegistry) -> list[AgentSpec]:
        """The preflight check (``actors/run/preflight.py``), building each agent's backend as its first
        incarnation will use it; the specs then hand those backends to the agents. On Ray the agents
        live in other processes and build their own, so nothing is built here: the check is the keys
        (``preflight.refuse_keyless_team``), and a backend that cannot be built there fails its agent at once."""
        if self.config.runtime.type == "ray":
            preflight.refuse_keyless_team(self.config, environment())
            return specs
        resumed = self.resume.state.agents if self.resume is not None else {}
        holders = {s.agent_id: FirstBackend(resumed[s.agent_id].incarnation if s.agent_id in resumed else 1)
                   for s in specs}
        built = preflight.build(
            (s.agent_id, s.config.backend,
             s.backend_context(holders[s.agent_id].incarnation, self.run_id, breakers, holders[s.agent_id].on_event))
            for s in specs)
        for agent_id, backend in built.items():
            holders[agent_id].hold(backend)
        return [dataclasses.replace(s, first_backend=holders[s.agent_id]) for s in specs]

    # -- steering (each is a message to the supervisor, so it is in the trace) ---------------------

    def _control(self, cls: type[Message], **fields: Any) -> bool:
        if self._ctx is None or self._supervisor is None:
            return False
        return self._ctx.tell(self._supervisor, cls(run_id=self.run_id, sender=USER, **fields))

    def cancel(self, reason: str = "cancelled by user") -> bool:
        return self._control(CancelRun, reason=reason)

    def answer_now(self) -> bool:
        return self._control(AnswerNow)

    def set_timeout(self, seconds: float) -> bool:
        return self._control(SetRunTimeout, seconds=seconds)

    def kill_agent(self, name: str) -> bool:
        return self._control(KillAgent, name=name)

    def restart_agent(self, name: str) -> bool:
        return self._control(RestartAgent, name=name)

    def send_note(self, text: str, to: str | None = None) -> str | None:
        """A note for every agent (or agent ``to``), used at each one's next safe point; its id."""
        if self._ctx is None or self._supervisor is None:
            return None
        note = SendNote(run_id=self.run_id, sender=USER, text=text, to=to)
        return note.msg_id if self._ctx.tell(self._supervisor, note) else None

    @property
    def done(self) -> bool:
        return self._done.is_set()

    # -- waiting ------------------------------------------------------------------------------------

    def wait(self, timeout: float | None = None) -> RunResult:
        """Block until the run ends; never longer than the run deadline plus a grace period. ``timeout``
        shortens that wait, and like the deadline it ends the run when it passes (a result needs an end)."""
        if self._ctx is None or self._supervisor is None or self._trace is None:
            raise ConfigError("Team.wait: this Team has not been started (Team.start(), or Team.run())")
        limit = self.config.timeout_settings.orchestrator_timeout_seconds + _GRACE_S
        deadline = time.monotonic() + (limit if timeout is None else min(timeout, limit))
        supervisor_stopped = self._supervisor.ref.actor_stopped
        while not self._done.wait(0.05):
            if supervisor_stopped.is_set() or time.monotonic() >= deadline:
                self._flush_trace()  # RunFinished may be written but not yet seen
                if not self._done.is_set() and self._run_spec is not None and self._run_spec.finish_recorded.is_set():
                    self._drain_trace()  # the writer has a backlog (hundreds of agents): wait it out
                if self._done.is_set():
                    break
                self._record_abort(
                    "the supervisor stopped without finishing the run" if supervisor_stopped.is_set()
                    else f"the run did not finish within Team.wait's timeout ({timeout:g} s)"
                    if timeout is not None and timeout < limit
                    else "the run did not finish within its deadline and grace period"
                )
                self._done.wait(5.0)
                break
        supervisor_stopped.wait(5.0)
        if self._run_spec is not None:
            self._run_spec.children_stopped.wait(5.0)  # so no child process outlives run()
        self._ctx.runtime.close()
        self._close_trace()
        self._ctx.dispatcher.close()  # the run's actors have stopped: their threads end with them
        self._release_lock()  # the run is over: it may be resumed, or rebuilt in place, from now on
        if self._result is None:
            self._result = RunResult(status="failed", reason=self._write_failure.reason(), final_answer=None,
                                     winner=None, winner_label=None, partial=True, log_dir=self.log_dir,
                                     run_id=self.run_id)
        return self._result

    def _record_abort(self, reason: str) -> None:
        assert self._ctx is not None and self._supervisor is not None
        self._supervisor.ref.stop(block=False)
        self._ctx.record(RunFinished(
            run_id=self.run_id, sender=USER, status="failed", reason=reason, winner=None, winner_label=None,
            final_answer=None, partial=True, elapsed_s=0.0, model_calls=0, input_tokens=0, output_tokens=0,
            cost_usd=0.0,
        ))

    def _drain_trace(self, limit_s: float = 600.0) -> None:
        """Flush until the writer has written RunFinished; a flush answers after every earlier record.

        RunFinished is already queued, so waiting only ever ends in it being written: the bound is for a
        writer that cannot write at all. A thousand agents on a loaded machine left 120 s too short."""
        give_up = time.monotonic() + limit_s
        while not self._done.is_set() and time.monotonic() < give_up:
            if not self._flush_trace():
                return  # the writer is dead: nothing more will be written

    def _flush_trace(self) -> bool:
        """Wait (bounded) until the writer has written what was sent before; False if it is dead."""
        if self._trace is None:
            return False
        try:
            self._trace.ask(Flush(), timeout=5.0)
        except pykka.Timeout:
            pass
        except pykka.ActorDeadError:
            return False
        return True

    def _close_trace(self, limit_s: float = 120.0) -> None:
        """Wait until the writer has written everything, derived files included, then stop it.

        Subscribers (and so ``_watch``) get ``RunFinished`` before the writer writes ``logs/*`` from
        it, and a large config makes that seconds: the flush answers only after them. Bounded, for a
        writer that cannot write at all."""
        if self._trace is None:
            return
        give_up = time.monotonic() + limit_s
        try:
            while True:
                try:
                    self._trace.ask(Flush(), timeout=5.0)
                    break
                except pykka.Timeout:
                    if time.monotonic() >= give_up:
                        return
            self._trace.stop(timeout=5.0)
        except (pykka.Timeout, pykka.ActorDeadError):
            pass

    def run(self, timeout: float | None = None) -> RunResult:
        return self.start().wait(timeout)
