"""Every backend type a config may name, described once.

One ``BackendType`` per type carries what the rest of the code used to keep in five
tables: the factory that builds it (a ``module:function`` string, so nothing here
imports a provider SDK), the config model that checks its options, its Chat Completions
preset (URL, key names, default model, tool mode), whether it joins the default team,
and its capabilities (an MCP client of its own, its own file tools, the provider-native
tools it can switch on). ``backends``, ``schema``, ``quick``, ``defaults`` and
``openai_chat`` all read this table.

Upstream MassGen names more types than we build backends for. A type whose provider
speaks a wire we speak (``openrouter``, ``zai``, ``groq``, ...) is a preset of that wire;
an agent CLI we do not drive (``codex``, ``gemini_cli``) runs on its provider's API with
our file tools, which is said once when the config loads (``note``); a type that cannot
work here (``copilot``) has ``needs``: the config is refused with that reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from massgen.configs.backend_options import (
    AntigravityBackendConfig,
    AzureOpenAIBackendConfig,
    BackendConfig,
    ClaudeCodeBackendConfig,
    LocalBackendConfig,
    ScriptedBackendConfig,
)
from massgen.configs.wires import WIRES, Wire, WireType

ToolMode = Literal["native", "json_schema", "text"]
NativeTool = Literal["web_search", "code_interpreter"]

_CHAT = "massgen.backends.openai_chat:create"


@dataclass(frozen=True)
class BackendType:
    """One backend type: how to build it, what it needs, what it can do."""

    name: str
    what: str  # one line for ``--list-backends``
    wire: Wire
    factory: str  # "module:function", called as (config, context) -> Backend
    options: type[BackendConfig] = BackendConfig
    keys: tuple[str, ...] = ()  # environment names of its API key, any one of them
    # True: the key is always needed; False: only when talking to api.openai.com (a provider key is
    # never sent to another host).
    key_always: bool = True
    base_url: str | None = None  # where it talks when the config names no base_url
    model: str | None = None  # its default model, when the wire module has none of its own
    tool_mode: ToolMode = "native"
    schema_style: Literal["llamacpp", "openai"] = "openai"
    default_team: bool = False  # joins the default team when one of ``keys`` is set
    handles_mcp_servers: bool = False  # an MCP client itself: it is handed the config's servers
    native_file_tools: bool = False  # brings its own file tools (we confine them, not replace them)
    native_tools: frozenset[NativeTool] = frozenset()  # provider-side tools it can switch on
    quick: bool = True  # may be named as ``--backend TYPE`` or ``TYPE/model``
    note: str | None = None  # said once when a config names it: how it runs here
    needs: str | None = None  # it cannot run here: the config is refused with this reason
    # A plain model name starting with one of these (lowercased) runs on this type: ``--model claude-...``.
    model_prefixes: tuple[str, ...] = ()

    @property
    def default_base_url(self) -> str | None:
        return self.base_url

    @property
    def wire_type(self) -> WireType:
        """What its wire carries and loads (``configs/wires.py``)."""
        return WIRES[self.wire]


def _chat(name: str, what: str, base_url: str | None, keys: tuple[str, ...] = (), *,
          model: str | None = None, key_always: bool = True, tool_mode: ToolMode = "native",
          schema_style: Literal["llamacpp", "openai"] = "openai", default_team: bool = False,
          native_tools: frozenset[NativeTool] = frozenset(), model_prefixes: tuple[str, ...] = ()) -> BackendType:
    """A preset of Chat Completions (the ``openai`` SDK's wire, sent by ``chat_wire``)."""
    return BackendType(name=name, what=what, wire="chat", factory=_CHAT, keys=keys, base_url=base_url,
                       model=model, key_always=key_always, tool_mode=tool_mode, schema_style=schema_style,
                       default_team=default_team, native_tools=native_tools, model_prefixes=model_prefixes)


_TYPES: tuple[BackendType, ...] = (
    BackendType("openai", "OpenAI Responses API", "responses", "massgen.backends.openai_responses:create",
                keys=("OPENAI_API_KEY",), default_team=True,
                native_tools=frozenset({"web_search", "code_interpreter"}),
                model_prefixes=("gpt-", "chatgpt", "o1", "o3", "o4")),
    BackendType("claude", "Anthropic Messages API", "anthropic", "massgen.backends.anthropic_messages:create",
                keys=("ANTHROPIC_API_KEY",), default_team=True,
                native_tools=frozenset({"web_search", "code_interpreter"}), model_prefixes=("claude",)),
    BackendType("gemini", "Google Gemini (google-genai)", "gemini", "massgen.backends.gemini:create",
                keys=("GEMINI_API_KEY", "GOOGLE_API_KEY"), default_team=True,
                native_tools=frozenset({"web_search", "code_interpreter"}), model_prefixes=("gemini",)),
    _chat("grok", "xAI Grok (Chat Completions)", "https://api.x.ai/v1", ("XAI_API_KEY",), model="grok-4",
          default_team=True, model_prefixes=("grok",)),
    BackendType("azure_openai", "Azure OpenAI deployment (also AZURE_OPENAI_ENDPOINT)", "chat", _CHAT,
                options=AzureOpenAIBackendConfig, keys=("AZURE_OPENAI_API_KEY",)),
    _chat("chatcompletion", "any OpenAI-compatible Chat Completions server (--base-url)", None,
          ("OPENAI_API_KEY",), key_always=False),
    _chat("vllm", "vLLM server", "http://localhost:8000/v1"),
    _chat("sglang", "SGLang server", "http://localhost:30000/v1"),
    _chat("lmstudio", "LM Studio server", "http://localhost:1234/v1"),
    _chat("ollama", "Ollama server", "http://localhost:11434/v1"),
    # llama.cpp renders tools but does not parse them back (docs/LOCAL_MODELS); its grammar is reliable.
    _chat("llamacpp", "llama.cpp llama-server", "http://localhost:8080/v1", tool_mode="json_schema",
          schema_style="llamacpp"),
    # Hosted OpenAI-compatible providers upstream MassGen names: presets of Chat Completions.
    _chat("openrouter", "OpenRouter (Chat Completions; web search by its web plugin)", "https://openrouter.ai/api/v1",
          ("OPENROUTER_API_KEY",), native_tools=frozenset({"web_search"})),
    _chat("zai", "Z.ai / Zhipu GLM (Chat Completions)", "https://api.z.ai/api/paas/v4", ("ZAI_API_KEY",)),
    _chat("cerebras", "Cerebras (Chat Completions)", "https://api.cerebras.ai/v1", ("CEREBRAS_API_KEY",)),
    _chat("groq", "Groq (Chat Completions)", "https://api.groq.com/openai/v1", ("GROQ_API_KEY",)),
    _chat("fireworks", "Fireworks AI (Chat Completions)", "https://api.fireworks.ai/inference/v1",
          ("FIREWORKS_API_KEY",)),
    _chat("together", "Together AI (Chat Completions)", "https://api.together.xyz/v1", ("TOGETHER_API_KEY",)),
    _chat("nebius", "Nebius AI Studio (Chat Completions)", "https://api.studio.nebius.ai/v1", ("NEBIUS_API_KEY",)),
    _chat("nvidia_nim", "NVIDIA NIM (Chat Completions)", "https://integrate.api.nvidia.com/v1", ("NGC_API_KEY",)),
    _chat("moonshot", "Moonshot / Kimi (Chat Completions)", "https://api.moonshot.cn/v1",
          ("MOONSHOT_API_KEY", "KIMI_API_KEY")),
    _chat("qwen", "Alibaba Qwen / DashScope (Chat Completions)",
          "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", ("QWEN_API_KEY",)),
    _chat("poe", "Poe (Chat Completions)", "https://api.poe.com/v1", ("POE_API_KEY",)),
    # Agent CLIs upstream drives that we do not: their provider's API, with our file tools and MCP.
    BackendType("codex", "OpenAI Codex, run on the OpenAI Responses API with massgen's file tools", "responses",
                "massgen.backends.openai_responses:create", keys=("OPENAI_API_KEY",),
                native_tools=frozenset({"web_search", "code_interpreter"}), quick=False,
                note="the Codex CLI is not run here: the agent runs on the OpenAI Responses API "
                     "(OPENAI_API_KEY) with massgen's own file and command tools"),
    BackendType("gemini_cli", "Gemini CLI, run on the Gemini API with massgen's file tools", "gemini",
                "massgen.backends.gemini:create", keys=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
                native_tools=frozenset({"web_search", "code_interpreter"}), quick=False,
                note="the Gemini CLI is not run here: the agent runs on the Gemini API "
                     "(GEMINI_API_KEY or GOOGLE_API_KEY) with massgen's own file and command tools"),
    BackendType("claude_code", "Claude Code CLI (its own login, or ANTHROPIC_API_KEY)", "cli",
                "massgen.backends.claude_code:create", options=ClaudeCodeBackendConfig,
                handles_mcp_servers=True, native_file_tools=True),
    BackendType("antigravity_cli", "Antigravity CLI (its own login)", "cli", "massgen.backends.antigravity:create",
                options=AntigravityBackendConfig, handles_mcp_servers=True, native_file_tools=True),
    BackendType("local", "the bundled local model, served by massgen itself ([local] extra)", "local",
                "massgen.backends.local:create", options=LocalBackendConfig),
    BackendType("scripted", "scripted replies for tests and demos; no model", "scripted",
                "massgen.backends.scripted:create", options=ScriptedBackendConfig, quick=False),
    # Upstream types that cannot run here: a config naming one is refused with the reason.
    BackendType("copilot", "GitHub Copilot (not available in this version)", "cli", "", quick=False,
                needs="backend type 'copilot' needs the GitHub Copilot SDK and its local login, which this "
                      "version does not drive; use 'openai', 'claude' or a Chat Completions type instead"),
    BackendType("ag2", "AG2 (AutoGen) agents (not available in this version)", "cli", "", quick=False,
                needs="backend type 'ag2' with group_config needs AG2's group chat, which this version does not "
                      "run; a single AG2 agent (agent_config.llm_config) runs on the provider it names"),
)

BACKEND_TYPES: dict[str, BackendType] = {t.name: t for t in _TYPES}


def lookup(name: str) -> BackendType | None:
    return BACKEND_TYPES.get(name)


def buildable() -> dict[str, BackendType]:
    """The types a config may name and run (``needs`` unset)."""
    return {n: t for n, t in BACKEND_TYPES.items() if t.needs is None}


def quick_types() -> frozenset[str]:
    """Types a model name may name as ``<type>/<model>`` and ``--backend`` may name."""
    return frozenset(n for n, t in buildable().items() if t.quick)


def default_team_keys() -> dict[str, str]:
    """env var -> backend type, for the default team built from the keys present."""
    return {t.keys[0]: t.name for t in _TYPES if t.default_team}
