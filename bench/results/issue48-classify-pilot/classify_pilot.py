"""Pilot (issue 48): does the model tell which questions need computing? One short call a question. See PLAN.md."""
import json, sys, time, logging
from pathlib import Path
from bench.quality import Sampler, round_robin
from bench.tasks import select_tasks
from massgen.configs.defaults import default_team
from massgen.messages.stream import ChatMessage, ModelRequest, StreamError, TextDelta, Usage

ASK = ("Do not answer this question. Would a short Python program answer it more reliably than recalling or reasoning "
       "in words, because it needs counting, arithmetic, dates or another computation? Reply with one word: yes or no.")
out = Path(sys.argv[1]); sets = sys.argv[2].split(",")
out.mkdir(parents=True, exist_ok=True)
logging.getLogger("pykka").setLevel(logging.CRITICAL)
rows_path = out / "classified.jsonl"
done = {json.loads(l)["task_id"] for l in rows_path.read_text().splitlines() if l.strip()} if rows_path.exists() else set()
sampler = Sampler(default_team({}))

async def call(question: str) -> dict:
    start = time.perf_counter(); text = []; error = None
    request = ModelRequest(messages=(ChatMessage(role="user", content=f"{question}\n\n{ASK}"),), temperature=0.0, max_tokens=4)
    async for event in sampler.backend.stream(request):
        if isinstance(event, TextDelta): text.append(event.text)
        elif isinstance(event, StreamError): error = event.message
    reply = "".join(text).strip()
    word = reply.lower().lstrip("*\"' ").split()[0].strip(".,!*\"'") if reply.split() else ""
    return {"reply": reply, "compute": word == "yes", "read": word in ("yes", "no"), "seconds": round(time.perf_counter() - start, 2), "error": error}

with rows_path.open("a") as f:
    for name in sets:
        for task in round_robin(select_tasks(name, 127 if name == "plain" else 126, "0")[1]):
            if task.task_id in done: continue
            r = sampler.loop.run_until_complete(call(task.question))
            r.update(task_id=task.task_id, family=task.family, set=name)
            f.write(json.dumps(r, ensure_ascii=False) + "\n"); f.flush()
            print(task.task_id, r["compute"], r["read"], r["reply"][:20], flush=True)
sampler.close()
