"""The screen: a header, one panel per agent, votes and consensus, the timeline, the final
answer, the output of the last command and the command line.

Everything drawn is computed at draw time from ``RunState`` (the run) and ``ViewChoices``
(focus, zoom, scroll, search), for the size the terminal has then; nothing is kept
between frames, so a resize or a skipped frame cannot lose or stale anything. Panels
wrap their own text and show the lines that fit, anchored at the bottom (the newest
text) unless scrolled up.
"""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from prompt_toolkit.application.current import get_app
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples, fragment_list_width
from prompt_toolkit.layout import (
    AnyContainer,
    BufferControl,
    ConditionalContainer,
    Dimension,
    DynamicContainer,
    HSplit,
    Layout,
    UIContent,
    UIControl,
    VSplit,
    Window,
)
from prompt_toolkit.layout.dimension import AnyDimension
from prompt_toolkit.layout.processors import BeforeInput
from prompt_toolkit.styles import Style
from prompt_toolkit.utils import get_cwidth

from massgen.cli.text import counted
from massgen.cli.tui.state import AgentState, Entry, RunState
from massgen.cli.tui.view import ViewChoices

STYLE = Style.from_dict({
    "header": "bg:#1f2937 #e5e7eb",
    "header.title": "bg:#1f2937 #93c5fd bold",
    "header.question": "bg:#111827 #d1d5db",
    "frame.border": "#6b7280",
    "frame.label": "#d1d5db",
    "title.focused": "reverse bold",
    "reasoning": "#9ca3af italic",
    "facts": "#93c5fd",
    "mark": "#fbbf24",
    "tool": "#34d399",
    "tool.detail": "#6ee7b7",
    "search": "bg:#facc15 #000000",
    "winner": "#4ade80 bold",
    "final": "#f9fafb",
    "dim": "#9ca3af",
    "output": "#e5e7eb",
    "prompt": "#60a5fa bold",
    "bar": "#60a5fa",
})

_STATE_STYLE = {"winner": "class:winner", "failed": "#f87171 bold", "restarting": "#fb923c",
                "presenting": "#c084fc bold", "voted": "#60a5fa", "answered": "#fbbf24"}
_SIDE_WIDTH = 40
_HINTS = ("Tab panels", "F2 zoom", "PgUp/PgDn scroll", "Ctrl-F search", "F3 tool cards", "F4 answer",
          "/help commands", "Ctrl-C cancels, twice quits")
_HINTS_DROPPED_FIRST = ("F3 tool cards", "Ctrl-F search", "F4 answer", "PgUp/PgDn scroll", "F2 zoom",
                        "Ctrl-C cancels, twice quits", "/help commands")
_MIN_PANEL_HEIGHT = 6
_SHORT_ROWS = 30  # below this many rows an open view takes the place of the final answer and the strip
_MIN_PANEL_WIDTH = 24
# At most 4 x 3 panels at once: more are unreadable, and each costs a frame's time; a larger team
# pages (Tab moves the focus, and the page with it), with the others' states on one line.
_MAX_COLUMNS = 4
_MAX_ROWS = 3


def wrap(text: str, width: int) -> list[str]:
    """Lines of ``text`` at most ``width`` cells wide, broken at spaces where it can."""
    width = max(4, width)
    lines: list[str] = []
    for raw in text.split("\n"):
        if len(raw) <= width:
            lines.append(raw)
        else:
            lines += textwrap.wrap(raw, width, break_long_words=True, replace_whitespace=False,
                                   drop_whitespace=True) or [""]
    return lines


def _highlight(line: str, style: str, term: str) -> StyleAndTextTuples:
    if not term:
        return [(style, line)]
    out: StyleAndTextTuples = []
    lower, needle, at = line.lower(), term.lower(), 0
    while True:
        hit = lower.find(needle, at)
        if hit < 0:
            out.append((style, line[at:]))
            return out
        out += [(style, line[at:hit]), ("class:search", line[hit:hit + len(term)])]
        at = hit + len(term)


def wrap_tail(text: str, width: int, need: int | None) -> list[str]:
    """The last lines of ``wrap(text, width)``, at least ``need`` of them (all when ``need`` is None).

    A panel shows its newest lines: wrapping only the paragraphs they come from keeps a frame's
    cost independent of how much an agent has written (an entry keeps up to 20,000 characters).
    """
    if need is None:
        return wrap(text, width)
    lines: list[str] = []
    paragraphs = text.split("\n")
    for index in range(len(paragraphs) - 1, -1, -1):
        lines[:0] = wrap(paragraphs[index], width)
        if len(lines) >= need:
            break
    return lines


