"""Upstream MassGen's config keys, turned into ours before validation.

A MassGen 0.1.97 config must load here unchanged. Every key of upstream's schema is
one of three things: ours already (validated by ``schema``), mapped here onto ours
(``display`` -> ``ui``, dict-form ``mcp_servers`` -> a list, ``enable_mcp_command_line``
-> ``orchestrator.command_execution``, ...), or a feature this version does not have:
then the key is taken out and a ``Notice`` says, in one line, that it is not applied
and why. Nothing is dropped without a notice, and a key that is neither ours nor
upstream's stays in the data, so a typo is still refused by the schema.

This module knows upstream's names; ``schema`` stays the contract of what we run.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from massgen.configs.backend_types import BACKEND_TYPES, BackendType
from massgen.configs.uploads import ENTRY_KEYS, Entry, problem
from massgen.configs.wires import mapping, refusal

_NOT_HERE = "not available in this version"
_CODE_TOOLS = ("upstream's code-based tools (MCP tools as Python files in the workspace) are " + _NOT_HERE
               + "; MCP tools are offered as tool calls")
_MULTIMODAL = "multimodal generation tools are " + _NOT_HERE
_DOCKER_DETAIL = ("the Docker run_command uses massgen's own image and limits (files/sandbox.py); "
                  "this setting is not applied")

# Backend keys upstream accepts that change nothing here, and why.
BACKEND_UNAPPLIED: dict[str, str] = {
    "enable_code_based_tools": _CODE_TOOLS,
    "custom_tools_path": _CODE_TOOLS,
    "auto_discover_custom_tools": "upstream's built-in tool library is not shipped here; list tools in custom_tools",
    "exclude_custom_tools": "upstream's built-in tool library is not shipped here",
    "direct_mcp_servers": _CODE_TOOLS,
    "shared_tools_directory": _CODE_TOOLS,
    "exclude_file_operation_mcps": "massgen's file tools are built in, not MCP servers; use exclude_tools",
    "enable_image_generation": _MULTIMODAL,
    "enable_audio_generation": _MULTIMODAL,
    "enable_video_generation": _MULTIMODAL,
    "enable_file_generation": _MULTIMODAL,
    "command_line_allowed_commands": "run_command runs in a sandbox that confines every command; "
                                     "command allow-lists are not applied",
    "command_line_blocked_commands": "run_command runs in a sandbox that confines every command; "
                                     "command block-lists are not applied",
    "command_line_docker_image": _DOCKER_DETAIL,
    "command_line_docker_memory_limit": _DOCKER_DETAIL,
    "command_line_docker_cpu_limit": _DOCKER_DETAIL,
    "command_line_docker_network_mode": _DOCKER_DETAIL,
    "command_line_docker_enable_sudo": _DOCKER_DETAIL,
    "command_line_docker_credentials": _DOCKER_DETAIL,
    "command_line_docker_packages": _DOCKER_DETAIL,
    "concurrent_tool_execution": "tool calls of one model reply run one after another here",
    "max_concurrent_tools": "tool calls of one model reply run one after another here",
    "debug_delay_seconds": "upstream's debugging delays are " + _NOT_HERE,
    "debug_delay_after_n_tools": "upstream's debugging delays are " + _NOT_HERE,
    "enable_programmatic_flow": "Anthropic programmatic tool calling is " + _NOT_HERE,
    "enable_tool_search": "provider tool search is " + _NOT_HERE + "; every tool is offered",
    "tool_search_variant": "provider tool search is " + _NOT_HERE + "; every tool is offered",
    "enable_strict_tool_use": "tools are sent with strict: false; strict schemas are " + _NOT_HERE,
    "betas": "Anthropic beta headers are not sent; the server tools in use need none",
    "websocket_mode": "models are streamed over HTTP (server-sent events); the WebSocket transport is " + _NOT_HERE,
    "permissions": "upstream's permission hooks are " + _NOT_HERE
                   + "; file access follows context_paths and the workspace",
    "hooks": "upstream's hook framework is " + _NOT_HERE,
    "top_k": "top_k is not sent by this version's backends",
    "voting_threshold": "votes are counted by massgen's judge (docs/architecture.md); a threshold is " + _NOT_HERE,
    "enable_rate_limit": "rate limits are handled by retries with backoff and circuit breakers here",
    "enable_nlip": "NLIP routing is " + _NOT_HERE,
    "nlip": "NLIP routing is " + _NOT_HERE,
    "use_mcpwrapped_for_tool_filtering": "MCP tools are filtered by allowed_tools/exclude_tools directly",
    "use_no_roots_wrapper": "MCP servers are started directly here",
}

_COORDINATION = ("upstream's coordination extensions (planning, subagents, skills, broadcasts, checklists, "
                 "personas, evaluators) are " + _NOT_HERE + "; agents answer and vote as in docs/architecture.md")
# Orchestrator keys upstream accepts that change nothing here, and why.
ORCHESTRATOR_UNAPPLIED: dict[str, str] = {
    "coordination": _COORDINATION,
    "skills_directory": "skills are " + _NOT_HERE,
    "enable_multimodal_tools": _MULTIMODAL,
    "image_generation_backend": _MULTIMODAL,
    "video_generation_backend": _MULTIMODAL,
    "audio_generation_backend": _MULTIMODAL,
    "fairness_enabled": "turns are handed out by massgen's own rules (every agent's first answer is "
                        "independent); upstream's fairness caps are " + _NOT_HERE,
    "fairness_lead_cap_answers": "use max_new_answers_per_agent; upstream's fairness caps are " + _NOT_HERE,
    "max_midstream_injections_per_round": "new answers reach a working agent at its next safe point, "
                                          "without a per-round cap",
    "defer_peer_updates_until_restart": "new answers reach a working agent at its next safe point",
    "allow_midstream_peer_updates_before_checklist_submit": "checklists are " + _NOT_HERE,
    "defer_voting_until_all_answered": "an agent always waits for every live agent's first answer before "
                                       "voting here",
    "debug_final_answer": "upstream's debugging answer is " + _NOT_HERE,
    "dspy": "DSPy question paraphrasing is " + _NOT_HERE,
    "enable_nlip": "NLIP routing is " + _NOT_HERE,
    "nlip": "NLIP routing is " + _NOT_HERE,
    "skip_coordination_rounds": "coordination always runs; a single agent answers once and presents",
    "max_turns": "a turn ends at one answer or vote; use max_new_answers_per_agent and the timeouts",
    "voting_threshold": "votes are counted by massgen's judge; a threshold is " + _NOT_HERE,
    "type": "this version has one orchestrator",
}

# Top-level sections upstream accepts that change nothing here.
TOP_UNAPPLIED: dict[str, str] = {
    "memory": "upstream's persistent memory (Qdrant, mem0) is " + _NOT_HERE
              + "; sessions carry earlier turns (--session-id)",
    "nlip": "NLIP routing is " + _NOT_HERE,
    "task": "give the question on the command line or to massgen.run()",
    "gemini": "per-model rate limits are " + _NOT_HERE + "; 429s are retried with backoff",
}

AGENT_UNAPPLIED: dict[str, str] = {
    "name": "agents are named by id here",
    "description": "agents are named by id here",
    "enable_nlip": "NLIP routing is " + _NOT_HERE,
    "nlip": "NLIP routing is " + _NOT_HERE,
    "type": "an agent's kind is its backend type here",
    "llm_config": "AG2 agents are run on their llm_config's provider (backend type ag2)",
    "code_execution_config": "AG2 code executors are " + _NOT_HERE + "; enable run_command instead",
}

# Upstream's command_line_execution_mode -> ours (orchestrator.command_execution).
_COMMAND_MODES = {"docker": "docker", "local": "sandbox", "srt": "sandbox"}
# AG2 llm_config.api_type -> our backend type.
_AG2_PROVIDERS = {"openai": "openai", "google": "gemini", "gemini": "gemini", "anthropic": "claude",
                  "azure": "azure_openai"}


@dataclass(frozen=True)
class Notice:
    """One upstream key this config names that is not applied as upstream applies it."""

    key: str  # e.g. "backend.enable_image_generation" or "orchestrator.coordination.use_skills"
    why: str
    agents: tuple[str, ...] = ()  # the agents whose backend names it; empty for team keys

    def line(self) -> str:
        who = f" (agent{'s' if len(self.agents) > 1 else ''} {', '.join(self.agents)})" if self.agents else ""
        return f"{self.key}{who}: {self.why}"


class _Notes:
    """Notices collected while translating, one per key and reason (the agents that name it gathered)."""

    def __init__(self) -> None:
        # Keyed by reason too: one key may have another reason for another agent's backend type.
        self._found: dict[tuple[str, str], list[str]] = {}

    def add(self, key: str, why: str, agent: str | None = None) -> None:
        agents = self._found.setdefault((key, why), [])
        if agent is not None and agent not in agents:
            agents.append(agent)

    def notices(self) -> tuple[Notice, ...]:
        return tuple(Notice(key, why, tuple(agents)) for (key, why), agents in self._found.items())


def translate(data: dict[str, Any]) -> tuple[dict[str, Any], tuple[Notice, ...]]:
    """``data`` with upstream's keys mapped onto ours, and a notice for each key not applied."""
    data = copy.deepcopy(data)
    notes = _Notes()
    for key, why in TOP_UNAPPLIED.items():
        if key in data:
            del data[key]
            notes.add(key, f"not applied: {why}")
    _top_aliases(data, notes)
    agents = data.get("agents")
    agent_list: list[Any] = agents if isinstance(agents, list) else [data["agent"]] if isinstance(
        data.get("agent"), dict) else []
    orchestrator = data.get("orchestrator")
    orchestrator = orchestrator if isinstance(orchestrator, dict) else None
    for index, agent in enumerate(agent_list):
        if isinstance(agent, dict):
            _agent(agent, str(agent.get("id") or f"#{index + 1}"), data, notes)
    if orchestrator is not None:
        _orchestrator(orchestrator, notes)
    return data, notes.notices()


