"""One vocabulary of what happened: the message classes.

A message type's name is read in one place, the trace decoder (``messages/``): every other
module compares message classes (``match``, ``RecordSubset``, ``message_class(record) is X``),
so renaming or adding a type is a change the type checker follows, never a string to hunt for.
The events a caller streams and a screen draws are one set of classes made by one ``match``:
the stream's events of a record are exactly the screen's events of the stream's kinds.
"""

from __future__ import annotations

import ast
from pathlib import Path

from massgen import Event, LogProjection, TraceRecord, events_from_record, messages, view_events_from_record
from massgen.logs.reading import read_trace_file
from massgen.messages.protocols import members

ROOT = Path(__file__).resolve().parent.parent
# The decoder lives in messages/; tests and benches may spell names (they read traces as data).
_ALLOWED = {"messages", "tests", "bench"}
FORMAT_1 = Path(__file__).parent / "fixtures" / "trace_format_1" / "scripted_three_agents"


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
