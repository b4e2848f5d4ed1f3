"""The interactive session, driven like a user would: keys into a prompt-toolkit pipe input.

The REPL runs on its own thread with a real prompt, a real team of scripted agents and
real logs. ``slow`` streams a line and then thinks for 30 s in its first incarnation,
so live commands land while the turn runs; tests wait for events (the live view's
state, lines shown on screen), never for time.
"""

from __future__ import annotations

import io
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.data_structures import Size
from prompt_toolkit.document import Document
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output
from support import FACTOR, assert_trace_invariants, of_type, quick_and_slow, scripted, step, team_config

from massgen.cli.main import main
from massgen.cli.repl import Repl
from massgen.cli.repl.live import LiveTurn
from massgen.cli.repl.prompt import ReplCompleter, open_block, unwrap_block
from massgen.configs import TeamConfig
from massgen.logs import read_trace, rebuild_from_trace

WAIT = 10.0 * FACTOR


def two_agents() -> TeamConfig:
    """``quick_and_slow``, its deadlines past slow's 30 s of thinking."""
    return team_config(*quick_and_slow(), run_timeout=60, turn_timeout=45, idle_timeout=45)


def screen_text(buffer: io.StringIO) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]", "", buffer.getvalue())


class Driver:
    """Types into the REPL and waits for what it shows."""

    def __init__(self, repl: Repl, pipe: PipeInput, screen: io.StringIO) -> None:
        self.repl, self.pipe, self.screen = repl, pipe, screen
        self.mark = 0
        self.code: int | None = None

    def line(self, text: str) -> None:
        self.mark = len(self.repl.transcript)
        self.pipe.send_text(text + "\r")

    def keys(self, text: str) -> None:
        self.mark = len(self.repl.transcript)
        self.pipe.send_text(text)

    def expect(self, needle: str) -> str:
        assert self.repl.wait_for_text(needle, WAIT, start=self.mark), (
            f"{needle!r} not shown; screen said:\n" + "\n".join(self.repl.transcript[self.mark:]))
        return "\n".join(self.repl.transcript[self.mark:])

    def ask(self, question: str, ready: Callable[[LiveTurn], bool]) -> LiveTurn:
        """Submit a question and wait until the running turn is in the state ``ready`` describes."""
        self.line(question)
        self.expect("team of 2: agent1=quick")
        turn = self.repl.current
        assert turn is not None
        assert turn.wait_until(ready, WAIT), f"turn never got ready: {turn.agent_lines()}"
        return turn


def both_busy(turn: LiveTurn) -> bool:
    """quick has answered (and waits for slow's independent first answer); slow streams its long think."""
    return turn.note("quick").startswith("answered") and turn.note("slow").startswith("streaming")


@contextmanager
def session(config: TeamConfig, tmp_path: Path, **options: Any) -> Iterator[Driver]:
    screen = io.StringIO()
    output = Vt100_Output(screen, lambda: Size(rows=40, columns=160), term="xterm", enable_cpr=False)
    with create_pipe_input() as pipe:
        repl = Repl(config, "test config", input=pipe, output=output, history_file=tmp_path / "repl_history",
                    **options)
        driver = Driver(repl, pipe, screen)

        def run() -> None:
            driver.code = repl.run()

        thread = threading.Thread(target=run, name="repl")
        thread.start()
        try:
            yield driver
        finally:
            if thread.is_alive():
                pipe.send_text("/quit\r")
            thread.join(WAIT)
            assert not thread.is_alive(), "the REPL did not quit"


def turn_dir(repl: Repl, number: int) -> Path:
    assert repl.conversation.root is not None
    return repl.conversation.root / f"turn_{number}" / "attempt_1"


