"""What each probe run decided: every first answer (program or written, computed or not, its end), the decision
and the final answer, read from the runs' traces (``trace.jsonl``, kept in ``bench/results/no-result-asked-probes/``).

Run from the repository root: ``python -m bench.replays.no_result_asked_probes [FOLDER ...]``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent.parent / "results"
HERE = RESULTS / "no-result-asked-probes"


def summarise(folder: Path) -> None:
    for probe in sorted(folder.glob("q*")):
        print(f"=== {(probe / 'question.txt').read_text().strip()}  ({(probe / 'status.txt').read_text().strip()})")
        for line in (probe / "trace.jsonl").read_text().splitlines():
            record = json.loads(line)
            payload = record["payload"]
            if record["type"] == "AnswerAccepted":
                kind = "program" if payload.get("program") else "written"
                kind += ", computed" if payload.get("computed") else ""
                print(f"  {payload['label']} ({kind}): ...{payload['content'][-110:]!r}")
            elif record["type"] in ("FirstAnswersDecided", "UnanimousFirstAnswers", "RecordVote", "RunFinished"):
                shown = {k: v for k, v in payload.items() if k not in ("reason", "usage") or k == "reason"}
                print(f"  {record['type']}: {json.dumps(shown)[:300]}")
        print(f"  final answer: {(probe / 'final.txt').read_text().strip()!r}")


if __name__ == "__main__":
    for name in sys.argv[1:] or ["sixth", "default"]:
        print(f"##### {name}")
        summarise(HERE / name)
