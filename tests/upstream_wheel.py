"""Upstream MassGen 0.1.97, the compatibility spec: its wheel, fetched once with
``pip download --no-deps massgen==0.1.97`` and unpacked under ``tests/.upstream/`` (git-ignored).

Only read, never imported: tests parse its argparse definitions with ``ast``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support import unavailable

VERSION = "0.1.97"
CACHE = Path(__file__).parent / ".upstream"


def upstream_package() -> Path:
    """The unpacked ``massgen/`` folder of upstream's wheel (fetched on first use)."""
    target = CACHE / f"massgen-{VERSION}"
    if (target / "massgen" / "cli" / "entrypoint.py").is_file():
        return target / "massgen"
    CACHE.mkdir(parents=True, exist_ok=True)
    wheels = sorted(CACHE.glob(f"massgen-{VERSION}-*.whl"))
    if not wheels:
        fetched = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                                  f"massgen=={VERSION}", "-d", str(CACHE)], capture_output=True, text=True,
                                 timeout=300)
        wheels = sorted(CACHE.glob(f"massgen-{VERSION}-*.whl"))
        if fetched.returncode != 0 or not wheels:
            unavailable(f"upstream massgen {VERSION} could not be fetched (pip download): {fetched.stderr[-300:]}")
    with zipfile.ZipFile(wheels[0]) as wheel:
        wheel.extractall(target, members=[n for n in wheel.namelist() if n.startswith("massgen/")])
    return target / "massgen"


@dataclass(frozen=True)
class Flag:
    name: str
    shape: dict[str, Any]  # the literal keywords of its add_argument call (choices, action, type, nargs)


def upstream_flags() -> list[Flag]:
    """Every flag of upstream's main parser (``main_parser`` and its mode flags), in its order."""
    package = upstream_package()
    flags: list[Flag] = []
    for file, function in (("cli/entrypoint.py", "main_parser"), ("cli/mode_flags.py", "add_mode_flags_to_parser")):
        tree = ast.parse((package / file).read_text(encoding="utf-8"))
        body = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function)
        for call in ast.walk(body):
            if isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "add_argument":
                names = [a.value for a in call.args if isinstance(a, ast.Constant) and str(a.value).startswith("--")]
                shape = {}
                for keyword in call.keywords:
                    if keyword.arg in ("action", "choices", "nargs", "type"):
                        try:
                            shape[keyword.arg] = ast.literal_eval(keyword.value)
                        except ValueError:
                            shape[keyword.arg] = ast.unparse(keyword.value)
                flags += [Flag(name, shape) for name in names]
    return flags


# -- the shapes of upstream's dicts, read from its source --------------------------------------

Shape = dict[str, Any]  # key -> the shape of its value (None: a leaf); "*": every key; "[]": every item


def function_node(file: str, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
    """The (first) function ``name``, or method ``Class.name``, in ``file`` (a path inside upstream's package)."""
    tree: ast.AST = ast.parse((upstream_package() / file).read_text(encoding="utf-8"))
    if "." in name:
        owner, name = name.split(".", 1)
        tree = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == owner)
    return next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name)


def dict_shapes(function: ast.AST) -> tuple[dict[str, ast.Dict], dict[str, ast.Dict], dict[str, ast.Dict],
                                             dict[str, list[str]]]:
    """In ``function``: ``name = {...}`` literals, ``name[key] = {...}`` literals (a mapping of them),
    ``name.append({...})`` literals (a list of them), and ``name["key"] = ...`` keys added later."""
    assigned: dict[str, ast.Dict] = {}
    mapped: dict[str, ast.Dict] = {}
    appended: dict[str, ast.Dict] = {}
    added: dict[str, list[str]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(node.value, ast.Dict) and isinstance(target, ast.Name):
                    assigned.setdefault(target.id, node.value)
                elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                    key = target.slice
                    if isinstance(node.value, ast.Dict) and not isinstance(key, ast.Constant):
                        mapped.setdefault(target.value.id, node.value)
                    elif isinstance(key, ast.Constant) and isinstance(key.value, str):
                        added.setdefault(target.value.id, []).append(key.value)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "append" \
                and isinstance(node.func.value, ast.Name) and node.args and isinstance(node.args[0], ast.Dict):  # type: ignore[union-attr]
            appended.setdefault(node.func.value.id, node.args[0])  # type: ignore[union-attr]
    return assigned, mapped, appended, added


def shape_of(function: ast.AST, root: str, resolved: dict[str, Shape] | None = None) -> Shape:
    """The nested keys of the dict ``root`` built in ``function``; a value that is a name bound to a dict
    literal (or filled by ``name[k] = {...}`` / ``name.append({...})``) is followed; ``resolved`` gives
    the shapes of names (and of keys added by ``root["key"] = ...``) whose values come from other functions."""
    assigned, mapped, appended, added = dict_shapes(function)
    resolved = resolved or {}

    def value_shape(value: ast.expr | None) -> Shape | None:
        if isinstance(value, ast.Dict):
            return literal(value)
        if isinstance(value, ast.Name):
            if value.id in resolved:
                return resolved[value.id]
            if value.id in mapped:
                return {"*": literal(mapped[value.id])}
            if value.id in appended:
                return {"[]": literal(appended[value.id])}
            if value.id in assigned:
                return literal(assigned[value.id], value.id)
        return None

    def literal(node: ast.Dict, name: str | None = None) -> Shape:
        shape = {key.value: value_shape(value) for key, value in zip(node.keys, node.values, strict=True)
                 if isinstance(key, ast.Constant) and isinstance(key.value, str)}
        for key in added.get(name or "", []):
            shape.setdefault(key, resolved.get(key))
        return shape

    return literal(assigned[root], root)


def returned_shape(function: ast.AST, item_names: dict[str, str] | None = None) -> Shape:
    """The keys of the dict literal ``function`` returns last. A returned mapping filled by
    ``name[k] = {...}`` gets its items' keys, with the keys added to them through the loop variable
    ``item_names[name]`` (``for _, tool_stats in by_tool.items(): tool_stats["avg"] = ...``)."""
    returns = [n.value for n in ast.walk(function) if isinstance(n, ast.Return) and isinstance(n.value, ast.Dict)]
    _, mapped, _, added = dict_shapes(function)
    shape: Shape = {key.value: None for key in returns[-1].keys if isinstance(key, ast.Constant)}
    for name, node in mapped.items():
        if name in shape:
            item: Shape = {k.value: None for k in node.keys if isinstance(k, ast.Constant)}
            for key in added.get((item_names or {}).get(name, ""), []):
                item.setdefault(key, None)
            shape[name] = {"*": item}
    return shape
