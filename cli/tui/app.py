"""The full-screen terminal UI: an interactive session whose screen is a view of the trace.

One asyncio loop runs the prompt-toolkit application. A question starts a turn: the team
runs on its own actor threads and is waited for on a worker thread. Each trace record is
turned into view events on the trace writer's thread (where its projection is current),
queued, and folded into the turn's ``RunState`` on the loop thread in batches; a fold
asks for a redraw, and the application draws at most every ``MIN_REDRAW_S`` (so a
64-agent run streaming thousands of chunks a second still draws 20 frames a second), or
twice as long as its last frame took, so drawing never takes more than half the time.
A replay (``massgen logs show RUN --tui``) folds a finished trace through the same path.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.enums import EditingMode
from prompt_toolkit.history import History, InMemoryHistory
from prompt_toolkit.input import Input
from prompt_toolkit.output import Output

from massgen import (
    LogProjection,
    RunResult,
    Session,
    TeamConfig,
    TraceRecord,
    ViewEvent,
    messages,
    view_events_from_record,
)
from massgen.cli import exit_codes, signals
from massgen.cli.repl.live import LiveTurn
from massgen.cli.repl.prompt import open_history
from massgen.cli.repl.session import Conversation, history_path
from massgen.cli.text import for_terminal
from massgen.cli.tui.commands import agent_commands, command_names, run_screen_command
from massgen.cli.tui.keys import key_bindings, scroll_to_match
from massgen.cli.tui.layout import Screen, application_style, final_text, final_title
from massgen.cli.tui.state import RunState, TraceFolder
from massgen.cli.tui.view import ViewChoices

MIN_REDRAW_S = 0.05  # at most 20 frames a second, however fast records come
MAX_REDRAW_S = 1.0  # however slow frames are, one a second (a key typed shows within it)
CLOCK_REFRESH_S = 0.5  # the elapsed time moves while every agent waits on a model


class CommandCompleter(Completer):
    """``/command`` names, and agent ids and labels after the commands that take one."""

    def __init__(self, agents: Any) -> None:
        self._agents = agents  # () -> {label: agent id}

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        text = document.text_before_cursor
        if not text.startswith("/"):
            return
        name, space, arg = text[1:].partition(" ")
        if not space:
            for command, what in command_names().items():
                if command.startswith(name.lower()):
                    yield Completion(f"/{command}", start_position=-len(text), display_meta=what)
            return
        if name.lower() not in agent_commands() or " " in arg:
            return
        for label, agent in self._agents().items():
            for word in (label, agent):
                if word.startswith(arg):
                    yield Completion(word, start_position=-len(arg))


class TuiApp:
    """``massgen`` on a terminal. ``input``/``output`` default to the terminal (tests pass their own)."""

    def __init__(self, config: TeamConfig | None, source: str, *, vi: bool = False, timeout: float | None = None,
                 input: Input | None = None, output: Output | None = None, history_file: Path | None = None,
                 session: Session | None = None, session_config: dict[str, Any] | None = None,
                 first_question: str | None = None, replay: list[dict[str, Any]] | None = None) -> None:
        self.replay = replay is not None
        self.conversation = Conversation(config if config is not None else _replay_config(replay or []), source,
                                         timeout=timeout, session=session, session_config=session_config)
        self.view = ViewChoices()
        self.current: LiveTurn | None = None
        self.last: LiveTurn | None = None
        self.follow: str | None = None
        self._runs: list[RunState] = [TraceFolder().replay(replay)] if replay is not None else []
        self.results: list[RunResult] = []
        self.redraws = 0
        self._vi = vi
        self._input, self._output = input, output
        self._history_file = history_file
        self._first_question = first_question
        self._pending: list[tuple[RunState, list[ViewEvent], float]] = []
        self._pending_lock = threading.Lock()
        self._drain_scheduled = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._turn_task: asyncio.Task[None] | None = None
        self._leaving: asyncio.Future[None] | None = None
        self._interrupts = 0
        self._quitting = False
        self._code = exit_codes.SUCCESS
        self._changed = threading.Condition()
        self._app: Application[int] | None = None
        self._buffer: Buffer | None = None
        self._frame_started = time.thread_time()

    # -- what commands and keys read ----------------------------------------------------------

    @property
    def state(self) -> RunState:
        return self._runs[-1] if self._runs else RunState()

    @property
    def runs(self) -> list[RunState]:
        return list(self._runs)

    def line_is_empty(self) -> bool:
        return self._buffer is None or not self._buffer.text

    def toggle_vi(self) -> str:
        self._vi = not self._vi
        if self._app is not None:
            self._app.editing_mode = EditingMode.VI if self._vi else EditingMode.EMACS
        return "vi key bindings" if self._vi else "Emacs key bindings"

    def request_quit(self) -> None:
        self._quitting = True

    def show_final(self) -> None:
        """F4: the whole final answer in the scrollable output (upstream's "View Full Answer")."""
        state = self.state
        if state.finished is None:
            self.view.show("final answer", "the turn has not finished; F4 shows its final answer once it has")
        else:
            self.view.show(final_title(state), final_text(state), is_final=True)

    def redraw(self) -> None:
        app = self._app
        if app is not None and app.is_running:
            app.invalidate()

    def _prompt(self) -> str:
        if self.view.searching:
            return "search> "
        if self.replay:
            return "replay> "
        if self.current is not None:
            return f"turn {self.current.number} (note, or /command)> "
        return "question> "

    # -- records in (the trace writer's thread), state out (the loop thread) ------------------------

    def _subscriber(self, state: RunState, turn: LiveTurn) -> Any:
        def on_record(raw: Mapping[str, Any], projection: LogProjection) -> None:
            record = TraceRecord.of(raw)
            turn.projection = projection
            events = view_events_from_record(record, projection)
            if events:
                self._enqueue(state, events, float(record.ts))

        return on_record

    def _enqueue(self, state: RunState, events: list[ViewEvent], ts: float) -> None:
        with self._pending_lock:
            self._pending.append((state, events, ts))
            if self._drain_scheduled:
                return
            self._drain_scheduled = True
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self._drain)
            except RuntimeError:
                pass  # the loop closed between the check and the call

    def _drain(self) -> None:
        with self._pending_lock:
            batch, self._pending, self._drain_scheduled = self._pending, [], False
        for state, events, ts in batch:
            for event in events:
                state.apply(event, ts)
        with self._changed:
            self._changed.notify_all()
        self.redraw()

    def wait_until(self, predicate: Callable[[TuiApp], bool], timeout: float) -> bool:
        """Block until ``predicate(self)`` holds after a fold (tests and benches wait on events)."""
        with self._changed:
            return self._changed.wait_for(lambda: predicate(self), timeout)

    # -- the command line -------------------------------------------------------------------------

    def _accept(self, buffer: Buffer) -> bool:
        text = buffer.text
        if self.view.searching:
            scroll_to_match(self.state, self.view)
            return True  # keep the term on the line: Enter again finds the next match
        self._interrupts = 0
        self._on_line(text)
        return False

    def _on_line(self, text: str) -> None:
        line = text.strip()
        if not line:
            return
        if line.startswith("/"):
            name = line[1:].split(" ", 1)[0].lower()
            if name in ("quit", "exit", "q"):
                self._quit()
                return
            title, shown = run_screen_command(self, line)
            if shown:
                self.view.show(title, shown)
            if self._quitting:
                self._quit()
            return
        if self.replay:
            self.view.show("replay", "this is a replay; /help lists what it can show, /quit leaves")
            return
        if self.current is not None:  # a line typed while the team works is a note to every agent
            title, shown = run_screen_command(self, "/note " + line)
            self.view.show("note", shown)
            return
        self.view.close_output()
        self._turn_task = asyncio.ensure_future(self._run_turn(line))

    # -- turns --------------------------------------------------------------------------------

    async def _run_turn(self, question: str) -> None:
        number = self.conversation.next_turn
        turn = LiveTurn(number, question, lambda _text: None, self.redraw, follow=None)
        state = RunState()
        team = self.conversation.new_team(question, [self._subscriber(state, turn)])
        turn.team = team
        self.current = turn
        self._runs.append(state)
        self.view.focus, self.view.zoomed, self.view.scroll = 0, False, {}
        try:
            team.start()
            result = await asyncio.to_thread(team.wait)
        except Exception as exc:  # a team that cannot start: say why and take the next question
            self.view.show("error", f"the turn could not run: {type(exc).__name__}: {exc}")
            self.current = None
            self.redraw()
            return
        turn.result = result
        self.results.append(result)
        self.conversation.record(number, question, result)
        self._drain()  # every record is folded before the turn counts as over
        self.current, self.last = None, turn
        if self.conversation.unsaved:
            self.view.show("session", self.conversation.unsaved)
        with self._changed:
            self._changed.notify_all()
        self.redraw()

    def _typed(self, buffer: Buffer) -> None:
        if buffer.text:
            self._interrupts = 0

    def on_interrupt(self) -> None:
        """Ctrl-C: cancel a running turn; a second Ctrl-C in a row quits."""
        self._interrupts += 1
        turn = self.current
        if self._interrupts >= 2 or (turn is None and self._interrupts >= 1 and self.replay):
            if not self.replay:  # as the line REPL: quit by Ctrl-C is exit 4, turn or no turn (a replay just closes)
                self._code = exit_codes.INTERRUPTED
            self._quit()
        elif turn is not None and turn.team is not None:
            turn.cancel_requested = True
            turn.team.cancel("interrupted by Ctrl-C")
            self.view.show("cancel", "cancelling the turn; the best answer so far is kept (Ctrl-C again quits)")
        else:
            self.view.show("quit?", "Ctrl-C again, /quit or Ctrl-D leaves")

    def on_eof(self) -> None:
        self._quit()

    def _on_terminate(self, name: str) -> None:
        self._code = exit_codes.INTERRUPTED
        self._quit(f"interrupted by {name}")

    def _quit(self, reason: str = "the interactive session was closed") -> None:
        self._quitting = True
        turn = self.current
        if turn is not None and turn.team is not None and not turn.team.done and not turn.cancel_requested:
            turn.cancel_requested = True
            turn.team.cancel(reason)
        self._leaving = asyncio.ensure_future(self._leave())

    async def _leave(self) -> None:
        task = self._turn_task
        if task is not None:
            self.view.show("quit", "stopping the running turn and writing its logs...")
            self.redraw()
            await asyncio.gather(task, return_exceptions=True)
        app = self._app
        if app is not None and app.is_running and app.future is not None and not app.future.done():
            app.exit(result=self._code)

    # -- running --------------------------------------------------------------------------------

    def build(self, history: History | None = None) -> Application[int]:
        self._buffer = Buffer(multiline=False, accept_handler=self._accept, history=history or InMemoryHistory(),
                              completer=CommandCompleter(self.conversation.labels), complete_while_typing=True)
        self._buffer.on_text_changed += self._typed  # typing between two Ctrl-Cs: not "twice in a row"
        screen = Screen(lambda: self.state, self.view, self._buffer, self._prompt, self._clock)
        self._app = Application(layout=screen.layout, key_bindings=key_bindings(self), style=application_style(),
                                full_screen=True, min_redraw_interval=MIN_REDRAW_S, max_render_postpone_time=0.05,
                                refresh_interval=CLOCK_REFRESH_S, input=self._input, output=self._output,
                                editing_mode=EditingMode.VI if self._vi else EditingMode.EMACS,
                                before_render=self._frame_starts, after_render=self._frame_drawn)
        return self._app

    def _frame_starts(self, _app: object) -> None:
        self._frame_started = time.thread_time()

    def _frame_drawn(self, app: Application[int]) -> None:
        """Count the frame, and space the next one by twice the CPU time it took (at least ``MIN_REDRAW_S``).

        prompt-toolkit times the interval from a frame's start: frames costlier than the interval
        (a huge terminal, a slow machine) would follow each other at once, and the screen would hold
        the interpreter from the team's threads and the trace writer feeding it. The thread's CPU
        time, not the wall clock: on a loaded machine waiting for a core is no reason to draw less.
        """
        self.redraws += 1
        took = time.thread_time() - self._frame_started
        app.min_redraw_interval = max(MIN_REDRAW_S, min(MAX_REDRAW_S, 2 * took))

    def _clock(self) -> float | None:
        return None if self.current is None else time.time()

    def run(self) -> int:
        return asyncio.run(self.run_async())

    async def run_async(self) -> int:
        self._loop = asyncio.get_running_loop()
        history = None if self.replay else open_history(self._history_file or history_path())
        app = self.build(history)
        restore_signals = signals.in_session(self._loop, self.on_interrupt, self._on_terminate)
        if self._first_question:
            question = self._first_question
            self._loop.call_soon(lambda: self._on_line(question))
        try:
            code = await app.run_async()
        finally:
            restore_signals()
            task = self._turn_task
            if task is not None:
                await asyncio.gather(task, return_exceptions=True)
            self._loop = None
        self._after(sys.stderr)
        return code if code is not None else self._code

    def _after(self, err: Any) -> None:
        """What stays in the terminal once the full screen is gone: where everything is."""
        if self.replay:
            return
        if self.results:
            last = self.results[-1]
            if last.final_answer is not None:
                err.write(for_terminal(f"last answer ({last.winner_label}): {last.final_answer.strip()}") + "\n")
        if self.conversation.root is not None:
            err.write(f"session logs: {self.conversation.root}\n")
        if self.conversation.session is not None:
            err.write(f"session: {self.conversation.session.id} (massgen --continue picks it up)\n")


def _replay_config(records: list[dict[str, Any]]) -> TeamConfig:
    """The recorded team (for /config on a replay); the default team when it no longer validates."""
    from massgen import ConfigError, default_team, validate_data

    started = next((r for r in records if messages.message_class(r) is messages.RunStarted), None)
    try:
        return validate_data((started or {}).get("payload", {}).get("config"), "the trace's config")
    except ConfigError:
        return default_team()


def run_tui(config: TeamConfig, source: str, *, vi: bool = False, timeout: float | None = None,
            session: Session | None = None, session_config: dict[str, Any] | None = None,
            first_question: str | None = None) -> int:
    """``massgen`` on a terminal; with ``first_question`` the session starts by asking it."""
    app = TuiApp(config, source, vi=vi, timeout=timeout, session=session, session_config=session_config,
                 first_question=first_question)
    code = app.run()
    if first_question is not None and app.results and code == exit_codes.SUCCESS:
        return exit_codes.for_status(app.results[0].status)
    return code


def replay_tui(records: list[dict[str, Any]], source: str) -> int:
    """``massgen logs show RUN --tui``: the finished run's screen, drawn from its trace."""
    return TuiApp(None, source, replay=records).run()
