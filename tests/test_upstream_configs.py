"""MassGen 0.1.97's own example configs load here, and run against wire-faithful servers.

The upstream wheel is fetched once with ``pip download --no-deps massgen==0.1.97`` and
cached under ``tests/.upstream`` (like the Claude Code CLI under ``tests/.node``); without
a network the tests skip, except in CI (``CI=true``), where a failed download fails.
Each example is validated as a user who has its files and keys would validate it: the
``${VARS}`` it names are set and the context paths it names exist.
"""

from __future__ import annotations

import base64
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import of_type, records, run_team
from wire.team_providers import ProviderTeamServer

from massgen.configs import ConfigError, validate_data
from massgen.configs.backend_types import BACKEND_TYPES
from massgen.configs.schema import OrchestratorConfig, TeamConfig, TimeoutSettings, UiConfig

VERSION = "0.1.97"
CACHE = Path(__file__).parent / ".upstream"
WHEEL = CACHE / f"massgen-{VERSION}-py3-none-any.whl"
EXAMPLES = 276

# The upstream examples refused here, and the words each refusal must carry. A context path naming a file
# (6 examples) is granted as upstream grants it, that file alone (issue 37), so those load.
REFUSED = {
    "ag2/ag2_groupchat.yaml": "group chat",
    "ag2/ag2_groupchat_gpt.yaml": "group chat",
    "basic/single/copilot.yaml": "GitHub Copilot SDK",
    "basic/single/copilot_docker.yaml": "GitHub Copilot SDK",
    "rate_limits/rate_limits.yaml": "agents: required key is missing",  # a rate-limit table, not a team
}
FILE_CONTEXT_EXAMPLES = (
    "tools/custom_tools/multimodal_tools/understand_audio.yaml",
    "tools/custom_tools/multimodal_tools/understand_file.yaml",
    "tools/custom_tools/multimodal_tools/understand_image.yaml",
    "tools/custom_tools/multimodal_tools/understand_video.yaml",
    "tools/custom_tools/terminal_evaluation.yaml",
    "tools/filesystem/gemini_gpt5nano_file_context_path.yaml",
)


def _fetch_wheel() -> Path:
    if WHEEL.is_file():
        return WHEEL
    CACHE.mkdir(exist_ok=True)
    done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", f"massgen=={VERSION}",
                           "-d", str(CACHE), "-q"], capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0 or not WHEEL.is_file():
        why = f"could not download massgen=={VERSION}: {done.stderr.strip()[-300:]}"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    return WHEEL


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel's ``massgen/configs`` folder, unpacked."""
    root = tmp_path_factory.mktemp("upstream")
    with zipfile.ZipFile(_fetch_wheel()) as wheel:
        for name in wheel.namelist():
            if name.startswith("massgen/configs/") and name.endswith(".yaml"):
                wheel.extract(name, root)
    return root / "massgen" / "configs"


