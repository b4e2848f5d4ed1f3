#!/usr/bin/env bash
# Installs the agent CLIs that the slow tests drive for real, into tests/.node (git-ignored).
# Idempotent: does nothing when the pinned version is already there. CI calls it before pytest;
# tests/test_claude_code.py calls it too when the CLI is missing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="$ROOT/tests/.node"
VERSION="${CLAUDE_CODE_VERSION:-2.1.332}"
CLAUDE="$PREFIX/node_modules/.bin/claude"

if [ -x "$CLAUDE" ] && "$CLAUDE" --version 2>/dev/null | grep -q "^$VERSION "; then
    echo "claude $VERSION already installed in tests/.node"
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "npm not found: cannot install @anthropic-ai/claude-code (the real-CLI tests will skip)" >&2
    exit 1
fi
# The package's postinstall only links its platform binary (an optional dependency) into place;
# it must run, or bin/claude stays a stub that says the native binary is missing.
npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error "@anthropic-ai/claude-code@$VERSION"
"$CLAUDE" --version
