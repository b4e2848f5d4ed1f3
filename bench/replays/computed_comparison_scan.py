"""Every calculator call in the check turns of ``bench.quality``/``bench.revote`` runs, and which of them the
comparison rule reads otherwise (``check_tools.comparison_meaning``): where none, the runs before and after the
rule are the same call for call (``bench/results/computed-comparison-preregistered.md``).

The traces are the runs' own (``OUT/runs/TASK/.../trace.jsonl``; kept beside a run, not committed).
Run from the repository root: ``python -m bench.replays.computed_comparison_scan OUT [OUT ...]``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from massgen.actors.agent.check_tools import CALCULATE, comparison_meaning


def main(folders: list[str]) -> None:
    for folder in folders:
        calls = read_otherwise = 0
        for trace in sorted(Path(folder).glob("runs/**/trace.jsonl")):
            for line in trace.read_text().splitlines():
                record = json.loads(line)
                if record["type"] != "ToolCallResult" or record["payload"]["name"] != CALCULATE:
                    continue
                calls += 1
                meaning = comparison_meaning(record["payload"]["content"])
                if meaning:
                    read_otherwise += 1
                    print(f"  {trace.relative_to(folder).parts[0]}: {record['payload']['content']!r} -> {meaning!r}")
        print(f"{folder}: {calls} calculator calls, {read_otherwise} read as a comparison of two numbers")


if __name__ == "__main__":
    main(sys.argv[1:])
