"""One registry of backend types (``configs/backend_types.py``): every preset is said once, as upstream says it."""

from __future__ import annotations

import ast

from upstream_wheel import upstream_package

from massgen.configs.backend_types import BACKEND_TYPES
from massgen.configs.build import backend_spec


def _upstream_base_urls() -> dict[str, str]:
    """backend type -> base_url, from upstream's ``BACKEND_CAPABILITIES`` (read with ``ast``, never imported)."""
    tree = ast.parse((upstream_package() / "backend" / "capabilities.py").read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "BackendCapabilities":
            keywords = {k.arg: k.value for k in node.keywords}
            name, url = keywords.get("backend_type"), keywords.get("base_url")
            if isinstance(name, ast.Constant) and isinstance(url, ast.Constant):
                found[name.value] = url.value
    return found


def test_every_preset_upstream_names_talks_to_upstreams_url() -> None:
    upstream = _upstream_base_urls()
    assert "moonshot" in upstream  # the parse found the table
    shared = {name: BACKEND_TYPES[name].base_url for name in upstream if name in BACKEND_TYPES}
    assert shared == {name: upstream[name] for name in shared}
    assert BACKEND_TYPES["moonshot"].base_url == "https://api.moonshot.cn/v1"


def test_a_quickstart_provider_is_its_backend_type_with_the_registrys_url() -> None:
    # Upstream's quickstart names a provider; the agent gets that type, so the registry's preset (URL, keys) holds.
    assert backend_spec("moonshot", "kimi-k2") == {"type": "moonshot", "model": "kimi-k2"}
    assert backend_spec(None, "groq/llama-3.3-70b") == {"type": "groq", "model": "llama-3.3-70b"}


def test_upstreams_tool_result_imports_work_both_ways() -> None:
    from massgen.tool import ExecutionResult
    from massgen.tool._result import ExecutionResult as Same
    from massgen.tool._result import TextContent

    assert ExecutionResult is Same
    assert ExecutionResult(output_blocks=[TextContent(data="4")]).output_blocks[0].data == "4"


def test_a_plain_model_name_runs_on_the_type_that_claims_its_prefix() -> None:
    from massgen.configs.quick import quick_backend

    assert [quick_backend(m)[0] for m in ("claude-opus-4", "GPT-5", "o3-mini", "gemini-2.5-pro", "grok-4",
                                          "llama3", "groq/llama")] == [
        "claude", "openai", "openai", "gemini", "grok", "chatcompletion", "groq"]


def test_every_backend_type_speaks_a_described_wire() -> None:
    from massgen.configs.wires import WIRES

    assert {t.wire for t in BACKEND_TYPES.values()} <= set(WIRES)
    assert all(t.wire_type.name == t.wire for t in BACKEND_TYPES.values())
