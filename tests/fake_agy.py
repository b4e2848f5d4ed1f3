"""A stand-in for Google's Antigravity CLI (``agy``), which no registry here carries.

It behaves as the backend expects the real one to: ``agy models`` prints the model labels;
``agy -p <prompt>`` (stdin when the prompt is empty) reads the workspace-local
``mcp_config.json``, connects to the ``massgen`` server with the MCP SDK client, calls
``new_answer`` until the prompt shows its own answer (``(yours)``), then ``vote`` for the
first allowed label, appends its thinking and
tool events to ``.antigravity/transcript.jsonl``, and prints plain text on stdout.

Knobs, from the environment: ``FAKE_AGY_MODE`` (``fail``: exit 2 with an error on stderr;
``hang``: start a ``sleep`` grandchild, write its pid to ``FAKE_AGY_PIDFILE``, never end;
``text``: answer in text without calling a tool), ``FAKE_AGY_ANSWER``, ``FAKE_AGY_LOG``
(a JSON line per run: argv, cwd, prompt).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

MODELS = ["Gemini 3.5 Flash (High)", "Gemini 3.5 Pro", "Claude Sonnet 4.6 (Thinking)"]
TRANSCRIPT = Path(".antigravity") / "transcript.jsonl"


def note(**event: Any) -> None:
    TRANSCRIPT.parent.mkdir(exist_ok=True)
    with TRANSCRIPT.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"ts": time.time(), **event}) + "\n")


def parse(argv: list[str]) -> tuple[str | None, str | None]:
    prompt: str | None = None
    model: str | None = None
    index = 0
    while index < len(argv):
        if argv[index] in ("-p", "--print"):
            prompt, index = argv[index + 1], index + 2
        elif argv[index] == "--model":
            model, index = argv[index + 1], index + 2
        else:
            index += 1
    return prompt, model


async def call_workflow(url: str, answer: str, answered: bool) -> tuple[str, dict[str, Any], str] | None:
    from mcp import Client

    async with Client(url) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        if "new_answer" in tools and not (answered and "vote" in tools):
            name, args = "new_answer", {"content": answer}
        elif "vote" in tools:
            enum = tools["vote"].input_schema.get("properties", {}).get("agent_id", {}).get("enum", [])
            name, args = "vote", {"agent_id": enum[0], "reason": "It is right."}
        else:
            return None
        note(type="tool_call", server="massgen", name=name, args=args)
        result = await client.call_tool(name, args)
        text = " ".join(getattr(c, "text", "") for c in result.content)
        note(type="tool_result", server="massgen", name=name, output=text, is_error=bool(result.is_error))
        return name, args, text


def main() -> int:
    argv = sys.argv[1:]
    if argv[:1] == ["models"]:
        print("Available models:")
        for index, label in enumerate(MODELS):
            print(f"* {label} (current)" if index == 0 else f"- {label}")
        return 0
    prompt, model = parse(argv)
    if prompt is None:
        print("Error: interactive mode needs a terminal", file=sys.stderr)
        return 2
    if prompt == "":
        prompt = sys.stdin.read()
    if log := os.environ.get("FAKE_AGY_LOG"):
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"argv": argv, "cwd": os.getcwd(), "prompt": prompt}) + "\n")
    if model is not None and model not in MODELS:
        print(f"Error: unknown model {model!r}", file=sys.stderr)
        return 1
    mode = os.environ.get("FAKE_AGY_MODE", "")
    note(type="session_start", model=model or MODELS[0])
    if mode == "fail":
        note(type="error", message="authentication required: run `agy` to sign in")
        print("agy: authentication required", file=sys.stderr)
        return 2
    if mode == "hang":
        child = subprocess.Popen(["sleep", "300"])
        Path(os.environ["FAKE_AGY_PIDFILE"]).write_text(f"{os.getpid()} {child.pid}")
        print("Working", flush=True)
        while True:
            time.sleep(1)
    note(type="thinking", text="Reading the task and the answers so far.")
    if mode == "text":
        print("The answer is 4, but I will not call a tool.")
        return 0
    config = json.loads(Path("mcp_config.json").read_text(encoding="utf-8"))
    url = config["mcpServers"]["massgen"]["serverUrl"]
    answer = os.environ.get("FAKE_AGY_ANSWER", "2 + 2 = 4")
    made = asyncio.run(call_workflow(url, answer, answered="(yours)" in prompt))
    note(type="usage", input_tokens=len(prompt) // 4, output_tokens=12)
    if made is None:
        print("The answer is 4.")
    else:
        print(f"I called {made[0]}: {made[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
