"""Provider-native tools and reasoning settings, in each provider's own wire shape.

The provider runs these tools itself (``enable_web_search``, ``enable_code_interpreter`` /
``enable_code_execution``); the model's searches and code runs stay inside its reply,
so they are sent on turn calls and never need a result from us. Shapes follow the
installed SDKs' request types: OpenAI Responses ``WebSearchToolParam`` and
``CodeInterpreter``; Anthropic ``WebSearchTool20250305Param`` and
``CodeExecutionTool20250825Param``, ``thinking`` and ``output_config``; Gemini
``Tool(google_search=...)``, ``Tool(code_execution=...)`` and ``ThinkingConfig``.
"""

from __future__ import annotations

from typing import Any

from massgen.configs.schema import BackendConfig

# Anthropic: how many searches one reply may make (the provider's own cap is per request).
ANTHROPIC_WEB_SEARCH_MAX_USES = 5
ANTHROPIC_DEFAULT_THINKING_BUDGET = 4096
_ANTHROPIC_EFFORT = {"minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh"}
_GEMINI_LEVEL = {"minimal": "MINIMAL", "low": "LOW", "medium": "MEDIUM", "high": "HIGH", "xhigh": "HIGH"}


# -- OpenAI Responses -------------------------------------------------------------------------------
def responses_tools(config: BackendConfig) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    if config.enable_web_search:
        tools.append({"type": "web_search"})
    if config.code_execution:
        tools.append({"type": "code_interpreter", "container": {"type": "auto"}})
    return tools


def responses_options(config: BackendConfig) -> dict[str, Any]:
    """``reasoning`` {effort, summary}, ``text`` {verbosity}, ``top_p``, ``parallel_tool_calls``."""
    options: dict[str, Any] = {}
    if config.reasoning is not None:
        reasoning = {k: v for k, v in (("effort", config.reasoning.effort), ("summary", config.reasoning.summary))
                     if v is not None}
        if reasoning:
            options["reasoning"] = reasoning
    if config.text is not None and config.text.verbosity is not None:
        options["text"] = {"verbosity": config.text.verbosity}
    if config.top_p is not None:
        options["top_p"] = config.top_p
    if config.parallel_tool_calls is not None:
        options["parallel_tool_calls"] = config.parallel_tool_calls
    return options


# -- Anthropic Messages ------------------------------------------------------------------------------
def anthropic_tools(config: BackendConfig) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    if config.enable_web_search:
        tools.append({"type": "web_search_20250305", "name": "web_search",
                      "max_uses": ANTHROPIC_WEB_SEARCH_MAX_USES})
    if config.code_execution:
        tools.append({"type": "code_execution_20250825", "name": "code_execution"})
    return tools


def anthropic_thinking(config: BackendConfig) -> dict[str, Any] | None:
    """The ``thinking`` block: ``enabled`` (with a budget), ``adaptive`` or ``disabled``; None: not sent."""
    reasoning = config.reasoning
    if reasoning is None or reasoning.type is None:
        return None
    if reasoning.type == "enabled":
        return {"type": "enabled", "budget_tokens": reasoning.budget_tokens or ANTHROPIC_DEFAULT_THINKING_BUDGET}
    return {"type": reasoning.type}


def anthropic_options(config: BackendConfig) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if (thinking := anthropic_thinking(config)) is not None:
        options["thinking"] = thinking
    effort = config.reasoning.effort if config.reasoning is not None else None
    if effort is not None and effort in _ANTHROPIC_EFFORT:
        options["output_config"] = {"effort": _ANTHROPIC_EFFORT[effort]}
    if config.top_p is not None:
        options["top_p"] = config.top_p
    return options


# -- Gemini ---------------------------------------------------------------------------------------------
def gemini_tools(config: BackendConfig) -> list[Any]:
    from google.genai import types

    tools: list[Any] = []
    if config.enable_web_search:
        tools.append(types.Tool(google_search=types.GoogleSearch()))
    if config.code_execution:
        tools.append(types.Tool(code_execution=types.ToolCodeExecution()))
    return tools


def gemini_thinking(config: BackendConfig) -> Any:
    """``ThinkingConfig``: the effort as a thinking level, thoughts included when a summary is asked for."""
    from google.genai import types

    reasoning = config.reasoning
    if reasoning is None:
        return None
    if reasoning.type == "disabled" or reasoning.effort == "none":
        return types.ThinkingConfig(thinking_budget=0)
    level = _GEMINI_LEVEL.get(reasoning.effort or "")
    budget = reasoning.budget_tokens if reasoning.type == "enabled" else None
    if level is None and budget is None and reasoning.summary is None:
        return None
    return types.ThinkingConfig(thinking_level=types.ThinkingLevel(level) if level and budget is None else None,
                                thinking_budget=budget, include_thoughts=True if reasoning.summary else None)


# -- Chat Completions ----------------------------------------------------------------------------------
def chat_options(config: BackendConfig, web_search_plugin: bool) -> dict[str, Any]:
    """Fields of a Chat Completions body: effort, verbosity, top_p, the user's extra body, web search."""
    options: dict[str, Any] = {}
    if config.reasoning is not None and config.reasoning.effort is not None:
        options["reasoning_effort"] = config.reasoning.effort
    if config.text is not None and config.text.verbosity is not None:
        options["verbosity"] = config.text.verbosity
    if config.top_p is not None:
        options["top_p"] = config.top_p
    if config.parallel_tool_calls is not None:
        options["parallel_tool_calls"] = config.parallel_tool_calls
    if config.chat_template_kwargs is not None:
        options["chat_template_kwargs"] = config.chat_template_kwargs
    if config.enable_web_search and web_search_plugin:
        options["plugins"] = [{"id": "web"}]  # OpenRouter's web search plugin
    options.update(config.extra_body)
    return options
