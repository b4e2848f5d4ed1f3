"""The Web UI in a real browser (Debian's headless Chromium via Playwright) against `massgen serve --ui`.

Each page records every request it makes; a page may only ever talk to its own server.
Set MASSGEN_UI_SCREENSHOTS=DIR to keep screenshots of a live run and a replay.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from serve_process import ServerProcess, chromium, start_server, trace_of, wait_until
from support import FACTOR

T = 20_000 * FACTOR  # ms, for Playwright waits

_TIMEOUTS = {"orchestrator_timeout_seconds": 120, "turn_timeout_seconds": 120, "idle_stream_timeout_seconds": 60}


def _stream(*pieces: str, gap: float = 0.05) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    for piece in pieces:
        steps += [{"text": piece}, {"delay": gap}]
    return steps


# The final answer is Markdown with HTML in it: the page must show the HTML as text and fetch nothing.
PRESENTED = "The answer is **4**. <img src=http://example.invalid/x.png> <b>not bold</b>"


# alpha's answer runs to several lines: its lane shows the first few, and all of it on request.
ALPHA_ANSWER = "2 + 2 = 4\n" + "\n".join(f"check {i}: {i} + {4 - i} = 4" for i in range(5))

# Three agents stream a little (gamma also calls a tool no one offers), answer, and all vote for
# alpha's answer; alpha presents.
def three(pieces: int = 1, gap: float = 0.05) -> dict[str, Any]:
    return {
        "agents": [
            {"id": "alpha", "backend": {"type": "scripted", "on_exhausted": "repeat_last",
                                        "present": PRESENTED,
                                        "script": [[*_stream("Let me think. ", "Two plus two ", "makes four.",
                                                             *(f"({i}) " for i in range(pieces)), gap=gap),
                                                    {"new_answer": ALPHA_ANSWER}],
                                                   [{"vote": "agent1", "reason": "correct and short"}]]}},
            {"id": "beta", "backend": {"type": "scripted", "on_exhausted": "repeat_last",
                                       "script": [[{"delay": 0.1}, *_stream("Counting: ", "one, two, ", "three, four."),
                                                   {"new_answer": "four"}],
                                                  [{"when_answers": ["agent1"]},
                                                   {"vote": "agent1", "reason": "same, with the sum shown"}]]}},
            {"id": "gamma", "backend": {"type": "scripted", "on_exhausted": "repeat_last",
                                        "script": [[{"delay": 0.2}, *_stream("Quick: ", "4."),
                                                    {"tool": "calculator", "args": {"expr": "2+2"}}],
                                                   [{"new_answer": "4 (2+2)"}],
                                                   [{"when_answers": ["agent1", "agent2"]},
                                                    {"vote": "agent1", "reason": "the clearest"}]]}},
        ],
        "timeout_settings": _TIMEOUTS,
    }


# alpha drafts an answer at once (a restarted alpha votes instead); beta streams for minutes, so
# the run lasts until the test steers it; anyone asked to vote later votes for the first answer.
STEER = {
    "agents": [
        {"id": "alpha", "backend": {"type": "scripted", "on_exhausted": "vote_first", "present": "Four.",
                                    "script": [[{"text": "Drafting. "}, {"delay": 0.2},
                                                {"new_answer": "draft: 4", "incarnations": [1]},
                                                {"vote": "agent1", "reason": "still right", "incarnations": [2, 3]}]]}},
        {"id": "beta", "backend": {"type": "scripted", "on_exhausted": "vote_first",
                                   "script": [[*_stream(*(f"line {i} of a long derivation\n" for i in range(3000)),
                                                        gap=0.04), {"new_answer": "beta's long answer"}]]}},
    ],
    "orchestrator": {"restart": {"backoff_base_seconds": 0.05, "backoff_max_seconds": 0.2}},
    # alpha has voted long before beta is done: beta must not be left out as a straggler meanwhile.
    "timeout_settings": {**_TIMEOUTS, "straggler_grace_seconds": 600},
}


# alpha answers "Final answer: Paris" and presents Lyon instead: the winner's answer is used as written.
CHANGED_PRESENTATION = {
    "agents": [
        {"id": "alpha", "backend": {"type": "scripted", "present": "Having thought again: the capital is Lyon.",
                                    "script": [[{"new_answer": "France's capital is Paris.\nFinal answer: Paris"}],
                                               [{"vote": "agent1", "reason": "the capital"}]]}},
        {"id": "beta", "backend": {"type": "scripted", "script": [[{"new_answer": "Final answer: Lyon"}],
                                                                  [{"vote": "agent1", "reason": "Paris"}]]}},
    ],
}


# Three agents each vote for their own answer: a 1-1-1 split the judge's winner_rule settles.
SPLIT = {
    "agents": [{"id": f"self_{n}", "backend": {"type": "scripted", "on_exhausted": "repeat_last", "script": [
        [{"new_answer": f"{n + 3}"}],
        [{"when_answers": ["agent1", "agent2", "agent3"]}, {"vote": f"agent{n}", "reason": "mine"}]]}}
        for n in (1, 2, 3)],
    "timeout_settings": _TIMEOUTS,
}


def _write(directory: Path, name: str, data: dict[str, Any]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("webui")
    _write(path, "three", three())
    _write(path, "three_slowly", three(pieces=12, gap=0.2))
    _write(path, "steer", STEER)
    _write(path, "changed_presentation", CHANGED_PRESENTATION)
    _write(path, "split", SPLIT)
    return path


@pytest.fixture(scope="module")
def server(workdir: Path) -> Iterator[ServerProcess]:
    process = start_server(workdir, "--ui", "--config", "steer.yaml", "--shutdown-grace", "1")
    yield process
    process.stop()


@pytest.fixture(scope="module")
def browser(server: ServerProcess) -> Iterator[Any]:
    yield from chromium(server)


class Tab:
    """A browser tab on the UI that remembers every URL it requested."""

    open_tabs = 0

    def __init__(self, browser: Any, url: str) -> None:
        Tab.open_tabs += 1
        self.base = url.split("/ui", 1)[0]
        self.token = url.split("token=", 1)[1]  # what a script sends as a bearer token
        self.context = browser.new_context(viewport={"width": 1400, "height": 1000})
        self.page = self.context.new_page()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.set_default_timeout(T)
        self.page.goto(url)
        self.page.wait_for_selector("[data-testid=start-form]")  # signed in: the token traded, the URL clean

    def api(self, path: str) -> Any:
        """GET a /ui/api path as a script would, with the printed token."""
        return httpx.get(f"{self.base}/ui/api{path}", headers={"authorization": f"Bearer {self.token}"},
                         timeout=30 * FACTOR).json()

    def open(self, run_id: str) -> None:
        self.page.goto(f"{self.base}/ui?run={run_id}")
        self.page.wait_for_selector("[data-testid=run-header]")

    def state(self) -> dict[str, Any]:
        data: dict[str, Any] = self.page.evaluate("window.__mgState")
        return data

    def stats(self) -> dict[str, Any]:
        data: dict[str, Any] = self.page.evaluate("window.__mgStats")
        return data

    def wait(self, js: str, arg: Any = None) -> None:
        """Until ``js`` (an expression or a function of ``arg``) is true on the page.

        Polled from here: Playwright's wait_for_function evaluates strings, which the page's CSP forbids."""
        expression = js if re.match(r"\s*(\(|\w+\s*=>)", js) else f"() => ({js})"
        deadline = T
        while not self.page.evaluate(expression, arg):
            deadline -= 50
            if deadline < 0:
                raise AssertionError(f"timed out waiting for {js}")
            self.page.wait_for_timeout(50)

    def shot(self, name: str, full_page: bool = True) -> None:
        folder = os.environ.get("MASSGEN_UI_SCREENSHOTS")
        if folder:
            # Bytes, written here: with path=, Playwright writes through an executor thread the leak check sees.
            (Path(folder) / name).write_bytes(self.page.screenshot(full_page=full_page))

    def close(self) -> None:
        """Close the tab, then check that it raised no page error and talked only to its server."""
        before = _renderers()
        self.context.close()
        Tab.open_tabs -= 1
        # A closed tab's renderer exits a moment after close() returns; wait, so the leak check doesn't catch
        # it mid-exit: until one renderer fewer runs (none once no tab is open) and none is half gone.
        wait_until(lambda: (len(_renderers()) < len(before) or not before) and
                   (Tab.open_tabs > 0 or not _renderers()) and None not in _renderers(), 10,
                   "the tab's renderer process to exit")
        assert not self.errors, self.errors
        outside = [u for u in self.requests if not u.startswith(self.base + "/")]
        assert not outside, f"requests left the server: {outside}"


def _renderers() -> list[int | None]:
    """Chromium renderer processes of this test process; None for one that is exiting (no command line)."""
    import psutil

    found: list[int | None] = []
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() == psutil.STATUS_ZOMBIE:
                continue
            cmdline = child.cmdline()
            if not cmdline:
                found.append(None)
            elif "--type=renderer" in " ".join(cmdline):
                found.append(child.pid)
        except psutil.Error:
            continue
    return found


@pytest.fixture
def tab(browser: Any, server: ServerProcess) -> Iterator[Tab]:
    opened = Tab(browser, server.ui_url())
    yield opened
    opened.close()


def of_trace(trace: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r for r in trace if r["type"] == kind]


def run_dir(server: ServerProcess, run_id: str) -> Path:
    return server.log_dir.joinpath(*run_id.split("~"))


def chat_in_background(server: ServerProcess, model: str, question: str) -> threading.Thread:
    """A /v1/chat/completions run held open by a client thread, as any API user would."""
    def call() -> None:
        httpx.post(f"{server.api_url}/chat/completions", timeout=120 * FACTOR,
                   json={"model": model, "messages": [{"role": "user", "content": question}]})

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    return thread


def finished_three_agent_run(server: ServerProcess, tab: Tab, question: str) -> tuple[str, list[dict[str, Any]]]:
    """A 3-agent scripted run asked through /v1 and finished, opened in ``tab``: its id and trace."""
    client = chat_in_background(server, "massgen/path:three.yaml", question)
    run_id = run_id_of_question(tab, question)
    client.join(30 * FACTOR)
    wait_until(lambda: trace_of(run_dir(server, run_id))[-1]["type"] == "RunFinished", 30, "the run to finish")
    tab.open(run_id)
    tab.wait("window.__mgStats.end !== null")
    return run_id, trace_of(run_dir(server, run_id))


_BUSY = {"starting", "idle", "working", "voting", "presenting", "restarting"}


def last_done_by(trace: list[dict[str, Any]], agent: str) -> str:
    """What the trace says an agent last did, in the words of its lane's status chip."""
    status = "starting"
    for r in trace:
        p, tell = r["payload"], r["kind"] == "tell"
        to, sender = str(r.get("to", "")).split("#")[0], r["sender"].split("#")[0]
        if r["type"] == "ChildStarted" and p["name"] == agent:
            status = "idle"
        elif r["type"] == "TurnStarted" and p["agent"] == agent:
            status = "voting" if p["vote_only"] else "working"
        elif r["type"] == "CancelTurn" and tell and to == agent and status in _BUSY:
            status = "idle"
        elif r["type"] == "PresentFinal" and tell and to == agent:
            status = "presenting"
        elif r["type"] == "AnswerAccepted" and p["agent"] == agent:
            status = "answered"
        elif r["type"] == "RecordVote" and tell and p["voter"] == agent:
            status = "voted"
        elif r["type"] == "FinalPresented" and tell and sender == agent:
            status = "done"
        elif r["type"] == "ChildFailed" and p["name"] == agent:
            status = "failed"
        elif r["type"] == "AgentRestarting" and p["name"] == agent:
            status = "restarting"
        elif r["type"] == "AgentMarkedFailed" and p["name"] == agent:
            status = "dead"
        elif r["type"] == "AgentExcluded" and p["name"] == agent:
            status = "excluded"
        elif r["type"] == "RunFinished" and p["winner"] == agent:
            status = "winner"  # whatever it did last, the winner's lane says it won
        elif r["type"] == "RunFinished" and status in _BUSY:
            status = "stopped"  # the run stopped it mid-turn or between turns
    return status


