"""The Python API: ``await massgen.run(...)``, ``massgen.run_sync(...)``, ``massgen.stream(...)``.

A run is a ``Team`` of actors on their own threads. Waiting for it blocks, so the
async functions wait on a worker thread (``asyncio.to_thread``) and never block the
caller's event loop on a Pykka future. Every call builds its own team: its own
actors, run id and log directory, so concurrent runs in one process do not meet.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import os
import threading
import time
import warnings
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from massgen.actors.run.team import Team
from massgen.events import Event, FinalAnswerEvent, events_from_record
from massgen.launch import ConfigLike, History, new_team
from massgen.launch import resolve_config as resolve_config  # re-exported: massgen.api.resolve_config
from massgen.logs import LogProjection
from massgen.messages import RunFinished
from massgen.messages.trace import RecordSubset, TraceRecord
from massgen.outcome.errors import ConfigError
from massgen.outcome.result import RunResult
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


Message = Mapping[str, Any]


_PART = "{'type': 'text', 'text': ...}"


def content_text(content: object, where: str) -> str:
    """A message's ``content`` as text: a str, or OpenAI content parts of type ``text`` (their texts joined, as
    the model would read them); None is "". Anything else is a ``ConfigError`` naming ``where`` (as
    ``conversation_history[2].content[1]``): a part the team cannot be shown (an image, a file, audio) is
    refused, never dropped or turned into its Python repr without a word."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list | tuple):
        raise ConfigError(f"{where}: must be text or a list of content parts ({_PART}), not {type(content).__name__}")
    texts: list[str] = []
    for index, part in enumerate(content):
        at = f"{where}[{index}]"
        if not isinstance(part, Mapping):
            raise ConfigError(f"{at}: must be a part ({_PART}), not {type(part).__name__}")
        if part.get("type") != "text":
            raise ConfigError(f"{at}: a part of type {str(part.get('type'))[:40]!r}; only text parts ({_PART}) "
                              "can be given to the team")
        text = part.get("text")
        if not isinstance(text, str):
            raise ConfigError(f"{at}.text: must be text, not {type(text).__name__}")
        texts.append(text)
    return "".join(texts)


def history_pairs(messages: Sequence[Message]) -> tuple[tuple[str, str], ...]:
    """Upstream's ``conversation_history`` (``[{"role": "user", "content": ...}, {"role": "assistant", ...}]``)
    as (question, answer) pairs; consecutive user messages join, system messages are left out. A content is
    text or OpenAI text parts (``content_text``); anything else is a ``ConfigError`` naming the message."""
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise ConfigError("conversation_history: must be a list of messages ({'role': ..., 'content': ...}), "
                          f"not {type(messages).__name__}")
    pairs: list[tuple[str, str]] = []
    pending: str | None = None
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise ConfigError(f"conversation_history[{index}]: must be a message ({{'role': ..., 'content': ...}}), "
                              f"not {type(message).__name__}")
        role = message.get("role")
        content = content_text(message.get("content"), f"conversation_history[{index}].content")
        if role == "user":
            pending = content if pending is None else f"{pending}\n\n{content}"
        elif role == "assistant" and pending is not None:
            pairs.append((pending, content))
            pending = None
    return tuple(pairs)


_PATH = (str, os.PathLike)
_NAMES = "a list of names"
# What each argument may be, checked before anything runs: a string where a list goes was split into
# characters (``context_paths="/tmp"`` granted writes to "/", "t", "m", "p"), and a wrong type met deep
# inside ended as a bare TypeError, or only after the run (``output_file=5``).
_KINDS: dict[str, tuple[tuple[type, ...], str]] = {
    "model": ((str,), "a model name"), "backend": ((str,), "a backend type"),
    "system_message": ((str,), "text"), "base_url": ((str,), "a URL"), "session_id": ((str,), "a session id"),
    "output_file": (_PATH, "a path"), "log_dir": (_PATH, "a path"),
    "num_agents": ((int,), "a whole number"),
    "use_docker": ((bool,), "True or False"), "enable_filesystem": ((bool,), "True or False"),
    "enable_logging": ((bool,), "True or False"), "verbose": ((bool,), "True or False"),
    "parse_at_references": ((bool,), "True or False"),
}
_LISTS = {"models": _NAMES, "backends": _NAMES, "context_paths": "a list of paths or {'path': ..., 'permission': ...}"}


