"""What one agent's ``backend:`` block may say: ``BackendConfig`` and each backend type's own options.

Apart from ``schema.py`` (the team, its agents, the orchestrator) so the registry of backend types
(``backend_types.py``), which names these models, sits between the two: ``schema`` reads the registry to
pick an agent's backend model by its ``type``, and the registry reads only this module.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from massgen.configs.mcp_security import problems
from massgen.configs.uploads import ENTRY_KEYS, Entry, problem


class Strict(BaseModel):
    """A config model: unknown keys are errors, values frozen, numbers finite (a YAML ``.inf`` deadline would be
    no deadline, and ``.nan`` compares false with every bound)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _no_truth_value_for_a_number(cls, data: Any) -> Any:
        """``timeout: true`` is a mistake, not 1 (pydantic reads a YAML boolean as a number)."""
        if isinstance(data, dict):
            for name, field in cls.model_fields.items():
                key = field.alias or name
                if isinstance(data.get(key), bool) and _numeric(field.annotation):
                    raise ValueError(f"{key}: a number is needed, not {str(data[key]).lower()}")
        return data


def _numeric(annotation: Any) -> bool:
    """``int``, ``float``, or a union or ``Annotated`` of them (``float | None``), and not ``bool``."""
    if annotation in (int, float):
        return True
    arguments = get_args(annotation)
    if get_origin(annotation) is Annotated:
        return _numeric(arguments[0])
    return bool(arguments) and bool not in arguments and any(_numeric(a) for a in arguments)


class McpSecurity(Strict):
    """Upstream MassGen's checks of an MCP server before it starts (``mcp_tools`` security levels).

    ``strict``/``high``: the command and its arguments carry no shell metacharacters, and a URL
    server is public unless allowed; ``moderate``: the same for URLs only; ``permissive``: none.
    """

    level: Literal["strict", "high", "moderate", "permissive"] = "high"
    allow_localhost: bool = False
    allow_private_ips: bool = False


class McpServerConfig(Strict):
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
            found = problems(self)
            if found:
                raise ValueError(f"MCP server {self.name!r} fails security level {self.security.level!r}: "
                                 + "; ".join(found))
        return self


class ReasoningConfig(Strict):
    """How hard a reasoning model thinks: OpenAI ``reasoning``, Anthropic ``thinking``, Gemini ``thinking_config``."""

    effort: Literal["none", "minimal", "low", "medium", "high", "xhigh"] | None = None
    summary: Literal["auto", "concise", "detailed"] | None = None
    # Anthropic: "enabled" (with budget_tokens), "adaptive" (the model decides) or "disabled".
    type: Literal["enabled", "adaptive", "disabled"] | None = None
    budget_tokens: int | None = Field(default=None, ge=1024)


class TextConfig(Strict):
    verbosity: Literal["low", "medium", "high"] | None = None


class CustomToolConfig(Strict):
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


class UploadFileConfig(Strict):
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


class BackendConfig(Strict):
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
    # How this agent's first (independent) answer is asked: "team" (the team's prompt), "bare" (the question
    # alone, as one call of the model: no team prompt, no tools) or "program" (PAL, Gao et al. 2022: the
    # question asks for a short Python program that prints the answer; the program runs confined and what it
    # prints is the answer; in a code task, whose answer is a function, the question is asked "bare").
    first_answer: Literal["team", "bare", "program"] = "team"
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


class ScriptStep(Strict):
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
