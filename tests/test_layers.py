"""Imports flow one way (docs/architecture.md, "Layers"), and no two modules import each other.

Every module of ours is walked with ``ast``: imports at the top, inside functions and under
``if TYPE_CHECKING:`` all count for the layers (a deferred import is still a dependency, and an
annotation naming an upper layer's type ties the lower layer to it). Only the cycle check leaves
``TYPE_CHECKING`` imports out, since they never run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Installed package -> folder (pyproject's package-dir); ``massgen`` itself is the face.
FOLDERS = {"massgen": "massgen", "massgen.actors": "actors", "massgen.backends": "backends",
           "massgen.messages": "messages", "massgen.cli": "cli", "massgen.configs": "configs",
           "massgen.logs": "logs", "massgen.files": "files", "massgen.tool": "tool",
           "massgen.outcome": "outcome"}

# Top first. A module may import its own layer and the layers below it; layers side by side on one
# line import neither each other nor anything above.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("cli",),  # and only the face: tests/test_public_face.py
    ("massgen",),  # the face
    ("actors",),  # massgen.actors itself: the handle, re-exported
    ("actors.run",),  # the run as callers see it: Team, preflight, the question
    ("actors.supervisor",),
    ("actors.agent",),
    ("actors.mcp",),
    ("actors.coordination",),
    ("actors.record",),  # the trace: its writer, model call records, resuming from it
    ("actors.runtime",),
    ("files",),
    ("backends",),
    ("configs", "logs"),
    ("messages",),
    # Leaves, importing nothing else of ours: the errors and the run's result (a ``RunError`` holds the
    # ``RunResult``), which every layer may raise or return, and upstream's tool result types.
    ("outcome", "tool"),
)
RANK = {unit: rank for rank, layer in enumerate(LAYERS) for unit in layer}


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # the module imported (``from a import b`` names ``a.b`` when that is a module)
    line: int
    type_checking: bool


def module_files(root: Path = ROOT) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package, folder in FOLDERS.items():
        for path in sorted((root / folder).rglob("*.py")):
            parts = path.relative_to(root / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


def imports_of(module: str, path: Path, modules: set[str]) -> Iterator[Import]:
    """Every import of one of ``modules`` in one file, at any depth."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def walk(node: ast.AST, type_checking: bool) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            guarded = type_checking or (isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name in modules:
                        yield Import(module, alias.name, child.lineno, guarded)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                    base = ".".join([*anchor, *([child.module] if child.module else [])])
                for alias in child.names:
                    target = f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                    if target in modules:
                        yield Import(module, target, child.lineno, guarded)
            yield from walk(child, guarded)

    yield from walk(ast.parse(path.read_text(encoding="utf-8"), str(path)), False)


def unit(module: str) -> str:
    """The layer a module belongs to: its top folder, or a subpackage of ``actors``."""
    parts = module.split(".")
    if len(parts) == 1 or f"massgen.{parts[1]}" not in FOLDERS:
        return "massgen"
    if parts[1] == "actors" and len(parts) > 2:
        return f"actors.{parts[2]}"
    return parts[1]


def all_imports(root: Path = ROOT) -> list[Import]:
    files = module_files(root)
    # One per (module, target, line): ``from a import b, c`` is one import of ``a``.
    names = set(files)
    return list(dict.fromkeys(found for module, path in files.items() for found in imports_of(module, path, names)))


def upward(imports: list[Import]) -> list[str]:
    """Each import of a unit at the importer's rank or above it (its own unit excepted)."""
    return [f"{i.module}:{i.line} ({unit(i.module)}) imports {i.target} ({unit(i.target)})"
            + (" under TYPE_CHECKING" if i.type_checking else "")
            for i in imports
            if unit(i.module) != unit(i.target) and RANK[unit(i.target)] <= RANK[unit(i.module)]]


def cycles(imports: list[Import]) -> list[list[str]]:
    """Groups of modules that import each other, through any chain (Tarjan's strongly connected parts)."""
    graph: dict[str, set[str]] = {}
    for i in imports:
        if not i.type_checking and i.target != i.module:
            graph.setdefault(i.module, set()).add(i.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_every_module_is_in_a_layer() -> None:
    units = {unit(module) for module in module_files()}
    assert units == set(RANK)


def test_no_module_imports_upward_or_sideways() -> None:
    found = upward(all_imports())
    assert not found, "\n".join(found)


def test_no_two_modules_import_each_other() -> None:
    found = cycles(all_imports())
    assert not found, "\n".join(" <-> ".join(group) for group in found)


def test_the_checks_see_deferred_guarded_and_relative_imports(tmp_path: Path) -> None:
    for folder in ("massgen", "backends", "configs", "actors/agent", "actors/run"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "backends" / "base.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from massgen.actors.agent import actor\n")
    (tmp_path / "configs" / "schema.py").write_text("def f():\n    from massgen.configs import types\n")
    (tmp_path / "configs" / "types.py").write_text("from . import schema\n")
    (tmp_path / "actors" / "agent" / "actor.py").write_text("def f():\n    import massgen.actors.run\n")
    for folder in ("actors", "cli", "files", "logs", "messages", "outcome", "tool"):
        (tmp_path / folder).mkdir(exist_ok=True)
    found = all_imports(tmp_path)
    assert upward(found) == [
        "massgen.actors.agent.actor:2 (actors.agent) imports massgen.actors.run (actors.run)",
        "massgen.backends.base:3 (backends) imports massgen.actors.agent.actor (actors.agent) under TYPE_CHECKING",
    ]
    assert cycles(found) == [["massgen.configs.schema", "massgen.configs.types"]]


def test_the_layers_are_the_ones_the_architecture_names() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    order = " < ".join(u.removeprefix("actors.") for u in reversed([layer[0] for layer in LAYERS])
                       if u.startswith("actors."))
    assert f"`{order}`" in text
