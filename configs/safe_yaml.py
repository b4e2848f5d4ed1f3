"""YAML for config files, with bounds: a hostile or broken file is a ``ConfigError``, never a hang.

``yaml.safe_load`` alone is not safe enough for files a server loads on request
(``massgen/path:FILE``): it composes aliases by reference, so a "billion laughs" file
of a few hundred bytes is tiny as a graph but astronomically large once anything walks
it (environment expansion, validation, a copy); ``a: &a [*a]`` is a cycle that any walk
recurses into forever; and 5,000 nested ``[`` or deep block nesting overflow the
composer's recursion. So, before anything walks the data:

- the file must be at most ``MAX_BYTES`` and decode as UTF-8 (a UTF-16/32 byte-order mark
  or an invalid byte is named, with its line);
- nesting may go ``MAX_DEPTH`` levels deep, counted as the composer descends, so the
  recursion stops long before Python's limit;
- the composed graph, aliases expanded, may hold at most ``MAX_NODES`` nodes, counted once
  per node (memoised, so the count itself stays linear in the file); a cycle is refused;
- a key written twice in one mapping is refused (YAML would keep the last one silently).

Error messages give the line and column and the parser's own words, never the file's text:
a server must not echo a file that may hold secrets.
"""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from massgen.outcome.errors import ConfigError

MAX_BYTES = 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 100_000

_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"),
)


class _TooDeep(yaml.YAMLError):
    def __init__(self, mark: yaml.Mark | None) -> None:
        super().__init__()
        self.mark = mark


class _BoundedLoader(yaml.SafeLoader):
    """The safe loader, with its composer's nesting depth counted and capped."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def fetch_flow_collection_start(self, TokenClass: Any) -> None:
        # The scanner rechecks every open flow level at each token: refused here, 5,000 ``[``
        # would cost seconds (and a 1 MiB file of them hours) before the composer saw one.
        if self.flow_level >= MAX_DEPTH:
            raise _TooDeep(self.get_mark())
        super().fetch_flow_collection_start(TokenClass)

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _TooDeep(self.peek_event().start_mark)  # type: ignore[no-untyped-call]
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _decode(raw: bytes, source: str) -> str:
    for bom, name in _BOMS:  # UTF-32 LE starts like UTF-16 LE: the longer marks are tried first
        if raw.startswith(bom):
            raise ConfigError(f"{source}: the file is {name}-encoded; config files must be UTF-8 "
                              "(re-save it as UTF-8)")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"{source}: line {line}: byte 0x{raw[exc.start]:02x} is not UTF-8; config files "
                          "must be UTF-8 (re-save it as UTF-8)") from None


def _where(mark: yaml.Mark | None) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""


def _describe(exc: yaml.YAMLError) -> str:
    """The parser's problem and where, without its snippet of the file (which may be a secret)."""
    if isinstance(exc, yaml.MarkedYAMLError):
        parts = [exc.context or "", exc.problem or ""]
        text = "; ".join(p for p in parts if p) or "not valid YAML"
        return f"{_where(exc.problem_mark or exc.context_mark)}{text}"
    return "not valid YAML"


def _check_graph(root: Node, source: str) -> None:
    """Refuse cycles and graphs that expand past ``MAX_NODES`` (iteratively: no recursion to overflow)."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            on_path.discard(key)
            size = 1 + sum(sizes[id(c)] for c in _children(node))
            if size > MAX_NODES:
                raise ConfigError(f"{source}: {_where(node.start_mark)}the YAML expands to more than "
                                  f"{MAX_NODES:,} values (aliases repeating aliases, a \"billion laughs\" file?); "
                                  "refused")
            sizes[key] = size
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise ConfigError(f"{source}: {_where(node.start_mark)}an alias refers to a value that contains "
                              "it (a recursive structure); refused")
        on_path.add(key)
        if isinstance(node, MappingNode):
            _check_keys(node, source)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)


def _check_keys(node: MappingNode, source: str) -> None:
    """Refuse a key written twice in one mapping: YAML loaders keep the last silently (upstream MassGen
    too), so a second ``agents:`` or ``backend:`` would drop the first without a word."""
    seen: dict[tuple[str, str], yaml.Mark] = {}
    for key, _ in node.value:
        if not isinstance(key, ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
            continue
        first = seen.setdefault((key.tag, key.value), key.start_mark)
        if first is not key.start_mark:  # the key is not named: a misparsed file's "key" may be a secret
            raise ConfigError(f"{source}: {_where(key.start_mark)}this key is already written at line "
                              f"{first.line + 1}, column {first.column + 1}, in the same mapping; YAML would keep "
                              "only the last one: remove or merge one of them")


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def parse(text: str, source: str) -> Any:
    """The data of one YAML document, within the bounds above; ``ConfigError`` names ``source``."""
    try:
        loader = _BoundedLoader(text)  # its reader refuses control characters at once, here
    except yaml.reader.ReaderError as exc:
        before = text[:exc.position]
        line, column = before.count("\n") + 1, exc.position - (before.rfind("\n") + 1) + 1
        raise ConfigError(f"{source}: line {line}, column {column}: the character U+{exc.character:04X} is not "
                          "allowed in YAML (control characters and noncharacters are not)") from None
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        _check_graph(root, source)
        return loader.construct_document(root)
    except _TooDeep as exc:
        raise ConfigError(f"{source}: {_where(exc.mark)}nested more than {MAX_DEPTH} levels deep; "
                          "refused") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: not valid YAML: {_describe(exc)}") from None
    except RecursionError:  # a bound above should always come first; this keeps the promise if not
        raise ConfigError(f"{source}: nested too deeply to read; refused") from None
    finally:
        loader.dispose()


def read(path: Path) -> Any:
    """Read, decode and parse the config file at ``path``, within the bounds above."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    if len(raw) > MAX_BYTES:
        raise ConfigError(f"{path}: the file is larger than {MAX_BYTES // 1024} KiB; a team config is "
                          "far smaller (is this the right file?)")
    return parse(_decode(raw, str(path)), str(path))
