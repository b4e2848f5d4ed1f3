"""Pilot (issue 48): the model's probability that a question needs computing, from the first token's logprobs.

Run from the repository root: PYTHONPATH=. python bench/results/issue48-logprob-pilot/logprob_pilot.py OUT_DIR SETS
(SETS: comma-separated, e.g. plain,plain2,plain3,plain4). Needs the default local model (the ``[local]`` extra).
"""

import json
import logging
import math
import sys
from pathlib import Path
from typing import Any

import httpx

from bench.quality import Sampler, round_robin
from bench.tasks import select_tasks
from massgen.configs.defaults import default_team

ASK = ("Do not answer this question. Would a short Python program answer it more reliably than recalling or "
       "reasoning in words, because it needs counting, arithmetic, dates or another computation? Reply with one "
       "word: yes or no.")
out = Path(sys.argv[1])
sets = sys.argv[2].split(",")
out.mkdir(parents=True, exist_ok=True)
logging.getLogger("pykka").setLevel(logging.CRITICAL)
rows_path = out / "scored.jsonl"
sampler = Sampler(default_team({}))  # starts the model's server
url = sampler.backend.server.base_url  # type: ignore[attr-defined]
client = httpx.Client(timeout=120)


def _is(token: str, word: str) -> bool:
    return token.strip().lower().strip("*\"'.") == word


def score(question: str) -> tuple[float, float, float, list[tuple[str, float]]]:
    body = {"messages": [{"role": "user", "content": f"{question}\n\n{ASK}"}], "temperature": 0.0, "max_tokens": 1,
            "logprobs": True, "top_logprobs": 10}
    reply: dict[str, Any] = client.post(f"{url}/chat/completions", json=body).json()
    top = reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
    yes = sum(math.exp(t["logprob"]) for t in top if _is(t["token"], "yes"))
    no = sum(math.exp(t["logprob"]) for t in top if _is(t["token"], "no"))
    return (yes / (yes + no) if yes + no > 0 else 0.5), yes, no, [(t["token"], round(t["logprob"], 3)) for t in top[:4]]


with rows_path.open("w") as rows:
    for name in sets:
        for task in round_robin(select_tasks(name, 127 if name == "plain" else 126, "0")[1]):
            s, p_yes, p_no, top = score(task.question)
            row = {"task_id": task.task_id, "family": task.family, "set": name, "score": s, "p_yes": p_yes,
                   "p_no": p_no, "top": top}
            rows.write(json.dumps(row) + "\n")
            rows.flush()
            print(task.task_id, round(s, 3), top[:2], flush=True)
sampler.close()
