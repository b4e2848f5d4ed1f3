"""The interactive session: a prompt that stays usable while the team works.

One asyncio loop runs the prompt. A question starts a turn: the team runs on its own
actor threads and is waited for on a worker thread, so the prompt keeps taking live
commands. Trace records reach the screen through ``say``, which hands text to the
loop thread and prints it above the prompt. Quitting always cancels a running turn
and waits for it, so its logs are complete.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
import threading
from pathlib import Path
from typing import Any

from prompt_toolkit import PromptSession, print_formatted_text
from prompt_toolkit.application import create_app_session, get_app_session
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.enums import EditingMode
from prompt_toolkit.formatted_text import AnyFormattedText
from prompt_toolkit.input import Input, PipeInput
from prompt_toolkit.output import Output

from massgen import Session, TeamConfig
from massgen.cli import exit_codes, signals
from massgen.cli.repl.commands import run_command
from massgen.cli.repl.live import FOLLOW_IDLE_S, LiveTurn
from massgen.cli.repl.prompt import build_session, open_block, open_history, unwrap_block
from massgen.cli.repl.session import Conversation, history_path
from massgen.cli.repl.views import result_text
from massgen.cli.text import for_terminal


class Repl:
    """``massgen`` without a question. ``input``/``output`` default to the terminal (tests pass pipes)."""

    def __init__(self, config: TeamConfig, source: str, *, vi: bool = False, timeout: float | None = None,
                 input: Input | None = None, output: Output | None = None,
                 history_file: Path | None = None, session: Session | None = None,
                 session_config: dict[str, Any] | None = None) -> None:
        self.conversation = Conversation(config, source, timeout=timeout, session=session,
                                         session_config=session_config)
        self.current: LiveTurn | None = None
        self.last: LiveTurn | None = None
        self.follow: str | None = None
        self.transcript: list[str] = []
        self._vi = vi
        self._input = input
        self._output = output
        self._history_file = history_file
        self._printed = threading.Condition()
        self._quit = False
        self._interrupts = 0
        self._code = exit_codes.SUCCESS
        self._turn_task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = 0
        self._context: contextvars.Context | None = None
        self._session: PromptSession[str] | None = None

    # -- output (any thread) ------------------------------------------------------------------

    def say(self, text: str) -> None:
        """Show ``text`` above the prompt; safe from any thread (trace subscribers call it)."""
        with self._printed:
            self.transcript.append(text)
            self._printed.notify_all()
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        if threading.get_ident() == self._loop_thread:
            self._print(text)
            return
        try:
            loop.call_soon_threadsafe(self._print, text, context=self._context)
        except RuntimeError:
            pass  # the loop closed between the check and the call

    def _print(self, text: str) -> None:
        print_formatted_text(for_terminal(text))  # answers, reasons and questions are text from outside

    def wait_for_text(self, needle: str, timeout: float, start: int = 0) -> bool:
        """Block until a shown line (from index ``start`` on) contains ``needle``."""
        with self._printed:
            return self._printed.wait_for(lambda: any(needle in t for t in self.transcript[start:]), timeout)

    def _redraw(self) -> None:
        session = self._session
        if session is not None and session.app.is_running:
            session.app.invalidate()

    # -- what the prompt shows ------------------------------------------------------------------

    def _prompt_line(self) -> str:
        turn = self.current
        return f"massgen [turn {turn.number}]> " if turn is not None else "massgen> "

    def _message(self) -> AnyFormattedText:
        """The live block sits in the prompt itself, so it needs no cursor-position support
        from the terminal (prompt-toolkit's bottom toolbar does); the prompt is redrawn on a timer."""
        turn = self.current
        if turn is None:
            return self._prompt_line()
        return "\n".join([*turn.agent_lines(), " " + turn.summary(), self._prompt_line()])

    # -- commands' view of the app ----------------------------------------------------------------

    def toggle_vi(self) -> str:
        self._vi = not self._vi
        if self._session is not None:
            self._session.editing_mode = EditingMode.VI if self._vi else EditingMode.EMACS
        return "vi key bindings" if self._vi else "Emacs key bindings"

    def request_quit(self) -> None:
        self._quit = True

    # -- running --------------------------------------------------------------------------------

    def run(self) -> int:
        """Run the session until /quit, Ctrl-D or a second Ctrl-C; returns the exit code."""
        with create_app_session(input=self._input, output=self._output):
            return asyncio.run(self.run_async())

    async def run_async(self) -> int:
        self._loop = asyncio.get_running_loop()
        self._context = contextvars.copy_context()
        self._loop_thread = threading.get_ident()
        history = open_history(self._history_file or history_path())
        self._session = build_session(message=self._message, agents=self.conversation.labels,
                                      history=history, vi=self._vi)
        self._session.default_buffer.on_text_changed += self._typed  # typing between two Ctrl-Cs: not "in a row"
        self.say(f"massgen: a team of {len(self.conversation.agent_ids)} "
                 f"({', '.join(self.conversation.agent_ids)}) from {self.conversation.source}. "
                 "Ask a question, or /help.")
        restore_signals = signals.in_session(self._loop, self._on_interrupt, self._on_terminate)
        try:
            while not self._quit:
                try:
                    text = await self._session.prompt_async()
                except KeyboardInterrupt:
                    self._on_interrupt()
                    continue
                except EOFError:
                    break
                self._interrupts = 0
                if text.strip():
                    self.say(self._prompt_line() + text)  # the prompt erases itself; keep what was typed
                self._on_line(text)
        finally:
            await self._close()
            restore_signals()
        return self._code

    def _on_line(self, text: str) -> None:
        if not text.strip():
            return
        if text.lstrip().startswith("/") and "\n" not in text.strip():
            self.say(run_command(self, text))
            return
        if open_block(text):
            self.say('the """ block is not closed; nothing was sent')
            return
        question = unwrap_block(text).strip()
        if not question:
            return
        if self.current is not None:
            self.say(f"turn {self.current.number} is still running; wait, or /answer-now or /cancel it")
            return
        self._turn_task = asyncio.ensure_future(self._run_turn(question))

    def _typed(self, buffer: Buffer) -> None:
        if buffer.text:
            self._interrupts = 0

    def _on_interrupt(self) -> None:
        """Ctrl-C: cancel a running turn; a second Ctrl-C in a row quits."""
        self._interrupts += 1
        turn = self.current
        if self._interrupts >= 2:
            self.say("quitting" + (" (cancelling the running turn first)" if turn is not None else ""))
            self._code = exit_codes.INTERRUPTED
            self._quit = True
        elif turn is not None and turn.team is not None:
            turn.cancel_requested = True
            turn.team.cancel("interrupted by Ctrl-C")
            self.say("cancelling the turn; the best answer so far is kept (Ctrl-C again quits)")
        else:
            self.say("(Ctrl-C again, /quit or Ctrl-D leaves)")

    def _on_terminate(self, name: str) -> None:
        """SIGTERM or SIGHUP: end the session; a running turn is cancelled and its logs closed first."""
        turn = self.current
        self.say(f"{name}: ending the session" + (" (cancelling the running turn first)" if turn is not None else ""))
        self._code = exit_codes.INTERRUPTED
        self._quit = True
        if turn is not None and turn.team is not None:
            turn.cancel_requested = True
            turn.team.cancel(f"interrupted by {name}")
        # The prompt's app; on a dumb terminal prompt-toolkit runs another one, which the app session knows.
        running = get_app_session().app or (self._session.app if self._session is not None else None)
        if running is not None and running.is_running:
            running.exit(exception=EOFError())

    async def _run_turn(self, question: str) -> None:
        number = self.conversation.next_turn
        turn = LiveTurn(number, question, self.say, self._redraw, follow=self.follow)
        team = self.conversation.new_team(question, [turn.on_record])
        turn.team = team
        self.current = turn
        ticker = asyncio.ensure_future(self._tick(turn))
        try:
            team.start()
            result = await asyncio.to_thread(team.wait)
        except Exception as exc:
            self.say(f"the turn could not run: {type(exc).__name__}: {exc}")
            self.current = None
            return
        finally:
            ticker.cancel()
        turn.result = result
        self.conversation.record(number, question, result)
        self.current, self.last = None, turn
        self.say(result_text(result))
        if self.conversation.unsaved:
            self.say(self.conversation.unsaved)
        self._redraw()

    @staticmethod
    async def _tick(turn: LiveTurn) -> None:
        """While the turn runs: a followed agent's incomplete line is shown once it has waited
        (``LiveTurn.tick``); an agent that streams half a line and then thinks sends no record to do it."""
        while True:
            await asyncio.sleep(FOLLOW_IDLE_S / 4)
            turn.tick()

    async def _close(self) -> None:
        """Leave with complete logs: cancel a running turn and wait until its trace is closed."""
        turn, task = self.current, self._turn_task
        if turn is not None and turn.team is not None and not turn.team.done and not turn.cancel_requested:
            turn.team.cancel("the interactive session was closed")  # once: a signal may have cancelled it
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)
        if self.conversation.root is not None:
            self.say(f"session logs: {self.conversation.root}")
        if self.conversation.session is not None:
            self.say(f"session: {self.conversation.session.id} (massgen --continue picks it up)")
        self._loop = None


def run_repl(config: TeamConfig, source: str, *, vi: bool = False, timeout: float | None = None,
             session: Session | None = None, session_config: dict[str, Any] | None = None) -> int:
    """Entry point for ``massgen`` with no question; every turn is stored in ``session`` (a new one if None)."""
    return Repl(config, source, vi=vi, timeout=timeout, session=session, session_config=session_config).run()


def can_run_interactively() -> bool:
    """A terminal on stdin, or a pipe input that a caller (a test) made the prompt-toolkit session's."""
    if sys.stdin is not None and sys.stdin.isatty():
        return True
    return isinstance(getattr(get_app_session(), "_input", None), PipeInput)
