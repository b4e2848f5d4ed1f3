"""Pilot (issue 48): does the model tell which questions need computing? One short call a question. See PLAN.md.

Run from the repository root: PYTHONPATH=. python bench/results/issue48-classify-pilot/classify_pilot.py OUT_DIR SETS
(SETS: comma-separated, e.g. plain2,plain3,plain4,plain)
"""

import json
import logging
import sys
from pathlib import Path
from typing import Any

from bench.quality import Sampler, load_rows, round_robin
from bench.tasks import select_tasks
from massgen.configs.defaults import default_team

ASK = ("Do not answer this question. Would a short Python program answer it more reliably than recalling or "
       "reasoning in words, because it needs counting, arithmetic, dates or another computation? Reply with one "
       "word: yes or no.")
out = Path(sys.argv[1])
sets = sys.argv[2].split(",")
out.mkdir(parents=True, exist_ok=True)
logging.getLogger("pykka").setLevel(logging.CRITICAL)
rows_path = out / "classified.jsonl"
done = {row["task_id"] for row in load_rows(rows_path)}
sampler = Sampler(default_team({}))


def call(question: str) -> dict[str, Any]:
    sampled = sampler.sample(f"{question}\n\n{ASK}", 0.0, max_tokens=4)
    reply = sampled["text"].strip()
    word = reply.lower().lstrip("*\"' ").split()[0].strip(".,!*\"'") if reply.split() else ""
    return {"reply": reply, "compute": word == "yes", "read": word in ("yes", "no"), "seconds": sampled["seconds"],
            "error": sampled["error"]}


with rows_path.open("a") as rows:
    for name in sets:
        for task in round_robin(select_tasks(name, 127 if name == "plain" else 126, "0")[1]):
            if task.task_id in done:
                continue
            row = call(task.question)
            row.update(task_id=task.task_id, family=task.family, set=name)
            rows.write(json.dumps(row, ensure_ascii=False) + "\n")
            rows.flush()
            print(task.task_id, row["compute"], row["read"], row["reply"][:20], flush=True)
sampler.close()
