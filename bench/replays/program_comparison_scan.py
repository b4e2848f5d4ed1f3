"""Which recorded program first answers the programs' comparison reading (``turn.printed_value`` with the code)
reads otherwise: every first answer of a program agent in the recorded runs of the two-programs layout whose
program printed ``True`` or ``False``, and what its ``Answer:`` becomes (``bench/results/probes-preregistered.md``).

Run from the repository root: ``python -m bench.replays.program_comparison_scan``.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

from massgen.actors.agent.turn import printed_value
from massgen.actors.coordination.code_checks import program_code

RESULTS = Path(__file__).resolve().parent.parent / "results"
RUNS = ("quality-two-valued-s5000", "quality-computed-s4000", "quality-decide-s3000",
        "quality-two-valued-arithmetic-s9", "quality-two-valued-arithmetic-s10", "quality-two-valued-chain_sum-s80-100",
        "quality-no-result-asked-arithmetic-s0-2-3", "quality-no-result-asked-chain_sum-s0-20-60")
PRINTED = "\nThe program printed:\n"


def main() -> None:
    questions: dict[str, str] = {}  # not recorded in these rows: "" reads no question as yes/no, so the scan
    # counts more changes than the team would make, never fewer
    counts: collections.Counter[str] = collections.Counter()
    for run in RUNS:
        rows = [json.loads(line) for line in (RESULTS / run / "answers.jsonl").read_text().splitlines()]
        for row in rows:
            if row["method"] == "greedy":
                questions[row["task_id"]] = row.get("question", "")
        for row in rows:
            if row["method"] != "team":
                continue
            for first in row["first_answers"]:
                text = first["text"]
                if PRINTED not in text:
                    continue
                counts["program answers"] += 1
                value = text.rsplit("\nAnswer: ", 1)[-1].strip()
                if value not in ("True", "False"):
                    continue
                counts["printed a truth value"] += 1
                now = printed_value(value, questions.get(row["task_id"], ""), program_code(text))
                if now != value:
                    counts["read otherwise"] += 1
                    print(f"  {run} {row['task_id']} {first['agent']}: {value} -> {now}")
    print(dict(counts))


if __name__ == "__main__":
    main()
