"""The keys of the terminal UI. The command line always has the focus, so typing never needs a
mode; the keys here are the ones that type nothing: Tab (when the line is empty), function
keys, page keys, Ctrl- and Esc.
"""

from __future__ import annotations

from typing import Protocol

from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from massgen.cli.prompt_keys import add_terminal_noise_bindings
from massgen.cli.tui.state import RunState
from massgen.cli.tui.view import ViewChoices

_PAGE = 10


class KeyTarget(Protocol):
    view: ViewChoices

    @property
    def state(self) -> RunState: ...

    def line_is_empty(self) -> bool: ...

    def on_interrupt(self) -> None: ...

    def on_eof(self) -> None: ...

    def show_final(self) -> None: ...

    def redraw(self) -> None: ...


def key_bindings(app: KeyTarget) -> KeyBindings:
    bindings = KeyBindings()
    empty = Condition(app.line_is_empty)
    view = app.view

    def focused_agent() -> str | None:
        agents = list(app.state.agents)
        if not agents:
            return None
        view.focus = min(view.focus, len(agents) - 1)
        return agents[view.focus]

    def move(step: int) -> None:
        count = len(app.state.agents)
        if count:
            view.focus = (view.focus + step) % count

    @bindings.add("tab", filter=empty)
    def _next(event: KeyPressEvent) -> None:
        move(1)

    @bindings.add("s-tab")
    def _previous(event: KeyPressEvent) -> None:
        move(-1)

    @bindings.add("f2")
    def _zoom(event: KeyPressEvent) -> None:
        view.zoomed = not view.zoomed

    @bindings.add("f3")
    def _tools(event: KeyPressEvent) -> None:
        view.open_tools = not view.open_tools

    @bindings.add("f4")
    def _answer(event: KeyPressEvent) -> None:
        app.show_final()

    # While a command's output is open the page keys (and the arrows, on an empty line) scroll it;
    # otherwise they scroll the focused panel.
    output_open = Condition(lambda: bool(view.output))

    @bindings.add("pageup")
    def _up(event: KeyPressEvent) -> None:
        if view.output:
            view.scroll_output(-view.output_page)
            return
        agent = focused_agent()
        if agent is not None:
            view.scroll_by(agent, _PAGE)

    @bindings.add("pagedown")
    def _down(event: KeyPressEvent) -> None:
        if view.output:
            view.scroll_output(view.output_page)
            return
        agent = focused_agent()
        if agent is not None:
            view.scroll_by(agent, -_PAGE)

    @bindings.add("up", filter=empty & output_open)
    def _line_up(event: KeyPressEvent) -> None:
        view.scroll_output(-1)

    @bindings.add("down", filter=empty & output_open)
    def _line_down(event: KeyPressEvent) -> None:
        view.scroll_output(1)

    @bindings.add("home", filter=empty)
    def _top(event: KeyPressEvent) -> None:
        if view.output:
            view.output_scroll = 0
            return
        agent = focused_agent()
        if agent is not None:
            view.scroll[agent] = 10**6  # clamped when drawn: the oldest text

    @bindings.add("end", filter=empty)
    def _bottom(event: KeyPressEvent) -> None:
        if view.output:
            view.output_scroll = 10**6  # clamped when drawn: the last page
            return
        agent = focused_agent()
        if agent is not None:
            view.scroll[agent] = 0

    @bindings.add("c-f")
    def _search(event: KeyPressEvent) -> None:
        view.searching = True
        event.current_buffer.text = view.search
        event.current_buffer.cursor_position = len(view.search)

    @bindings.add("escape", eager=True)
    def _escape(event: KeyPressEvent) -> None:
        if view.searching:
            view.searching, view.search = False, ""
            event.current_buffer.text = ""
        elif not view.close_output() and view.zoomed:
            view.zoomed = False

    @bindings.add("c-c")
    def _interrupt(event: KeyPressEvent) -> None:
        app.on_interrupt()

    @bindings.add("c-d", filter=empty)
    def _eof(event: KeyPressEvent) -> None:
        app.on_eof()

    @bindings.add("<any>", filter=Condition(lambda: view.searching), eager=False)
    def _typed(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text(event.data)
        view.search = event.current_buffer.text

    @bindings.add("backspace", filter=Condition(lambda: view.searching))
    def _erase(event: KeyPressEvent) -> None:
        event.current_buffer.delete_before_cursor()
        view.search = event.current_buffer.text

    return add_terminal_noise_bindings(bindings)


def scroll_to_match(state: RunState, view: ViewChoices, width: int = 60) -> bool:
    """Scroll the focused panel up to the next older line holding the search term; False if none."""
    from massgen.cli.tui.layout import entry_lines

    agents = list(state.agents.values())
    if not agents or not view.search:
        return False
    agent = agents[min(view.focus, len(agents) - 1)]
    lines = [line for entry in agent.entries for _s, line in entry_lines(entry, width, view.open_tools)]
    needle = view.search.lower()
    current = view.scroll.get(agent.agent, 0)
    for back in range(current + 1, len(lines) + 1):
        if needle in lines[len(lines) - back].lower():
            view.scroll[agent.agent] = max(0, back - 1)
            return True
    for back in range(1, min(current + 1, len(lines) + 1)):  # wrap around to the newest
        if needle in lines[len(lines) - back].lower():
            view.scroll[agent.agent] = max(0, back - 1)
            return True
    return False
