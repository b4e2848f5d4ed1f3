"""Dev-seed pilot (seed 2000, not the held-back 1000): greedy CoT, CoT T0.4, PAL T0, PAL T0.4 per problem."""
import asyncio, json, sys, time, re
from pathlib import Path
from bench.tasks import select_tasks, code_of
from bench.quality import Sampler, SAMPLE_MAX_TOKENS

from massgen.files import confined

PAL = ("\n\nDo not work it out in words. Write a short Python program that computes the answer and prints only "
       "the final answer. Reply with the program alone, in one ```python code block.")

def main():
    fams = sys.argv[1]; n = int(sys.argv[2]); out = Path(sys.argv[3])
    from bench.quality import default_team as dt
    config = dt({})
    seeds, tasks = select_tasks(fams, n, "2000")
    from bench.quality import round_robin
    tasks = round_robin(tasks)
    s = Sampler(config)
    done = set()
    if out.exists():
        done = {(json.loads(l)["task"], json.loads(l)["method"]) for l in out.read_text().splitlines() if l.strip()}
    with out.open("a") as f:
        for t in tasks:
            for method, temp, q in (("greedy", 0.0, t.question), ("cot04", 0.4, t.question),
                                    ("pal0", 0.0, t.question + PAL), ("pal04", 0.4, t.question + PAL)):
                if (t.task_id, method) in done:
                    continue
                o = s.sample(q, temp)
                row = {"task": t.task_id, "family": t.family, "method": method, "text": o["text"], "seconds": o["seconds"],
                       "out_tokens": o["output_tokens"], "expected": str(t.expected)}
                if method.startswith("pal"):
                    code = code_of(o["text"])
                    run = s.loop.run_until_complete(confined.run_python(code))
                    row["run_ok"] = run.ok; row["stdout"] = run.stdout[-500:]; row["stderr"] = run.stderr[-300:]
                    lines = [l for l in run.stdout.strip().splitlines() if l.strip()]
                    row["pal_answer"] = lines[-1].strip() if run.ok and lines else None
                    row["correct"] = bool(row["pal_answer"]) and t.grade("Answer: " + row["pal_answer"]).correct
                else:
                    row["correct"] = t.grade(o["text"]).correct
                f.write(json.dumps(row) + "\n"); f.flush()
                print(t.task_id, method, row["correct"], o["seconds"], flush=True)
    s.close()

main()
