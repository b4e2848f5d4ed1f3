#!/usr/bin/env bash
# mypy --strict on the packages as they are installed (massgen.actors, massgen.messages, ...).
# The packages live in top-level folders (actors/, messages/ ...) mapped to massgen.* by pyproject's
# package-dir, which mypy cannot follow: run on the folders, every `massgen.*` import would be Any and
# nothing across modules (the protocol unions included) would be checked. So check a massgen/ tree of
# links instead. Usage: scripts/typecheck.sh [PACKAGE ...]   (default: actors messages)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tree="$(mktemp -d)"
trap 'rm -rf "$tree"' EXIT
mkdir "$tree/massgen"
for f in "$root"/massgen/*.py; do ln -s "$f" "$tree/massgen/"; done
for d in actors backends messages cli configs logs files; do ln -s "$root/$d" "$tree/massgen/$d"; done
targets=()
for package in "${@:-actors messages}"; do
  for p in $package; do targets+=("massgen/$p"); done
done
cd "$tree"
"$root/.venv/bin/mypy" --strict --config-file "$root/pyproject.toml" "${targets[@]}"