def assert_agents_agree_with_the_trace(tab: Tab, trace: list[dict[str, Any]]) -> None:
    agents = trace[0]["payload"]["agents"]
    shown = {a: tab.page.locator(f"[data-testid=status-{a}]").inner_text() for a in agents}
    assert shown == {a: last_done_by(trace, a) for a in agents}
    assert not set(shown.values()) & _BUSY, shown  # the run is over: nobody is shown at work


def run_id_of_question(tab: Tab, question: str) -> str:
    found: dict[str, str] = {}

    def listed() -> bool:
        runs = tab.api("/runs")["runs"]
        found.update({r["question"]: r["id"] for r in runs})
        return question in found

    wait_until(listed, 20, f"the run {question!r} listed")
    return found[question]


def test_three_agents_show_lanes_votes_and_the_final_answer(server: ServerProcess, tab: Tab) -> None:
    client = chat_in_background(server, "massgen/path:three.yaml", "What is 2+2? (three)")
    run_id = run_id_of_question(tab, "What is 2+2? (three)")  # a /v1 run is listed too
    tab.open(run_id)
    tab.wait("window.__mgStats.end !== null")
    client.join(30 * FACTOR)
    page = tab.page
    for agent in ("alpha", "beta", "gamma"):
        assert page.locator(f"[data-testid=lane-{agent}]").is_visible()
    assert "Two plus two makes four." in page.locator("[data-testid=lane-body-alpha]").inner_text()
    card = page.locator("[data-testid=lane-body-gamma] .tool")  # gamma called a tool nobody offers
    assert "calculator" in card.inner_text() and "unknown tool" in card.inner_text()
    votes = page.locator("[data-testid=votes] tr.vote:not(.struck)")
    assert votes.count() == 3 and all("agent1.1" in t for t in votes.all_inner_texts())
    assert page.locator("[data-testid=tally]").inner_text() == "tally: agent1 3 · consensus: agent1 (3 of 3 votes)"
    final = page.locator("[data-testid=final-answer]")
    assert final.inner_text().strip() == "The answer is 4. <img src=http://example.invalid/x.png> <b>not bold</b>"
    assert final.locator("strong").count() == 1 and final.locator("img, b").count() == 0
    assert page.locator("[data-testid=best-so-far]").count() == 0
    trace = trace_of(run_dir(server, run_id))
    assert_agents_agree_with_the_trace(tab, trace)
    # The run list is fetched every 3 s: its chip may still say "running" for up to that long after the run ended.
    tab.wait("(id) => document.querySelector(`[data-testid=runs] a[data-run='${id}'] .chip`)?.innerText === "
             "'completed'", run_id)
    assert tab.stats()["received"] == len(trace) and tab.stats()["dupes"] == 0 and tab.stats()["missing"] == 0
    answer = tab.api(f"/runs/{run_id}/answers/agent2.1")
    assert (answer["agent"], answer["content"]) == ("beta", "Counting: one, two, three, four.\n\nfour")
    tab.shot("web_ui_finished.png")


