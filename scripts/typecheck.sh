#!/usr/bin/env bash
# mypy --strict on the packages as they are installed (massgen.actors, massgen.messages, ...).
# The packages live in top-level folders (actors/, messages/ ...) mapped to massgen.* by pyproject's
# package-dir, which mypy cannot follow: run on the folders, every `massgen.*` import would be Any and
# nothing across modules (the protocol unions included) would be checked. So check a massgen/ tree of
# links instead. (mypy_path and explicit package bases map folders to packages by name only, and an
# editable install maps them by an import hook mypy does not run, so neither avoids the links.)
# Usage: scripts/typecheck.sh [PACKAGE ...]   PACKAGE is a folder (actors, logs ...) or "face" (massgen/*.py).
# Default: the actors and their messages, the errors and result (outcome), the face, and the readers of the trace (logs, cli).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tree="$(mktemp -d)"
trap 'rm -rf "$tree"' EXIT
mkdir "$tree/massgen"
for f in "$root"/massgen/*.py; do ln -s "$f" "$tree/massgen/"; done
for d in actors backends messages outcome cli configs logs files; do ln -s "$root/$d" "$tree/massgen/$d"; done
targets=()
for package in "${@:-actors messages outcome face logs cli}"; do
  for p in $package; do
    if [ "$p" = face ]; then
      for f in "$root"/massgen/*.py; do targets+=("massgen/$(basename "$f")"); done
    else
      targets+=("massgen/$p")
    fi
  done
done
cd "$tree"
"$root/.venv/bin/mypy" --strict --config-file "$root/pyproject.toml" "${targets[@]}"
