"""custom_tools run the user's functions with their failures as tool results; MCP security refuses what it must;
each backend type is described once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from massgen import backends
from massgen.actors.agent.custom_tools import CustomToolError, CustomTools
from massgen.configs import ConfigError, validate_data
from massgen.configs.backend_types import BACKEND_TYPES, buildable
from massgen.configs.defaults import PROVIDER_KEYS
from massgen.configs.quick import BACKENDS
from massgen.configs.schema import CustomToolConfig

TOOLS = '''
def add(x: int, y: int = 1) -> int:
    """Add two numbers.

    More text the model does not need."""
    return x + y


def explode(reason: str) -> str:
    raise RuntimeError(reason)


def greet(name: str, greeting: str) -> str:
    return f"{greeting}, {name}"
'''


@pytest.fixture
def tools(tmp_path: Path) -> CustomTools:
    (tmp_path / "tools.py").write_text(TOOLS, encoding="utf-8")
    return CustomTools([
        CustomToolConfig(function=["add", "explode"], path="tools.py"),
        CustomToolConfig(function="greet", name="hello", path="tools.py", preset_args={"greeting": "Hi"}),
    ], base=tmp_path)


def test_a_functions_signature_and_docstring_are_its_tool(tools: CustomTools) -> None:
    specs = {s.name: s for s in tools.specs()}
    assert specs["add"].description == "Add two numbers."
    assert specs["add"].parameters["properties"] == {"x": {"type": "integer"}, "y": {"default": 1, "type": "integer"}}
    assert specs["add"].parameters["required"] == ["x"]
    assert "greeting" not in specs["hello"].parameters["properties"]  # preset, hidden from the model


def test_calls_run_and_failures_are_tool_errors(tools: CustomTools) -> None:
    async def calls() -> list[tuple[str, bool]]:
        return [await tools.call("add", {"x": 2, "y": 3}), await tools.call("add", {"x": "two"}),
                await tools.call("add", {"x": 1, "z": 0}), await tools.call("explode", {"reason": "boom"}),
                await tools.call("hello", {"name": "Ada"}), await tools.chain(None)("nope", {})]

    added, bad_type, extra, raised, preset, unknown = asyncio.run(calls())
    assert added == ("5", False)
    assert bad_type[1] and bad_type[0].startswith("invalid arguments for add: x:")
    assert extra[1] and "z: Extra inputs are not permitted" in extra[0]
    assert raised == ("explode failed: RuntimeError: boom", True)
    assert preset == ("Hi, Ada", False)
    assert unknown == ("unknown tool 'nope'", True)


def test_a_missing_file_or_function_names_it(tmp_path: Path) -> None:
    with pytest.raises(CustomToolError, match=r"custom tool file nowhere\.py was not found"):
        CustomTools([CustomToolConfig(function="f", path="nowhere.py")], base=tmp_path)
    (tmp_path / "t.py").write_text("x = 1\n", encoding="utf-8")
    with pytest.raises(CustomToolError, match="has no function 'f'"):
        CustomTools([CustomToolConfig(function="f", path="t.py")], base=tmp_path)


def _server(**fields: object) -> dict[str, object]:
    return {"agents": [{"id": "a", "backend": {"type": "scripted", "mcp_servers": [{"name": "s", **fields}]}}]}


@pytest.mark.parametrize(("server", "why"), [
    ({"type": "stdio", "command": "rm -rf / ; python3", "security": {"level": "strict"}}, "shell metacharacters"),
    ({"type": "stdio", "command": "curl", "security": {"level": "high"}}, "'curl' is not an allowed executable"),
    ({"type": "streamable-http", "url": "http://localhost:8000/mcp", "security": {"level": "moderate"}},
     "set security.allow_localhost: true"),
    ({"type": "streamable-http", "url": "http://10.1.2.3/mcp", "security": {"allow_localhost": True}},
     "private address"),
])
def test_mcp_security_refuses_what_its_level_forbids(server: dict[str, object], why: str) -> None:
    with pytest.raises(ConfigError, match=why):
        validate_data(_server(**server), "t.yaml", env={})


def test_mcp_security_allows_what_it_is_told_to() -> None:
    validate_data(_server(type="stdio", command="curl", security={"level": "permissive"}), "t", env={})
    validate_data(_server(type="http", url="http://127.0.0.1:9/mcp", security={"allow_localhost": True}), "t", env={})


def test_every_table_of_backend_types_is_read_from_the_one_registry() -> None:
    assert set(BACKENDS) == set(buildable()) and "copilot" not in BACKENDS
    assert PROVIDER_KEYS == {"OPENAI_API_KEY": "openai", "ANTHROPIC_API_KEY": "claude", "GEMINI_API_KEY": "gemini",
                             "XAI_API_KEY": "grok"}
    assert {n for n in BACKEND_TYPES if backends.handles_mcp_servers(n)} == {"claude_code", "antigravity_cli"}
    assert all(backends.factory_module(n) for n in buildable())
    with pytest.raises(ConfigError, match="GitHub Copilot SDK"):
        validate_data({"agents": [{"id": "a", "backend": {"type": "copilot"}}]}, "t", env={})
