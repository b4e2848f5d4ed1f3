"""Capture the full-screen UI for the docs: its text and a PNG rendered from the same capture.

Runs ``massgen`` on the scripted three-agent example in a tmux terminal of 160 x 45, waits
for the final answer panel, and writes ``docs/tui_live.txt`` (``capture-pane -p``) and
``docs/tui_live.png``: the colour capture (``capture-pane -e``) turned into HTML cells and
photographed by Debian's chromium-headless-shell through Playwright (both already used by
the Web UI's tests). ``--replay`` does the same for ``massgen logs show RUN --tui``.

    .venv/bin/python scripts/tui_capture.py [--out docs] [--columns 160] [--rows 45]

Other screens: ``--config FILE --question Q --wait-for TEXT`` runs another team, and ``--keys
F4,End --then-wait TEXT`` presses keys (tmux names; ``/help`` and other text is typed and
entered) before the capture, e.g. the answer view of a long final answer.
"""

from __future__ import annotations

import argparse
import html
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_SGR = re.compile(r"\x1b\[([0-9;]*)m")
_BASIC = ["#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
          "#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff"]


def _xterm(n: int) -> str:
    if n < 16:
        return _BASIC[n]
    if n < 232:
        n -= 16
        levels = [0, 95, 135, 175, 215, 255]
        return f"#{levels[n // 36]:02x}{levels[n // 6 % 6]:02x}{levels[n % 6]:02x}"
    grey = 8 + (n - 232) * 10
    return f"#{grey:02x}{grey:02x}{grey:02x}"


def ansi_to_html(text: str) -> str:
    """The capture's SGR colours and attributes as spans; everything else as text."""
    fg, bg, bold, italic, reverse = None, None, False, False, False
    out: list[str] = []
    at = 0
    for match in _SGR.finditer(text):
        out.append(_span(text[at:match.start()], fg, bg, bold, italic, reverse))
        at = match.end()
        codes = [int(c) if c else 0 for c in match.group(1).split(";")] or [0]
        i = 0
        while i < len(codes):
            code = codes[i]
            if code == 0:
                fg, bg, bold, italic, reverse = None, None, False, False, False
            elif code == 1:
                bold = True
            elif code == 3:
                italic = True
            elif code == 7:
                reverse = True
            elif code in (22, 23, 27):
                bold, italic, reverse = (False if code == 22 else bold, False if code == 23 else italic,
                                         False if code == 27 else reverse)
            elif code in (38, 48) and i + 2 < len(codes) and codes[i + 1] == 5:
                colour = _xterm(codes[i + 2])
                fg, bg = (colour, bg) if code == 38 else (fg, colour)
                i += 2
            elif code in (38, 48) and i + 4 < len(codes) and codes[i + 1] == 2:
                colour = "#{:02x}{:02x}{:02x}".format(*codes[i + 2:i + 5])
                fg, bg = (colour, bg) if code == 38 else (fg, colour)
                i += 4
            elif code == 39:
                fg = None
            elif code == 49:
                bg = None
            elif 30 <= code <= 37 or 90 <= code <= 97:
                fg = _BASIC[code - 30 if code < 90 else code - 82]
            elif 40 <= code <= 47 or 100 <= code <= 107:
                bg = _BASIC[code - 40 if code < 100 else code - 92]
            i += 1
    out.append(_span(text[at:], fg, bg, bold, italic, reverse))
    return "".join(out)


def _span(text: str, fg: str | None, bg: str | None, bold: bool, italic: bool, reverse: bool) -> str:
    if not text:
        return ""
    if reverse:
        fg, bg = bg or "#111827", fg or "#e5e7eb"
    style = "".join([f"color:{fg};" if fg else "", f"background:{bg};" if bg else "",
                     "font-weight:bold;" if bold else "", "font-style:italic;" if italic else ""])
    body = html.escape(text)
    return f'<span style="{style}">{body}</span>' if style else body


