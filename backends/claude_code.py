"""The ``claude_code`` backend: the Claude Code CLI as an agent, one CLI run per model call.

``claude -p`` runs its own agent loop in the agent's workspace and prints one JSON object
per line (``--output-format stream-json --verbose``): a ``system``/``init`` line, whole
``assistant`` and ``user`` messages, and a closing ``result`` with usage and cost. The
workflow tools are our MCP server, given with ``--mcp-config`` and pre-approved with
``--allowedTools`` so the CLI calls them without asking. ``ENABLE_TOOL_SEARCH=false``
keeps MCP tools in the model's tool list instead of behind a ``ToolSearch`` tool (seen
with 2.1.332: deferred tools are not sent until searched for).

The tool_use blocks the CLI prints for our own tools are not turned into events: the
call itself arrives through the MCP server, once, with the arguments the CLI really sent.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from massgen.backends.base import BackendContext, BackendError, FileScope
from massgen.backends.cli_agent import ARGV_PROMPT_LIMIT, CliBackend, CliRun, mcp_server_entries, render_prompt
from massgen.backends.workflow_mcp import SERVER_NAME, tool_name
from massgen.configs.schema import BackendConfig, ClaudeCodeBackendConfig
from massgen.messages.stream import (
    Finish,
    ModelRequest,
    ReasoningDelta,
    StreamError,
    StreamEvent,
    TextDelta,
    Usage,
)
from massgen.messages.workflow import WORKFLOW_TOOLS

INSTALL_HINT = (
    "Install Claude Code with `npm install @anthropic-ai/claude-code` (or `npm install -g "
    "@anthropic-ai/claude-code`), or set cli_path in the backend config."
)
_RETRYABLE = {408, 409, 429, 500, 502, 503, 504, 529}


class ClaudeCodeBackend(CliBackend):
    name = "claude_code"
    executable = "claude"
    install_hint = INSTALL_HINT
    search_dirs = (Path("node_modules") / ".bin",)

    def __init__(self, config: ClaudeCodeBackendConfig, context: BackendContext) -> None:
        super().__init__(config, context)
        self.cc_config = config
        self.mcp_config_path = Path()

    async def prepare(self) -> None:
        servers: dict[str, Any] = mcp_server_entries(self.config.mcp_servers, "url")
        for entry in servers.values():
            entry["type"] = "stdio" if "command" in entry else "http"
        servers[SERVER_NAME] = {"type": "http", "url": self.mcp.url}
        self.mcp_config_path = self.scratch_dir("config") / "mcp.json"
        self.mcp_config_path.write_text(json.dumps({"mcpServers": servers}, indent=2), encoding="utf-8")

    def command(self, request: ModelRequest) -> tuple[list[str], str | None]:
        prompt = render_prompt(request, tool_name)
        allowed = [tool_name(t) for t in WORKFLOW_TOOLS]
        # A user's own MCP servers are pre-approved whole (``mcp__<server>``), and the CLI's own
        # tools as the config's allowed_tools / exclude_tools say (``Edit``, ``Bash(git *)``).
        allowed += [f"mcp__{s.name}" for s in self.config.mcp_servers]
        allowed += list(self.config.allowed_tools or [])
        argv = [self.cli, "-p"]
        stdin_text: str | None = None
        if len(prompt) <= ARGV_PROMPT_LIMIT and not prompt.startswith("-"):
            argv.append(prompt)
        else:
            stdin_text = prompt  # ``claude -p`` with no prompt argument reads it from stdin
        argv += [
            "--output-format", "stream-json", "--verbose",
            "--mcp-config", str(self.mcp_config_path),
        ]
        denied = list(self.config.exclude_tools)
        if self.context.files is not None:  # the run's file rules as the CLI's permission rules
            argv += confine(self.context.files, request.kind == "present", allowed, denied)
        argv += ["--allowedTools", ",".join(allowed)]
        if denied:
            argv += ["--disallowedTools", ",".join(denied)]
        if self.config.model:
            argv += ["--model", self.config.model]
        if self.cc_config.permission_mode is not None:  # upstream's key, the CLI's own flag
            argv += ["--permission-mode", self.cc_config.permission_mode]
        if self.cc_config.append_system_prompt:
            argv += ["--append-system-prompt", self.cc_config.append_system_prompt]
        argv += list(self.cc_config.extra_args)
        return argv, stdin_text

    def environment(self) -> dict[str, str]:
        env = super().environment()
        if self.config.base_url:
            env["ANTHROPIC_BASE_URL"] = self.config.base_url
        if self.config.api_key:
            env["ANTHROPIC_API_KEY"] = self.config.api_key
        env.update(ENABLE_TOOL_SEARCH="false", DISABLE_TELEMETRY="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
        return env

    # -- reading stream-json ----------------------------------------------------------------------

    async def read(self, run: CliRun, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        assert run.process.stdout is not None
        async for raw in run.process.stdout:
            line = raw.decode("utf-8", "replace").strip()
            if not line:
                continue
            try:
                item = json.loads(line)
            except ValueError:
                run.stderr.append(line)  # not ours to parse; kept for the error message
                continue
            if not isinstance(item, dict):
                continue
            for event in self._events(run, request, item):
                yield event

    def _events(self, run: CliRun, request: ModelRequest, item: dict[str, Any]) -> list[StreamEvent]:
        kind = item.get("type")
        if kind == "system":
            return self._system(request, item)
        if kind == "assistant":
            return _assistant_events(item.get("message") or {})
        if kind == "result":
            run.state["result"] = item
        return []

    def _system(self, request: ModelRequest, item: dict[str, Any]) -> list[StreamEvent]:
        subtype = item.get("subtype")
        if subtype == "api_retry":
            self.report("backend.attempt", {
                "attempt": item.get("attempt"), "outcome": "retry", "status": item.get("error_status"),
                "error": str(item.get("error", "")), "delay_s": (item.get("retry_delay_ms") or 0) / 1000,
            })
        elif subtype == "init":
            servers = {str(s.get("name")): str(s.get("status")) for s in item.get("mcp_servers") or []}
            self.report("backend.cli_init", {"model": item.get("model"), "mcp_servers": servers})
            status = servers.get(SERVER_NAME)
            if request.kind == "turn" and request.tools and status not in ("connected", "pending"):
                return [StreamError(message=(
                    f"claude_code: the CLI could not use the workflow MCP server at {self.mcp.url} "
                    f"(status: {status or 'not listed'})"
                ))]
        return []

    def conclude(self, run: CliRun, request: ModelRequest) -> list[StreamEvent]:
        result = run.state.get("result")
        code = run.process.returncode
        if result is None:
            detail = run.stderr_tail(self.secrets()) or "no output"
            return [StreamError(message=f"claude_code: the CLI exited with code {code} and no result: {detail}")]
        usage = result.get("usage") or {}
        events: list[StreamEvent] = [Usage(
            input_tokens=sum(int(usage.get(k) or 0) for k in (
                "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")),
            output_tokens=int(usage.get("output_tokens") or 0),
            cost_usd=float(result.get("total_cost_usd") or 0.0),
        )]
        if result.get("is_error") or str(result.get("subtype", "success")) != "success":
            status = result.get("api_error_status")
            text = str(result.get("result") or result.get("subtype") or "error")
            message = f"claude_code: {text}"
            events.append(StreamError(
                message=message if not run.stderr else f"{message} ({run.stderr_tail(self.secrets())})",
                status=status if isinstance(status, int) else None, retryable=status in _RETRYABLE,
            ))
            return events
        events.append(Finish(reason="tool_calls" if self.mcp.recorded else "stop"))
        return events


def confine(scope: FileScope, presenting: bool, allowed: list[str], denied: list[str]) -> list[str]:
    """Permission rules for the CLI's own tools, and the ``--add-dir`` arguments they need.

    In ``-p`` mode a tool use no rule allows is refused, so: reading is allowed in the working
    directories alone (the workspace and the ``--add-dir`` folders: context paths, snapshots;
    ``blockReadsOutsideWorkingDirectories``, Claude Code 2.1.257 and later, refuses the file
    tools' reads anywhere else, where a home folder's keys would be read into the provider's
    request), writing only under the workspace (and, for the presenter, the writable context
    paths); deny rules, which win over allow rules, cover protected paths and run state; ``Bash``
    is denied (it would run on the host; ``run_command`` is the sandboxed way). ``//`` starts an
    absolute path in Claude Code's rule syntax.
    """
    writable = [scope.workspace, *(scope.write_presenting if presenting else ())]
    allowed += ["Read", "Glob", "Grep", "LS"]
    allowed += [f"{tool}(/{path}/**)" for path in writable for tool in ("Edit", "Write", "MultiEdit")]
    denied += ["Bash", "NotebookEdit", "WebFetch", "WebSearch"]
    denied += [f"{tool}(/{path}/**)" for path in scope.protected for tool in ("Edit", "Write", "MultiEdit")]
    denied += [f"{tool}(/{path})" for path in scope.protected for tool in ("Edit", "Write", "MultiEdit")]
    denied += [f"{tool}(/{path}/**)" for path in scope.hidden for tool in ("Read", "Edit", "Write")]
    extra = ["--settings", json.dumps({"permissions": {"blockReadsOutsideWorkingDirectories": True}})]
    for path in dict.fromkeys([*scope.read, *scope.write_presenting]):
        if path.is_file():  # --add-dir takes folders: the file's folder would be granted (refused at start)
            raise BackendError(f"claude_code: context path {path} is a file, and --add-dir grants folders only")
        extra += ["--add-dir", str(path)]
    return extra


def _assistant_events(message: dict[str, Any]) -> list[StreamEvent]:
    events: list[StreamEvent] = []
    for block in message.get("content") or []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and block.get("text"):
            events.append(TextDelta(text=str(block["text"])))
        elif kind == "thinking" and block.get("thinking"):
            events.append(ReasoningDelta(text=str(block["thinking"])))
        elif kind == "tool_use" and not str(block.get("name", "")).startswith(f"mcp__{SERVER_NAME}__"):
            # The CLI runs its own tools; shown as progress, never as calls for us to run.
            arguments = json.dumps(block.get("input", {}))[:300]
            events.append(ReasoningDelta(text=f"\n[tool {block.get('name')}] {arguments}\n"))
    return events


def create(config: BackendConfig, context: BackendContext) -> ClaudeCodeBackend:
    if not isinstance(config, ClaudeCodeBackendConfig):
        raise BackendError("claude_code backend needs a claude_code config")
    return ClaudeCodeBackend(config, context)