def check_arguments(**given: Any) -> None:
    """A ``ConfigError`` naming the first argument of the wrong type (None is always "not given")."""
    for name, value in given.items():
        if value is None:
            continue
        if name in _LISTS:
            if isinstance(value, str | bytes) or not isinstance(value, Sequence):
                raise ConfigError(f"{name}: must be {_LISTS[name]}, not {type(value).__name__}")
            if name != "context_paths" and not all(isinstance(v, str) and v.strip() for v in value):
                raise ConfigError(f"{name}: must be {_LISTS[name]} (non-empty strings)")
            continue
        kinds, what = _KINDS.get(name, ((object,), ""))
        wrong_bool = isinstance(value, bool) and bool not in kinds  # True is an int to Python, not to a caller
        if wrong_bool or not isinstance(value, kinds):
            raise ConfigError(f"{name}: must be {what}, not {type(value).__name__}")
        if isinstance(value, str | os.PathLike) and not str(os.fspath(value)).strip():
            raise ConfigError(f"{name}: empty; leave it out for the default")


def upstream_config(
    config: ConfigLike = None,
    config_dict: Mapping[str, Any] | None = None,
    model: str | None = None,
    models: Sequence[str] | None = None,
    num_agents: int | None = None,
    use_docker: bool = False,
    **kwargs: Any,
) -> ConfigLike:
    """The team upstream's ``run(...)`` arguments describe, in upstream's order of precedence:
    ``config_dict``, then ``models``, then ``model`` (on ``config``'s agents when a config is given too,
    else ``num_agents`` agents of it, default 1), then ``config``, then the usual discovery.
    ``system_message`` and ``base_url`` go to every agent that calls a model; ``context_paths``
    (upstream's forms) are added; ``backend`` / ``backends`` name providers for ``model`` / ``models``."""
    unknown = sorted(set(kwargs) - _RUN_EXTRAS)
    if unknown:
        raise ConfigError(f"massgen.run: unknown argument(s) {', '.join(unknown)}; "
                          f"known extras: {', '.join(sorted(_RUN_EXTRAS))}")
    if config_dict is None and not models and model is None and not use_docker and not any(kwargs.values()):
        return config  # this version's own call: the config as given (a session may remember its name)
    from massgen.configs.build import build_config
    from massgen.configs.quick import override_agents

    if config_dict is not None:
        team = resolve_config(config_dict)
    elif models:
        team = resolve_config(build_config(models=models, backends=kwargs.get("backends"), use_docker=use_docker))
    elif model is not None and config is None:
        count = 1 if num_agents is None else num_agents  # 0 is refused by build_config, not made 1
        team = resolve_config(build_config(num_agents=count, model=model, backend=kwargs.get("backend"),
                                           use_docker=use_docker))
    else:
        team = resolve_config(config)
        if model is not None:
            team = override_agents(team, model=model)
    team = override_agents(team, system_message=kwargs.get("system_message"), base_url=kwargs.get("base_url"))
    if kwargs.get("context_paths"):
        from massgen.configs.build import upstream_context_paths
        from massgen.configs.schema import ContextPathConfig

        added = [ContextPathConfig(**c) for c in upstream_context_paths(kwargs["context_paths"])]
        rules = team.orchestrator.model_copy(update={"context_paths": [*team.orchestrator.context_paths, *added]})
        team = team.model_copy(update={"orchestrator": rules})
    return team


def config_used(
    config: ConfigLike = None,
    config_dict: Mapping[str, Any] | None = None,
    model: str | None = None,
    models: Sequence[str] | None = None,
    num_agents: int | None = None,
) -> str:
    """Upstream's ``config_used``: where the team of ``run(...)`` came from, in its words: ``config_dict``,
    ``multi-agent:<models>``, ``agent:<model>x<n>``, the config file's path, or (here) ``TeamConfig``,
    the discovered file, ``the default team``; ``model`` applied to a config adds `` (model <model>)``."""
    if config_dict is not None:
        return "config_dict"
    if models:
        return f"multi-agent:{','.join(models)}"
    if model is not None and config is None:
        return f"agent:{model}x{num_agents or 1}"
    from massgen.configs import TeamConfig
    from massgen.configs.defaults import discovered_config_paths
    from massgen.configs.loader import resolve_config_path

    if isinstance(config, TeamConfig):
        source = "TeamConfig"
    elif isinstance(config, Mapping):
        source = "config_dict"
    elif isinstance(config, str | os.PathLike):
        source = str(resolve_config_path(os.fspath(config)).resolve())
    else:
        source = next((str(p.resolve()) for p in discovered_config_paths() if p.is_file()), "the default team")
    return source if model is None else f"{source} (model {model})"