def page(ansi: str, columns: int) -> str:
    return ("<!doctype html><meta charset='utf-8'><style>body{margin:0;background:#0b0f17}"
            "pre{margin:0;padding:12px;color:#e5e7eb;font:14px/1.25 'DejaVu Sans Mono',monospace;"
            f"width:{columns}ch;white-space:pre}}</style><pre>{ansi_to_html(ansi)}</pre>")


def capture(argv: list[str], wait_for: str, columns: int, rows: int, workdir: Path,
            keys: tuple[str, ...] = (), then_wait: str = "") -> tuple[str, str]:
    socket = workdir / "capture.sock"
    tmux = ["tmux", "-S", str(socket)]
    command = f"{' '.join(argv)}; sleep 600"
    subprocess.run([*tmux, "new-session", "-d", "-s", "c", "-x", str(columns), "-y", str(rows), "sh", "-c", command],
                   check=True, env={**__import__("os").environ, "PROMPT_TOOLKIT_NO_CPR": "1",
                                    "MASSGEN_LOG_BASE_DIR": str(workdir / "logs")})
    subprocess.run([*tmux, "set-option", "-t", "c", "status", "off"], check=True)
    def wait(needle: str) -> None:
        deadline = time.monotonic() + 60
        while True:
            text = subprocess.run([*tmux, "capture-pane", "-p", "-t", "c"], capture_output=True, text=True,
                                  check=True).stdout
            if needle in text:
                return
            if time.monotonic() > deadline:
                raise SystemExit(f"{needle!r} never showed:\n{text}")
            time.sleep(0.1)

    try:
        wait(wait_for)
        for key in keys:
            if key.startswith("/"):
                subprocess.run([*tmux, "send-keys", "-t", "c", "-l", key], check=True)
                key = "Enter"
            subprocess.run([*tmux, "send-keys", "-t", "c", key], check=True)
        if then_wait:
            wait(then_wait)
        time.sleep(0.5)  # the frame after the last record
        text = subprocess.run([*tmux, "capture-pane", "-p", "-t", "c"], capture_output=True, text=True,
                              check=True).stdout
        ansi = subprocess.run([*tmux, "capture-pane", "-p", "-e", "-t", "c"], capture_output=True, text=True,
                              check=True).stdout
        return text, ansi
    finally:
        subprocess.run([*tmux, "kill-server"], check=False, capture_output=True)


def png(html_text: str, path: Path) -> None:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium-headless-shell") or "/usr/bin/chromium-headless-shell"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium)
        tab = browser.new_page(viewport={"width": 1600, "height": 1000}, device_scale_factor=1)
        tab.set_content(html_text)
        tab.locator("pre").screenshot(path=str(path))
        browser.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="docs")
    parser.add_argument("--columns", type=int, default=160)
    parser.add_argument("--rows", type=int, default=45)
    parser.add_argument("--name", default="tui_live")
    parser.add_argument("--config", default="@examples/basic/scripted_three_agents")
    parser.add_argument("--question", default="Which is larger, 9.11 or 9.9?")
    parser.add_argument("--wait-for", default="final answer (agent2.1")
    parser.add_argument("--keys", default="", help="comma-separated tmux key names (or /commands) to press")
    parser.add_argument("--then-wait", default="", help="text to wait for after the keys")
    args = parser.parse_args()
    out = Path(args.out)
    with tempfile.TemporaryDirectory() as tmp:
        argv = [sys.executable, "-m", "massgen.cli.main", "--config", shlex.quote(args.config),
                shlex.quote(args.question)]
        keys = tuple(k for k in args.keys.split(",") if k)
        text, ansi = capture(argv, args.wait_for, args.columns, args.rows, Path(tmp), keys, args.then_wait)
    (out / f"{args.name}.txt").write_text(text.rstrip("\n") + "\n", encoding="utf-8")
    png(page(ansi, args.columns), out / f"{args.name}.png")
    print(f"wrote {out / args.name}.txt and .png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