def test_a_finished_run_names_its_winner_numbers_turns_per_agent_and_shows_its_answer_at_the_top(
        server: ServerProcess, tab: Tab) -> None:
    _run_id, trace = finished_three_agent_run(server, tab, "What is 2+2? (winner)")
    page = tab.page
    winner = of_trace(trace, "RunFinished")[-1]["payload"]["winner"]
    assert winner == "alpha" and page.locator("[data-testid=status-alpha]").inner_text() == "winner"
    # each lane counts its own turns: every agent's first turn is turn 1 (the trace's turn ids are global)
    for agent in ("alpha", "beta", "gamma"):
        heads = page.locator(f"[data-testid=lane-body-{agent}] .turn-head").all_inner_texts()
        numbered = [h.split(" · ")[0].lower() for h in heads if not h.lower().startswith("final")]
        assert numbered == [f"{'vote-only turn' if h.lower().startswith('vote') else 'turn'} {i}"
                            for i, h in enumerate(heads, 1) if not h.lower().startswith("final")], heads
    # the final answer is in view without scrolling, on a laptop screen and on a narrow window
    for width, height in ((1280, 800), (800, 800)):
        page.set_viewport_size({"width": width, "height": height})
        page.evaluate("window.scrollTo(0, 0)")
        box = page.locator("[data-testid=final-answer]").bounding_box()
        assert box is not None and box["y"] + 20 <= height, (width, box)
    page.set_viewport_size({"width": 1280, "height": 800})
    tab.shot("web_ui_final_800.png", full_page=False)  # what a 1280 x 800 window shows, unscrolled


