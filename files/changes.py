"""What the presenter changed in writable context paths: a file list and a unified diff.

A baseline copy of each writable context path is taken when the run starts (the same
copy-on-write copy as snapshots, in the log directory); when the run ends the tree is
compared with it. Directories that are tooling state (``.git``, caches) are skipped on
both sides, so the diff is what a reviewer wants to read.
"""

from __future__ import annotations

import difflib
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from massgen.files.snapshots import SKIPPED_DIRS, take


@dataclass(frozen=True)
class Change:
    path: str  # absolute path of the file in the context path
    kind: str  # added | modified | deleted


def baseline(context: Path, destination: Path) -> None:
    take(context, destination)


def _files(root: Path) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for top, dirs, names in os.walk(root):  # os.walk does not follow symlinked directories
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in names:
            path = Path(top) / name
            if path.is_file() and not path.is_symlink():
                found[os.path.relpath(path, root)] = path
    return found


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def compare(context: Path, before: Path) -> tuple[list[Change], str]:
    """The changed files of ``context`` against its baseline copy, and their unified diff."""
    old, new = _files(before), _files(context)
    changes: list[Change] = []
    diff: list[str] = []
    for relative in sorted(set(old) | set(new)):
        if relative in old and relative in new and _sha(old[relative]) == _sha(new[relative]):
            continue
        kind = "added" if relative not in old else "deleted" if relative not in new else "modified"
        changes.append(Change(str(context / relative), kind))
        a = _lines(old.get(relative))
        b = _lines(new.get(relative))
        diff.extend(difflib.unified_diff(
            a, b, fromfile="/dev/null" if kind == "added" else f"a/{relative}",
            tofile="/dev/null" if kind == "deleted" else f"b/{relative}",
        ))
    return changes, "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                            for line in diff)


def _lines(path: Path | None) -> list[str]:
    if path is None:
        return []
    try:
        return path.read_text(encoding="utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return [f"(binary file, sha256 {_sha(path)})\n"]