def entry_lines(entry: Entry, width: int, open_tools: bool, need: int | None = None) -> list[tuple[str, str]]:
    """(style, line) pairs of one panel entry at ``width``: its last ``need`` or more, or all of them."""
    if entry.kind == "text":
        return [("", line) for line in wrap_tail(entry.text.strip("\n"), width, need)]
    if entry.kind == "reasoning":
        return [("class:reasoning", "┆ " + line) for line in wrap_tail(entry.text.strip("\n"), width - 2, need)]
    if entry.kind == "mark":
        return [("class:mark", ("• " if i == 0 else "  ") + line)
                for i, line in enumerate(wrap(entry.text, width - 2))]
    card = entry.card
    if card is None:
        return []
    marker = "▾" if open_tools else "▸"
    lines = [("class:tool", line) for line in wrap(f"{marker} ⚙ {card.summary}", width)]
    if open_tools:
        args = json.dumps(card.arguments, ensure_ascii=False, indent=1, default=str)
        lines += [("class:tool.detail", "  " + line) for line in wrap("args: " + args, width - 2)]
        result = card.result if card.result is not None else "(running)"
        lines += [("class:tool.detail", "  " + line)
                  for line in wrap(("error: " if card.is_error else "result: ") + result[:2000], width - 2)]
    return lines


def panel_lines(agent: AgentState, width: int, height: int, scroll: int, search: str,
                open_tools: bool) -> list[StyleAndTextTuples]:
    """The ``height`` lines of an agent's panel, ``scroll`` lines up from its newest text."""
    need = height + scroll
    collected: list[tuple[str, str]] = []
    for entry in reversed(agent.entries):
        collected[:0] = entry_lines(entry, width, open_tools, need - len(collected))
        if len(collected) >= need:
            break
    if not collected:
        collected = [("class:dim", "waiting for its first words...")]
    scroll = min(scroll, max(0, len(collected) - height))  # Home asks for "all the way up"
    end = max(0, len(collected) - scroll)
    start = max(0, end - height)
    return [_highlight(line, style, search) for style, line in collected[start:end]]


class LinesControl(UIControl):
    """A control that asks for its lines at the size it is given: wrapping is ours, per frame."""

    def __init__(self, lines: Callable[[int, int], Sequence[StyleAndTextTuples]]) -> None:
        self._lines = lines

    def create_content(self, width: int, height: int) -> UIContent:
        lines = list(self._lines(width, height))
        return UIContent(get_line=lambda i: lines[i] if i < len(lines) else [], line_count=len(lines),
                         show_cursor=False)

    def is_focusable(self) -> bool:
        return False


def fit(line: StyleAndTextTuples, width: int) -> StyleAndTextTuples:
    """``line`` cut or padded to exactly ``width`` terminal cells (a wide character counts two)."""
    out: StyleAndTextTuples = []
    used = 0
    for fragment in line:
        style, text = fragment[0], fragment[1]
        cells = get_cwidth(text)
        if used + cells <= width:
            out.append((style, text))
            used += cells
            continue
        kept = ""
        for char in text:
            cell = get_cwidth(char)
            if used + cell > width:
                break
            kept += char
            used += cell
        out.append((style, kept))
        break
    if used < width:
        out.append(("", " " * (width - used)))
    return out


