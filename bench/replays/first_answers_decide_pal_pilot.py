"""The dev-seed pilot of issue 36's second candidate: four single calls per problem, recorded as they came.

Per problem (reasoning-gym seed 2000, development problems): the bare greedy call (T 0), the bare question
at T 0.4, and the question with ``PROGRAM_REQUEST`` at T 0 and T 0.4. Programs are run later, by
``first_answers_decide_pilot_s2000``, with the code the team runs. Run from the repository root::

    python -m bench.replays.first_answers_decide_pal_pilot \
        rg:gsm_symbolic,rg:letter_counting,rg:syllogism,rg:family_relationships 6 OUT.jsonl [SEED [METHOD,...]]

SEED defaults to 2000; METHOD names a subset of ``METHODS`` (the third candidate's pilot ran ``pal04`` alone
on seed 3000, whose other calls the counted run of the second candidate had recorded; the fourth
candidate's pilot ran ``pal07`` on seed 4000's reasoning problems).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bench.quality import Sampler, round_robin
from bench.tasks import select_tasks
from massgen.actors.agent.prompts import PROGRAM_REQUEST
from massgen.configs.defaults import default_team

# A variant of the program request (a pilot of the next candidate, development data only): the result is to be
# computed from the question's facts, a yes/no by checking every case the facts allow, never typed in.
PROGRAM_REQUEST_CASES = ("Do not work it out in words. Write a short Python program that computes the answer from the "
                         "facts the question gives and prints only the final answer. Do not type the answer, or "
                         "whether a fact holds, into the program: compute it. For a yes/no question, let the program "
                         "check every case the facts allow (for example with itertools.product) and print Yes only "
                         "if the claim holds in every one of them. Reply with the program alone, in one ```python "
                         "code block.")
METHODS: tuple[tuple[str, float, bool | str], ...] = (
    ("greedy", 0.0, False), ("cot04", 0.4, False), ("pal0", 0.0, True), ("pal04", 0.4, True), ("pal07", 0.7, True),
    ("cases0", 0.0, PROGRAM_REQUEST_CASES),
)


def main() -> None:
    families, n, out = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    seed = sys.argv[4] if len(sys.argv) > 4 else "2000"
    chosen = sys.argv[5].split(",") if len(sys.argv) > 5 else [name for name, _, _ in METHODS]
    _, tasks = select_tasks(families, n, seed)
    sampler = Sampler(default_team({}))
    done = set()
    if out.exists():
        done = {(row["task"], row["method"]) for row in map(json.loads, out.read_text().splitlines())}
    with out.open("a") as rows:
        for task in round_robin(tasks):
            for method, temperature, program in METHODS:
                if (task.task_id, method) in done or method not in chosen:
                    continue
                request = program if isinstance(program, str) else PROGRAM_REQUEST
                question = f"{task.question}\n\n{request}" if program else task.question
                outcome = sampler.sample(question, temperature)
                rows.write(json.dumps({"task": task.task_id, "family": task.family, "method": method,
                                       "text": outcome["text"], "seconds": outcome["seconds"],
                                       "out_tokens": outcome["output_tokens"], "expected": str(task.expected)}) + "\n")
                rows.flush()
    sampler.close()


if __name__ == "__main__":
    main()
