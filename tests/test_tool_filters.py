"""allowed_tools and exclude_tools follow one rule: exact names, and an unknown name is an error."""

from __future__ import annotations

import mcp_types
import pytest

from massgen.actors.mcp import McpConfigError, McpServerSpec, select_tools
from massgen.configs.schema import McpServerConfig

TOOLS = [mcp_types.Tool(name=n, description=n, input_schema={"type": "object", "properties": {}})
         for n in ("forecast", "admin_reset")]


@pytest.mark.parametrize("key", ["allowed_tools", "exclude_tools"])
def test_a_name_in_either_list_that_the_server_lacks_is_an_error(key: str) -> None:
    config = McpServerConfig(name="weather", type="stdio", command="x", **{key: ["Admin_Reset"]})
    with pytest.raises(McpConfigError) as caught:
        select_tools(McpServerSpec("a", config), TOOLS)
    assert f"{key} names tools it does not have: mcp__weather__Admin_Reset" in str(caught.value)
    assert "it has: admin_reset, forecast" in str(caught.value)


def test_a_backend_exclude_entry_for_this_server_is_checked_too() -> None:
    spec = McpServerSpec("a", McpServerConfig(name="weather", type="stdio", command="x"),
                         exclude_tools=("mcp__weather__adminreset", "mcp__other__x", "Bash"))
    with pytest.raises(McpConfigError, match="exclude_tools names tools it does not have: mcp__weather__adminreset"):
        select_tools(spec, TOOLS)


def test_exact_names_filter_as_before() -> None:
    config = McpServerConfig(name="weather", type="stdio", command="x", exclude_tools=["admin_reset"])
    offered, hidden = select_tools(McpServerSpec("a", config), TOOLS)
    assert [t.name for t in offered] == ["mcp__weather__forecast"] and hidden == ("mcp__weather__admin_reset",)