def _variables(text: str) -> dict[str, str]:
    return {name: f"set-{name.lower()}" for name in re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", text)}


_FILE_SUFFIXES = {".css", ".yaml", ".pdf", ".mp3", ".mp4", ".jpg", ".png", ".txt", ".md", ".py", ".json", ".html"}


def _make_context_paths(data: Any, where: Path) -> None:
    """Create the context paths an example names (relative ones under ``where``), as its user has them."""
    orchestrator = data.get("orchestrator") if isinstance(data, dict) else None
    for entry in (orchestrator or {}).get("context_paths") or []:
        path = Path(entry["path"]).expanduser()
        path = path if path.is_absolute() else where / path
        if path.exists():
            continue
        if path.suffix.lower() in _FILE_SUFFIXES:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
        else:
            path.mkdir(parents=True, exist_ok=True)


# A 1x1 PNG, for the images upstream's examples name (upload_files); other kinds get a few bytes.
_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


def _make_upload_files(data: Any, where: Path) -> None:
    """Create the local files an example's upload_files name (relative ones under ``where``), as its user has them."""
    agents = (data.get("agents") or [data.get("agent")]) if isinstance(data, dict) else []
    for agent in agents:
        for entry in (agent or {}).get("backend", {}).get("upload_files") or []:
            for value in entry.values():
                path = Path(value).expanduser()
                if value.startswith(("http://", "https://")) or (path.is_absolute() and path.exists()):
                    continue
                path = path if path.is_absolute() else where / path
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(_PNG if "image_path" in entry else b"\0" * 16)


def _load(path: Path, where: Path) -> tuple[Any, TeamConfig | str]:
    text = path.read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    _make_context_paths(data, where)
    _make_upload_files(data, where)
    try:
        return data, validate_data(data, path.name, env=_variables(text))
    except ConfigError as exc:
        return data, str(exc)


def test_every_upstream_example_loads_or_is_refused_with_its_reason(
    upstream: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    files = sorted(upstream.rglob("*.yaml"))
    assert len(files) == EXAMPLES
    refused = {}
    for path in files:
        _, loaded = _load(path, tmp_path)
        if isinstance(loaded, str):
            refused[str(path.relative_to(upstream))] = loaded
    assert sorted(refused) == sorted(REFUSED), "\n".join(f"{k}: {v}" for k, v in refused.items())
    for name, words in REFUSED.items():
        assert words in refused[name], refused[name]
    assert len(files) - len(refused) == EXAMPLES - len(REFUSED)  # 271 of 276
    for name in FILE_CONTEXT_EXAMPLES:  # each names a file that exists: granted, not refused
        data, loaded = _load(upstream / name, tmp_path)
        named = [tmp_path / c["path"] for c in data["orchestrator"]["context_paths"]]
        assert isinstance(loaded, TeamConfig) and any(p.is_file() for p in named), name


ROUND_TIMEOUT_KEYS = ("initial_round_timeout_seconds", "subsequent_round_timeout_seconds",
                      "round_timeout_grace_seconds")


def test_examples_with_round_timeouts_get_them_as_upstream_means_them_and_no_warning(
    upstream: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    using = 0
    for path in sorted(upstream.rglob("*.yaml")):
        data, loaded = _load(path, tmp_path)
        given = (data or {}).get("timeout_settings") or {} if isinstance(data, dict) else {}
        if isinstance(loaded, str) or not any(key in given for key in ROUND_TIMEOUT_KEYS):
            continue
        using += 1
        timeouts = loaded.timeout_settings
        assert timeouts.round_timeout(False) == given.get("initial_round_timeout_seconds"), path
        assert timeouts.round_timeout(True) == given.get("subsequent_round_timeout_seconds"), path
        assert timeouts.round_timeout_grace_seconds == given.get("round_timeout_grace_seconds", 120), path
        assert not [line for line in loaded.notices if "round_timeout" in line], (path, loaded.notices)
    assert using == 18, using  # the examples of 0.1.97 that set them


# Upstream keys mapped onto ours without a notice: what they ask for is done.
MAPPED = {
    "top": {"display", "timeout", "agent"},
    "agent": {"append_system_prompt"},
    "backend": {"enable_mcp_command_line", "command_line_execution_mode", "type", "agent_config"},
    "orchestrator": {"skip_final_presentation", "max_new_answers"},
    "ui": {"type"},
}


def _noticed(config: TeamConfig, key: str) -> bool:
    return any(line.startswith(key) or f".{key}" in line.split(":", 1)[0] or f"{key} (" in line
               for line in config.notices)


def test_no_upstream_key_is_silently_ignored(upstream: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every key of every example is ours (applied), mapped onto ours, or named in a notice."""
    monkeypatch.chdir(tmp_path)
    silent: list[str] = []
    for path in sorted(upstream.rglob("*.yaml")):
        data, loaded = _load(path, tmp_path)
        if isinstance(loaded, str):
            continue
        name = str(path.relative_to(upstream))

        def check(section: str, keys: Any, ours: set[str], *, where: str = "", config: TeamConfig = loaded,
                  name: str = name) -> None:
            for key in keys or ():
                if key not in ours and key not in MAPPED.get(section, set()) and not _noticed(config, key):
                    silent.append(f"{name}: {where or section}.{key}")

        check("top", data, set(TeamConfig.model_fields))
        check("orchestrator", data.get("orchestrator"), set(OrchestratorConfig.model_fields))
        check("ui", data.get("ui") or data.get("display"), set(UiConfig.model_fields))
        check("timeout", data.get("timeout_settings") or data.get("timeout"), set(TimeoutSettings.model_fields))
        agents = data.get("agents") or [data["agent"]]
        for agent in agents:
            check("agent", agent, {"id", "backend", "system_message"})
            backend_type = BACKEND_TYPES[agent["backend"]["type"]]
            check("backend", agent["backend"], set(backend_type.options.model_fields), where="backend")
        assert len({*loaded.notices}) == len(loaded.notices), f"{name}: a notice is repeated"
    assert not silent, "\n".join(silent)


def test_validate_prints_one_warning_line_per_unapplied_key(upstream: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    from massgen.cli.main import main

    monkeypatch.chdir(tmp_path)
    example = upstream / "teams" / "research" / "research_team.yaml"
    assert main(["--validate", str(example)]) == 0
    captured = capsys.readouterr()
    warnings = [line for line in captured.err.splitlines() if line.startswith("massgen: warning:")]
    assert "valid (" in captured.out
    assert any("backend.enable_web_search (agent information_gatherer): not applied: backend type 'grok'" in line
               for line in warnings), captured.err
    assert len(warnings) == len(set(warnings))


# What this machine lacks (bare: no ${VARS} set, no context paths or upload files, an empty HOME): each
# example that needs one of them, by kind, as --validate warns about it.
MACHINE_KINDS = {"environment variable": 13, "context path": 24, "upload_files": 3}


def test_validate_passes_upstream_examples_bare_and_warns_about_what_this_machine_lacks(
        upstream: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``massgen --validate`` on each of the 276 examples as they are, on this machine: 271 pass; what this
    machine lacks is a warning naming it (an error under --strict); the 5 refused are ``REFUSED``, each with why."""
    from massgen.cli.main import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    for path in upstream.rglob("*.yaml"):
        for name in _variables(path.read_text(encoding="utf-8")):
            monkeypatch.delenv(name, raising=False)
    failed: dict[str, str] = {}
    lacking = dict.fromkeys(MACHINE_KINDS, 0)
    strict_refused = with_machine = 0
    for path in sorted(upstream.rglob("*.yaml")):
        name = str(path.relative_to(upstream))
        code = main(["--validate", str(path)])
        said = capsys.readouterr()
        if code != 0:
            failed[name] = said.err
            continue
        machine = [line for line in said.err.splitlines() if "(this machine; an error when the config runs)" in line]
        for kind in MACHINE_KINDS:
            lacking[kind] += any(kind in line for line in machine)
        if machine:
            with_machine += 1
            strict_refused += main(["--strict", "--validate", str(path)]) == 1
            capsys.readouterr()
    assert sorted(failed) == sorted(REFUSED), "\n".join(f"{k}: {v}" for k, v in failed.items())
    for name, words in REFUSED.items():
        assert words in failed[name], failed[name]
    assert EXAMPLES - len(failed) == 271
    assert lacking == MACHINE_KINDS
    assert with_machine >= max(MACHINE_KINDS.values()) and strict_refused == with_machine  # --strict: errors


# -- running upstream examples against the wire-faithful servers -------------------------------------

_WIRE_BASE = {"responses": "/v1", "chat": "/v1", "anthropic": "", "gemini": "/"}


def point_at(data: dict[str, Any], url: str) -> dict[str, Any]:
    """The example with every agent talking to ``url`` with a test key, and MCP servers swapped for ours."""
    weather = str(Path(__file__).parent / "mcp_servers" / "weather.py")
    agents = data.get("agents") or [data.pop("agent")]
    for agent in agents:
        backend = agent["backend"]
        described = BACKEND_TYPES.get(backend["type"])
        if backend["type"] == "ag2":
            backend["agent_config"]["llm_config"]["base_url"] = url + "/v1"
            backend["agent_config"]["llm_config"]["api_key"] = "test-key"
            continue
        assert described is not None and described.wire in _WIRE_BASE, backend["type"]
        backend["base_url"] = url + _WIRE_BASE[described.wire]
        backend["api_key"] = "test-key"
        servers = backend.get("mcp_servers")
        entries = servers.values() if isinstance(servers, dict) else servers or []
        for server in entries:
            # This interpreter, which has the mcp SDK: "python3" on PATH may be another one (an unactivated venv).
            server.update({"type": "stdio", "command": sys.executable, "args": [weather]})
            server.pop("url", None)
            server.pop("env", None)
    data["agents"] = agents
    timeouts = data.setdefault("timeout_settings", {})
    timeouts.setdefault("orchestrator_timeout_seconds", 120)
    return data


TWO_NUM_TOOL = '''
from massgen.tool._result import ExecutionResult, TextContent


async def two_num_tool(x: int, y: int) -> ExecutionResult:
    """Add two numbers together."""
    return ExecutionResult(output_blocks=[TextContent(data=f"The sum of {x} and {y} is {x + y}")])
'''


def _run_example(upstream: Path, name: str, tmp_path: Path, server: ProviderTeamServer,
                 monkeypatch: pytest.MonkeyPatch) -> tuple[TeamConfig, Any]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MASSGEN_WORKSPACE_BASE_DIR", str(tmp_path / "workspaces"))
    tool = tmp_path / "massgen" / "tool" / "_basic" / "_two_num_tool.py"
    tool.parent.mkdir(parents=True, exist_ok=True)
    tool.write_text(TWO_NUM_TOOL, encoding="utf-8")
    path = upstream / name
    text = path.read_text(encoding="utf-8")
    data = point_at(yaml.safe_load(text), server.url)
    _make_context_paths(data, tmp_path)
    _make_upload_files(data, tmp_path)
    config = validate_data(data, name, env=_variables(text))
    # The provider SDKs imported here first, as the command line preloads them: two agents' threads
    # importing anthropic at once can see it half initialised (reported to the lead).
    import anthropic  # noqa: F401
    import google.genai  # noqa: F401
    import openai  # noqa: F401

    result = run_team(config, tmp_path)
    assert result.status == "completed", (result.status, result.reason if hasattr(result, "reason") else "")
    assert "4" in (result.final_answer or "")
    return config, result


def _tool_types(bodies: list[dict[str, Any]]) -> list[set[str]]:
    return [{str(t.get("type") or t.get("name")) for t in b.get("tools") or []} for b in bodies]


@pytest.fixture
def providers() -> Any:
    with ProviderTeamServer(call_first=(("two_num_tool", {"x": 2, "y": 3}),)) as server:
        yield server


def test_openai_web_search_code_interpreter_and_reasoning_reach_the_responses_request(
    upstream: Path, tmp_path: Path, providers: ProviderTeamServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _run_example(upstream, "teams/research/research_team.yaml", tmp_path, providers, monkeypatch)
    turns = [b for b in providers.bodies("responses") if any(t.get("name") == "new_answer" or t.get("name") == "vote"
                                                            for t in b.get("tools") or [])]
    assert turns and all({"web_search", "code_interpreter"} <= types for types in _tool_types(turns))
    interpreter = next(t for t in turns[0]["tools"] if t["type"] == "code_interpreter")
    assert interpreter["container"] == {"type": "auto"}
    assert turns[0]["reasoning"]["effort"] in ("low", "medium", "high")


def _turns(bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The turn calls (workflow tools offered), not the presentations."""
    def names(body: dict[str, Any]) -> set[str]:
        found = set()
        for tool in body.get("tools") or []:
            function = tool.get("function") if isinstance(tool.get("function"), dict) else tool
            found.add(str(function.get("name")))
            found |= {str(d.get("name")) for d in tool.get("functionDeclarations") or []}
        return found
    return [b for b in bodies if {"new_answer", "vote"} & names(b)]


def _gemini_tool_kinds(body: dict[str, Any]) -> set[str]:
    return {key for tool in body.get("tools") or [] for key in tool}


def _check_native_tools_of_three_providers(server: ProviderTeamServer, config: TeamConfig,
                                           trace: list[dict[str, Any]]) -> None:
    gemini = _turns(server.bodies("gemini"))
    assert gemini and all("googleSearch" in _gemini_tool_kinds(b) for b in gemini), gemini[0]["tools"]
    claude = _turns(server.bodies("anthropic"))
    assert claude and all({"type": "code_execution_20250825", "name": "code_execution"} in b["tools"]
                          and {"type": "web_search_20250305", "name": "web_search", "max_uses": 5} in b["tools"]
                          for b in claude)
    openai = _turns(server.bodies("responses"))
    assert openai and all({"web_search", "code_interpreter"} <= {t["type"] for t in b["tools"]} for b in openai)
    presentations = [b for b in server.bodies() if b not in claude and b not in openai and b not in gemini]
    assert presentations and all(not b.get("tools") for b in presentations)  # native tools only on turns


def _check_zai_preset(server: ProviderTeamServer, config: TeamConfig, trace: list[dict[str, Any]]) -> None:
    paths = {r.path for r in server.requests}
    assert paths == {"/v1/chat/completions"}, paths
    assert server.requests[0].headers["authorization"] == "Bearer test-key"


def _check_openrouter_web_plugin(server: ProviderTeamServer, config: TeamConfig,
                                 trace: list[dict[str, Any]]) -> None:
    assert all(b.get("plugins") == [{"id": "web"}] for b in server.bodies("chat"))


def _check_custom_tool_and_mcp(server: ProviderTeamServer, config: TeamConfig, trace: list[dict[str, Any]]) -> None:
    offered = {d["name"] for b in _turns(server.bodies("gemini")) for t in b["tools"]
               for d in t.get("functionDeclarations", [])}
    assert {"two_num_tool", "new_answer"} <= offered and any(n.startswith("mcp__") for n in offered), offered
    results = [r["payload"] for r in of_type(trace, "ToolCallResult") if r["payload"]["name"] == "two_num_tool"]
    assert results and results[0]["content"] == "The sum of 2 and 3 is 5" and not results[0]["is_error"]


def _check_run_command(server: ProviderTeamServer, config: TeamConfig, trace: list[dict[str, Any]]) -> None:
    assert config.orchestrator.command_execution == "sandbox" and config.orchestrator.workspaces
    offered = {t.get("name") for b in _turns(server.bodies("responses")) for t in b["tools"]}
    assert "run_command" in offered, offered


def _check_round_timeouts(server: ProviderTeamServer, config: TeamConfig, trace: list[dict[str, Any]]) -> None:
    # Applied with upstream's meaning (soft timeouts per round, then a grace before the cut), not warned.
    timeouts = config.timeout_settings
    assert (timeouts.round_timeout(False), timeouts.round_timeout(True)) == (600, 300)
    assert timeouts.round_timeout_grace_seconds == 120
    assert not [line for line in config.notices if "timeout" in line], config.notices
    # Every turn ended long before its round timeout: nobody was told to finish, no turn was cut.
    assert not of_type(trace, "FinishRound") and not of_type(trace, "DeadlineExpired")


def _check_voting_guidance(server: ProviderTeamServer, config: TeamConfig, trace: list[dict[str, Any]]) -> None:
    assert config.orchestrator.voting_sensitivity is not None
    instructions = [b.get("instructions", "") for b in _turns(server.bodies("responses"))]
    assert instructions and all("Voting:" in text or "new answer" in text for text in instructions)


def _check_codex_on_responses(server: ProviderTeamServer, config: TeamConfig, trace: list[dict[str, Any]]) -> None:
    assert {server.wire_of(r.path) for r in server.requests} == {"responses"}
    assert any("codex" in line for line in config.notices)
    assert config.agents[0].backend.type == "codex" and config.timeout_settings.initial_round_timeout_seconds


def _check_mcp_security(server: ProviderTeamServer, config: TeamConfig, trace: list[dict[str, Any]]) -> None:
    servers = [s for a in config.agents for s in a.backend.mcp_servers]
    assert servers and all(s.security is not None for s in servers if s.name != "discord")
    offered = {d["name"] for b in _turns(server.bodies("gemini")) for t in b["tools"]
               for d in t.get("functionDeclarations", [])}
    assert any(name.startswith("mcp__") for name in offered), offered


def _check_ag2_on_openai(server: ProviderTeamServer, config: TeamConfig, trace: list[dict[str, Any]]) -> None:
    assert config.agents[0].backend.type == "openai"
    assert "powered by AG2" in (_turns(server.bodies("responses"))[0].get("instructions") or "")


def _check_reasoning_and_verbosity(server: ProviderTeamServer, config: TeamConfig,
                                   trace: list[dict[str, Any]]) -> None:
    turns = _turns(server.bodies("responses"))
    assert turns and all(b.get("reasoning", {}).get("effort") and b.get("text", {}).get("verbosity") for b in turns)


def _check_image_understanding(server: ProviderTeamServer, config: TeamConfig,
                               trace: list[dict[str, Any]]) -> None:
    assert not any("upload_files" in line for line in config.notices), config.notices
    image = {"type": "input_image", "image_url": "data:image/jpeg;base64," + base64.b64encode(_PNG).decode(),
             "detail": "auto"}
    bodies = server.bodies("responses")
    assert bodies and all(image in next(i["content"] for i in b["input"] if i.get("role") == "user")
                          for b in bodies)
    attached = {a["path"] for r in of_type(trace, "ModelRequestSent") for m in r["payload"]["messages"]
                for a in m.get("attachments", [])}
    assert attached == {str(Path.cwd() / "massgen/configs/resources/v0.0.27-example/multimodality.jpg")}


EXAMPLE_RUNS = {
    "basic/multi/gemini_4o_claude.yaml": _check_native_tools_of_three_providers,
    "providers/others/zai_glm45.yaml": _check_zai_preset,
    "basic/single/single_openrouter_web_search.yaml": _check_openrouter_web_plugin,
    "tools/custom_tools/gemini_custom_tool_with_mcp_example.yaml": _check_custom_tool_and_mcp,
    "tools/code-execution/basic_command_execution.yaml": _check_run_command,
    "basic/multi/three_agents_default.yaml": _check_round_timeouts,
    "voting/gemini_gpt_voting_sensitivity.yaml": _check_voting_guidance,
    "providers/openai/codex/codex_local.yaml": _check_codex_on_responses,
    "tools/mcp/multimcp_gemini.yaml": _check_mcp_security,
    "ag2/ag2_single_agent.yaml": _check_ag2_on_openai,
    "teams/research/technical_analysis.yaml": _check_reasoning_and_verbosity,
    "teams/creative/travel_planning.yaml": _check_reasoning_and_verbosity,
    "teams/research/news_analysis.yaml": _check_reasoning_and_verbosity,
    "basic/multi/gpt5nano_image_understanding.yaml": _check_image_understanding,
}


@pytest.mark.parametrize("name", sorted(EXAMPLE_RUNS))
def test_upstream_example_runs_against_the_wire_servers(
    name: str, upstream: Path, tmp_path: Path, providers: ProviderTeamServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, result = _run_example(upstream, name, tmp_path, providers, monkeypatch)
    EXAMPLE_RUNS[name](providers, config, records(result))