def test_a_two_turn_conversation_with_votes_kill_and_answer_now(tmp_path: Path) -> None:
    with session(two_agents(), tmp_path) as d:
        d.ask("What is 2+2?", both_busy)
        d.line("/votes")
        d.expect("no votes in the current round")
        d.line("/status")
        assert "streaming 20 chars" in d.expect("calls")
        d.line("/kill slow")
        shown = d.expect("── final answer")
        assert "killing slow" in shown and "restarting" in shown
        assert "2+2=4, shown" in d.expect("── final answer (agent2.1, by slow)")
        d.line("/answers")
        assert "4" in d.expect("agent2.1 (slow")
        d.line("/events")
        assert "KillAgent" in d.expect("RunFinished")
        d.line("/trace 3")
        d.expect("RunFinished")

        # Turn 2, typed as a """ block: it sees turn 1 as context, and is hurried with /answer-now.
        d.ask('"""\rAnd three times that?\rAnswer briefly.\r"""', both_busy)
        d.line("/answer-now")
        shown = d.expect("── final answer")
        assert "answer now" in shown
        assert "── final answer (agent1.1, by quick)\n4" in d.expect("── final answer (agent1.1, by quick)")
        d.line("/context")
        assert "the next turn sees 2 earlier turns" in d.expect("session logs")
        d.line("/quit")
        d.expect("bye")

    repl = d.repl
    assert d.code == 0
    first = read_trace(turn_dir(repl, 1))
    assert_trace_invariants(first)
    kills = of_type(first, "KillAgent")
    assert len(kills) == 1 and kills[0]["sender"] == "user#0" and kills[0]["payload"]["name"] == "slow"
    assert [r["payload"]["where"] for r in of_type(first, "ChildFailed")] == ["user"]
    assert of_type(first, "AgentRestarting")[0]["payload"]["reason"] == "killed by user"
    restarted = [r for r in of_type(first, "TurnStarted") if r["payload"]["agent"] == "slow"]
    assert restarted[-1]["payload"]["incarnation"] == 2

    second = read_trace(turn_dir(repl, 2))
    assert_trace_invariants(second)
    started = of_type(second, "RunStarted")[0]["payload"]
    assert started["question"] == "And three times that?\nAnswer briefly."
    assert started["history"] == [["What is 2+2?", "2+2=4, shown"]]
    assert started["turn"] == 2
    assert len(of_type(second, "AnswerNow")) == 1
    assert of_type(second, "RunFinished")[0]["payload"]["status"] == "completed"
    for number in (1, 2):
        assert rebuild_from_trace(turn_dir(repl, number), write=False)["status.json"] == \
            (turn_dir(repl, number) / "status.json").read_text()
    assert "What is 2+2?" in (tmp_path / "repl_history").read_text()
    assert "streaming 20 chars" in screen_text(d.screen)  # the live block was on screen


def test_cancel_and_timeout_keep_the_best_answer_so_far(tmp_path: Path) -> None:
    with session(two_agents(), tmp_path) as d:
        d.ask("What is 2+2?", both_busy)
        d.line("What else?")
        d.expect("turn 1 is still running")
        d.line("/cancel")
        shown = d.expect("── best answer so far (agent1.1)")
        assert "cancelled by user (/cancel)" in shown
        d.line("/timeout inf")  # no deadline at all is not a deadline
        d.expect("/timeout: must be a positive, finite number of seconds, not inf")

        d.ask("Again?", both_busy)
        d.line("/timeout 0.01")
        d.expect("── best answer so far (agent1.1)")
        d.line("/cancel")
        d.expect("no turn is running")

    first, second = (read_trace(turn_dir(d.repl, n)) for n in (1, 2))
    assert of_type(first, "CancelRun")[0]["payload"]["reason"] == "cancelled by user (/cancel)"
    assert of_type(first, "RunFinished")[0]["payload"]["status"] == "interrupted"
    assert of_type(second, "SetRunTimeout")[0]["payload"]["seconds"] == 0.01
    assert of_type(second, "RunFinished")[0]["payload"]["status"] == "timeout"
    assert of_type(second, "RunStarted")[0]["payload"]["history"] == [["What is 2+2?", "4"]]


def test_ctrl_c_cancels_the_turn_and_a_second_ctrl_c_quits_with_complete_logs(tmp_path: Path) -> None:
    with session(two_agents(), tmp_path) as d:
        d.ask("What is 2+2?", both_busy)
        d.keys("\x03")
        d.expect("cancelling the turn")
        d.keys("\x03")
        d.expect("quitting")

    assert d.code == 4
    trace = read_trace(turn_dir(d.repl, 1))
    assert_trace_invariants(trace)
    assert of_type(trace, "CancelRun")[0]["payload"]["reason"] == "interrupted by Ctrl-C"
    assert of_type(trace, "RunFinished")[0]["payload"]["status"] == "interrupted"
    assert (turn_dir(d.repl, 1) / "final" / "quick" / "answer.txt").read_text() == "4\n"


def test_a_second_ctrl_c_with_no_turn_running_quits_with_exit_4(tmp_path: Path) -> None:
    """docs/interactive.md: Ctrl-C twice quits, exit code 4 (interrupted), turn or no turn; the full screen too."""
    with session(two_agents(), tmp_path) as d:
        d.expect("Ask a question")
        d.keys("\x03")
        d.expect("(Ctrl-C again, /quit or Ctrl-D leaves)")
        d.keys("\x03")
        d.expect("quitting")
    assert d.code == 4


def test_typing_between_two_ctrl_cs_or_terminal_noise_neither_quits_nor_crashes(tmp_path: Path) -> None:
    with session(two_agents(), tmp_path) as d:
        d.ask("What is 2+2?", both_busy)
        d.keys("\x03")
        d.expect("── best answer so far")  # the turn is over
        d.keys("a new question I am still typ")  # then Ctrl-C to clear it: that quit the session
        d.keys("\x03")
        d.expect("(Ctrl-C again, /quit or Ctrl-D leaves)")
        d.keys("\x1b[0m\x1a")  # what pasted colour codes and Ctrl-Z type: a traceback, and a literal \x1a
        d.line("/help")
        d.expect("Aliases")
    assert d.code == 0
    assert "Unhandled exception" not in screen_text(d.screen) and "Press ENTER" not in screen_text(d.screen)


