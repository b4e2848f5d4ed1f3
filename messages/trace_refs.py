"""Trace format 2: what an earlier record already holds is written as a reference to it.

A message's payload (``Message.payload()``) is what the trace means; this module only
changes how some fields are *written*, so the trace grows linearly with the team, not with
its square. Every vote turn of N agents shows N answers, so writing each view, each tally
and each prompt whole makes a 1,000-agent trace hundreds of MB. Two kinds of reference:

- **Answers by label.** An answer's content is written once, in its ``AnswerAccepted``.
  A view (``StartTurn``, ``InjectAnswers``, ``PresentFinal``) writes its answers as an
  ordered list of labels (``"agent2.3"``: agent label and version); an entry whose
  content is not the accepted one is written whole, so any view can be written.
- **Deltas against the previous record of the same type.** A list field (or a text, by
  lines) that mostly repeats the one in the previous record of its type is written as
  ``{"$delta": {"base": SEQ, "ops": [[start, end, [items]], ...]}}``: the base's items
  with ``[start:end]`` replaced, in order. Broadcasts (every voter's view, tools and prompt
  of one round) cost a few bytes each. ``base`` names the record it applies to, so a
  reader that lost that record (a corrupt line) says so instead of decoding wrongly.

Encoding is exact: ``TraceDecoder`` gives back the payload ``Message.payload()`` gave,
value for value and key for key (tested byte for byte on rebuilt logs). A trace of format 1
(no ``trace_format`` in ``RunStarted``) holds no references; its records decode as written.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

TRACE_FORMAT = 2
"""The format ``RunStarted.trace_format`` names; a trace without it is format 1 (everything whole)."""

# (message type, path to a list or text field) written as deltas against the previous record of
# that type. A path step "*" is every item of a list (ModelRequestSent's messages, by index).
_DELTA_FIELDS: dict[str, tuple[tuple[str | int, ...], ...]] = {
    "StartTurn": (("view", "answers"),),
    "InjectAnswers": (("view", "answers"),),
    "PresentFinal": (("view", "answers"), ("votes",)),
    "TurnStarted": (("view_labels",),),
    "InvalidateVotes": (("answers",),),
    # Written by traces before issue 51, whose every TallyUpdated carried the round's whole vote list; kept
    # so they still decode. A TallyUpdated now carries only the vote it records, so nothing is encoded here.
    "TallyUpdated": (("votes",),),
    "ModelRequestSent": (("tools",), ("vote_targets",), ("messages", "*", "content")),
}
_VIEW_TYPES = ("StartTurn", "InjectAnswers", "PresentFinal")
_DELTA = "$delta"
_MIN_TEXT = 512  # shorter texts are written whole: a delta would not pay for itself


class TraceReferenceError(ValueError):
    """A record refers to one the reader does not have (a line that could not be read)."""


@dataclass
class _Refs:
    """What both sides remember: accepted answers by label, and the last value of each delta field."""

    contents: dict[str, str] = field(default_factory=dict)
    last: dict[tuple[str, tuple[str | int, ...]], tuple[int, Any]] = field(default_factory=dict)

    def accept(self, mtype: str, payload: dict[str, Any]) -> None:
        label, content = payload.get("label"), payload.get("content")
        if mtype == "AnswerAccepted" and isinstance(label, str) and isinstance(content, str):
            self.contents[label] = content  # a broken one is remembered as nothing: reading it says why


def _paths(mtype: str, payload: dict[str, Any]) -> list[tuple[str | int, ...]]:
    """The concrete paths of ``mtype``'s delta fields present in ``payload`` ("*" expanded)."""
    found: list[tuple[str | int, ...]] = []
    for spec in _DELTA_FIELDS.get(mtype, ()):
        if "*" in spec:
            star = spec.index("*")
            items = _get(payload, spec[:star])
            if isinstance(items, list):
                found += [(*spec[:star], index, *spec[star + 1:]) for index in range(len(items))]
        elif _get(payload, spec) is not None:
            found.append(spec)
    return found


