"""The ``antigravity_cli`` backend: Google's Antigravity CLI (``agy``) as an agent.

``agy -p <prompt>`` runs one agent session in its working directory and prints the
reply as plain text on stdout. What happens meanwhile (thinking, tool calls, usage) is
appended to the session transcript, ``.antigravity/transcript.jsonl`` under the working
directory; this backend tails it (from where it ended before the run) for live events.
MCP servers, the workflow tools among them, are given through the workspace-local
``mcp_config.json`` (``serverUrl`` for HTTP servers). A file the user already had there
is merged with ours and put back as it was when the backend closes.

``--model`` takes the labels ``agy models`` prints (``Gemini 3.5 Flash (High)``); a
configured label is checked against that list at start, so a typo fails before any turn.
``agy`` is a Go binary from Google's site, not from a package registry; without it the
backend fails at start with how to install it.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from massgen.backends.base import BackendContext, BackendError
from massgen.backends.cli_agent import (
    ARGV_PROMPT_LIMIT,
    CliBackend,
    CliRun,
    mcp_server_entries,
    render_prompt,
    terminate,
)
from massgen.backends.workflow_mcp import SERVER_NAME
from massgen.configs.schema import AntigravityBackendConfig, BackendConfig
from massgen.messages.stream import (
    Finish,
    ModelRequest,
    ReasoningDelta,
    StreamError,
    StreamEvent,
    TextDelta,
    Usage,
)

INSTALL_HINT = (
    "Install Google's Antigravity CLI (`agy`) from https://antigravity.google (see its CLI getting-started "
    "page), run `agy` once to sign in, or set cli_path in the backend config."
)
MCP_CONFIG = Path("mcp_config.json")
TRANSCRIPT = Path(".antigravity") / "transcript.jsonl"
_TAIL_POLL_S = 0.05
_MODELS_TIMEOUT_S = 20.0


def _tool_label(name: str) -> str:
    return f"`{name}` (MCP server `{SERVER_NAME}`)"


def parse_models(text: str) -> list[str]:
    """The labels of ``agy models`` output: one per line, list bullets and markers removed."""
    labels = []
    for line in text.splitlines():
        label = line.strip().lstrip("*-• ").strip()
        if label.endswith("(current)"):
            label = label.removesuffix("(current)").strip()
        if label and not label.endswith(":"):
            labels.append(label)
    return labels


class TranscriptTail:
    """New complete lines of ``transcript.jsonl`` since ``offset``; a shrunk file restarts at 0."""

    def __init__(self, path: Path, offset: int) -> None:
        self.path = path
        self.offset = offset
        self._partial = b""

    def poll(self) -> list[dict[str, Any]]:
        try:
            size = self.path.stat().st_size
        except OSError:
            return []
        if size < self.offset:
            self.offset, self._partial = 0, b""
        if size == self.offset:
            return []
        with self.path.open("rb") as handle:
            handle.seek(self.offset)
            data = handle.read(size - self.offset)
        self.offset += len(data)
        *lines, self._partial = (self._partial + data).split(b"\n")
        items = []
        for line in lines:
            with contextlib.suppress(ValueError):
                item = json.loads(line)
                if isinstance(item, dict):
                    items.append(item)
        return items


class AntigravityBackend(CliBackend):
    name = "antigravity_cli"
    executable = "agy"
    install_hint = INSTALL_HINT

    def __init__(self, config: AntigravityBackendConfig, context: BackendContext) -> None:
        super().__init__(config, context)
        self.ag_config = config
        self._original_mcp_config: str | None = None
        self._wrote_mcp_config = False
        self._transcript_offset = 0

    async def prepare(self) -> None:
        if self.config.model:
            await self._check_model(self.config.model)
        path = self.workspace / MCP_CONFIG
        existing: dict[str, Any] = {}
        if path.exists():
            self._original_mcp_config = path.read_text(encoding="utf-8")
            with contextlib.suppress(ValueError):
                loaded = json.loads(self._original_mcp_config)
                existing = loaded if isinstance(loaded, dict) else {}
        servers = dict(existing.get("mcpServers") or {})
        servers.update(mcp_server_entries(self.config.mcp_servers, "serverUrl"))
        servers[SERVER_NAME] = {"serverUrl": self.mcp.url}
        path.write_text(json.dumps({**existing, "mcpServers": servers}, indent=2), encoding="utf-8")
        self._wrote_mcp_config = True

    def cleanup(self) -> None:
        if not self._wrote_mcp_config:
            return
        path = self.workspace / MCP_CONFIG
        with contextlib.suppress(OSError):
            if self._original_mcp_config is None:
                path.unlink()
            else:
                path.write_text(self._original_mcp_config, encoding="utf-8")
        self._wrote_mcp_config = False

    async def _check_model(self, model: str) -> None:
        """Fail at start on a label ``agy models`` does not list; skip the check if that cannot run."""
        try:
            process = await asyncio.create_subprocess_exec(
                self.cli, "models", cwd=str(self.workspace), env=self.environment(), start_new_session=True,
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            )
        except OSError:
            return
        try:
            out, _ = await asyncio.wait_for(process.communicate(), _MODELS_TIMEOUT_S)
        except TimeoutError:
            return
        finally:
            await terminate(process, grace_s=1.0)
        labels = parse_models(out.decode("utf-8", "replace"))
        if process.returncode == 0 and labels and model not in labels:
            raise BackendError(
                f"antigravity_cli: model {model!r} is not one of the labels `agy models` lists: {', '.join(labels)}"
            )

    def command(self, request: ModelRequest) -> tuple[list[str], str | None]:
        prompt = render_prompt(request, _tool_label)
        transcript = self.workspace / TRANSCRIPT
        self._transcript_offset = transcript.stat().st_size if transcript.exists() else 0
        stdin_text: str | None = None
        if len(prompt) > ARGV_PROMPT_LIMIT:
            prompt, stdin_text = "", prompt  # agy reads stdin when -p is empty
        argv = [self.cli, "-p", prompt]
        if self.config.model:
            argv += ["--model", self.config.model]
        argv += list(self.ag_config.extra_args)
        return argv, stdin_text

    # -- reading: stdout text, transcript events --------------------------------------------------

    async def read(self, run: CliRun, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        assert run.process.stdout is not None
        tail = TranscriptTail(self.workspace / TRANSCRIPT, self._transcript_offset)
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        run.state["output_chars"] = 0
        while True:
            try:
                chunk: bytes | None = await asyncio.wait_for(run.process.stdout.read(4096), _TAIL_POLL_S)
            except TimeoutError:
                chunk = None  # quiet stdout: only the transcript moved, if anything
            for item in tail.poll():
                for event in self._transcript_event(run, item):
                    yield event
            if chunk is None:
                continue
            text = decoder.decode(chunk, final=not chunk)
            if text:
                run.state["output_chars"] += len(text)
                yield TextDelta(text=text)
            if not chunk:
                break
        await asyncio.sleep(_TAIL_POLL_S)  # the last transcript lines may land just after stdout closes
        for item in tail.poll():
            for event in self._transcript_event(run, item):
                yield event

    def _transcript_event(self, run: CliRun, item: dict[str, Any]) -> list[StreamEvent]:
        kind = str(item.get("type", ""))
        if kind in ("thinking", "thought", "reasoning"):
            text = item.get("text") or item.get("content") or ""
            return [ReasoningDelta(text=str(text))] if text else []
        if kind == "tool_call":
            name = str(item.get("name") or item.get("tool") or "")
            self.report("backend.cli_tool", {"name": name})
            ours = item.get("server") == SERVER_NAME or name.startswith(
                (f"{SERVER_NAME}/", f"{SERVER_NAME}.", f"mcp__{SERVER_NAME}__"))
            if ours:
                return []  # the call itself arrives through the MCP server
            arguments = json.dumps(item.get("args", item.get("arguments", {})))[:300]
            return [ReasoningDelta(text=f"\n[tool {name}] {arguments}\n")]
        if kind == "usage":
            run.state["usage"] = item
        elif kind == "error":
            run.state["error"] = str(item.get("message") or item)
        return []

    def conclude(self, run: CliRun, request: ModelRequest) -> list[StreamEvent]:
        code = run.process.returncode
        usage = run.state.get("usage")
        if usage is not None:
            events: list[StreamEvent] = [Usage(
                input_tokens=int(usage.get("input_tokens") or 0), output_tokens=int(usage.get("output_tokens") or 0),
                cost_usd=float(usage.get("cost_usd") or 0.0),
            )]
        else:  # plain text carries no usage: estimate it (4 characters a token) so budgets still count
            prompt_chars = sum(len(m.content) for m in request.messages)
            events = [Usage(input_tokens=prompt_chars // 4, output_tokens=int(run.state.get("output_chars", 0)) // 4)]
        if code != 0:
            detail = run.state.get("error") or run.stderr_tail(self.secrets()) or "no error output"
            events.append(StreamError(message=f"antigravity_cli: agy exited with code {code}: {detail}"))
            return events
        events.append(Finish(reason="tool_calls" if self.mcp.recorded else "stop"))
        return events


def create(config: BackendConfig, context: BackendContext) -> AntigravityBackend:
    if not isinstance(config, AntigravityBackendConfig):
        raise BackendError("antigravity_cli backend needs an antigravity_cli config")
    return AntigravityBackend(config, context)
