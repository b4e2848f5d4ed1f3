"""What the user chose about the screen (focus, zoom, scroll, search, open tool cards), apart
from the run's state: the reducer never sees it, so a replay starts from the same run state
and only these choices differ.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ViewChoices:
    focus: int = 0  # index of the focused agent panel
    zoomed: bool = False
    scroll: dict[str, int] = field(default_factory=dict)  # agent -> lines scrolled up from the bottom
    search: str = ""
    searching: bool = False
    open_tools: bool = False  # tool cards show their arguments and result
    output: str = ""  # what the last command printed, shown above the command line
    output_title: str = ""
    # Lines of the output scrolled past from its top; clamped when drawn (``10**6``: the end).
    output_scroll: int = 0
    output_page: int = 10  # the output's lines on screen less one, as last drawn: what PgUp/PgDn move
    output_is_final: bool = False  # the output is the final answer (F4): its own box steps aside for it

    def scroll_by(self, agent: str, lines: int) -> None:
        self.scroll[agent] = max(0, self.scroll.get(agent, 0) + lines)

    def show(self, title: str, text: str, is_final: bool = False) -> None:
        self.output_title, self.output, self.output_scroll = title, text.rstrip("\n"), 0
        self.output_is_final = is_final

    def scroll_output(self, lines: int) -> None:
        self.output_scroll = max(0, self.output_scroll + lines)

    def close_output(self) -> bool:
        had = bool(self.output)
        self.output = self.output_title = ""
        self.output_scroll, self.output_is_final = 0, False
        return had