def test_quitting_during_a_turn_cancels_it_and_waits_for_its_logs(tmp_path: Path) -> None:
    with session(two_agents(), tmp_path) as d:
        d.ask("What is 2+2?", both_busy)
        d.line("/quit")
        d.expect("session logs")
    assert d.code == 0
    log_dir = turn_dir(d.repl, 1)
    finished = of_type(read_trace(log_dir), "RunFinished")[0]["payload"]
    assert finished["reason"] == "the interactive session was closed"
    rebuilt = rebuild_from_trace(log_dir)
    for relative, text in rebuilt.items():
        assert (log_dir / relative).read_text(encoding="utf-8") == text, relative


def test_follow_restart_and_read_only_commands_without_a_turn(tmp_path: Path) -> None:
    with session(two_agents(), tmp_path, vi=True) as d:
        for command, needle in (("/status", "no turn yet"), ("/votes", "no turn has started"),
                                ("/kill slow", "no turn is running"), ("/kill nobody", "no agent 'nobody'"),
                                ("/config", "agent2   slow"), ("/nonsense", "unknown command"),
                                ("/vi", "Emacs key bindings"), ("/help", "/answer-now")):
            d.line(command)
            d.expect(needle)
        d.line("/follow agent2")
        d.expect("following slow")
        d.ask("What is 2+2?", both_busy)
        d.expect("slow │ thinking it through")
        d.line("/restart slow")
        d.expect("── final answer (agent2.1, by slow)")
    trace = read_trace(turn_dir(d.repl, 1))
    assert of_type(trace, "RestartAgent")[0]["payload"]["name"] == "slow"
    assert of_type(trace, "AgentRestarting")[0]["payload"]["reason"] == "restart requested by user"


def test_follow_shows_text_without_a_newline_promptly_and_before_a_straggler_is_left_out(
        tmp_path: Path) -> None:
    """A followed agent that streams part of a line and then thinks is shown as it thinks, not when its turn
    ends; the text of an agent left out as a straggler is on screen when it is left out."""
    mumbler = scripted("slow", [step(text="thinking a... ", incarnations=[1]), step(delay=30, incarnations=[1]),
                                step(new_answer="2+2=4, shown")],
                       [step(when_answers=["agent2"]), step(vote="agent2", reason="mine shows why")])
    quick = quick_and_slow()[0]
    config = team_config(quick, mumbler, run_timeout=60, turn_timeout=45, idle_timeout=45, straggler_grace=3)
    with session(config, tmp_path) as d:
        d.line("/follow slow")
        d.expect("following slow")
        d.line("What is 2+2?")
        d.mark = len(d.repl.transcript)
        assert d.repl.wait_for_text("slow │ thinking a...", 2.0 * FACTOR, start=d.mark), (
            "the partial line never showed:\n" + "\n".join(d.repl.transcript[d.mark:]))
        shown = d.expect("left out")
        assert shown.index("slow │ thinking a...") < shown.index("left out")
        d.expect("── final answer (agent1.1, by quick)")  # the round went on without it


def test_massgen_without_a_question_opens_the_session(tmp_path: Path) -> None:
    screen = io.StringIO()
    codes: list[int] = []
    with create_pipe_input() as pipe:
        def run() -> None:
            output = Vt100_Output(screen, lambda: Size(rows=40, columns=160), term="xterm", enable_cpr=False)
            with create_app_session(input=pipe, output=output):
                codes.append(main(["--config", "@examples/basic/scripted_three_agents"]))

        thread = threading.Thread(target=run)
        thread.start()
        pipe.send_text("/config\r/quit\r")
        thread.join(WAIT)
    assert codes == [0]
    text = screen_text(screen)
    assert "agent1   agent_a" in text and "bye" in text


def test_without_a_terminal_massgen_asks_for_a_question(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", "@examples/basic/scripted_three_agents"]) == 64  # a usage error, as "" is
    assert "give a question" in capsys.readouterr().err


def test_completion_and_multi_line_blocks() -> None:
    completer = ReplCompleter(lambda: {"agent1": "quick", "agent2": "slow"})

    def complete(text: str) -> list[str]:
        return [c.text for c in completer.get_completions(Document(text), CompleteEvent())]

    assert complete("/ki") == ["/kill"]
    assert complete("/kill s") == ["slow"]
    assert complete("/kill agent") == ["agent1", "agent2"]
    assert complete("/follow o") == ["off"]
    assert complete("/votes x") == []
    assert open_block('"""') and open_block('"""first line\nsecond')
    assert not open_block('"""two\nlines"""') and not open_block("plain")
    assert unwrap_block('"""\nline one\nline two\n"""') == "line one\nline two"