def test_a_split_vote_says_no_majority_and_how_the_tie_was_broken(server: ServerProcess, tab: Tab) -> None:
    client = chat_in_background(server, "massgen/path:split.yaml", "Pick a number (split)")
    run_id = run_id_of_question(tab, "Pick a number (split)")
    client.join(30 * FACTOR)
    wait_until(lambda: trace_of(run_dir(server, run_id))[-1]["type"] == "RunFinished", 30, "the run to finish")
    tab.open(run_id)
    tab.wait("window.__mgStats.end !== null")
    page = tab.page
    page.set_viewport_size({"width": 1280, "height": 800})
    page.evaluate("window.scrollTo(0, 0)")
    tab.shot("web_ui_split_800.png", full_page=False)  # what a 1280 x 800 window shows, unscrolled
    tally = page.locator("[data-testid=tally]")
    assert tally.inner_text().endswith(" · no majority (1-1-1): tie broken for agent1 by winner_rule support"), \
        tally.inner_text()
    assert "converged" not in tally.inner_text() and "consensus" not in tally.inner_text()
    # the tally is in view without scrolling (it was below the fold, under the lanes and the graph)
    box = tally.bounding_box()
    assert box is not None and box["y"] + box["height"] <= 800, box
    # a split the tie rule settled is not "the team converged": the final panel says how it was decided
    status = page.locator("[data-testid=final-status]").inner_text()
    assert status.startswith("completed: decided by the tie rule: no majority (1-1-1): tie broken for agent1"), status
    assert "converged" not in status


def test_a_working_lane_shows_a_spinner_and_its_seconds_and_the_header_counts_rounds_from_1(
        server: ServerProcess, tab: Tab) -> None:
    """Before, a lane only said "working" (the terminal's panel shows a spinner and the seconds its model call
    has been out), and the header said "round 0" where the terminal says round 1."""
    page = tab.page
    page.set_viewport_size({"width": 1280, "height": 800})
    page.fill("[data-testid=question]", "Show signs of life")
    page.click("[data-testid=start]")
    tab.wait("() => window.__mgState && window.__mgState.answerOrder.length === 1")  # alpha's draft; beta streams on
    tab.wait("() => document.querySelector('[data-testid=lane-body-beta]').innerText.includes('line 20 of')")
    tab.shot("web_ui_alive.png", full_page=False)
    assert page.locator("[data-testid=round]").inner_text() == "1"
    alive = page.locator("[data-testid=alive-beta]")
    assert re.fullmatch(r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] model working \d+s", alive.inner_text()), alive.inner_text()
    # the seconds count on while the call is out, and the spinner turns
    first = alive.inner_text()
    seconds = int(first.rsplit(" ", 1)[1][:-1])
    tab.wait("(n) => Number(document.querySelector('[data-testid=alive-beta]').innerText.split(' ').pop()"
             ".slice(0, -1)) > n", seconds)
    assert alive.inner_text()[0] in "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
    control(tab, "cancel")
    page.wait_for_selector("[data-testid=final]")
    assert page.locator("[data-testid=alive-beta]").count() == 0  # once the run is over, no sign of work
    # the run as it was at its first record, before any answer: round 1 (it said round 0 until an answer came)
    page.fill("[data-testid=jump]", "1")
    page.press("[data-testid=jump]", "Enter")
    tab.wait("() => window.__mgState.seq === 1")
    assert page.locator("[data-testid=round]").inner_text() == "1"