def _get(data: Any, path: tuple[str | int, ...]) -> Any:
    for step in path:
        if isinstance(step, int):
            if not isinstance(data, list) or step >= len(data):
                return None
            data = data[step]
        elif isinstance(data, dict):
            data = data.get(step)
        else:
            return None
    return data


def _set(data: Any, path: tuple[str | int, ...], value: Any) -> None:
    for step in path[:-1]:
        data = data[step]
    data[path[-1]] = value


def _copy_path(payload: dict[str, Any], path: tuple[str | int, ...]) -> dict[str, Any]:
    """``payload`` with the containers along ``path`` copied, so setting the leaf changes nothing shared."""
    top: dict[str, Any] = dict(payload)
    data: Any = top
    for step in path[:-1]:
        inner = data[step]
        inner = dict(inner) if isinstance(inner, dict) else list(inner)
        data[step] = inner
        data = inner
    return top


_MAX_EQUAL_PAIRS = 200_000  # pairs of equal items (old, new) past which difflib is not asked


def _items(value: Any) -> list[Any] | None:
    """A delta field's value as a list of comparable items: a text by lines, a list as is."""
    if isinstance(value, str):
        return value.splitlines(keepends=True) if len(value) >= _MIN_TEXT else None
    if isinstance(value, list):
        return value
    return None


def _key(item: Any) -> Any:
    """A hashable stand-in for a JSON value, for matching items."""
    if isinstance(item, dict):
        return tuple((k, _key(v)) for k, v in item.items())
    if isinstance(item, list):
        return tuple(_key(v) for v in item)
    return item


