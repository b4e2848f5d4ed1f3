"""Validate upstream MassGen's example configs with our loader and tally the first errors.

Usage: python scripts/upstream_configs.py [CONFIGS_DIR]   (default: /tmp/upstream/x/massgen/configs)
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

import yaml

from massgen.configs.loader import ConfigError, validate_data


def main(root: Path) -> int:
    first: collections.Counter[str] = collections.Counter()
    ok = 0
    files = sorted(root.rglob("*.yaml"))
    for path in files:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        try:
            validate_data(data, str(path.relative_to(root)), env={})
            ok += 1
        except ConfigError as exc:
            lines = str(exc).splitlines()
            line = lines[1].strip() if len(lines) > 1 else lines[0]
            first[line.split(": ", 1)[0] + ": " + line.split(": ", 1)[-1][:90]] += 1
            print(f"REFUSED {path.relative_to(root)}: {' | '.join(part.strip() for part in lines[1:]) or lines[0]}")
    print(f"\n{ok} of {len(files)} validate")
    for line, count in first.most_common():
        print(f"{count:4} {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/upstream/x/massgen/configs")))
