"""The YAML config, as MassGen users already write it, validated strictly.

Unknown keys are errors (a typo must not silently become a default), and each
backend type has its own model so its options are checked too (``backend_options.py``, chosen
by the agent's ``backend.type`` through the registry, ``backend_types.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import (
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from massgen.configs.backend_options import MACHINE as MACHINE

# The backend block's models, re-exported: every config model stays importable from here.
from massgen.configs.backend_options import AntigravityBackendConfig as AntigravityBackendConfig
from massgen.configs.backend_options import AzureOpenAIBackendConfig as AzureOpenAIBackendConfig
from massgen.configs.backend_options import BackendConfig as BackendConfig
from massgen.configs.backend_options import ClaudeCodeBackendConfig as ClaudeCodeBackendConfig
from massgen.configs.backend_options import CustomToolConfig as CustomToolConfig
from massgen.configs.backend_options import LocalBackendConfig as LocalBackendConfig
from massgen.configs.backend_options import McpSecurity as McpSecurity
from massgen.configs.backend_options import McpServerConfig as McpServerConfig
from massgen.configs.backend_options import ReasoningConfig as ReasoningConfig
from massgen.configs.backend_options import ScriptedBackendConfig as ScriptedBackendConfig
from massgen.configs.backend_options import ScriptStep as ScriptStep
from massgen.configs.backend_options import Strict as _Strict
from massgen.configs.backend_options import TextConfig as TextConfig
from massgen.configs.backend_options import UploadFileConfig as UploadFileConfig
from massgen.configs.backend_options import machine_problem as machine_problem
from massgen.configs.backend_types import BACKEND_TYPES, buildable


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
    # How the judge picks the winner (actors/coordination/decision.py): "support" counts votes and independent
    # agreement; "prior" keeps the first agent's independent answer unless that agent, having
    # checked the others, comes to another answer that is at least as well supported.
    winner_rule: Literal["support", "prior"] = "support"
    # How the prior agent (listed first, under winner_rule "prior") is asked for its first answer: "team"
    # (the team's prompt, as every agent) or "bare" (the question alone, as one call of its model: the
    # baseline the team must not fall below). Named for the prior, as only its answer is the baseline:
    # asking every agent bare lost on arithmetic (docs/architecture.md, Coordination rules).
    prior_first_answer: Literal["team", "bare"] = "team"
    # What follows the first (independent) answers: "vote" (rounds in which agents check the answers in view and
    # vote or answer again) or "decide" (no round: the result most first answers state wins, a tie going to the
    # agent listed first among those holding it; code answers by their behaviour on the task's examples). The
    # small local model's vote rounds never picked a right answer the first answers had not already agreed on
    # (docs/architecture.md, Coordination rules: where each rule was measured), at two calls an agent.
    after_first_answers: Literal["vote", "decide"] = "vote"
    # Under "decide": agents asked for a first answer only while the first answers disagree (issue 48:
    # disagreement buys evidence, agreement stops; Adaptive-Consistency), one at a time, in this order.
    reserve_agents: list[str] = Field(default_factory=list)
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
    def _reserve_agents_exist(self) -> TeamConfig:
        reserve = self.orchestrator.reserve_agents
        ids = [a.id for a in self.agents]
        unknown = [agent for agent in reserve if agent not in ids]
        if unknown:
            raise ValueError(f"orchestrator.reserve_agents names {', '.join(unknown)}, which is not an agent id")
        if reserve and self.orchestrator.after_first_answers != "decide":
            raise ValueError("orchestrator.reserve_agents needs after_first_answers: decide (a reserve agent is "
                             "asked only while the first answers disagree)")
        if len(set(reserve)) != len(reserve) or set(ids) <= set(reserve):
            raise ValueError("orchestrator.reserve_agents: each agent at most once, and at least one agent not in "
                             "reserve")
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