_ENDS = RecordSubset[RunFinished](RunFinished)  # the stream's end
_RUN_EXTRAS = frozenset({"system_message", "base_url", "context_paths", "backend", "backends"})


def _verbose_printer(record: TraceRecord, projection: LogProjection) -> None:
    """``verbose=True``: one line per event of the run on stdout (no streamed text)."""
    for event in events_from_record(record, projection, chunks=False):
        data = event.as_dict()
        kind = data.pop("type")
        shown = ", ".join(f"{k}={str(v)[:60]!s}" for k, v in data.items() if k not in ("result", "content"))
        print(f"[massgen] {kind}: {shown}", flush=True)


class OutputFileWarning(UserWarning):
    """``output_file`` could not be written; the run's result is returned all the same."""


def _write_output(result: RunResult, output_file: str | os.PathLike[str] | None) -> None:
    """``output_file``: the answer written there. The docs promise only that it is written, and the run
    (paid for, its answer in hand) must not be lost to a full disk or a directory: a failure is an
    ``OutputFileWarning`` (a caller may make it an error with ``warnings.simplefilter``), never a raise."""
    if output_file is not None and result.final_answer is not None:
        path = Path(output_file)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(result.final_answer, encoding="utf-8")
        except OSError as exc:
            warnings.warn(f"output_file {os.fspath(path)!r} was not written ({exc.strerror or exc}); the answer "
                          f"is the result's final_answer, and is in {result.log_dir}", OutputFileWarning,
                          stacklevel=4)  # run_sync's caller (_write_output < finished < run_sync)


@dataclass(frozen=True)
class _Started:
    """A started run of ``run``/``run_sync``, and what to do with its result."""

    team: Team
    query: str
    session: Session | None
    output_file: str | os.PathLike[str] | None
    config_used: str

    def finished(self, result: RunResult) -> RunResult:
        result = dataclasses.replace(result, config_used=self.config_used)
        _write_output(result, self.output_file)
        if self.session is not None:
            self.session.add_turn(self.query, result)
        return result


def _start(
    query: str,
    config: ConfigLike = None,
    config_dict: Mapping[str, Any] | None = None,
    model: str | None = None,
    models: Sequence[str] | None = None,
    num_agents: int | None = None,
    use_docker: bool = False,
    enable_filesystem: bool = True,
    enable_logging: bool = False,
    output_file: str | os.PathLike[str] | None = None,
    verbose: bool = False,
    conversation_history: Sequence[Message] | None = None,
    parse_at_references: bool = False,
    *,
    history: History = (),
    log_dir: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
    session_id: str | None = None,
    **kwargs: Any,
) -> _Started:
    """The arguments of ``run`` and ``run_sync``, declared once (see ``run``); the team, started."""
    check_arguments(model=model, models=models, num_agents=num_agents, use_docker=use_docker,
                    enable_filesystem=enable_filesystem, enable_logging=enable_logging, output_file=output_file,
                    verbose=verbose, parse_at_references=parse_at_references, log_dir=log_dir,
                    session_id=session_id, **kwargs)
    upstream_history = history_pairs(() if conversation_history is None else conversation_history)
    session, config, history = _session(session_id, config, history)
    team_config = upstream_config(config, config_dict, model, models, num_agents, use_docker, **kwargs)
    source = config_used(config, config_dict, model, models, num_agents)
    history = (*upstream_history, *history)
    team = new_team(team_config, query, history=history, log_dir=log_dir, timeout=timeout,
                    context_paths=parse_at_references, subscribers=[_verbose_printer] if verbose else [])
    team.start()  # spawns the actors and returns; nothing here waits on them
    return _Started(team=team, query=query, session=session, output_file=output_file,
                    config_used=source)


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _arguments_of(spec: Callable[_P, object]) -> Callable[[Callable[..., _R]], Callable[_P, _R]]:
    """Give a function ``spec``'s arguments: for the type checker, and for ``help()`` and ``inspect``."""
    def give(function: Callable[..., _R]) -> Callable[_P, _R]:
        function.__signature__ = inspect.signature(spec).replace(  # type: ignore[attr-defined]
            return_annotation=inspect.signature(function).return_annotation)
        return function
    return give