def _top_aliases(data: dict[str, Any], notes: _Notes) -> None:
    """Upstream's older spellings: ``display`` for ``ui``, ``timeout`` for ``timeout_settings``."""
    for old, new in (("display", "ui"), ("timeout", "timeout_settings")):
        if isinstance(data.get(old), dict) and not isinstance(data.get(new), dict):
            data[new] = data.pop(old)
        elif isinstance(data.get(old), dict):
            data[new] = {**data.pop(old), **data[new]}
    ui = data.get("ui")
    if isinstance(ui, dict):
        if "type" in ui:
            ui.setdefault("display_type", ui.pop("type"))
            ui.pop("type", None)
        if ui.get("logging_enabled") is False:
            notes.add("ui.logging_enabled", "false: the run is recorded in its trace while it lasts; the log "
                      "directory is deleted when the run ends (as with --no-logs)")


def _agent(agent: dict[str, Any], agent_id: str, data: dict[str, Any], notes: _Notes) -> None:
    backend = agent.get("backend")
    appended = agent.pop("append_system_prompt", None)
    if isinstance(appended, str) and appended.strip():
        # Upstream appends it to the system prompt the agent gets: the same as extending ours.
        base = agent.get("system_message")
        agent["system_message"] = f"{base}\n\n{appended}" if isinstance(base, str) and base else appended
    if isinstance(backend, dict) and backend.get("type") == "ag2":
        _ag2(agent, backend, agent_id, notes)
    for key, why in AGENT_UNAPPLIED.items():
        if key in agent:
            del agent[key]
            notes.add(f"agent.{key}", f"not applied: {why}", agent_id)
    if isinstance(backend, dict):
        _backend(backend, agent_id, data, notes)


