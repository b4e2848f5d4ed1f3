"""Config schema, loader and the shipped example configs (``@examples/NAME``)."""

from massgen.configs.loader import (
    EXAMPLES_DIR,
    ConfigError,
    list_examples,
    load_config,
    resolve_config_path,
    validate_data,
)
from massgen.configs.schema import (
    AgentConfig,
    BackendConfig,
    McpServerConfig,
    OrchestratorConfig,
    ScriptedBackendConfig,
    ScriptStep,
    TeamConfig,
    TimeoutSettings,
)

__all__ = [
    "EXAMPLES_DIR",
    "AgentConfig",
    "BackendConfig",
    "ConfigError",
    "McpServerConfig",
    "OrchestratorConfig",
    "ScriptStep",
    "ScriptedBackendConfig",
    "TeamConfig",
    "TimeoutSettings",
    "list_examples",
    "load_config",
    "resolve_config_path",
    "validate_data",
]