def test_replay_scrubbed_to_the_first_vote_shows_that_moment_exactly(server: ServerProcess, tab: Tab) -> None:
    client = chat_in_background(server, "massgen/path:three.yaml", "What is 2+2? (replay)")
    run_id = run_id_of_question(tab, "What is 2+2? (replay)")
    client.join(30 * FACTOR)
    trace = trace_of(run_dir(server, run_id))
    first_vote = next(r["seq"] for r in trace if r["type"] == "RecordVote" and r["kind"] == "tell")
    tab.open(run_id)
    tab.wait("window.__mgStats.end !== null")
    page = tab.page
    # A finished run opens at its end; "next" starts over at the first answer, with no rewinding first.
    marks = [r["seq"] for r in trace if r["type"] == "AnswerAccepted" or
             (r["type"] == "RecordVote" and r["kind"] == "tell")]
    page.click("[data-testid=step]")
    tab.wait("n => window.__mgState.seq === n", marks[0])
    while tab.state()["seq"] < first_vote:
        page.click("[data-testid=step]")  # next answer or vote
    state = tab.state()
    assert state["seq"] == first_vote
    assert page.locator("[data-testid=seq]").inner_text() == str(first_vote)
    assert page.locator("[data-testid=votes] tr").count() == 1
    # The judge's TallyUpdated for this vote comes a few records later; the tally already counts it.
    voted_for = next(r["payload"]["target"] for r in trace if r["seq"] == first_vote)
    label = trace[0]["payload"]["labels"][trace[0]["payload"]["agents"].index(voted_for)]
    assert page.locator("[data-testid=tally]").inner_text() == f"tally: {label} 1"
    assert any(r["type"] == "TallyUpdated" and r["seq"] > first_vote and r["payload"]["counts"] == {voted_for: 1}
               for r in trace)
    assert page.locator("[data-testid=final]").count() == 0
    answered = [r["payload"]["label"] for r in trace if r["type"] == "AnswerAccepted" and r["seq"] < first_vote]
    assert state["answerOrder"] == answered
    tab.shot("web_ui_replay.png")
    # Back one, forward through every mark, then past the last one to the end.
    page.click("[data-testid=step-back]")
    tab.wait("n => window.__mgState.seq === n", marks[marks.index(first_vote) - 1])
    for mark in marks[marks.index(first_vote):]:
        page.click("[data-testid=step]")
        tab.wait("n => window.__mgState.seq === n", mark)
    page.click("[data-testid=step]")
    tab.wait("n => window.__mgState.seq === n", trace[-1]["seq"])
    assert page.locator("[data-testid=final]").is_visible()
    # Mid-way through merged text: each lane holds exactly the deltas up to that seq.
    chunks = [r for r in trace if r["type"] == "AgentChunk" and r["kind"] == "tell"]
    middle = chunks[len(chunks) // 2]["seq"]
    page.fill("[data-testid=jump]", str(middle))
    page.press("[data-testid=jump]", "Enter")
    tab.wait("n => window.__mgState.seq === n", middle)
    state = tab.state()
    for agent in ("alpha", "beta", "gamma"):
        expected = "".join(r["payload"]["text"] for r in chunks
                           if r["seq"] <= middle and r["sender"].startswith(agent + "#"))
        shown = "".join(t["text"] for t in state["agents"][agent]["turns"])
        assert shown == expected, agent
    # Play runs on from there to the end, in trace time.
    page.select_option("[data-testid=scrubber] select", "64")
    page.click("[data-testid=play]")
    tab.wait("window.__mgState.final !== null")
    assert tab.state()["seq"] == trace[-1]["seq"]


def test_a_lane_shows_each_answer_in_a_few_lines_and_each_vote_with_its_reason(
        server: ServerProcess, tab: Tab) -> None:
    _, trace = finished_three_agent_run(server, tab, "What is 2+2? (lanes)")
    page = tab.page
    answers = {r["payload"]["label"]: r["payload"] for r in trace if r["type"] == "AnswerAccepted"}
    assert set(answers) == {"agent1.1", "agent2.1", "agent3.1"}
    lane_of = {"alpha": "agent1.1", "beta": "agent2.1", "gamma": "agent3.1"}
    for agent, label in lane_of.items():
        box = page.locator(f"[data-testid=lane-body-{agent}] [data-testid=\"answer-{label}\"]")
        assert box.is_visible(), label
        assert box.locator(".answer-text").evaluate("e => e.textContent") == answers[label]["content"]
    reasons = {r["payload"]["voter"]: r["payload"]["reason"] for r in trace
               if r["type"] == "RecordVote" and r["kind"] == "tell"}
    for agent, reason in reasons.items():
        assert page.locator(f"[data-testid=lane-body-{agent}] [data-testid=vote-reason]").inner_text() == reason

    # alpha's six-line answer shows its first four lines until opened; short answers have nothing to open.
    alpha = page.locator('[data-testid="answer-agent1.1"]')
    text = alpha.locator(".answer-text")
    line = text.evaluate("e => parseFloat(getComputedStyle(e).lineHeight)")
    assert round(text.evaluate("e => e.clientHeight") / line) == 4
    assert text.evaluate("e => e.scrollHeight > e.clientHeight + 1")
    assert page.locator('[data-testid="answer-agent3.1-more"]').count() == 0
    alpha.locator('[data-testid="answer-agent1.1-more"]').click()
    assert alpha.locator('[data-testid="answer-agent1.1-more"]').inner_text() == "show less"
    assert round(text.evaluate("e => e.clientHeight") / line) == ALPHA_ANSWER.count("\n") + 1
    assert "check 4: 4 + 0 = 4" in text.inner_text()
    alpha.locator('[data-testid="answer-agent1.1-more"]').click()
    assert round(text.evaluate("e => e.clientHeight") / line) == 4
    tab.shot("web_ui_lanes.png")


def test_the_sidebar_background_runs_to_the_bottom_of_a_long_page(server: ServerProcess, tab: Tab) -> None:
    finished_three_agent_run(server, tab, "What is 2+2? (sidebar)")
    page = tab.page
    page_height = page.evaluate("document.documentElement.scrollHeight")
    assert page_height > 1000 * 1.2  # longer than the window: the case that was cut short
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    tab.wait("() => Math.ceil(window.scrollY + window.innerHeight) >= document.documentElement.scrollHeight")
    # At the very bottom of the page the left column is still the sidebar, in the sidebar's colour...
    bottom = page.evaluate("""() => { const el = document.elementFromPoint(20, window.innerHeight - 3);
        const side = el && el.closest('.sidebar');
        return side && { background: getComputedStyle(side).backgroundColor,
                         bottom: side.getBoundingClientRect().bottom + window.scrollY }; }""")
    assert bottom is not None, "the page's bottom-left corner is not the sidebar"
    assert bottom["background"] == "rgb(255, 255, 255)" and bottom["bottom"] >= page_height - 1
    # ...and its controls stay in view while the run is scrolled.
    box = page.locator("[data-testid=start]").bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 1000
    tab.shot("web_ui_sidebar_bottom.png")


def test_a_stream_dropped_every_few_events_ends_with_nothing_missing_or_repeated(
        workdir: Path, browser: Any) -> None:
    dropping = start_server(workdir, "--ui", "--config", "three_slowly.yaml", "--ui-drop-every", "2")
    tab = Tab(browser, dropping.ui_url())
    try:
        page = tab.page
        page.fill("[data-testid=question]", "What is 2+2? (dropped)")
        page.click("[data-testid=start]")
        page.wait_for_selector("[data-testid=run-header]")
        tab.wait("window.__mgStats.end !== null")
        stats = tab.stats()
        run_id = run_id_of_question(tab, "What is 2+2? (dropped)")
        trace = trace_of(run_dir(dropping, run_id))
        assert stats["reconnects"] >= 2
        assert stats["dupes"] == 0 and stats["missing"] == 0 and stats["received"] == len(trace)
        assert page.locator("[data-testid=final-answer] strong").inner_text() == "4"
    finally:
        tab.close()
        dropping.stop()


def control(tab: Tab, testid: str) -> None:
    tab.page.click(f"[data-testid={testid}]")


def test_live_controls_show_their_effect_and_are_in_the_trace(server: ServerProcess, tab: Tab, browser: Any) -> None:
    page = tab.page
    page.fill("[data-testid=question]", "Steer me")
    page.click("[data-testid=start]")  # the served config: steer
    page.wait_for_selector("[data-testid=lane-beta]")
    run_id = page.evaluate("new URLSearchParams(location.search).get('run')")
    body = page.locator("[data-testid=lane-body-beta]")
    tab.wait("() => { const b = document.querySelector('[data-testid=lane-body-beta]');"
             " return b && b.scrollHeight > b.clientHeight + 200; }")

    # Scrolling up holds the view while text keeps arriving.
    body.hover()
    page.mouse.wheel(0, -150)
    page.wait_for_selector("[data-testid=lane-beta] .follow")  # the lane stopped following
    scrolled_to, height = body.evaluate("b => [b.scrollTop, b.scrollHeight]")
    tab.wait("h => document.querySelector('[data-testid=lane-body-beta]').scrollHeight > h + 100", height)
    assert body.evaluate("b => b.scrollTop") == scrolled_to  # more text came in below; the view held
    page.mouse.wheel(0, -100000)
    tab.wait("() => document.querySelector('[data-testid=lane-body-beta]').scrollTop === 0")

    # A note for beta waits for beta's next safe point: here, the turn of its restarted incarnation.
    page.fill("[data-testid=note-text]", "Please wrap up.")
    page.select_option("[data-testid=note-to]", "beta")
    control(tab, "send-note")
    page.wait_for_selector("[data-testid=notes] >> text=Please wrap up.")
    control(tab, "kill-beta")
    tab.wait("() => window.__mgState.agents.beta.incarnation === 2")
    page.wait_for_selector("[data-testid=notes] .ok")  # delivered: ✓
    # alpha has answered and waits for beta's independent first answer before it is asked to vote.
    tab.wait("() => window.__mgState.agents.alpha.status === 'answered'")
    control(tab, "restart-alpha")
    tab.wait("() => window.__mgState.agents.alpha.incarnation === 2")
    tab.shot("web_ui_live.png")
    second = Tab(browser, server.ui_url())  # a second tab, opened mid-run, sees what the first one did
    try:
        second.open(run_id)
        control(tab, "answer-now")
        page.wait_for_selector("[data-testid=final]")
        assert page.locator("[data-testid=final-answer]").inner_text().strip() == "Four."
        second.wait("window.__mgStats.end !== null")
        tab.wait("window.__mgStats.end !== null")
        assert second.state()["timeline"] == tab.state()["timeline"]
    finally:
        second.close()

    trace = trace_of(run_dir(server, run_id))
    # After answer-now the team voted on what it had and converged: the page says what the trace says.
    finished = trace[-1]["payload"]
    assert trace[-1]["type"] == "RunFinished" and finished["partial"] is False
    assert page.locator("[data-testid=final-status]").inner_text() == (
        f"{finished['status']}: {finished['reason']} · from {finished['winner_label']} · after answer now")
    assert page.locator("[data-testid=best-so-far]").count() == 0
    assert_agents_agree_with_the_trace(tab, trace)
    tab.shot("web_ui_answer_now.png")
    user = [(r["type"], r["payload"]) for r in trace if r["sender"] == "user#0"]
    assert [t for t, _ in user] == ["SendNote", "KillAgent", "RestartAgent", "AnswerNow"]
    note_id = next(r["msg_id"] for r in trace if r["type"] == "SendNote")
    assert [(r["sender"], r["payload"]["note_id"]) for r in trace if r["type"] == "NoteDelivered"] == [
        ("beta#2", note_id)]
    failed = [(r["payload"]["name"], r["payload"]["error"]) for r in trace if r["type"] == "ChildFailed"]
    assert failed == [("beta", "killed by user"), ("alpha", "restart requested by user")]
    timeline = page.locator("[data-testid=timeline]").inner_text()
    for shown in ("note to agent2: Please wrap up.", "note delivered to agent2", "kill agent2",
                  "restart agent1", "answer now"):
        assert shown in timeline


def test_cancel_ends_the_run_with_its_best_answer_so_far(server: ServerProcess, tab: Tab) -> None:
    page = tab.page
    page.fill("[data-testid=question]", "Cancel me")
    page.click("[data-testid=start]")
    tab.wait("() => window.__mgState && window.__mgState.answerOrder.length === 1")
    control(tab, "cancel")
    page.wait_for_selector("[data-testid=final]")
    assert page.locator("[data-testid=best-so-far]").is_visible()
    assert page.locator("[data-testid=final-answer]").inner_text().strip() == "Drafting.\n\ndraft: 4"
    run_id = page.evaluate("new URLSearchParams(location.search).get('run')")
    finished = [r for r in trace_of(run_dir(server, run_id)) if r["type"] in ("CancelRun", "RunFinished")]
    assert finished[0]["payload"] == {"reason": "cancelled in the web UI"}
    assert finished[-1]["payload"]["status"] == "interrupted" and finished[-1]["payload"]["partial"]


def test_closing_the_tab_that_started_a_run_does_not_cancel_it(server: ServerProcess, browser: Any) -> None:
    tab = Tab(browser, server.ui_url())
    tab.page.select_option("[data-testid=config]", "massgen/basic/scripted_three_agents")
    tab.page.fill("[data-testid=question]", "Which is larger, 9.11 or 9.9? (closed tab)")
    tab.page.click("[data-testid=start]")
    tab.page.wait_for_selector("[data-testid=run-header]")
    run_id = tab.page.evaluate("new URLSearchParams(location.search).get('run')")
    tab.close()
    wait_until(lambda: any(r["type"] == "RunFinished" for r in trace_of(run_dir(server, run_id))), 30,
               "the run to finish")
    trace = trace_of(run_dir(server, run_id))
    assert trace[-1]["type"] == "RunFinished" and trace[-1]["payload"]["status"] == "completed"
    assert not [r for r in trace if r["type"] == "CancelRun"]


def test_without_the_token_or_from_another_origin_the_ui_refuses(server: ServerProcess) -> None:
    url = server.ui_url()
    base, token = url.split("/ui?token=")
    port = base.rsplit(":", 1)[1]
    # the page and its files hold no data: they load without a token (a wrong one in the URL is refused)
    assert httpx.get(f"{base}/ui").status_code == 200
    assert httpx.get(f"{base}/ui/static/app.js").status_code == 200
    assert httpx.get(f"{base}/ui?token=wrong").status_code == 403
    assert httpx.get(f"{base}/ui/static/app.js", headers={"host": "evil.example"}).status_code == 403
    # the data wants the token in the Authorization header; a cookie is no credential
    assert httpx.get(f"{base}/ui/api/runs").status_code == 401
    assert httpx.get(f"{base}/ui/api/runs", cookies={f"massgen_ui_{port}": token}).status_code == 401
    assert httpx.get(f"{base}/ui/api/runs", headers={"authorization": "Bearer wrong"}).status_code == 403
    with httpx.Client(base_url=base, headers={"authorization": f"Bearer {token}"}) as client:
        assert client.get("/ui/api/runs").status_code == 200
        assert client.get("/ui/api/runs", headers={"host": "evil.example"}).status_code == 403
        body = {"question": "q"}
        assert client.post("/ui/api/runs", json=body).status_code == 403  # no Origin
        assert client.post("/ui/api/runs", json=body, headers={"origin": "http://evil.example"}).status_code == 403
        assert client.get("/ui/api/runs/..~..~etc/events").status_code == 404
    # the page's sign-in: from its own origin only, the printed token for the UI token, which is another
    with httpx.Client(base_url=base) as client:
        assert client.post("/ui/api/session", json={"token": token}).status_code == 403  # no Origin
        assert client.post("/ui/api/session", json={"token": "wrong"}, headers={"origin": base}).status_code == 403
        traded = client.post("/ui/api/session", json={"token": token}, headers={"origin": base})
        assert traded.status_code == 200 and "set-cookie" not in traded.headers
        ui_token = traded.json()["token"]
        assert ui_token != token
        assert client.get("/ui/api/runs", headers={"authorization": f"Bearer {ui_token}"}).status_code == 200
    assert json.loads(httpx.get(f"{base}/health").text)["status"] == "ok"  # the API is unaffected


def test_massgen_web_starts_a_local_server_and_prints_the_runs_url(workdir: Path) -> None:
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "massgen.cli.main", "--web", "--config", "three.yaml",
                             "What is 2+2? (web)"], cwd=workdir, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "MASSGEN_LOG_BASE_DIR": str(workdir / "web_logs")})
    try:
        assert proc.stderr is not None
        line = ""
        for line in proc.stderr:
            if "watch the run at " in line:
                break
        url = line.split("watch the run at ", 1)[1].split()[0]
        base, query = url.split("/ui?", 1)
        assert base.startswith("http://127.0.0.1:") and "token=" in query and "&run=log_" in query
        token = query.split("token=", 1)[1].split("&", 1)[0]
        with httpx.Client(follow_redirects=False, headers={"authorization": f"Bearer {token}"}) as client:
            assert client.get(url).status_code == 200  # the page, which keeps the token and cleans the URL
            run_id = query.split("&run=", 1)[1]
            with client.stream("GET", f"{base}/ui/api/runs/{run_id}/events", timeout=30 * FACTOR) as events:
                names = [line for line in events.iter_lines() if line.startswith("event: ")]
        assert names[-1] == "event: end"
    finally:
        proc.terminate()
        proc.wait(30)


def test_a_replaced_presentation_is_said_above_the_final_answer(server: ServerProcess, tab: Tab) -> None:
    question = "What is the capital of France? (presentation replaced)"
    client = chat_in_background(server, "massgen/path:changed_presentation.yaml", question)
    run_id = run_id_of_question(tab, question)
    client.join(30 * FACTOR)
    tab.open(run_id)
    tab.wait("window.__mgStats.end !== null")
    notice = tab.page.locator("[data-testid=final-presentation-not-used]")
    assert notice.is_visible()
    assert notice.inner_text() == ("The winning answer as written, not its presentation: the presentation changed "
                                   "the final answer ('paris' to 'having thought again: the capital is lyon')")
    assert tab.page.locator("[data-testid=final-answer]").inner_text().strip().endswith("Final answer: Paris")