def _ag2(agent: dict[str, Any], backend: dict[str, Any], agent_id: str, notes: _Notes) -> None:
    """A single AG2 agent runs on the provider its ``llm_config`` names; a group chat cannot run here."""
    if "group_config" in backend:
        return  # the registry's ``needs`` refuses it with the reason
    agent_config = backend.get("agent_config")
    llm = agent_config.get("llm_config") if isinstance(agent_config, dict) else agent.get("llm_config")
    if isinstance(llm, list) and llm:
        llm = llm[0]  # AG2's config list: the first entry is the one it tries first
    if not isinstance(llm, dict):
        return
    provider = _AG2_PROVIDERS.get(str(llm.get("api_type", "openai")))
    if provider is None:
        return
    mapped: dict[str, Any] = {"type": provider}
    for key in ("model", "temperature", "base_url", "api_key"):
        if key in llm:
            mapped[key] = llm[key]
    if isinstance(agent_config, dict) and agent_config.get("system_message") and not agent.get("system_message"):
        agent["system_message"] = agent_config["system_message"]
    executor = (agent_config or {}).get("code_execution_config") if isinstance(agent_config, dict) else None
    backend.clear()
    backend.update(mapped)
    notes.add("backend.type: ag2", f"the AG2 framework is not run here: the agent runs on the {provider!r} "
              "backend its llm_config names" + ("; its code executor is not applied" if executor else ""),
              agent_id)