@_arguments_of(_start)
async def run(*args: Any, **kwargs: Any) -> RunResult:
    """Run the team on ``query`` and return the result (final answer, winner, votes, answers, logs, usage).

    Upstream MassGen 0.1.97's arguments, in its order: ``config`` (a YAML path, ``"@examples/NAME"``,
    a dict shaped like the YAML, or a ``TeamConfig``), ``config_dict`` (e.g. from ``build_config``),
    ``model`` / ``models`` / ``num_agents`` / ``use_docker`` (a team built as ``build_config`` does;
    see ``upstream_config`` for which wins), ``output_file`` (the final answer is written there; if it
    cannot be, an ``OutputFileWarning`` and the result is still returned),
    ``verbose`` (a line per event on stdout), ``conversation_history`` (upstream's message list),
    ``parse_at_references`` (``@path`` / ``@path:w`` in the query become context paths), and the
    extras ``system_message``, ``base_url``, ``context_paths``, ``backend``, ``backends``.
    ``enable_filesystem`` and ``enable_logging`` are accepted: every run here logs, and file tools
    follow the config. Then this version's: ``history`` ((question, answer) pairs), ``log_dir``,
    ``timeout`` (the whole-run deadline in seconds), ``session_id`` (a stored session, shared with
    ``massgen --session-id``, whose turns are the history; this turn is added to it).
    The result also reads like upstream's dict: ``result["final_answer"]``, ``result.get(...)``.
    """
    started = _start(*args, **kwargs)
    return started.finished(await _finish(started.team))


@_arguments_of(_start)
def run_sync(*args: Any, **kwargs: Any) -> RunResult:
    """``run`` for plain scripts (the same arguments): blocks until the answer is in. Ctrl-C cancels
    the run, waits, re-raises."""
    started = _start(*args, **kwargs)
    try:
        result: RunResult = started.team.wait()
    except KeyboardInterrupt:
        _close_despite_ctrl_c(started.team)
        raise
    return started.finished(result)


_CLOSING_S = 60.0  # how long a Ctrl-C'd run_sync waits for its run to close before it lets the Ctrl-C through


def _close_despite_ctrl_c(team: Team) -> None:
    """Cancel the run and wait (bounded) until it is closed: its trace complete, its writer's thread and file
    gone. The closing runs on a thread of its own, so a second Ctrl-C (an impatient user, a notebook's
    interrupt pressed twice) cannot cut it off halfway, where it left the writer's thread and the trace's file
    open in the caller's process; the presses that come meanwhile are absorbed. Past ``_CLOSING_S`` the Ctrl-C
    goes through and the closing finishes on its own thread."""
    closed = threading.Event()

    def close() -> None:
        try:
            team.cancel("interrupted by Ctrl-C")
            team.wait()
        finally:
            closed.set()

    threading.Thread(target=close, name="massgen-close-on-ctrl-c", daemon=True).start()
    give_up = time.monotonic() + _CLOSING_S
    while True:
        try:
            closed.wait(max(0.0, give_up - time.monotonic()))
            return
        except KeyboardInterrupt:
            if time.monotonic() >= give_up:
                return


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
    check_arguments(log_dir=log_dir, session_id=session_id)
    session, config, history = _session(session_id, config, history)
    source = config_used(config)
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Event | None] = asyncio.Queue()

    def on_record(record: TraceRecord, projection: LogProjection) -> None:
        for event in events_from_record(record, projection, chunks=chunks):
            loop.call_soon_threadsafe(queue.put_nowait, event)
        if _ENDS.message(record) is not None:
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
        result = dataclasses.replace(await asyncio.shield(waiting), config_used=source)
        finished = True
        if session is not None:
            session.add_turn(query, result)
        yield FinalAnswerEvent(result=result)
    finally:
        if not finished and not waiting.done():
            team.cancel("the event stream was closed early")
            with contextlib.suppress(asyncio.CancelledError):
                await waiting