def _ops(base: list[Any], new: list[Any]) -> list[list[Any]]:
    if base == new:
        return []
    if len(new) >= len(base) and new[:len(base)] == base:  # grown at the end (the answers of a new round)
        return [[len(base), len(base), new[len(base):]]]
    # The common head and tail are cut off first, in linear time. difflib then matches the middle;
    # its work grows with the pairs of equal items (a question of repeated lines once stalled the
    # writer for minutes), so past a bound the middle is one replacement: correct, if not the
    # smallest delta. Distinct items (labels, each viewer's rotated view) stay well under it.
    head = 0
    limit = min(len(base), len(new))
    while head < limit and base[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and base[len(base) - 1 - tail] == new[len(new) - 1 - tail]:
        tail += 1
    old_mid, new_mid = base[head:len(base) - tail], new[head:len(new) - tail]
    old_keys, new_keys = [_key(i) for i in old_mid], [_key(i) for i in new_mid]
    in_new = Counter(new_keys)
    if sum(in_new[key] for key in old_keys) > _MAX_EQUAL_PAIRS:
        return [[head, head + len(old_mid), new_mid]]
    matcher = SequenceMatcher(None, old_keys, new_keys, autojunk=False)
    return [[head + i1, head + i2, new_mid[j1:j2]]
            for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _apply(base: list[Any], ops: list[list[Any]]) -> list[Any]:
    out: list[Any] = []
    at = 0
    for start, end, items in ops:
        out += base[at:start]
        out += items
        at = end
    out += base[at:]
    return out


def _view_agent(label: str) -> str:
    return label.rpartition(".")[0]


class TraceEncoder:
    """Writes payloads with references (format 2); one per trace, fed every record in ``seq`` order."""

    def __init__(self) -> None:
        self._refs = _Refs()

    def encode(self, seq: int, mtype: str, payload: dict[str, Any]) -> dict[str, Any]:
        """The payload to write for record ``seq``; ``payload`` itself is left as it is."""
        written = payload
        if mtype in _VIEW_TYPES and isinstance(_get(payload, ("view", "answers")), list):
            written = _copy_path(written, ("view", "answers"))
            _set(written, ("view", "answers"), [self._ref(entry) for entry in payload["view"]["answers"]])
        for path in _paths(mtype, written):
            value = _get(written, path)
            items = _items(value)
            previous = self._refs.last.get((mtype, path))
            self._refs.last[(mtype, path)] = (seq, value)
            base = _items(previous[1]) if previous is not None and type(previous[1]) is type(value) else None
            if previous is None or items is None or base is None:
                continue
            ops = _ops(base, items)
            if isinstance(value, str):
                ops = [[start, end, "".join(lines)] for start, end, lines in ops]
            if _larger(value, _size(ops) * 2):
                written = _copy_path(written, path)
                _set(written, path, {_DELTA: {"base": previous[0], "ops": ops}})
        if mtype == "RunStarted":  # the format is the writer's, so the writer names it
            written = {**written, "trace_format": TRACE_FORMAT}
        self._refs.accept(mtype, payload)
        return written

    def _ref(self, entry: Any) -> Any:
        """An answer in view as its label, when its content is the accepted one; else whole."""
        if isinstance(entry, dict) and entry.keys() == {"agent", "label", "content"}:
            label = entry["label"]
            if self._refs.contents.get(label) == entry["content"] and entry["agent"] == _view_agent(label):
                return label
        return entry


def _size(value: Any) -> int:
    """Roughly the JSON length of ``value`` (cheap: counts strings and items, never dumps)."""
    if isinstance(value, str):
        return len(value) + 2
    if isinstance(value, list | tuple):
        return 2 + sum(_size(v) + 1 for v in value)
    if isinstance(value, dict):
        return 2 + sum(len(k) + 4 + _size(v) for k, v in value.items())
    return 6


def _larger(value: Any, limit: int) -> bool:
    """``_size(value) > limit``, reading only as much of ``value`` as it takes: a list that grew by one
    item is not walked whole for every record that carries it (a tally of N votes, N times)."""
    if not isinstance(value, list | tuple):
        return _size(value) > limit
    total = 2
    for item in value:
        total += _size(item) + 1
        if total > limit:
            return True
    return False


class TraceDecoder:
    """Reads payloads back whole; one per trace, fed every record in ``seq`` order.

    ``decode`` raises ``TraceReferenceError`` for a record that refers to one it was not
    given (the reader skipped a bad line); that record cannot be read, the rest can.
    """

    def __init__(self) -> None:
        self._refs = _Refs()
        self._entries: dict[str, dict[str, str]] = {}  # one dict per answer in view, shared by every view

    def decode(self, seq: int, mtype: str, written: dict[str, Any]) -> dict[str, Any]:
        if mtype == "RunStarted":
            version = written.get("trace_format", 1)
            if not isinstance(version, int) or version > TRACE_FORMAT:
                raise TraceReferenceError(f"trace format {version!r}: this massgen reads formats 1 to {TRACE_FORMAT}")
            written = {k: v for k, v in written.items() if k != "trace_format"}
        payload = written
        for path in _paths(mtype, written):
            value = _get(written, path)
            if isinstance(value, dict) and _DELTA in value:
                delta = value[_DELTA]
                previous = self._refs.last.get((mtype, path))
                if previous is None or previous[0] != delta["base"]:
                    raise TraceReferenceError(f"refers to record {delta['base']}, which could not be read")
                if isinstance(previous[1], str):
                    lines = _apply(previous[1].splitlines(keepends=True),
                                   [[start, end, [text]] for start, end, text in delta["ops"]])
                    value = "".join(lines)
                else:
                    value = _apply(previous[1], delta["ops"])
                payload = _copy_path(payload, path)
                _set(payload, path, value)
            self._refs.last[(mtype, path)] = (seq, value)
        if mtype in _VIEW_TYPES and isinstance(_get(payload, ("view", "answers")), list):
            answers = _get(payload, ("view", "answers"))
            if any(isinstance(entry, str) for entry in answers):
                payload = _copy_path(payload, ("view", "answers"))
                _set(payload, ("view", "answers"), [self._entry(entry) for entry in answers])
        self._refs.accept(mtype, payload)
        return payload

    def _entry(self, entry: Any) -> Any:
        if not isinstance(entry, str):
            return entry
        content = self._refs.contents.get(entry)
        if content is None:
            raise TraceReferenceError(f"refers to answer {entry}, whose AnswerAccepted could not be read")
        known = self._entries.get(entry)
        if known is None or known["content"] is not content:
            known = self._entries[entry] = {"agent": _view_agent(entry), "label": entry, "content": content}
        return known