def _backend(backend: dict[str, Any], agent_id: str, data: dict[str, Any], notes: _Notes) -> None:
    described = BACKEND_TYPES.get(str(backend.get("type")))
    if described is not None and described.note:
        notes.add(f"backend.type: {described.name}", described.note, agent_id)
    if described is not None:
        _provider_features(backend, described, agent_id, notes)
        _upload_files(backend, described, agent_id, notes)
    for key, why in BACKEND_UNAPPLIED.items():
        if key in backend:
            del backend[key]
            notes.add(f"backend.{key}", f"not applied: {why}", agent_id)
    orchestrator = data.setdefault("orchestrator", {}) if isinstance(data.get("orchestrator", {}), dict) else {}
    # Upstream's per-agent command line -> our team's run_command.
    mode = backend.pop("command_line_execution_mode", None)
    if backend.pop("enable_mcp_command_line", False):
        ours = _COMMAND_MODES.get(str(mode or "local"))
        if ours is None:
            notes.add("backend.command_line_execution_mode", f"{mode!r} is not a mode here (docker, local or "
                      "srt); run_command is not offered", agent_id)
        else:
            previous = orchestrator.get("command_execution")
            if previous in (None, "off") or previous == ours:
                orchestrator["command_execution"] = ours
                orchestrator.setdefault("workspaces", True)
            if mode in ("local", None):
                notes.add("backend.command_line_execution_mode: local", "run_command runs in a bubblewrap sandbox "
                          "confined to the workspace, not directly on the host", agent_id)
    elif mode is not None:
        notes.add("backend.command_line_execution_mode", "not applied: enable_mcp_command_line is not set",
                  agent_id)
    for key in [k for k in backend if k.startswith("command_line_srt_")]:
        del backend[key]
        notes.add(f"backend.{key}", "not applied: the bubblewrap sandbox has its own fixed policy "
                  "(files/sandbox.py)", agent_id)
    _tool_lists(backend, described.handles_mcp_servers if described else False, agent_id, notes)
    temp_parent = backend.pop("agent_temporary_workspace", None)
    if temp_parent is not None:
        notes.add("backend.agent_temporary_workspace", "mapped: other agents' answers are shown as read-only "
                  "snapshots under the run's log directory", agent_id)
    context_paths = backend.pop("context_paths", None)
    if isinstance(context_paths, list):
        orchestrator.setdefault("context_paths", []).extend(context_paths)


_NATIVE_KEYS = (("enable_web_search", "web_search"), ("enable_code_interpreter", "code_interpreter"),
                ("enable_code_execution", "code_interpreter"))
_MODEL_KNOBS = ("reasoning", "text", "top_p", "parallel_tool_calls", "extra_body", "chat_template_kwargs")


def _provider_features(backend: dict[str, Any], described: BackendType, agent_id: str, notes: _Notes) -> None:
    """Native tools a type's provider lacks, and model settings its wire cannot carry: said, not sent."""
    for key, tool in _NATIVE_KEYS:
        if backend.get(key) and tool not in described.native_tools:
            del backend[key]
            how = ("the CLI uses its own tools" if described.wire == "cli" else
                   f"backend type {described.name!r} has no provider-native {tool.replace('_', ' ')} here")
            notes.add(f"backend.{key}", f"not applied: {how}", agent_id)
    if described.wire in ("cli", "local", "scripted"):
        for key in _MODEL_KNOBS:
            if backend.get(key) not in (None, {}, []):
                del backend[key]
                notes.add(f"backend.{key}", f"not applied: backend type {described.name!r} sets no such model "
                          "option here", agent_id)
    reasoning = backend.get("reasoning")
    if described.wire == "chat" and isinstance(reasoning, dict):
        for key in ("summary", "type", "budget_tokens"):
            if reasoning.get(key) is not None:
                del reasoning[key]
                notes.add(f"backend.reasoning.{key}", "not applied: Chat Completions carries only "
                          "reasoning_effort", agent_id)
    if described.wire != "chat":
        for key in ("extra_body", "chat_template_kwargs"):
            if backend.get(key) not in (None, {}, []):
                del backend[key]
                notes.add(f"backend.{key}", "not applied: only Chat Completions backends send extra body fields",
                          agent_id)