class BoxControl(UIControl):
    """Lines inside a border with a title, drawn as the characters of one control.

    It looks like prompt-toolkit's ``Frame`` (``┌─| title |─┐``), but a ``Frame`` is eleven
    windows in nested splits whose flexible border fills are sized one cell at a time; with
    a dozen panels on screen that layout work cost more than drawing the text (the 64-agent
    bench's frames took a quarter of a second). Here a box is one window: the text is ours,
    the borders are characters, and the whole box is only copied onto the screen.
    """

    def __init__(self, lines: Callable[[int, int], Sequence[StyleAndTextTuples]],
                 title: Callable[[], StyleAndTextTuples | str]) -> None:
        self._lines, self._title = lines, title

    def create_content(self, width: int, height: int) -> UIContent:
        inner_width, inner_height = max(0, width - 2), max(0, height - 2)
        border = "class:frame.border"
        body = list(self._lines(inner_width, inner_height))[:inner_height] if inner_height else []
        rows: list[StyleAndTextTuples] = [self._top(width)]
        for line in body:
            rows.append([(border, "│"), *fit(line, inner_width), (border, "│")])
        rows += [[(border, "│"), ("", " " * inner_width), (border, "│")]] * (inner_height - len(body))
        if height > 1:
            rows.append([(border, "└" + "─" * inner_width + "┘")])
        rows = rows[:height]
        return UIContent(get_line=lambda i: rows[i] if i < len(rows) else [], line_count=len(rows),
                         show_cursor=False)

    def _top(self, width: int) -> StyleAndTextTuples:
        border = "class:frame.border"
        title = self._title()
        fragments: StyleAndTextTuples = [("", title)] if isinstance(title, str) else list(title)
        if not fragment_list_width(fragments) or width < 8:
            return [(border, "┌" + "─" * max(0, width - 2) + "┐")]
        label = fit([("", " "), *fragments, ("", " ")], min(width - 4, fragment_list_width(fragments) + 2))
        rest = width - 4 - fragment_list_width(label)
        left = rest // 2  # the spare cell goes right, as a Frame's fills share them
        return [(border, "┌" + "─" * left + "|"),
                *[("class:frame.label " + fragment[0], fragment[1]) for fragment in label],
                (border, "|" + "─" * (rest - left) + "┐")]

    def is_focusable(self) -> bool:
        return False


def box(lines: Callable[[int, int], Sequence[StyleAndTextTuples]],
        title: Callable[[], StyleAndTextTuples | str] | str, *, width: AnyDimension = None,
        height: AnyDimension = None) -> Window:
    """A titled, bordered window of ``lines`` (what ``Frame(Window(LinesControl(lines)))`` drew)."""
    title_of = title if callable(title) else (lambda: title)
    return Window(BoxControl(lines, title_of), width=width, height=height, style="class:frame")


_NARROW_PANEL = 34  # below this width the agent's id moves from the title to the first line


def agent_title(agent: AgentState, focused: bool, narrow: bool = False) -> str:
    name = agent.label if narrow else f"{agent.label} {agent.agent}"
    return ("▶ " if focused else "") + f"{name} · {agent.state}"


_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def working_sign(agent: AgentState, now: float | None) -> str:
    """While the agent's model call is out: a spinner, how long it has been out, and how many chunks and
    tool calls arrived since (a reply of tool calls only streams no text, yet the agent works)."""
    if agent.calling_since is None or now is None:
        return ""
    waited = max(0.0, now - agent.calling_since)
    spinner = _SPINNER[int(now * 4) % len(_SPINNER)]
    arrived = f", {agent.call_activity} in" if agent.call_activity else ""
    return f"{spinner} model working {waited:.0f}s{arrived}"


def agent_facts(agent: AgentState, narrow: bool = False, now: float | None = None) -> str:
    """The panel's first line: its answers, its vote and its calls; a sign of life while its model works."""
    parts = [agent.agent] if narrow else []
    parts.append(("✔ " + " ".join(agent.answers)) if agent.answers else "no answer yet")
    if agent.voted_for:
        parts.append(f"→ {agent.voted_for}")
    parts.append(counted(agent.calls, "call"))
    if agent.restarts:
        parts.append(f"{agent.restarts} restarts")
    sign = working_sign(agent, now)
    if sign:
        parts.append(sign)
    return " · ".join(parts)


def header_lines(state: RunState, now: float | None, width: int) -> list[StyleAndTextTuples]:
    deadline = f" / {state.deadline_s:g}s" if state.deadline_s else ""
    tokens = state.input_tokens + state.output_tokens
    facts = (f" turn {state.turn} · round {state.round} · {state.phase} · {state.elapsed(now):.1f}s{deadline}"
             f" · calls {state.calls} · tokens {tokens} · ${state.cost_usd:.4f}")
    question = " ".join(state.question.split())
    if len(question) > width - 4:
        question = question[: max(0, width - 5)] + "…"
    return [[("class:header.title", " massgen"), ("class:header", facts.ljust(max(0, width - 8)))],
            [("class:header.question", (" Q: " + question).ljust(width))]]


