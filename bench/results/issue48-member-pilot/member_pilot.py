"""Pilot (issue 48): a program member that writes a program only where computing is needed. See PLAN.md.

Run from the repository root: PYTHONPATH=. python bench/results/issue48-member-pilot/member_pilot.py OUT_DIR [N]
"""

import json
import logging
import re
import sys
import time
from pathlib import Path
from typing import Any

from bench.quality import Sampler, load_rows, round_robin
from bench.tasks import select_tasks
from massgen.actors.agent.turn import program_answer
from massgen.configs.defaults import default_team
from massgen.files import confined

REQUEST = ("If answering needs counting, arithmetic, dates or another computation, do not work it out in words: "
           "write a short Python program that computes the answer and prints only the final answer, and reply with "
           "the program alone, in one ```python code block. If it needs no computation, answer in words in one or "
           "two sentences, with no code.")
FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.S)
out = Path(sys.argv[1])
n = int(sys.argv[2]) if len(sys.argv) > 2 else 126
out.mkdir(parents=True, exist_ok=True)
logging.getLogger("pykka").setLevel(logging.CRITICAL)
_, tasks = select_tasks("plain4", 126, "0")
tasks = round_robin(tasks)[:n]
rows_path = out / "answers.jsonl"
done = {row["task_id"] for row in load_rows(rows_path)}
sampler = Sampler(default_team({}))


def call(question: str) -> dict[str, Any]:
    start = time.perf_counter()
    sampled = sampler.sample(f"{question}\n\n{REQUEST}", 0.0, max_tokens=1024)
    reply = sampled["text"].strip()
    blocks = FENCE.findall(reply)
    if blocks:
        run = sampler.loop.run_until_complete(confined.run_python(blocks[0]))
        answer, program = program_answer(blocks[0], run, question), True
    else:
        answer, program = reply, False
    return {"reply": reply, "text": answer, "program": program, "seconds": round(time.perf_counter() - start, 2),
            "output_tokens": sampled["output_tokens"], "error": sampled["error"]}


with rows_path.open("a") as rows:
    for i, task in enumerate(tasks):
        if task.task_id in done:
            continue
        row = call(task.question)
        row.update(task_id=task.task_id, family=task.family, correct=task.grade(row["text"]).correct)
        rows.write(json.dumps(row, ensure_ascii=False) + "\n")
        rows.flush()
        print(i + 1, task.task_id, row["program"], row["correct"], row["seconds"], flush=True)
sampler.close()