def _upload_files(backend: dict[str, Any], described: BackendType, agent_id: str, notes: _Notes) -> None:
    """Entries a type's wire cannot send are taken out, each named in a notice; the rest are sent."""
    entries = backend.get("upload_files")
    if not isinstance(entries, list):
        return
    kept = []
    for index, entry in enumerate(entries):
        named = [(k, v) for k, v in entry.items() if k in ENTRY_KEYS] if isinstance(entry, dict) else []
        if len(named) != 1 or len(entry) != 1 or not isinstance(named[0][1], str):
            kept.append(entry)  # malformed: the schema says what is wrong
            continue
        key, value = named[0]
        checked = Entry(key, ENTRY_KEYS[key], value)
        limit = backend.get("media_max_file_size_mb")
        if problem(checked, limit if isinstance(limit, (int, float)) else None) is not None:
            kept.append(entry)  # a file that is not there (or not what it says) is an error, sent or not
            continue
        why = refusal(described.wire, described.name, checked)
        if why is None:
            kept.append(entry)
            if (how := mapping(described.wire, checked)) is not None:
                notes.add(f"backend.upload_files[{index}]", f"mapped: {key} {value}: {how}", agent_id)
        else:
            notes.add(f"backend.upload_files[{index}]", f"not applied: {key} {value}: {why}", agent_id)
    backend["upload_files"] = kept


def _tool_lists(backend: dict[str, Any], cli: bool, agent_id: str, notes: _Notes) -> None:
    """``defer_loading`` (tool search) on custom tools and MCP servers; custom and check tools of an agent CLI."""
    servers = backend.get("mcp_servers")
    entries = [*(backend.get("custom_tools") or []),
               *(servers.values() if isinstance(servers, dict) else servers or [])]
    for entry in entries:
        if isinstance(entry, dict) and "defer_loading" in entry:
            del entry["defer_loading"]
            notes.add("defer_loading", "not applied: provider tool search is " + _NOT_HERE
                      + "; every tool is offered", agent_id)
    if cli and backend.get("custom_tools"):  # an empty list (a dumped config) says nothing
        del backend["custom_tools"]
        notes.add("backend.custom_tools", "not applied: an agent CLI reaches tools over MCP only; custom tools "
                  "are offered to the API backends (openai, claude, gemini, Chat Completions)", agent_id)
    if cli and backend.get("check_tools"):
        del backend["check_tools"]
        notes.add("backend.check_tools", "not applied: an agent CLI checks answers with its own tools", agent_id)
    if cli and backend.get("first_answer", "team") != "team":
        del backend["first_answer"]
        notes.add("backend.first_answer", "not applied: an agent CLI answers in its own way", agent_id)


def _orchestrator(orchestrator: dict[str, Any], notes: _Notes) -> None:
    for key, why in ORCHESTRATOR_UNAPPLIED.items():
        if key not in orchestrator:
            continue
        value = orchestrator.pop(key)
        if key == "coordination" and isinstance(value, dict):
            for sub in value:
                notes.add(f"orchestrator.coordination.{sub}", f"not applied: {why}")
        else:
            notes.add(f"orchestrator.{key}", f"not applied: {why}")
    if orchestrator.pop("skip_final_presentation", False):
        orchestrator.setdefault("final_answer_strategy", "winner_reuse")  # the winner's answer, as written
    sensitivity = orchestrator.get("voting_sensitivity")
    if sensitivity is not None and sensitivity not in ("lenient", "balanced", "strict"):
        orchestrator["voting_sensitivity"] = "balanced"
        notes.add(f"orchestrator.voting_sensitivity: {sensitivity}", "upstream's scored and checklist voting "
                  "modes are " + _NOT_HERE + "; 'balanced' voting guidance is used")
    if "max_new_answers" in orchestrator:
        orchestrator.setdefault("max_new_answers_per_agent", orchestrator.pop("max_new_answers"))
        orchestrator.pop("max_new_answers", None)
    storage = [k for k in ("snapshot_storage", "agent_temporary_workspace") if k in orchestrator]
    for key in storage:
        orchestrator.pop(key)
        notes.add(f"orchestrator.{key}", "mapped: every agent gets a workspace; answers are shared as "
                  "read-only snapshots under the run's log directory, not in this folder")
    if storage:
        orchestrator.setdefault("workspaces", True)