def votes_lines(state: RunState, width: int, one_line: bool = False) -> list[StyleAndTextTuples]:
    """The round's votes with their reasons, the tally and the consensus; ``one_line``: a line a vote."""
    lines: list[StyleAndTextTuples] = []
    for vote in state.votes:
        text = f"{vote.voter_label} → {vote.target_label}: {vote.reason}"
        if one_line:
            lines.append([("", textwrap.shorten(text, max(width, 12), placeholder=" …"))])
            continue
        for i, line in enumerate(wrap(text, width - 2)):
            lines.append([("", ("" if i == 0 else "  ") + line)])
    if not state.votes:
        lines.append([("class:dim", f"no votes in round {state.round} yet")])
    if state.tally:
        top = max(state.tally.values())
        for agent, count in sorted(state.tally.items(), key=lambda kv: -kv[1]):
            bar = "█" * max(1, round(count / top * 10))
            lines.append([("", f"{state.label_of(agent):<8} "), ("class:bar", bar), ("", f" {count}")])
    if state.withdrawn_votes:
        lines.append([("class:dim", f"({state.withdrawn_votes} earlier votes withdrawn)")])
    if state.converged and state.leader:
        for i, line in enumerate(wrap(state.decision(), width - 2)):
            lines.append([("class:winner", ("" if i == 0 else "  ") + line)])
    elif state.finished is not None and state.finished.winner_label:
        lines.append([("class:winner", f"winner: {state.finished.winner_label}")])
    return lines


def fit_tail(lines: list[StyleAndTextTuples], height: int, command: str) -> list[StyleAndTextTuples]:
    """The last ``height`` lines, the first of them saying how many are above (and where to read them)."""
    if height <= 0:
        return []
    if len(lines) <= height:
        return lines
    kept = lines[len(lines) - height + 1:]
    return [[("class:dim", f"… {len(lines) - len(kept)} more above: {command}")], *kept]


def timeline_lines(state: RunState, width: int, height: int) -> list[StyleAndTextTuples]:
    shown: list[StyleAndTextTuples] = []
    for item in reversed(state.timeline):
        text = f"{item.at:6.1f}s {item.text}"
        # continuation lines are indented under the text, and wrapped with their indent counted
        wrapped = textwrap.wrap(text, max(12, width - 1), subsequent_indent=" " * 8, break_long_words=True) or [""]
        shown[:0] = [[("class:dim" if j else "", line)] for j, line in enumerate(wrapped)]
        if len(shown) >= height:
            break
    return shown[-height:] if height > 0 else []


def final_text(state: RunState) -> str:
    """The final answer in full, or why there is none; with the run's status when it did not complete."""
    end = state.finished
    if end is None:
        return ""
    if end.final_answer is None:
        return f"no answer ({end.status}): {end.reason}"
    text = end.final_answer.strip("\n")
    if end.presentation_not_used:  # the presentation the user asked for is not this text: say why
        text += f"\n(the winning answer as written, not its presentation: {end.presentation_not_used})"
    if end.partial or end.status != "completed":
        text += f"\n({end.status}: {end.reason})"
    return text


def final_lines(state: RunState, width: int, height: int) -> list[StyleAndTextTuples]:
    """The final answer's box: as much as fits, and how many lines more F4 shows."""
    end = state.finished
    if end is None or height <= 0:
        return []
    lines: list[StyleAndTextTuples] = [[("class:final", line)] for line in wrap(final_text(state), width)]
    if len(lines) > height:
        more = len(lines) - height + 1
        lines = [*lines[: height - 1], [("class:dim", f"… {more} more lines: F4 shows the whole answer")]]
    return lines


def titled(head: str, tails: tuple[str, ...], room: int) -> str:
    """``head · tail`` in ``room`` cells: the key hints (``tails``, longest first) are kept whole, the first
    that leaves the head a few cells; the head is cut (``…``) to make room, never the hints."""
    for tail in tails:
        if len(head) + 3 + len(tail) <= room:
            return f"{head} · {tail}"
    tail = next((t for t in tails if len(t) + 3 + 12 <= room), tails[-1])
    keep = max(0, room - 3 - len(tail))
    cut = head if len(head) <= keep else head[:max(0, keep - 1)] + "…"
    return f"{cut} · {tail}"


