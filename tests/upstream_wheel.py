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
