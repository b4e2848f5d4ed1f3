"""The YAML config, as MassGen users already write it, validated strictly.

Unknown keys are errors (a typo must not silently become a default), and each
backend type has its own model so its options are checked too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from massgen.configs.uploads import ENTRY_KEYS, Entry, problem


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class McpSecurity(_Strict):
    """Upstream MassGen's checks of an MCP server before it starts (``mcp_tools`` security levels).

    ``strict``/``high``: the command and its arguments carry no shell metacharacters, and a URL
    server is public unless allowed; ``moderate``: the same for URLs only; ``permissive``: none.
    """

    level: Literal["strict", "high", "moderate", "permissive"] = "high"
    allow_localhost: bool = False
    allow_private_ips: bool = False


class McpServerConfig(_Strict):
    # Part of every tool name the model sees (mcp__<name>__<tool>), so only what tool names allow.
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_-]+$")
    type: Literal["stdio", "streamable-http"]
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    allowed_tools: list[str] | None = None
    exclude_tools: list[str] = Field(default_factory=list)
    call_timeout_seconds: float = Field(default=60.0, gt=0)
    start_timeout_seconds: float = Field(default=30.0, gt=0)
    # Checked before the server starts; None (no security key): nothing is checked, as before.
    security: McpSecurity | None = None

    @model_validator(mode="before")
    @classmethod
    def _upstream_transport_names(cls, data: Any) -> Any:
        # Upstream MassGen spells the HTTP transport "http" and "streamable_http" too.
        if isinstance(data, dict) and data.get("type") in ("http", "streamable_http"):
            data = {**data, "type": "streamable-http"}
        return data

    @model_validator(mode="after")
    def _transport_fields(self) -> McpServerConfig:
        if self.type == "stdio" and not self.command:
            raise ValueError(f"MCP server {self.name!r}: type stdio needs 'command'")
        if self.type == "streamable-http" and not self.url:
            raise ValueError(f"MCP server {self.name!r}: type streamable-http needs 'url'")
        if self.security is not None:
            from massgen.configs.mcp_security import problems

            found = problems(self)
            if found:
                raise ValueError(f"MCP server {self.name!r} fails security level {self.security.level!r}: "
                                 + "; ".join(found))
        return self


class ReasoningConfig(_Strict):
    """How hard a reasoning model thinks: OpenAI ``reasoning``, Anthropic ``thinking``, Gemini ``thinking_config``."""

    effort: Literal["none", "minimal", "low", "medium", "high", "xhigh"] | None = None
    summary: Literal["auto", "concise", "detailed"] | None = None
    # Anthropic: "enabled" (with budget_tokens), "adaptive" (the model decides) or "disabled".
    type: Literal["enabled", "adaptive", "disabled"] | None = None
    budget_tokens: int | None = Field(default=None, ge=1024)


class TextConfig(_Strict):
    verbosity: Literal["low", "medium", "high"] | None = None


class CustomToolConfig(_Strict):
    """The user's own Python functions as tools (upstream's ``custom_tools``), run in the agent's process.

    ``path`` is a Python file (relative paths: to the working directory); ``function`` names one or
    more functions in it (``name`` the tool names, by default the function names). Each function's
    signature and docstring become the tool's schema and description.
    """

    function: str | list[str]
    name: str | list[str] | None = None
    path: str | None = None
    category: str | None = None
    description: str | list[str] | None = None
    # Arguments every call gets, hidden from the model (upstream: preset_args, older: default_params).
    preset_args: dict[str, Any] = Field(default_factory=dict)
    default_params: dict[str, Any] = Field(default_factory=dict)

    def functions(self) -> list[tuple[str, str]]:
        """(tool name, function name) for each function this entry names."""
        functions = [self.function] if isinstance(self.function, str) else list(self.function)
        names = [self.name] if isinstance(self.name, str) else list(self.name or functions)
        if len(names) != len(functions):
            raise ValueError(f"custom tool: {len(names)} names for {len(functions)} functions")
        return list(zip(names, functions, strict=True))

    @model_validator(mode="after")
    def _names_match(self) -> CustomToolConfig:
        self.functions()
        return self


class UploadFileConfig(_Strict):
    """One file of upstream's ``upload_files``, shown to the model with the task (configs/uploads.py).

    Exactly one key: ``image_path``, ``audio_path``, ``video_path`` or ``file_path`` (a document),
    a local path (relative: to the working directory) or an http(s) URL. A local file must exist,
    be of its kind's type and within the size limit when the config loads.
    """

    image_path: str | None = Field(default=None, min_length=1)
    audio_path: str | None = Field(default=None, min_length=1)
    video_path: str | None = Field(default=None, min_length=1)
    file_path: str | None = Field(default=None, min_length=1)

    def entry(self) -> Entry:
        key, value = next((k, v) for k, v in self.model_dump().items() if v is not None)
        return Entry(key, ENTRY_KEYS[key], value)

    @model_validator(mode="after")
    def _one_key(self) -> UploadFileConfig:
        named = [k for k, v in self.model_dump().items() if v is not None]
        if len(named) != 1:
            raise ValueError("an upload_files entry needs exactly one of image_path, audio_path, video_path, "
                             f"file_path (got {', '.join(named) or 'none'})")
        return self


# The validation context's key for what this machine lacks: present (a list), such a problem is noted
# there instead of raised (``--validate`` without ``--strict``; configs/loader.py).
MACHINE = "machine_warnings"


def machine_problem(info: ValidationInfo, where: str, problem: str) -> None:
    """A problem of this machine (a missing file, folder or program): raised, or noted in the context."""
    noted = (info.context or {}).get(MACHINE)
    if noted is None:
        raise ValueError(problem)
    noted.append(f"{where}: {problem}")


def _upload_file_checked(value: UploadFileConfig, info: ValidationInfo) -> UploadFileConfig:
    found = problem(value.entry(), info.data.get("media_max_file_size_mb"))
    if found is not None:
        machine_problem(info, "backend.upload_files", found)
    return value


class BackendConfig(_Strict):
    """Options every backend understands; subclasses add their own."""

    type: str
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)
    cwd: str | None = None
    mcp_servers: list[McpServerConfig] = Field(default_factory=list)
    allowed_tools: list[str] | None = None
    exclude_tools: list[str] = Field(default_factory=list)
    seed: int | None = None
    timeout_seconds: float | None = Field(default=None, gt=0)
    # How workflow tools reach the model: native tool calls, a JSON-schema response format, or
    # tool-call text parsed from the reply. None = native, falling back when the server refuses tools.
    tool_mode: Literal["native", "json_schema", "text"] | None = None
    top_p: float | None = Field(default=None, ge=0, le=1)
    # Provider-native tools, run by the provider (each backend sends its own wire's tool; a backend
    # type without them refuses the key). code_interpreter and code_execution are one switch.
    enable_web_search: bool = False
    enable_code_interpreter: bool = False
    enable_code_execution: bool = False
    reasoning: ReasoningConfig | None = None
    text: TextConfig | None = None
    custom_tools: list[CustomToolConfig] = Field(default_factory=list)
    # Built-in tools offered only in turns that check answers in view (actors/agent/check_tools.py);
    # python runs the model's program confined (files/confined.py), offered only where a sandbox can be had;
    # code_examples runs each code answer of the agent against the task's own examples; code_ranking, in a turn
    # with code answers in view, runs them all on the same inputs and votes without a model call (CodeT)
    # (actors/coordination/code_checks.py).
    check_tools: list[Literal["calculator", "python", "code_examples", "code_ranking"]] = Field(default_factory=list)
    # Extra fields merged into each Chat Completions request body (e.g. vLLM's chat_template_kwargs).
    extra_body: dict[str, Any] = Field(default_factory=dict)
    chat_template_kwargs: dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    # Upstream's upload_files: files shown to the model with the task; media size limit in MB (default 64).
    media_max_file_size_mb: float | None = Field(default=None, gt=0)
    upload_files: list[Annotated[UploadFileConfig, AfterValidator(_upload_file_checked)]] = Field(
        default_factory=list)

    @property
    def code_execution(self) -> bool:
        return self.enable_code_interpreter or self.enable_code_execution

    @field_validator("mcp_servers", mode="before")
    @classmethod
    def _servers_by_name(cls, servers: Any) -> Any:
        # Upstream also writes mcp_servers as a mapping of name -> server.
        if isinstance(servers, dict):
            return [{"name": name, **(spec if isinstance(spec, dict) else {})} for name, spec in servers.items()]
        return servers

    @field_validator("mcp_servers")
    @classmethod
    def _unique_server_names(cls, servers: list[McpServerConfig]) -> list[McpServerConfig]:
        names = [s.name for s in servers]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"duplicate MCP server name(s): {', '.join(duplicates)}; each needs its own name")
        return servers


class ScriptStep(_Strict):
    """One step of a scripted model call. Exactly one action key must be set."""

    text: str | None = None
    reasoning: str | None = None
    new_answer: str | None = None
    vote: str | None = None
    reason: str = ""
    tool: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    delay: float | None = Field(default=None, ge=0)
    fault: (
        Literal["raise", "hang", "stream_forever", "malformed_tool_call", "block_thread", "error_event"]
        | None
    ) = None
    # How long a ``block_thread`` fault blocks (default: an hour, i.e. for good).
    seconds: float | None = Field(default=None, gt=0)
    # A guard: this call is played only once these agents' answers are in view.
    when_answers: list[str] | None = None
    # Apply this step only in these incarnations of the agent (1 = first start).
    incarnations: list[int] | None = None

    @model_validator(mode="after")
    def _one_action(self) -> ScriptStep:
        keys = ("text", "reasoning", "new_answer", "vote", "tool", "delay", "fault", "when_answers")
        actions = [k for k in keys if getattr(self, k) is not None]
        if len(actions) != 1:
            raise ValueError(f"a script step needs exactly one of {', '.join(keys)} (got {actions or 'none'})")
        return self


class ScriptedBackendConfig(BackendConfig):
    type: Literal["scripted"] = "scripted"
    # One list of steps per model call, played in order; a call that starts with a
    # ``when_answers`` guard waits (later calls may be played first) until its guard holds.
    script: list[list[ScriptStep]] = Field(default_factory=list)
    # Text of the final presentation; by default the agent's own latest answer. A list is
    # streamed as one text delta per item, as a model writes it.
    present: str | list[str] | None = None
    # Steps of the final presentation, one list per model call (tool calls, then text); overrides ``present``.
    present_script: list[list[ScriptStep]] = Field(default_factory=list)
    # What to do once the script is used up.
    on_exhausted: Literal["vote_first", "repeat_last", "stop"] = "vote_first"
    # Fail while starting, in every incarnation (true) or in the listed ones.
    crash_on_start: bool | list[int] = False
    # Block the agent's start handler (a hung actor), in every incarnation or the listed ones.
    hang_on_start: bool | list[int] = False
    # Tokens reported per call; by default estimated as characters / 4.
    usage_per_call: int | None = Field(default=None, ge=0)


class LocalBackendConfig(BackendConfig):
    type: Literal["local"] = "local"
    n_ctx: int = Field(default=4096, gt=0)
    n_threads: int | None = Field(default=None, gt=0)
    server_start_timeout_seconds: float = Field(default=300.0, gt=0)


class ClaudeCodeBackendConfig(BackendConfig):
    type: Literal["claude_code"] = "claude_code"
    cli_path: str | None = None
    extra_args: list[str] = Field(default_factory=list)
    # Claude Code's --permission-mode; None: massgen's default (bypassPermissions inside its confinement).
    permission_mode: Literal["default", "acceptEdits", "bypassPermissions", "plan"] | None = None
    # Appended to the system prompt Claude Code builds (--append-system-prompt).
    append_system_prompt: str | None = None


class AntigravityBackendConfig(BackendConfig):
    type: Literal["antigravity_cli"] = "antigravity_cli"
    cli_path: str | None = None
    extra_args: list[str] = Field(default_factory=list)


class AzureOpenAIBackendConfig(BackendConfig):
    type: Literal["azure_openai"] = "azure_openai"
    api_version: str = "2025-04-01-preview"


class AgentConfig(_Strict):
    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    backend: BackendConfig
    system_message: str | None = None

    @field_validator("backend", mode="before")
    @classmethod
    def _backend_by_type(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, BackendConfig):
            return value
        if not isinstance(value, dict):
            raise ValueError("expected a mapping with at least 'type'")
        from massgen.configs.backend_types import BACKEND_TYPES, buildable  # the registry imports this module

        backend_type = value.get("type")
        described = BACKEND_TYPES.get(backend_type) if isinstance(backend_type, str) else None
        if described is None:
            known = ", ".join(sorted(buildable()))
            raise ValueError(f"unknown backend type {backend_type!r}; expected one of: {known}")
        if described.needs is not None:
            raise ValueError(described.needs)
        return described.options.model_validate(value, context=info.context)  # what this machine lacks: noted


class RestartPolicy(_Strict):
    max_restarts: int = Field(default=3, ge=0)
    window_seconds: float = Field(default=60.0, gt=0)
    backoff_base_seconds: float = Field(default=0.2, ge=0)
    backoff_max_seconds: float = Field(default=10.0, ge=0)


class Budget(_Strict):
    max_model_calls: int | None = Field(default=None, gt=0)
    max_tokens: int | None = Field(default=None, gt=0)


class ContextPathConfig(_Strict):
    """A directory of the user's the agents may read, or one file (that file alone, never its folder,
    as upstream grants it); the final presenter may write it if allowed."""

    path: str = Field(min_length=1)
    permission: Literal["read", "write"] = "read"
    # Relative to ``path`` (a file's: to its folder), or absolute inside it: never written, whatever the permission.
    protected_paths: list[str] = Field(default_factory=list)

    @field_validator("path")
    @classmethod
    def _exists(cls, path: str, info: ValidationInfo) -> str:
        import os

        expanded = os.path.expanduser(path)
        # A file is granted alone by every surface (massgen/files: the file tools, the sandbox's bind,
        # the change report; an agent CLI confined by folders is refused it at the start of the run).
        if not os.path.isdir(expanded) and not os.path.isfile(expanded):
            machine_problem(info, "orchestrator.context_paths",
                            f"context path {path!r} is not an existing directory or file")
        return path


# Agent CLIs whose own file tools are confined by folders only (claude_code gives context paths as
# --add-dir, which takes folders): a context path naming a file is refused for them, not widened.
FOLDER_ONLY_CLIS = frozenset({"claude_code"})


def file_context_refusal(agents: Sequence[AgentConfig], paths: Sequence[str]) -> str | None:
    """Why these agents cannot be given these context paths: a file, for an agent CLI confined by folders."""
    import os

    folder_only = next((a for a in agents if a.backend.type in FOLDER_ONLY_CLIS), None)
    files = [(i, p) for i, p in enumerate(paths) if os.path.isfile(os.path.expanduser(p))]
    if folder_only is None or not files:
        return None
    index, path = files[0]
    return (f"orchestrator.context_paths[{index}].path: {path} is a file, and agent {folder_only.id!r} "
            f"({folder_only.backend.type}) is given context paths as folders (--add-dir), so it would get the "
            "file's whole folder: put the file in a folder of its own and name that folder, or leave this agent out")


class OrchestratorConfig(_Strict):
    max_new_answers_per_agent: int | None = Field(default=None, gt=0)
    max_new_answers_global: int | None = Field(default=None, gt=0)
    final_answer_strategy: Literal["winner_present", "winner_reuse", "synthesize"] = "winner_present"
    # How the judge picks the winner (actors/coordination/judge.py): "support" counts votes and independent
    # agreement; "prior" keeps the first agent's independent answer unless that agent, having
    # checked the others, comes to another answer that is at least as well supported.
    winner_rule: Literal["support", "prior"] = "support"
    # How the prior agent (listed first, under winner_rule "prior") is asked for its first answer: "team"
    # (the team's prompt, as every agent) or "bare" (the question alone, as one call of its model: the
    # baseline the team must not fall below). Named for the prior, as only its answer is the baseline:
    # asking every agent bare lost on arithmetic (bench/results/first-answer-bare-preregistered.md).
    prior_first_answer: Literal["team", "bare"] = "team"
    context_paths: list[ContextPathConfig] = Field(default_factory=list)
    # Every agent gets a workspace and the file tools (agents with backend.cwd always do).
    workspaces: bool = False
    # run_command: in bubblewrap, in a Docker container, or not offered (see files/sandbox.py).
    command_execution: Literal["sandbox", "docker", "off"] = "off"
    command_timeout_seconds: float = Field(default=60.0, gt=0)
    # The start-of-run copy of each writable context path (for the change report) is refused above this.
    context_copy_limit_mb: float = Field(default=512.0, gt=0)
    # What one answer's workspace snapshot may copy; past it the snapshot is cut and says so (files/snapshots.py).
    snapshot_limit_mb: float = Field(default=100.0, gt=0)
    snapshot_max_files: int = Field(default=10_000, gt=0)
    # How readily agents vote for an answer in view rather than write their own, and how different a
    # new answer must be (upstream MassGen's keys); None: massgen's own prompt, unchanged.
    voting_sensitivity: Literal["lenient", "balanced", "strict"] | None = None
    answer_novelty_requirement: Literal["lenient", "balanced", "strict"] | None = None
    max_attempts_per_turn: int = Field(default=3, gt=0)
    max_tool_rounds: int = Field(default=8, gt=0)
    restart: RestartPolicy = Field(default_factory=RestartPolicy)
    budget: Budget = Field(default_factory=Budget)

    @model_validator(mode="after")
    def _bare_needs_a_prior(self) -> OrchestratorConfig:
        if self.prior_first_answer == "bare" and self.winner_rule != "prior":
            raise ValueError("prior_first_answer: bare needs winner_rule: prior (only that rule has a prior agent,"
                             f" the first listed); winner_rule is {self.winner_rule!r}")
        return self

    @field_validator("command_execution")
    @classmethod
    def _sandbox_available(cls, mode: str, info: ValidationInfo) -> str:
        # A missing sandbox is an error here, never a silent fallback to running on the host.
        import os
        import shutil

        where = "orchestrator.command_execution"
        if mode == "sandbox" and shutil.which("bwrap") is None:
            machine_problem(info, where, "sandbox needs bubblewrap (bwrap), which is not installed "
                            "(Debian: apt-get install bubblewrap)")
        if mode == "sandbox" and os.geteuid() == 0 and shutil.which("setpriv") is None:
            machine_problem(info, where, "sandbox run as root needs setpriv, which is not installed, to run "
                            "commands as nobody rather than root (Debian: apt-get install util-linux)")
        if mode == "docker" and shutil.which("docker") is None:
            machine_problem(info, where, "docker needs the Docker engine and its docker command, which is not "
                            "installed")
        return mode


class TimeoutSettings(_Strict):
    orchestrator_timeout_seconds: float = Field(default=1800.0, gt=0)
    turn_timeout_seconds: float = Field(default=600.0, gt=0)
    idle_stream_timeout_seconds: float = Field(default=120.0, gt=0)
    # Seconds allowed for the final presentation before the winner's answer is reused.
    present_timeout_seconds: float = Field(default=300.0, gt=0)
    # Once every other live agent has voted, a late agent has this long before it is treated as failed.
    straggler_grace_seconds: float = Field(default=10.0, gt=0)
    # Upstream MassGen's round timeouts. Past its round's soft timeout (the first before the agent's
    # first answer, the other after it) an agent in a turn is told to finish now (``FinishRound``) and
    # its turn goes on; the grace after that is when the turn is cut, like any turn past its deadline.
    # A turn with a round timeout has that cut instead of turn_timeout_seconds. Upstream's grace: 120 s.
    initial_round_timeout_seconds: float | None = Field(default=None, gt=0)
    subsequent_round_timeout_seconds: float | None = Field(default=None, gt=0)
    round_timeout_grace_seconds: float = Field(default=120.0, ge=0)

    def round_timeout(self, answered: bool) -> float | None:
        """The soft timeout of a turn: of a later round once the agent has answered, else of its first."""
        return self.subsequent_round_timeout_seconds if answered else self.initial_round_timeout_seconds


class UiConfig(_Strict):
    # Upstream's display names; the command line maps each onto its --display (cli/display.py,
    # docs/compatibility.md). None: the command line's own default.
    display_type: Literal["textual_terminal", "rich_terminal", "terminal", "simple", "silent", "none"] | None = None
    logging_enabled: bool = True


class RuntimeConfig(_Strict):
    """Where the agents run: this process (pykka), or a Ray cluster (needs the [ray] extra)."""

    type: Literal["pykka", "ray"] = "pykka"
    # "auto" joins the cluster this machine is part of (RAY_ADDRESS or a local head); else HOST:PORT.
    address: str = Field(default="auto", pattern=r"^(auto|[A-Za-z0-9_.\[\]:-]+:[0-9]+)$")
    # Ray resources every agent asks for (e.g. {agents: 1}); an agent id in ``agents`` overrides them.
    resources: dict[str, float] = Field(default_factory=dict)
    agents: dict[str, dict[str, float]] = Field(default_factory=dict)
    # Ray resources each local model's llama.cpp server asks for (e.g. {llama: 1}): the run then places one
    # server per model as a Ray actor on a node that has them, reached over HTTP. Empty: in the agent's worker.
    model_server_resources: dict[str, float] = Field(default_factory=dict)

    def resources_for(self, agent_id: str) -> dict[str, float]:
        return dict(self.agents.get(agent_id, self.resources))


class TeamConfig(_Strict):
    agents: list[AgentConfig] = Field(min_length=1)
    orchestrator: OrchestratorConfig = Field(default_factory=OrchestratorConfig)
    timeout_settings: TimeoutSettings = Field(default_factory=TimeoutSettings)
    ui: UiConfig = Field(default_factory=UiConfig)
    runtime: RuntimeConfig = Field(default_factory=RuntimeConfig)
    # Upstream MassGen keys this config names that are not applied as upstream applies them, one line
    # each (configs/compat.py); set by the loader, never read from a file.
    _notices: tuple[str, ...] = PrivateAttr(default=())

    @property
    def notices(self) -> tuple[str, ...]:
        return self._notices

    def with_notices(self, notices: tuple[str, ...]) -> TeamConfig:
        self._notices = notices
        return self

    @model_validator(mode="before")
    @classmethod
    def _single_agent(cls, data: Any) -> Any:
        if isinstance(data, dict) and "agent" in data:
            if "agents" in data:
                raise ValueError("use either 'agent' or 'agents', not both")
            data = dict(data)
            data["agents"] = [data.pop("agent")]
        return data

    @field_validator("agents")
    @classmethod
    def _unique_ids(cls, agents: list[AgentConfig]) -> list[AgentConfig]:
        seen: set[str] = set()
        for agent in agents:
            if agent.id in seen:
                raise ValueError(f"duplicate agent id {agent.id!r}; every agent needs its own id")
            seen.add(agent.id)
        return agents

    @model_validator(mode="after")
    def _placed_agents_exist(self) -> TeamConfig:
        unknown = sorted(set(self.runtime.agents) - {a.id for a in self.agents})
        if unknown:
            raise ValueError(f"runtime.agents names {', '.join(unknown)}, which is not an agent id")
        return self

    @model_validator(mode="after")
    def _files_only_for_agents_that_can_hold_them(self) -> TeamConfig:
        refused = file_context_refusal(self.agents, [c.path for c in self.orchestrator.context_paths])
        if refused is not None:
            raise ValueError(refused)
        return self

    def redacted(self) -> dict[str, Any]:
        """The config as data with every secret replaced, fit for logs and traces.

        Dumped as each backend's own type (``serialize_as_any``), not as the declared base
        ``BackendConfig``: otherwise every backend-specific option would be lost.
        """
        data = self.model_dump(mode="json", serialize_as_any=True)
        for agent in data["agents"]:
            redact_backend(agent["backend"])
        return data


def redact_backend(backend: dict[str, Any]) -> dict[str, Any]:
    """Replace, in place, a dumped backend's secrets by "***" (its key, its MCP servers' env and headers)."""
    if backend.get("api_key"):
        backend["api_key"] = "***"
    for server in backend.get("mcp_servers", []):
        server["env"] = {k: "***" for k in server.get("env", {})}
        server["headers"] = {k: "***" for k in server.get("headers", {})}
    return backend