def final_title(state: RunState) -> str:
    end = state.finished
    if end is None:
        return ""
    if end.final_answer is None:
        return f"no answer · {end.status}"
    who = f"{end.winner_label}, by {end.winner}" if end.winner else "no winner"
    head = "best answer so far" if end.partial else "final answer"
    return f"{head} ({who}) · {end.status} · {end.elapsed_s:.1f}s"


@dataclass
class Grid:
    """Which agents' panels are shown, and how: ``columns`` x ``rows``, from ``first``."""

    first: int
    count: int
    columns: int
    rows: int


def grid_for(agents: int, focus: int, width: int, height: int, zoomed: bool) -> Grid:
    if agents == 0:
        return Grid(0, 0, 1, 1)
    if zoomed:
        return Grid(min(focus, agents - 1), 1, 1, 1)
    columns = max(1, min(agents, width // _MIN_PANEL_WIDTH, _MAX_COLUMNS))
    rows = min(math.ceil(agents / columns), _MAX_ROWS)
    if height // rows < _MIN_PANEL_HEIGHT:
        rows = max(1, height // _MIN_PANEL_HEIGHT)
    per_page = columns * rows
    first = (focus // per_page) * per_page
    return Grid(first, min(per_page, agents - first), columns, rows)


class Screen:
    """The prompt-toolkit layout over a run state and the view choices; ``now`` is the clock."""

    def __init__(self, state: Callable[[], RunState], view: ViewChoices, command: Buffer,
                 prompt: Callable[[], str], now: Callable[[], float | None]) -> None:
        self._state, self._view, self._now, self._prompt = state, view, now, prompt
        self.command = command
        self._parts: dict[tuple[object, ...], AnyContainer] = {}
        self._votes_cache: tuple[tuple[object, ...], list[StyleAndTextTuples]] | None = None
        self.command_window = Window(BufferControl(buffer=command, input_processors=[
            BeforeInput(lambda: [("class:prompt", self._prompt())])]), height=1)
        output_shown = Condition(lambda: bool(self._view.output))
        self.root = HSplit([
            Window(LinesControl(lambda w, h: header_lines(self._state(), self._now(), w)), height=2),
            DynamicContainer(self._body),
            ConditionalContainer(DynamicContainer(self._final), Condition(self._final_shown)),
            ConditionalContainer(DynamicContainer(self._output), output_shown),
            Window(LinesControl(lambda w, h: [self._hint(w)]), height=1),
            self.command_window,
        ])
        self.layout = Layout(self.root, focused_element=self.command_window)

    # -- sizes --------------------------------------------------------------------------------

    @staticmethod
    def _size() -> tuple[int, int]:
        size = get_app().output.get_size()
        return size.columns, size.rows

    def grid(self) -> Grid:
        columns, rows = self._size()
        state = self._state()
        side = columns >= 110
        height = self._body_height(columns, rows)
        body_height = height - (0 if side else min(self._strip_height(height + 4), max(0, height - 3)))
        width = columns - (_SIDE_WIDTH if side else 0)
        return grid_for(len(state.agents), self._view.focus, width, max(3, body_height), self._view.zoomed)

    def _strip_height(self, rows: int) -> int:
        """The votes and timeline strip under the panels, on a terminal too narrow for a side column; on a
        short one, an open view (``/votes``, ``/help``, F4) takes its place, so the panels keep their lines."""
        if rows < _SHORT_ROWS and self._view.output:
            return 0
        return 6 if rows < _SHORT_ROWS else 9

    def _final_shown(self) -> bool:
        """The final answer's box, unless the answer view (F4) shows the same answer, whole; on a short
        terminal an open view takes its place (Esc brings it back)."""
        if self._view.output and (self._view.output_is_final or self._size()[1] < _SHORT_ROWS):
            return False
        return self._state().finished is not None

    def _final_height(self, rows: int) -> int:
        state = self._state()
        if not self._final_shown():
            return 0
        columns, _ = self._size()
        return min(len(wrap(final_text(state), columns - 2)) + 2, max(4, rows // 3))

    def _output_height(self, rows: int) -> int:
        """As tall as the output, up to half the screen (the panels stay in view under it) and never
        more than leaves 3 rows of panels beside the final answer's box: a longer one scrolls."""
        if not self._view.output:
            return 0
        columns, _ = self._size()
        room = max(4, min(rows // 2, rows - 4 - _MIN_PANEL_HEIGHT - self._final_height(rows)))
        return min(len(wrap(self._view.output, columns - 2)) + 2, room)

    # -- parts --------------------------------------------------------------------------------
    #
    # prompt-toolkit asks a DynamicContainer for its container many times per frame (sizes, then
    # drawing, then the key bindings), so each part is built once per shape (which panels, the grid,
    # the heights) and kept; its text is read from the state at draw time, so a kept part is
    # never stale.

    def _kept(self, key: tuple[object, ...], build: Callable[[], AnyContainer]) -> AnyContainer:
        found = self._parts.get(key)
        if found is None:
            if len(self._parts) > 512:  # shapes of earlier turns and sizes
                self._parts.clear()
            found = self._parts[key] = build()
        return found

    def _body(self) -> AnyContainer:
        columns, rows = self._size()
        state = self._state()
        grid = self.grid()
        side = columns >= 110
        height = self._body_height(columns, rows)
        key = ("body", id(state), len(state.agents), grid.first, grid.count, grid.columns, grid.rows, side,
               columns, height, bool(self._view.output))
        return self._kept(key, lambda: self._build_body(grid, side, columns, height))

    def _body_height(self, columns: int, rows: int) -> int:
        return max(3, rows - 4 - self._final_height(rows) - self._output_height(rows))

    def _build_body(self, grid: Grid, side: bool, columns: int, height: int) -> AnyContainer:
        # Exact sizes everywhere: prompt-toolkit hands out spare cells one at a time by weight, which
        # cost more than the drawing itself on a wide screen.
        strip = 0 if side else min(self._strip_height(height + 4), max(0, height - 3))
        panels_width = columns - (_SIDE_WIDTH if side else 0)
        panels = self._panels(grid, panels_width, height - strip)
        def votes(w: int, h: int) -> list[StyleAndTextTuples]:
            lines = self._votes_lines(w)
            if len(lines) > h:  # too little room for the reasons in full: a line a vote, cut to fit
                lines = self._votes_lines(w, one_line=True)
            return fit_tail(lines, h, "/votes")

        def timeline(w: int, h: int) -> list[StyleAndTextTuples]:
            return timeline_lines(self._state(), w, h)

        def votes_title() -> str:
            return f"votes · round {self._state().round}"

        if side:
            # The votes box grows with the votes (a third of the column at least, two thirds at most),
            # read at draw time: every vote of the round stays in view, the timeline takes the rest.
            def votes_height() -> Dimension:
                need = len(self._votes_lines(_SIDE_WIDTH - 2)) + 2
                return Dimension.exact(max(height // 3, min(need, height * 2 // 3)))

            def timeline_height() -> Dimension:
                return Dimension.exact(height - votes_height().preferred)

            return VSplit([panels, HSplit([
                box(votes, votes_title, width=Dimension.exact(_SIDE_WIDTH), height=votes_height),
                box(timeline, "timeline", width=Dimension.exact(_SIDE_WIDTH), height=timeline_height),
            ], width=Dimension.exact(_SIDE_WIDTH))], height=Dimension.exact(height))
        half = columns // 2
        return HSplit([panels, VSplit([
            box(votes, votes_title, width=Dimension.exact(half), height=Dimension.exact(strip)),
            box(timeline, "timeline", width=Dimension.exact(columns - half), height=Dimension.exact(strip)),
        ], height=Dimension.exact(strip))], height=Dimension.exact(height))

    def _votes_lines(self, width: int, one_line: bool = False) -> list[StyleAndTextTuples]:
        """``votes_lines``, wrapped once per folded event: sizing and drawing ask for it several times a frame."""
        state = self._state()
        key = (id(state), state.events, width, one_line)
        if self._votes_cache is None or self._votes_cache[0] != key:
            self._votes_cache = (key, votes_lines(state, width, one_line))
        return self._votes_cache[1]

    def _panels(self, grid: Grid, width: int, height: int) -> AnyContainer:
        state = self._state()
        agents = list(state.agents.values())
        if not agents:
            return Window(LinesControl(lambda w, h: [[("class:dim", " type a question and press Enter")]]),
                          height=Dimension.exact(height), width=Dimension.exact(width))
        shown = agents[grid.first:grid.first + grid.count]
        paged = grid.count < len(agents)
        usable = height - (1 if paged else 0)
        used_rows = math.ceil(len(shown) / grid.columns)
        rows: list[AnyContainer] = []
        for r in range(used_rows):
            row = shown[r * grid.columns:(r + 1) * grid.columns]
            row_height = usable // used_rows + (1 if r < usable % used_rows else 0)
            widths = [width // grid.columns + (1 if i < width % grid.columns else 0) for i in range(grid.columns)]
            cells = [self._panel(a, grid.first + r * grid.columns + i, widths[i], row_height)
                     for i, a in enumerate(row)]
            rows.append(VSplit(cells, height=Dimension.exact(row_height), width=Dimension.exact(width)))
        if paged:
            last = grid.first + grid.count

            def rest(width: int, height: int) -> list[StyleAndTextTuples]:
                later = list(self._state().agents.values())[last:last + 12]
                text = (f" agents {grid.first + 1}-{last} of {len(agents)} · Tab/Shift-Tab moves between them · "
                        + " ".join(f"{a.label}:{a.state}" for a in later))
                return [[("class:dim", text[:width])]]

            rows.append(Window(LinesControl(rest), height=1))
        return HSplit(rows, height=Dimension.exact(height), width=Dimension.exact(width))

    def _panel(self, agent: AgentState, index: int, width: int, height: int) -> AnyContainer:
        view = self._view
        narrow = width < _NARROW_PANEL

        def lines(width: int, height: int) -> list[StyleAndTextTuples]:
            facts: list[StyleAndTextTuples] = [[("class:facts", line)]
                                               for line in wrap(agent_facts(agent, narrow, self._now()), width)]
            facts = facts[: max(0, height - 1)]
            body = panel_lines(agent, width, height - len(facts), view.scroll.get(agent.agent, 0), view.search,
                               view.open_tools)
            return facts + body

        def title() -> StyleAndTextTuples:
            focused = view.focus == index
            style = "class:title.focused" if focused else _STATE_STYLE.get(agent.state, "")
            return [(style, agent_title(agent, focused, narrow))]

        return box(lines, title, width=Dimension.exact(width), height=Dimension.exact(height))

    def _final(self) -> AnyContainer:
        _, rows = self._size()
        height = self._final_height(rows)
        return self._kept(("final", id(self._state()), height), lambda: box(
            lambda w, h: final_lines(self._state(), w, h),
            lambda: [("class:winner", final_title(self._state()))], height=Dimension.exact(height)))

    def _output(self) -> AnyContainer:
        _, rows = self._size()
        height = self._output_height(rows)
        view = self._view
        shown = [0, 0, 0]  # the first and last line on screen, of how many: for the title

        def lines(width: int, height: int) -> list[StyleAndTextTuples]:
            wrapped = wrap(view.output, width)
            # Clamped here, where the height is known: PgUp after End, or Home, moves at once.
            view.output_scroll = min(view.output_scroll, max(0, len(wrapped) - height))
            view.output_page = max(1, height - 1)
            first = view.output_scroll
            window = wrapped[first:first + height]
            shown[:] = [first + 1, first + len(window), len(wrapped)]
            return [[("class:output", line)] for line in window]

        def title() -> str:
            first, last, total = shown
            columns, _ = self._size()
            if total > last - first + 1:
                return titled(view.output_title, (f"lines {first}-{last} of {total} · PgUp/PgDn ↑/↓ Home/End scroll · "
                                                  "Esc closes", f"{first}-{last}/{total} · PgUp/PgDn · Esc closes"),
                              columns - 6)
            return titled(view.output_title, ("Esc closes",), columns - 6)

        return self._kept(("output", height), lambda: box(lines, title, height=Dimension.exact(height)))

    def _hint(self, width: int) -> StyleAndTextTuples:
        view = self._view
        if view.searching:
            text = " search: type, Enter finds the next match in the focused panel, Esc stops"
        else:
            # Whole hints only, the least needed dropped first, so a narrow terminal never shows half of one.
            hints = list(_HINTS)
            for dropped in _HINTS_DROPPED_FIRST:
                if len(" " + " · ".join(hints)) <= width:
                    break
                hints.remove(dropped)
            text = " " + " · ".join(hints)
        return [("class:dim", text[:width])]


def application_style() -> Style:
    return STYLE
