"""Upstream MassGen 0.1.97's flags: every one of them parses here, and each either works or is a
usage error (exit 64) that names the flag and says why it is not available in this version.

The table below is the one source: the parser takes each flag's shape from it (so a value an
upstream script passes still parses), ``docs/flags.md`` is written from it
(``python -m massgen.cli.upstream_flags``), and ``unavailable(args)`` reads it after parsing.
Flags the ``massgen`` parser already defines (``OURS``) are listed for the docs only.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from massgen.cli.usage import port_number

Status = Literal["works", "partly", "not available", "terminal UI"]


@dataclass(frozen=True)
class UpstreamFlag:
    flag: str
    status: Status
    what: str  # what it does here (works), or why it is not available
    shape: dict[str, Any] = field(default_factory=dict)  # argparse keywords, as upstream declares the flag
    # For a flag that works for some values only: the values that are not available.
    refused: Callable[[Any], bool] | None = None
    ours: bool = False  # defined by the massgen parser itself (cli/request.py, cli/flags.py)


_FLAG = {"action": "store_true"}
_INT = {"type": int, "default": None}
_PORT = {"type": port_number, "default": None}
_STR = {"default": None}
# Why whole upstream features are not here, said once.
_PLAN = "planning mode (plans, specs and their execution) is not in this version; ask the team directly"
_TUI = "comes with the terminal UI (issue 23, cli/tui/); not part of this parser yet"

TABLE: tuple[UpstreamFlag, ...] = (
    UpstreamFlag("--config", "works", "a YAML file or @examples/NAME", ours=True),
    UpstreamFlag("--select", "not available",
                 "no interactive config picker; give --config FILE (massgen --list-examples lists the shipped ones)",
                 _FLAG),
    UpstreamFlag("--backend", "works", "the backend type for --model (massgen --list-backends)", ours=True),
    UpstreamFlag("--model", "works", "one agent of this model; with --config, every agent that calls a model uses it "
                 "(a scripted agent keeps its script)", ours=True),
    UpstreamFlag("--system-message", "works", "the system message of every agent", ours=True),
    UpstreamFlag("--base-url", "works", "the server of every agent that calls one (a scripted agent calls none)",
                 ours=True),
    UpstreamFlag("--no-display", "terminal UI", _TUI),
    UpstreamFlag("--display", "terminal UI", _TUI),
    UpstreamFlag("--textual-serve", "not available", "no Textual TUI in a browser; --web serves this version's web UI",
                 _FLAG),
    UpstreamFlag("--textual-serve-port", "not available", "no Textual TUI in a browser; use --web --web-port PORT",
                 _INT),
    UpstreamFlag("--no-logs", "works", "keep no log directory after the run", ours=True),
    UpstreamFlag("--debug", "works", "a debug log in the run's log directory", ours=True),
    UpstreamFlag("--save-streaming-buffers", "works",
                 "nothing to switch on: trace.jsonl records every streamed chunk of every agent", _FLAG),
    UpstreamFlag("--logfire", "not available",
                 "no Logfire export; trace.jsonl records every message, call and tool call (massgen logs show)", _FLAG),
    UpstreamFlag("--web", "works", "watch the run in the web UI (massgen serve --ui on a local port)", ours=True),
    UpstreamFlag("--web-quickstart", "not available",
                 "no browser setup flow; massgen --setup saves keys and massgen --quickstart writes a config", _FLAG),
    UpstreamFlag("--web-port", "works", "with --web: the web UI's port (default: a free one)", _PORT),
    UpstreamFlag("--web-host", "works", "with --web: the address the web UI listens on (default 127.0.0.1)", _STR),
    UpstreamFlag("--no-browser", "works", "nothing to switch off: --web never opens a browser, it prints the URL",
                 _FLAG),
    UpstreamFlag("--web-review", "not available",
                 "no review of diffs before they are applied; with --cwd-context rw the presenter writes directly and "
                 "the diff is in the log directory", _FLAG),
    UpstreamFlag("--automation", "works", "LOG_DIR, STATUS and ANSWER lines instead of a display (docs/flags.md)",
                 ours=True),
    UpstreamFlag("--step", "not available", "no step mode (one agent, one step, then exit)", _FLAG),
    UpstreamFlag("--session-dir", "not available", "belongs to step mode, which is not in this version", _STR),
    UpstreamFlag("--stream-events", "works", "the run's events as JSON lines on stdout; with --automation the "
                 "automation lines go to stderr", ours=True),
    UpstreamFlag("--inbox-dir", "not available",
                 "no steering by dropped files; the interactive session and massgen serve take /answer-now and "
                 "other controls", _STR),
    UpstreamFlag("--plan", "not available", _PLAN, _FLAG),
    UpstreamFlag("--cwd-context", "works", "ro/read: the agents may read this directory; rw/write: the final "
                 "presenter may also write it", ours=True),
    UpstreamFlag("--plan-depth", "not available", _PLAN, {"choices": ["dynamic", "shallow", "medium", "deep"],
                                                          "default": None}),
    UpstreamFlag("--plan-thoroughness", "not available", _PLAN, {"choices": ["standard", "thorough"],
                                                                 "default": None}),
    UpstreamFlag("--plan-steps", "not available", _PLAN, _INT),
    UpstreamFlag("--plan-chunks", "not available", _PLAN, _INT),
    UpstreamFlag("--broadcast", "not available", "agents do not ask the user or each other questions mid-run here",
                 {"choices": ["human", "agents", "false"], "default": None}),
    UpstreamFlag("--plan-and-execute", "not available", _PLAN, _FLAG),
    UpstreamFlag("--execute-plan", "not available", _PLAN, {"metavar": "PLAN_PATH", "default": None}),
    UpstreamFlag("--spec", "not available", _PLAN, _FLAG),
    UpstreamFlag("--execute-spec", "not available", _PLAN, {"metavar": "SPEC_PATH", "default": None}),
    UpstreamFlag("--no-session-registry", "works",
                 "nothing to switch off: this version keeps no global session registry", _FLAG),
    UpstreamFlag("--no-parse-at-references", "works", "@tokens in the question stay plain text (no context paths)",
                 {"action": "store_false", "dest": "parse_at_references"}),
    UpstreamFlag("--eval-criteria", "not available",
                 "no checklist evaluation of answers; agents vote on the answers they read", {"metavar": "FILE",
                                                                                              "default": None}),
    UpstreamFlag("--checklist-criteria-preset", "not available", "no checklist evaluation of answers",
                 {"metavar": "PRESET", "default": None}),
    UpstreamFlag("--output-file", "works", "also write the final answer to FILE (missing folders are made; a "
                 "directory, or a folder this user cannot write, is refused before the run; a write that fails "
                 "after it is said on stderr with where the answer is, and the run's exit code stands)", ours=True),
    UpstreamFlag("--skip-agent-selector", "works", "nothing to skip: no agent selector is shown after the answer",
                 _FLAG),
    UpstreamFlag("--init", "works", "as --quickstart: writes .massgen/config.yaml for the providers whose keys are set",
                 _FLAG),
    UpstreamFlag("--quickstart", "works", "writes .massgen/config.yaml: three agents (upstream's recommendation) "
                 "over the providers whose keys are set, each with its model; no key: the local team, said to need "
                 "the [local] extra (never asks; --force replaces one)", ours=True),
    UpstreamFlag("--headless", "works", "nothing to switch on: --quickstart never asks questions", _FLAG),
    UpstreamFlag("--generate-config", "works", "write the config of --config-backend/--config-model/--config-agents "
                 "to PATH (as massgen.build_config)", {"metavar": "PATH", "default": None}),
    UpstreamFlag("--config-agents", "works", "with --generate-config: the number of agents (default 1)", _INT),
    UpstreamFlag("--config-backend", "works", "with --generate-config: the backend type", _STR),
    UpstreamFlag("--config-model", "works", "with --generate-config: the model", _STR),
    UpstreamFlag("--config-agent-id", "works", "with --generate-config and one agent: its id", _STR),
    UpstreamFlag("--config-docker", "not available", "generated configs run commands in the sandbox; "
                 "set command_line_execution_mode in the YAML for Docker", _FLAG),
    UpstreamFlag("--config-context-path", "works", "with --generate-config: a context path (write permission)", _STR),
    UpstreamFlag("--quickstart-agent", "not available", "no per-agent quickstart specs; write the agents in a YAML "
                 "config or use --generate-config", {"action": "append", "dest": "quickstart_agents"}),
    UpstreamFlag("--setup", "works", "save API keys to ~/.massgen/.env or ./.env (asked, as upstream; mode 600; "
                 "--env-file PATH)", ours=True),
    UpstreamFlag("--setup-skills", "not available", "no skills packages in this version", _FLAG),
    UpstreamFlag("--setup-docker", "not available", "no Docker images to pull: commands run in the sandbox", _FLAG),
    UpstreamFlag("--list-backends", "works", "the backend types and the keys they need", ours=True),
    UpstreamFlag("--list-examples", "works", "the shipped example configs, one line each", ours=True),
    UpstreamFlag("--example", "works", "print an example config to stdout (upstream's names resolve, or point to "
                 "the nearest of ours)", {"metavar": "NAME", "default": None}),
    UpstreamFlag("--show-schema", "works", "the config schema: every key, its type and default", _FLAG),
    UpstreamFlag("--schema-backend", "works", "with --show-schema: only this backend type's keys", _STR),
    UpstreamFlag("--with-examples", "works", "with --show-schema: also list the example configs", _FLAG),
    UpstreamFlag("--validate", "works", "check a config file and exit (0 valid, 1 invalid); what this machine lacks "
                 "is a warning", ours=True),
    UpstreamFlag("--strict", "works", "with --validate: a warning is an error (exit 1)", _FLAG),
    UpstreamFlag("--json", "works", "with --validate: the result as JSON", {"action": "store_true",
                                                                             "dest": "json_output"}),
    UpstreamFlag("--skip-validation", "not available",
                 "a config is always read through its schema here; an invalid one cannot run", _FLAG),
    UpstreamFlag("--strict-validation", "works", "a config warning stops the run before it starts (exit 1)", _FLAG),
    UpstreamFlag("--session-id", "works", "continue (or start) this stored session; a session that cannot be created "
                 "(a full disk, `MASSGEN_SESSIONS_DIR` not a folder) is named with its cause, exit 1, before the run",
                 ours=True),
    UpstreamFlag("--continue", "works", "continue the most recent session; refused (exit 1, naming the file) when the "
                 "session file written last cannot be read, since the question would join an older conversation; an "
                 "older unreadable one is named as a warning and passed over", ours=True),
    UpstreamFlag("--list-sessions", "works", "list the stored sessions", ours=True),
    UpstreamFlag("--all", "works", "with --list-sessions: every session (the list is never cut short here)",
                 {"action": "store_true", "dest": "list_all_sessions"}),
    UpstreamFlag("--orchestrator-timeout", "works", "deadline for the whole run, in seconds", ours=True),
    UpstreamFlag("--rate-limit", "not available", "no rate_limits.yaml; limit a run with max_model_calls / "
                 "max_total_tokens in the config, or the run deadline", _FLAG),
    UpstreamFlag("--single-agent", "works", "keep one agent of the config: the first, or the one named",
                 {"nargs": "?", "const": True, "default": None, "metavar": "AGENT_ID"}),
    UpstreamFlag("--coordination-mode", "partly", "parallel (answers and votes) is how every run works here; "
                 "decomposition into subtasks is not available", {"choices": ["parallel", "decomposition"],
                                                                  "default": None},
                 refused=lambda value: value == "decomposition"),
    UpstreamFlag("--quick", "works", "one answer per agent, then one vote; the winner's answer as written "
                 "(no final presentation)", _FLAG),
    UpstreamFlag("--personas", "partly", "off works (there are no personas to turn off); generated personas are "
                 "not available", {"choices": ["off", "perspective", "implementation", "methodology"],
                                   "default": None},
                 refused=lambda value: value not in (None, "off")),
    UpstreamFlag("--fast", "not available", "the fast preset tunes upstream phases (verification rounds, fix loops) "
                 "this version does not have; --quick shortens a run", _FLAG),
)

BY_FLAG = {entry.flag: entry for entry in TABLE}


def _dest(entry: UpstreamFlag) -> str:
    return str(entry.shape.get("dest", entry.flag.removeprefix("--").replace("-", "_")))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add every upstream flag the parser does not define itself (not the terminal UI's two)."""
    works = parser.add_argument_group("more of MassGen 0.1.97's flags")
    hidden = parser.add_argument_group("MassGen 0.1.97 flags not available here (exit 64; see docs/flags.md)")
    for entry in TABLE:
        if entry.ours or entry.status == "terminal UI":
            continue
        group = hidden if entry.status == "not available" else works
        help_text = argparse.SUPPRESS if entry.status == "not available" else entry.what
        group.add_argument(entry.flag, help=help_text, **entry.shape)


def unavailable(args: argparse.Namespace) -> str | None:
    """The first upstream flag given that is not available here, as a usage error; None when all are."""
    for entry in TABLE:
        if entry.ours or entry.status == "terminal UI" or not hasattr(args, _dest(entry)):
            continue
        value = getattr(args, _dest(entry))
        given = value is not None and value is not False and value != [] and not (
            entry.shape.get("action") == "store_false" and value is True)
        if entry.refused is not None:
            if entry.refused(value):
                return f"{entry.flag} {value}: not available in this version: {entry.what}"
        elif entry.status == "not available" and given:
            return f"{entry.flag}: not available in this version: {entry.what}"
    return None


def markdown_table() -> str:
    """The table of docs/flags.md."""
    rows = ["| upstream flag | here | status | what it does here, or why not |", "|---|---|---|---|"]
    for entry in TABLE:
        here = "`" + entry.flag + "`" if entry.status != "not available" else "exits 64"
        rows.append(f"| `{entry.flag}` | {here} | {entry.status} | {entry.what.replace('|', '/')} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    sys.stdout.write(markdown_table())
