"""Upstream MassGen 0.1.97's example names, as its docs and scripts use them, resolved here.

``upstream_examples.txt`` lists the 276 example configs upstream's wheel ships (names only).
A name of ours resolves as it is. An upstream name its docs use for a team we ship under
another name resolves to ours (``ALIASES``: ``basic_multi`` is upstream's LiteLLM example of
a default three-agent team). Any other upstream name is an error that says so and points to
the nearest examples of ours (the same folder, else the same kind), and to ``--config FILE``
for upstream's own file.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

UPSTREAM_LIST = Path(__file__).resolve().parent / "upstream_examples.txt"

ALIASES = {
    "basic_multi": "basic/multi/three_agents_default",
    "basic/multi": "basic/multi/three_agents_default",
    "basic_single": "basic/single/single_gpt5mini",
    "basic/single": "basic/single/single_gpt5mini",
}


@cache
def upstream_names() -> frozenset[str]:
    try:
        return frozenset(line.strip() for line in UPSTREAM_LIST.read_text(encoding="utf-8").splitlines()
                         if line.strip())
    except OSError:
        return frozenset()


def alias(name: str) -> str | None:
    """Our example for an upstream name its docs use, when ours has another name."""
    return ALIASES.get(name)


def _upstream_match(name: str) -> str | None:
    names = upstream_names()
    if name in names:
        return name
    by_base = [n for n in names if n.rsplit("/", 1)[-1] == name]
    return by_base[0] if len(by_base) == 1 else None


def pointer(name: str, ours: list[str]) -> str | None:
    """For an upstream example we do not ship: what to use instead; None for a name upstream never had."""
    upstream = _upstream_match(name)
    if upstream is None:
        return None
    folder = upstream.rsplit("/", 1)[0]
    nearest = [n for n in ours if n.rsplit("/", 1)[0] == folder]
    if not nearest:
        kind = folder.split("/", 1)[0]
        nearest = [n for n in ours if n.split("/", 1)[0] == kind] or ["basic/multi/three_agents_default"]
    listed = ", ".join(f"@examples/{n}" for n in nearest[:3])
    return (f"@examples/{name} is an example of upstream MassGen 0.1.97 ({upstream}.yaml) that this version "
            f"does not ship; the nearest here: {listed}; or run upstream's file itself: --config "
            f"path/to/{upstream.rsplit('/', 1)[-1]}.yaml")
