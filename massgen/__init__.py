"""massgen: a supervised team of models that answers one task together.

The public face, in two parts, each name written once in an ``if TYPE_CHECKING:`` block: the
stable API (``__all__``, written out below: the run functions, the run handle and result, the
config, the errors, the stream events, the trace reader), and the plumbing massgen's own
surfaces (cli/) reach through the face (config discovery, quick teams, sessions, the log
readers, the screen events, ...): reachable as ``massgen.NAME``, not promised stable, not in
``__all__``. Type checkers read the blocks as they are (``from massgen import run`` is typed);
``__getattr__`` reads them at run time, on first use, as the table of what to load from where.
Nothing is imported before a name is used, so ``massgen --help`` and ``import massgen`` stay fast
and never import a provider SDK.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:  # the stable API: each name is in __all__ below
    from massgen import messages as messages
    from massgen.actors.record.resume import ResumePoint as ResumePoint
    from massgen.actors.record.resume import resume_point as resume_point
    from massgen.actors.record.trace_writer import Subscriber as Subscriber
    from massgen.actors.run.question import QuestionError as QuestionError
    from massgen.actors.run.team import Team as Team
    from massgen.api import run as run
    from massgen.api import run_sync as run_sync
    from massgen.api import stream as stream
    from massgen.configs.build import build_config as build_config
    from massgen.configs.loader import load_config as load_config
    from massgen.configs.loader import validate_data as validate_data
    from massgen.configs.schema import RuntimeConfig as RuntimeConfig
    from massgen.configs.schema import TeamConfig as TeamConfig
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
    from massgen.launch import new_team as new_team
    from massgen.launch import resolve_config as resolve_config
    from massgen.launch import with_run_timeout as with_run_timeout
    from massgen.litellm_provider import register_with_litellm as register_with_litellm
    from massgen.logs.derived_files import read_trace as read_trace
    from massgen.logs.derived_files import rebuild_from_trace as rebuild_from_trace
    from massgen.messages import ToolSpec as ToolSpec
    from massgen.messages.trace import TraceRecord as TraceRecord
    from massgen.outcome.errors import BackendError as BackendError
    from massgen.outcome.errors import BudgetExhausted as BudgetExhausted
    from massgen.outcome.errors import ConfigError as ConfigError
    from massgen.outcome.errors import LogDirError as LogDirError
    from massgen.outcome.errors import MassGenError as MassGenError
    from massgen.outcome.errors import PermanentBackendError as PermanentBackendError
    from massgen.outcome.errors import ResumeError as ResumeError
    from massgen.outcome.errors import RunError as RunError
    from massgen.outcome.errors import RunFailed as RunFailed
    from massgen.outcome.errors import RunInterrupted as RunInterrupted
    from massgen.outcome.errors import RunTimeout as RunTimeout
    from massgen.outcome.errors import ToolError as ToolError
    from massgen.outcome.errors import TraceError as TraceError
    from massgen.outcome.result import RunResult as RunResult
    from massgen.sessions import SessionError as SessionError

if TYPE_CHECKING:  # plumbing for massgen's own surfaces (cli/): reachable as massgen.NAME, not promised
    from massgen.actors.agent.client_tools import decode
    from massgen.actors.agent.prompts import WORKFLOW_TOOLS as WORKFLOW_TOOLS
    from massgen.actors.run.team import withheld_check_tools as withheld_check_tools
    from massgen.backends import default_model as default_model
    from massgen.configs.defaults import PROVIDER_KEYS as PROVIDER_KEYS
    from massgen.configs.defaults import default_team as default_team
    from massgen.configs.defaults import environment, resolve
    from massgen.configs.defaults import read_dotenv as read_dotenv
    from massgen.configs.loader import example_description as example_description
    from massgen.configs.loader import list_examples as list_examples
    from massgen.configs.loader import resolve_config_path
    from massgen.configs.places import global_dotenv as global_dotenv
    from massgen.configs.quick import BACKENDS as BACKENDS
    from massgen.configs.quick import describe_missing as describe_missing
    from massgen.configs.quick import missing_keys as missing_keys
    from massgen.configs.quick import override_agents as override_agents
    from massgen.configs.quick import override_notes as override_notes
    from massgen.configs.quick import quick_backend as quick_backend
    from massgen.configs.quick import quick_team as quick_team
    from massgen.configs.schema_doc import schema_text as schema_text
    from massgen.events import McpEvent as McpEvent
    from massgen.events import ModelCallEvent as ModelCallEvent
    from massgen.events import ModelCallStartedEvent as ModelCallStartedEvent
    from massgen.events import NoteDeliveredEvent as NoteDeliveredEvent
    from massgen.events import NoteSentEvent as NoteSentEvent
    from massgen.events import PresentingEvent as PresentingEvent
    from massgen.events import RunFinishedEvent as RunFinishedEvent
    from massgen.events import RunSettingsEvent as RunSettingsEvent
    from massgen.events import SnapshotEvent as SnapshotEvent
    from massgen.events import SteeringEvent as SteeringEvent
    from massgen.events import TallyEvent as TallyEvent
    from massgen.events import ToolCallFinishedEvent as ToolCallFinishedEvent
    from massgen.events import ToolCallStartedEvent as ToolCallStartedEvent
    from massgen.events import TurnStartedEvent as TurnStartedEvent
    from massgen.events import ViewEvent as ViewEvent
    from massgen.events import view_events_from_record as view_events_from_record
    from massgen.files import with_context_paths as with_context_paths
    from massgen.launch import check_deadline as check_deadline
    from massgen.logs.layout import ATTEMPT_GLOB as ATTEMPT_GLOB
    from massgen.logs.layout import TRACE_FILE as TRACE_FILE
    from massgen.logs.layout import LogLayout as LogLayout
    from massgen.logs.layout import attempt_dir as attempt_dir
    from massgen.logs.layout import default_log_base as default_log_base
    from massgen.logs.layout import new_log_dir as new_log_dir
    from massgen.logs.projection import LogProjection as LogProjection
    from massgen.logs.summary import find_runs as find_runs
    from massgen.logs.summary import project, summarize
    from massgen.logs.upstream_status import tool_stats as tool_stats
    from massgen.messages.text import escape_for_terminal as escape_for_terminal
    from massgen.messages.text import escape_value as escape_value
    from massgen.messages.text import unsafe_for_terminal as unsafe_for_terminal
    from massgen.messages.trace import sender_name as sender_name
    from massgen.sessions import Session as Session
    from massgen.sessions import open_or_create

    # the names the face gives under a name of its own
    config_environment = environment
    decode_client_tool_calls = decode
    discover_config = resolve
    example_path = resolve_config_path
    open_session = open_or_create
    project_run = project
    summarize_run = summarize

__all__ = [  # the stable API, written out (the plumbing block above is reachable, not promised)
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
    "MassGenError",
    "PermanentBackendError",
    "QuestionError",
    "RejoinedEvent",
    "RestartEvent",
    "ResumeError",
    "ResumePoint",
    "RunError",
    "RunFailed",
    "RunInterrupted",
    "RunResult",
    "RunStartedEvent",
    "RunTimeout",
    "RuntimeConfig",
    "SessionError",
    "Subscriber",
    "Team",
    "TeamConfig",
    "ToolError",
    "ToolSpec",
    "TraceError",
    "TraceRecord",
    "VoteEvent",
    "VotesInvalidatedEvent",
    "__version__",
    "build_config",
    "events_from_record",
    "load_config",
    "messages",
    "new_team",
    "read_trace",
    "rebuild_from_trace",
    "register_with_litellm",
    "resolve_config",
    "resume_point",
    "run",
    "run_sync",
    "stream",
    "validate_data",
    "with_run_timeout",
]


def _read_exports() -> dict[str, tuple[str, str]]:
    """Exported name -> (module, attribute), read from the ``if TYPE_CHECKING:`` blocks of this file as a
    type checker reads it: ``from M import A as A`` exports A, a plain ``from M import B`` does not, and
    ``C = B`` exports B as C."""
    import ast
    from pathlib import Path

    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"), __file__)
    imported: dict[str, tuple[str, str]] = {}
    exported: dict[str, tuple[str, str]] = {}
    for block in tree.body:
        if not (isinstance(block, ast.If) and isinstance(block.test, ast.Name) and block.test.id == "TYPE_CHECKING"):
            continue
        for node in block.body:
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    imported[alias.asname or alias.name] = (node.module or "", alias.name)
                    if alias.asname == alias.name:
                        exported[alias.name] = imported[alias.name]
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
                exported.update({t.id: imported[node.value.id] for t in node.targets if isinstance(t, ast.Name)})
    return exported


_exports: dict[str, tuple[str, str]] = {}


def __getattr__(name: str) -> Any:
    if not _exports:
        _exports.update(_read_exports())
    target = _exports.get(name)
    if target is None:
        raise AttributeError(f"module 'massgen' has no attribute {name!r}")
    module, attr = target
    if module == __name__:  # a subpackage of the face itself: ``massgen.messages``
        return import_module(f"{module}.{attr}")
    return getattr(import_module(module), attr)
