"""Names used as one part of a file path: any agent id or text, made safe and short.

An agent id is valid config at any length, and ``..`` is a valid id; as a folder name
the first fails with ENAMETOOLONG and the second climbs out of the log directory. A
name that is already a short, plain file name is used as it is, so ordinary logs keep
their familiar paths; any other is cut and given a hash of the whole, so two long ids
that share a prefix still get two folders.
"""

from __future__ import annotations

import hashlib
import re

_PLAIN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
MAX_PART = 100  # well under every file system's 255-byte limit, with room for suffixes


def path_part(name: str) -> str:
    """``name`` as one safe path component: unchanged when short and plain, else cut + hashed."""
    if len(name) <= MAX_PART and _PLAIN.match(name):
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    head = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[: MAX_PART - 13].lstrip(".") or "_"
    return f"{head}-{digest}"
