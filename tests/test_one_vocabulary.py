"""One vocabulary of what happened: the message classes.

A message type's name is read in one place, the trace decoder (``messages/``): every other
module compares message classes (``match``, ``RecordSubset``, ``message_class(record) is X``),
so renaming or adding a type is a change the type checker follows, never a string to hunt for.
The browser UI (``cli/serve/ui/static/*.js``) cannot import the classes: the names its reducer
switches on are read out of the scripts and held against the same vocabulary.
The events a caller streams and a screen draws are one set of classes made by one ``match``:
the stream's events of a record are exactly the screen's events of the stream's kinds.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from massgen import Event, LogProjection, TraceRecord, events_from_record, messages, view_events_from_record
from massgen.logs.reading import read_trace_file
from massgen.messages.protocols import members

ROOT = Path(__file__).resolve().parent.parent
# The decoder lives in messages/; tests and benches may spell names (they read traces as data).
_ALLOWED = {"messages", "tests", "bench"}
FORMAT_1 = Path(__file__).parent / "fixtures" / "trace_format_1" / "scripted_three_agents"
UI_STATIC = ROOT / "cli" / "serve" / "ui" / "static"
_TYPE_SWITCH = re.compile(r"switch\s*\(\s*[\w.]*\btype\s*\)\s*\{")
_CASE = re.compile(r"\bcase\s+(['\"`])(\w+)\1\s*:")
_TYPE_COMPARED = re.compile(r"\btype\s*[!=]==?\s*(['\"`])(\w+)\1")


def files_spelling_type_names(root: Path) -> dict[str, list[str]]:
    """Every .py under ``root`` outside messages/, tests/ and bench/ with a string constant that is a
    message type's name (``MESSAGE_TYPES``), and the names it spells."""
    names = set(messages.MESSAGE_TYPES)
    found: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] in _ALLOWED or relative.parts[0].startswith("."):
            continue
        spelled = [node.value for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                   if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names]
        if spelled:
            found[str(relative)] = spelled
    return found


def test_message_type_names_are_spelled_only_in_the_decoder() -> None:
    found = files_spelling_type_names(ROOT)
    assert found == {}, f"compare message classes, not their names (messages.message_class): {found}"


def test_the_count_sees_a_name_spelled_anywhere_in_a_module(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    reader = 'KIND = {"x": 1}\n\n\ndef ended(r):\n    return r["type"] == "RunFinished"\n'
    (tmp_path / "logs" / "reader.py").write_text(reader)
    (tmp_path / "messages").mkdir()
    (tmp_path / "messages" / "decoder.py").write_text('NAME = "RunStarted"\n')
    assert files_spelling_type_names(tmp_path) == {"logs/reader.py": ["RunFinished"]}


def js_type_names(script: str) -> set[str]:
    """The names a script compares a record's ``type`` with: the cases of each ``switch (x.type) { ... }``
    (to its matching brace) and every ``x.type === 'Name'`` / ``!==``."""
    names = {match.group(2) for match in _TYPE_COMPARED.finditer(script)}
    for switch in _TYPE_SWITCH.finditer(script):
        depth, end = 1, switch.end()
        while depth and end < len(script):
            depth += {"{": 1, "}": -1}.get(script[end], 0)
            end += 1
        names |= {match.group(2) for match in _CASE.finditer(script, switch.end(), end)}
    return names


def test_the_browser_ui_switches_only_on_message_type_names() -> None:
    scripts = sorted(path for path in UI_STATIC.glob("*.js"))
    used = {path.name: js_type_names(path.read_text(encoding="utf-8")) for path in scripts}
    assert len(used.get("reducer.js", ())) >= 30, used  # the reducer's switch was read, not missed
    unknown = {name: sorted(names - set(messages.MESSAGE_TYPES)) for name, names in used.items()
               if names - set(messages.MESSAGE_TYPES)}
    assert unknown == {}, f"the Web UI names message types the Python vocabulary does not have: {unknown}"


def test_the_js_reader_sees_cases_of_a_type_switch_and_type_comparisons() -> None:
    script = """
    switch (e.type) {
      case 'RunStarted': { const x = { a: 1 }; return x; }
      case "TallyUpdatd":
        return e.type === 'KillAgent' ? 1 : 2;
    }
    switch (p.kind) { case 'reasoning': return 0; }
    const marks = entries.filter((x) => x.type !== `RecordVote`);
    """
    assert js_type_names(script) == {"RunStarted", "TallyUpdatd", "KillAgent", "RecordVote"}
    assert js_type_names(script) - set(messages.MESSAGE_TYPES) == {"TallyUpdatd"}


def test_a_written_record_names_its_class_once_for_every_reader() -> None:
    assert messages.message_class({"type": "RunFinished"}) is messages.RunFinished
    assert messages.message_class({"type": "NoSuchMessage"}) is None
    assert messages.message_class({"type": 7}) is None
    assert messages.message_class({}) is None


def test_the_stream_is_the_screen_s_events_of_the_stream_s_kinds() -> None:
    records = [TraceRecord.of(raw) for raw in read_trace_file(FORMAT_1).records]
    projection = LogProjection()
    stream_kinds = members(Event)
    streamed = viewed = 0
    for record in records:
        projection.apply(record)
        stream = events_from_record(record, projection)
        view = view_events_from_record(record, projection)
        assert stream == [event for event in view if isinstance(event, stream_kinds)], record.type
        streamed, viewed = streamed + len(stream), viewed + len(view)
    assert 0 < streamed < viewed  # the trace has both kinds
