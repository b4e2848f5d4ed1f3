"""Properties of the file tools for any arguments a model sends and any names a file system holds (hypothesis).

Whatever the call (any JSON value for any argument, paths of any bytes, depth and length):
the run completes, every call gets exactly one traced result, a call whose arguments break
the tool's schema or name a place outside the roots is a tool error, and nothing is written
outside the workspace, the writable context path and the run's own log directory.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import jsonschema
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from support import assert_trace_invariants, of_type, records, run_team, scripted, step, team_config

from massgen.files import RunFiles, snapshots
from massgen.files import file_tools as tools

NAMES = [spec.name for spec in tools.SPECS]
SPECS = {spec.name: spec for spec in tools.SPECS}
KEYS = ["path", "content", "offset", "limit", "old", "new", "pattern", "source", "destination"]

# Any code point, lone surrogates included: what a JSON string from a model may decode to.
# (hypothesis leaves surrogates out of characters(), so they are drawn on their own)
any_text = st.text(st.one_of(st.characters(), st.integers(0xD800, 0xDFFF).map(chr)), max_size=24)
# Names a file system may hold: any bytes but NUL and '/', as os sees them (surrogate escapes).
fs_name = st.binary(min_size=1, max_size=12).map(lambda b: os.fsdecode(b.replace(b"\0", b"x").replace(b"/", b"_")))
component = st.one_of(
    st.sampled_from(["..", ".", ".git", ".GIT", "sub", "a", "", "~", "conf"]),
    fs_name, any_text, st.just("n" * 300),  # over NAME_MAX
)


@st.composite
def paths(draw: st.DrawFn, roots: tuple[str, ...]) -> str:
    depth = draw(st.sampled_from([1, 2, 3, 8, 40, 1500]))
    parts = [draw(component) for _ in range(min(depth, 8))]
    if depth > 8:
        parts += ["d"] * depth
    relative = "/".join(parts)
    prefix = draw(st.sampled_from(["", "", "/", *(f"{r}/" for r in roots)]))
    return prefix + relative


json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False)
    | any_text,
    # keys without surrogates: the script is part of the config, whose dump cannot hold one (a config
    # matter, not a model's: a model's arguments with such a key are refused by the turn)
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def calls(draw: st.DrawFn, roots: tuple[str, ...]) -> tuple[str, dict[str, Any]]:
    name = draw(st.sampled_from(NAMES))
    args: dict[str, Any] = {}
    for key in draw(st.lists(st.sampled_from(KEYS), max_size=4, unique=True)) + list(
            SPECS[name].parameters.get("required", [])):
        if key in ("path", "source", "destination") and draw(st.integers(0, 3)) > 0:
            args[key] = draw(paths(roots))
        elif key in ("offset", "limit") and draw(st.booleans()):
            args[key] = draw(st.integers(-3, 5))
        else:
            args[key] = draw(json_value)
    return name, args


def _breaks_schema(name: str, args: dict[str, Any]) -> bool:
    """A lone surrogate breaks nothing by itself: a reply's text is escaped where it enters (``actors/record/
    replay.py``), with a note, so the tool is called with ``\\udc2c`` written out (hypothesis found a search for
    one answered "No files match", which is right)."""
    try:
        jsonschema.validate(args, SPECS[name].parameters)
    except jsonschema.ValidationError:
        return True
    return False


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


def _outside(name: str, args: dict[str, Any], roots: tuple[str, ...]) -> bool:
    """A path argument of the tool's own that is absolute and in none of the roots (or climbs out of the
    workspace). A key the tool does not take reaches nothing (``list_directory`` has no ``source``)."""
    for key in ("path", "source", "destination"):
        if key not in SPECS[name].parameters.get("properties", {}):
            continue
        value = args.get(key)
        if isinstance(value, str) and "\0" not in value:
            norm = os.path.normpath(value)
            if os.path.isabs(norm) and not any(norm == r or norm.startswith(r + "/") for r in roots):
                return True
            if not os.path.isabs(norm) and (norm == ".." or norm.startswith("../")):
                return True
    return False


def _listing(root: Path) -> set[str]:
    done = subprocess.run(["find", str(root), "-path", str(root / "logs"), "-prune", "-o", "-print"],
                          capture_output=True, check=True, timeout=120)
    return set(os.fsdecode(line) for line in done.stdout.splitlines())


def _remove(path: Path) -> None:
    subprocess.run(["rm", "-rf", "--", str(path)], check=False, timeout=120)


# No shrinking: each example is a whole team run, and a failing one is already small.
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(data=st.data())
def test_any_file_tool_call_in_a_team_run_is_answered_and_nothing_is_written_outside(data: st.DataObject) -> None:
    top = Path(tempfile.mkdtemp(prefix="massgen-props-"))
    try:
        context, outside = top / "project", top / "outside"
        for folder in (context / "conf", context / "sub", outside):
            folder.mkdir(parents=True)
        (context / "conf" / "prod.env").write_text("KEY=1\n")
        (context / "sub" / "a.txt").write_text("a\n")
        (outside / "secret.txt").write_text("secret\n")
        workspaces = top / "workspaces"
        roots = (str(context), str(outside), "/etc", str(top))
        coordinating = data.draw(st.lists(calls(roots), min_size=1, max_size=6), label="coordination calls")
        presenting = data.draw(st.lists(calls(roots), min_size=0, max_size=6), label="presentation calls")
        agent = scripted(
            "a", [step(tool=name, args=args) for name, args in coordinating], [step(new_answer="done")],
            present_script=[[step(tool=name, args=args) for name, args in presenting], [step(text="presented")]],
        )
        rules = {"context_paths": [{"path": str(context), "permission": "write", "protected_paths": ["conf"]}]}
        before_outside = _listing(outside)
        before_top = set(os.listdir(top))
        previous = os.environ.get("MASSGEN_WORKSPACE_BASE_DIR")
        os.environ["MASSGEN_WORKSPACE_BASE_DIR"] = str(workspaces)
        try:
            result = run_team(team_config(agent, orchestrator=rules, run_timeout=60, turn_timeout=30), top)
        finally:
            if previous is not None:
                os.environ["MASSGEN_WORKSPACE_BASE_DIR"] = previous

        assert result.status == "completed", result.reason
        trace = records(result)
        assert_trace_invariants(trace)
        assert not of_type(trace, "ChildFailed", "AgentRestarting", "TurnFailed")
        outcomes = [r["payload"] for r in of_type(trace, "ToolCallResult")]
        requested = [r["payload"]["arguments"] for r in of_type(trace, "ToolCallRequested")]
        assert not any(_has_lone_surrogate(arguments) for arguments in requested)  # escaped where they entered
        made = coordinating + presenting
        assert len(outcomes) == len(made)
        for (name, args), outcome in zip(made, outcomes, strict=True):
            assert outcome["name"] == name
            if _breaks_schema(name, args) or _outside(name, args, (str(context), str(workspaces))):
                assert outcome["is_error"], (name, args, outcome)
        assert _listing(outside) == before_outside
        assert set(os.listdir(top)) == before_top | {"logs", "workspaces"}
        assert (context / "conf" / "prod.env").read_text() == "KEY=1\n"
        assert not of_type(trace, "SnapshotTaken")[0]["payload"]["error"]
        assert of_type(trace, "ContextChanged"), "the change report was made"
    finally:
        _remove(top)


def test_an_argument_a_tool_does_not_take_is_refused_naming_it_in_the_result_and_the_trace(tmp_path: Path) -> None:
    """What hypothesis found: ``list_directory`` given a ``source`` ran and ignored it. Now the call is
    refused, its result names the argument, and the trace records the refusal as that call's result."""
    agent = scripted("a", [step(tool="list_directory", args={"path": ".", "source": "/etc"}),
                           step(tool="list_directory", args={"path": "."})], [step(new_answer="done")])
    result = run_team(team_config(agent, orchestrator={"workspaces": True}), tmp_path)
    assert result.status == "completed", result.reason
    refused, listed = [r["payload"] for r in of_type(records(result), "ToolCallResult")]
    assert refused["is_error"] and listed["is_error"] is False
    assert refused["content"] == "list_directory: it takes no argument 'source' (only path); the call was not run"
    assert "/etc" not in refused["content"]


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_direct_call_never_raises_and_snapshots_and_reports_take_whatever_it_made(data: st.DataObject) -> None:
    top = Path(tempfile.mkdtemp(prefix="massgen-props-"))
    try:
        context, outside = top / "project", top / "outside"
        for folder in (context / "sub", outside):
            folder.mkdir(parents=True)
        (outside / "secret.txt").write_text("secret\n")
        os.close(os.open(os.fsencode(context) + b"/caf\xe9.txt", os.O_CREAT | os.O_WRONLY, 0o644))
        previous = os.environ.get("MASSGEN_WORKSPACE_BASE_DIR")
        os.environ["MASSGEN_WORKSPACE_BASE_DIR"] = str(top / "workspaces")
        try:
            rules = {"context_paths": [{"path": str(context), "permission": "write"}]}
            files = RunFiles.prepare(team_config(scripted("a"), orchestrator=rules), "run", top / "logs")
        finally:
            if previous is not None:
                os.environ["MASSGEN_WORKSPACE_BASE_DIR"] = previous
        assert files is not None
        denials: list[object] = []
        agent = files.agent("a", denials.append)
        from massgen.messages import AnswerView

        agent.begin(data.draw(st.sampled_from(["turn", "present"])), "cause", 1, AnswerView(version=0, answers=()))
        before_outside = _listing(outside)
        roots = (str(context), str(outside), str(files.workspace("a")))
        for name, args in data.draw(st.lists(calls(roots), min_size=1, max_size=5)):
            content, is_error = asyncio.run(agent.call(name, args))
            content.encode("utf-8")  # valid text, whatever the names held
            if _outside(name, args, (str(context), str(files.workspace("a")))):
                assert is_error, (name, args, content)
            unknown = [key for key in args if key not in SPECS[name].parameters["properties"]]
            if unknown:  # refused by the tool itself too, naming what it does not take
                assert is_error and f"it takes no argument {unknown[0]!r}" in content, (name, args, content)
        assert _listing(outside) == before_outside
        info = snapshots.take(files.workspace("a"), files.snapshots_dir / "agent1.1")
        assert info.digest
        changed = files.changed()
        assert changed is not None
        for entry in changed["files"]:
            entry["path"].encode("utf-8")
    finally:
        _remove(top)
