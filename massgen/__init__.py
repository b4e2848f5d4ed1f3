"""massgen: a supervised team of models that answers one task together.

The public face only. Names are loaded on first use so that ``massgen --help``
and ``import massgen`` stay fast and never import a provider SDK.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# name -> "module" (the same name there) or "module:attr" (another name there).
_EXPORTS = {
    "Team": "massgen.actors.run.team",
    "RunResult": "massgen.result",
    "new_team": "massgen.launch",
    "with_run_timeout": "massgen.launch",
    "TeamConfig": "massgen.configs.schema",
    "load_config": "massgen.configs.loader",
    "rebuild_from_trace": "massgen.logs.files",
    "run": "massgen.api",
    "run_sync": "massgen.api",
    "stream": "massgen.api",
    "resolve_config": "massgen.launch",
    "register_with_litellm": "massgen.litellm_provider",
    "AnswerEvent": "massgen.events",
    "ChunkEvent": "massgen.events",
    "DeadlineEvent": "massgen.events",
    "Event": "massgen.events",
    "FailureEvent": "massgen.events",
    "ExcludedEvent": "massgen.events",
    "RejoinedEvent": "massgen.events",
    "FinalAnswerEvent": "massgen.events",
    "RestartEvent": "massgen.events",
    "RunStartedEvent": "massgen.events",
    "VoteEvent": "massgen.events",
    "VotesInvalidatedEvent": "massgen.events",
    # errors users catch (massgen/errors.py): one root, MassGenError
    "MassGenError": "massgen.errors",
    "ConfigError": "massgen.errors",
    "SessionError": "massgen.sessions",
    "LogDirError": "massgen.errors",
    "ResumeError": "massgen.errors",
    "BackendError": "massgen.errors",
    "PermanentBackendError": "massgen.errors",
    "ToolError": "massgen.errors",
    "TraceError": "massgen.errors",
    "RunError": "massgen.errors",
    "RunFailed": "massgen.errors",
    "RunTimeout": "massgen.errors",
    "BudgetExhausted": "massgen.errors",
    "RunInterrupted": "massgen.errors",
    # for massgen's own surfaces (cli/: one-shot, REPL, serve, logs); usable, but not promised stable
    "Subscriber": "massgen.actors.run.trace_writer",
    "ResumePoint": "massgen.actors.run.resume",
    "resume_point": "massgen.actors.run.resume",
    "preflight_check": "massgen.actors.run.preflight:check",
    "decode_client_tool_calls": "massgen.actors.agent.client_tools:decode",
    "WORKFLOW_TOOLS": "massgen.actors.agent.prompts",
    "ToolSpec": "massgen.messages",
    "RuntimeConfig": "massgen.configs.schema",
    "list_examples": "massgen.configs.loader",
    "validate_data": "massgen.configs.loader",
    "discover_config": "massgen.configs.defaults:resolve",
    "config_environment": "massgen.configs.defaults:environment",
    "default_team": "massgen.configs.defaults",
    "read_dotenv": "massgen.configs.defaults",
    "PROVIDER_KEYS": "massgen.configs.defaults",
    "BACKENDS": "massgen.configs.quick",
    "QuestionError": "massgen.actors.run.question",
    "check_question": "massgen.actors.run.question",
    "quick_team": "massgen.configs.quick",
    "quick_backend": "massgen.configs.quick",
    "override_agents": "massgen.configs.quick",
    "override_notes": "massgen.configs.quick",
    "build_config": "massgen.configs.build",
    "example_path": "massgen.configs.loader:resolve_config_path",
    "schema_text": "massgen.configs.schema_doc",
    "tool_stats": "massgen.logs.upstream_status",
    "missing_keys": "massgen.configs.quick",
    "describe_missing": "massgen.configs.quick",
    "with_context_paths": "massgen.files",
    "preload_backends": "massgen.backends.preload:preload",
    "Session": "massgen.sessions",
    "LogProjection": "massgen.logs.projection",
    "read_trace": "massgen.logs.files",
    "find_runs": "massgen.logs.summary",
    "project_run": "massgen.logs.summary:project",
    "summarize_run": "massgen.logs.summary:summarize",
    "events_from_record": "massgen.events",
    # the finer events the terminal UI draws (massgen/view_events.py)
    "McpEvent": "massgen.view_events",
    "ModelCallEvent": "massgen.view_events",
    "NoteDeliveredEvent": "massgen.view_events",
    "NoteSentEvent": "massgen.view_events",
    "PresentingEvent": "massgen.view_events",
    "RunFinishedEvent": "massgen.view_events",
    "RunSettingsEvent": "massgen.view_events",
    "SnapshotEvent": "massgen.view_events",
    "SteeringEvent": "massgen.view_events",
    "TallyEvent": "massgen.view_events",
    "ToolCallFinishedEvent": "massgen.view_events",
    "ToolCallStartedEvent": "massgen.view_events",
    "TurnStartedEvent": "massgen.view_events",
    "ViewEvent": "massgen.view_events",
    "view_events_from_record": "massgen.view_events",
    "TraceRecord": "massgen.messages.trace",
    "parse_sender": "massgen.messages.trace",
    "sender_name": "massgen.messages.trace",
    "LogLayout": "massgen.logs.layout",
    "TRACE_FILE": "massgen.logs.layout",
    "ATTEMPT_GLOB": "massgen.logs.layout",
    "default_log_base": "massgen.logs.layout",
    "new_log_dir": "massgen.logs.layout",
    "attempt_dir": "massgen.logs.layout",
    "open_session": "massgen.sessions:open_or_create",
}

if TYPE_CHECKING:
    from massgen import messages as messages
    from massgen.actors.agent.client_tools import decode as decode_client_tool_calls
    from massgen.actors.agent.prompts import WORKFLOW_TOOLS as WORKFLOW_TOOLS
    from massgen.actors.run.preflight import check as preflight_check
    from massgen.actors.run.question import QuestionError as QuestionError
    from massgen.actors.run.question import check_question as check_question
    from massgen.actors.run.resume import ResumePoint as ResumePoint
    from massgen.actors.run.resume import resume_point as resume_point
    from massgen.actors.run.team import Team as Team
    from massgen.actors.run.trace_writer import Subscriber as Subscriber
    from massgen.api import run as run
    from massgen.api import run_sync as run_sync
    from massgen.api import stream as stream
    from massgen.backends.preload import preload as preload_backends
    from massgen.configs.build import build_config as build_config
    from massgen.configs.defaults import PROVIDER_KEYS as PROVIDER_KEYS
    from massgen.configs.defaults import default_team as default_team
    from massgen.configs.defaults import environment as config_environment
    from massgen.configs.defaults import read_dotenv as read_dotenv
    from massgen.configs.defaults import resolve as discover_config
    from massgen.configs.loader import list_examples as list_examples
    from massgen.configs.loader import load_config as load_config
    from massgen.configs.loader import resolve_config_path as example_path
    from massgen.configs.loader import validate_data as validate_data
    from massgen.configs.quick import BACKENDS as BACKENDS
    from massgen.configs.quick import describe_missing as describe_missing
    from massgen.configs.quick import missing_keys as missing_keys
    from massgen.configs.quick import override_agents as override_agents
    from massgen.configs.quick import override_notes as override_notes
    from massgen.configs.quick import quick_backend as quick_backend
    from massgen.configs.quick import quick_team as quick_team
    from massgen.configs.schema import RuntimeConfig as RuntimeConfig
    from massgen.configs.schema import TeamConfig as TeamConfig
    from massgen.configs.schema_doc import schema_text as schema_text
    from massgen.errors import BackendError as BackendError
    from massgen.errors import BudgetExhausted as BudgetExhausted
    from massgen.errors import ConfigError as ConfigError
    from massgen.errors import LogDirError as LogDirError
    from massgen.errors import MassGenError as MassGenError
    from massgen.errors import PermanentBackendError as PermanentBackendError
    from massgen.errors import ResumeError as ResumeError
    from massgen.errors import RunError as RunError
    from massgen.errors import RunFailed as RunFailed
    from massgen.errors import RunInterrupted as RunInterrupted
    from massgen.errors import RunTimeout as RunTimeout
    from massgen.errors import ToolError as ToolError
    from massgen.errors import TraceError as TraceError
    from massgen.events import AnswerEvent as AnswerEvent
    from massgen.events import ChunkEvent as ChunkEvent
    from massgen.events import DeadlineEvent as DeadlineEvent
    from massgen.events import Event as Event
    from massgen.events import ExcludedEvent as ExcludedEvent
    from massgen.events import FailureEvent as FailureEvent
    from massgen.events import FinalAnswerEvent as FinalAnswerEvent
    from massgen.events import RejoinedEvent as RejoinedEvent
    from massgen.events import RestartEvent as RestartEvent
    from massgen.events import RunStartedEvent as RunStartedEvent
    from massgen.events import VoteEvent as VoteEvent
    from massgen.events import VotesInvalidatedEvent as VotesInvalidatedEvent
    from massgen.events import events_from_record as events_from_record
    from massgen.files import with_context_paths as with_context_paths
    from massgen.launch import new_team as new_team
    from massgen.launch import resolve_config as resolve_config
    from massgen.launch import with_run_timeout as with_run_timeout
    from massgen.litellm_provider import register_with_litellm as register_with_litellm
    from massgen.logs.files import read_trace as read_trace
    from massgen.logs.files import rebuild_from_trace as rebuild_from_trace
    from massgen.logs.layout import ATTEMPT_GLOB as ATTEMPT_GLOB
    from massgen.logs.layout import TRACE_FILE as TRACE_FILE
    from massgen.logs.layout import LogLayout as LogLayout
    from massgen.logs.layout import attempt_dir as attempt_dir
    from massgen.logs.layout import default_log_base as default_log_base
    from massgen.logs.layout import new_log_dir as new_log_dir
    from massgen.logs.projection import LogProjection as LogProjection
    from massgen.logs.summary import find_runs as find_runs
    from massgen.logs.summary import project as project_run
    from massgen.logs.summary import summarize as summarize_run
    from massgen.logs.upstream_status import tool_stats as tool_stats
    from massgen.messages import ToolSpec as ToolSpec
    from massgen.messages.trace import TraceRecord as TraceRecord
    from massgen.messages.trace import parse_sender as parse_sender
    from massgen.messages.trace import sender_name as sender_name
    from massgen.result import RunResult as RunResult
    from massgen.sessions import Session as Session
    from massgen.sessions import SessionError as SessionError
    from massgen.sessions import open_or_create as open_session
    from massgen.view_events import McpEvent as McpEvent
    from massgen.view_events import ModelCallEvent as ModelCallEvent
    from massgen.view_events import NoteDeliveredEvent as NoteDeliveredEvent
    from massgen.view_events import NoteSentEvent as NoteSentEvent
    from massgen.view_events import PresentingEvent as PresentingEvent
    from massgen.view_events import RunFinishedEvent as RunFinishedEvent
    from massgen.view_events import RunSettingsEvent as RunSettingsEvent
    from massgen.view_events import SnapshotEvent as SnapshotEvent
    from massgen.view_events import SteeringEvent as SteeringEvent
    from massgen.view_events import TallyEvent as TallyEvent
    from massgen.view_events import ToolCallFinishedEvent as ToolCallFinishedEvent
    from massgen.view_events import ToolCallStartedEvent as ToolCallStartedEvent
    from massgen.view_events import TurnStartedEvent as TurnStartedEvent
    from massgen.view_events import ViewEvent as ViewEvent
    from massgen.view_events import view_events_from_record as view_events_from_record


def __getattr__(name: str) -> Any:
    if name == "messages":  # the package itself: every record type, for readers of trace records
        return import_module("massgen.messages")
    target = _EXPORTS.get(name)
    if target is None:
        raise AttributeError(f"module 'massgen' has no attribute {name!r}")
    module, _, attr = target.partition(":")
    return getattr(import_module(module), attr or name)


__all__ = [
    "ATTEMPT_GLOB",
    "BACKENDS",
    "PROVIDER_KEYS",
    "TRACE_FILE",
    "WORKFLOW_TOOLS",
    "AnswerEvent",
    "BackendError",
    "BudgetExhausted",
    "ChunkEvent",
    "ConfigError",
    "DeadlineEvent",
    "Event",
    "ExcludedEvent",
    "FailureEvent",
    "FinalAnswerEvent",
    "LogDirError",
    "LogLayout",
    "LogProjection",
    "MassGenError",
    "McpEvent",
    "ModelCallEvent",
    "NoteDeliveredEvent",
    "NoteSentEvent",
    "PermanentBackendError",
    "PresentingEvent",
    "QuestionError",
    "RejoinedEvent",
    "RestartEvent",
    "ResumeError",
    "ResumePoint",
    "RunError",
    "RunFailed",
    "RunFinishedEvent",
    "RunInterrupted",
    "RunResult",
    "RunSettingsEvent",
    "RunStartedEvent",
    "RunTimeout",
    "RuntimeConfig",
    "Session",
    "SessionError",
    "SnapshotEvent",
    "SteeringEvent",
    "Subscriber",
    "TallyEvent",
    "Team",
    "TeamConfig",
    "ToolCallFinishedEvent",
    "ToolCallStartedEvent",
    "ToolError",
    "ToolSpec",
    "TraceError",
    "TraceRecord",
    "TurnStartedEvent",
    "ViewEvent",
    "VoteEvent",
    "VotesInvalidatedEvent",
    "__version__",
    "attempt_dir",
    "build_config",
    "check_question",
    "config_environment",
    "decode_client_tool_calls",
    "default_log_base",
    "default_team",
    "describe_missing",
    "discover_config",
    "events_from_record",
    "example_path",
    "find_runs",
    "list_examples",
    "load_config",
    "messages",
    "missing_keys",
    "new_log_dir",
    "new_team",
    "open_session",
    "override_agents",
    "override_notes",
    "parse_sender",
    "preflight_check",
    "preload_backends",
    "project_run",
    "quick_backend",
    "quick_team",
    "read_dotenv",
    "read_trace",
    "rebuild_from_trace",
    "register_with_litellm",
    "resolve_config",
    "resume_point",
    "run",
    "run_sync",
    "schema_text",
    "sender_name",
    "stream",
    "summarize_run",
    "tool_stats",
    "validate_data",
    "view_events_from_record",
    "with_context_paths",
    "with_run_timeout",
]
