"""Answer quality of a team against its own model, at equal numbers of model calls.

For every task it records independent free-text samples of the config's first model
(one call each, the plain question, no team prompt) and one team run. The report
compares one call, majority vote over the first k samples (k = the team's mean calls
per task, rounded) and the team, with 95 % Wilson intervals, calls, tokens and seconds.
Every answer goes to ``answers.jsonl`` as it comes, so a killed benchmark continues
where it stopped; ``--report`` prints the table from that file alone.

Run: python -m bench.quality [--config X] [--tasks arithmetic] [--n 15] [--seed 0]
Task sets: ``arithmetic`` (``a + b * c + d - e * f``, integers 0..30 from
``random.Random(seed)``) and, with the ``[bench]`` extra, ``rg:basic_arithmetic`` and
``rg:chain_sum`` from reasoning-gym.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import random
import re
import shutil
import sys
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from massgen.configs import TeamConfig, load_config
from massgen.configs.defaults import default_team

PROMPT = ("What is the result of {expr}? Work it out step by step, then give your final answer on the last line"
          " in the form 'Answer: <integer>'.")
SAMPLE_MAX_TOKENS = 1024
_ANSWER = re.compile(r"answer\s*[:\uff1a]?\s*\**\s*(-?\d[\d,]*)", re.IGNORECASE)
_INTEGER = re.compile(r"-?\d[\d,]*")


@dataclass(frozen=True)
class Task:
    task_id: str
    question: str
    expected: int


def arithmetic_tasks(n: int, seed: int) -> list[Task]:
    """The issue's generated problems: six ``randint(0, 30)`` draws per problem, in the order a..f."""
    rng = random.Random(seed)
    tasks = []
    for i in range(n):
        a, b, c, d, e, f = (rng.randint(0, 30) for _ in range(6))
        expr = f"{a} + {b} * {c} + {d} - {e} * {f}"
        tasks.append(Task(f"arith-{seed}-{i}", PROMPT.format(expr=expr), a + b * c + d - e * f))
    return tasks


def reasoning_gym_tasks(name: str, n: int, seed: int) -> list[Task]:
    import reasoning_gym  # the [bench] extra

    data = reasoning_gym.create_dataset(name, size=n, seed=seed)
    tasks = []
    for i, entry in enumerate(data):
        question = (f"{entry['question']}\nWork it out step by step, then give your final answer on the last"
                    " line in the form 'Answer: <integer>'.")
        tasks.append(Task(f"{name}-{seed}-{i}", question, int(float(entry["answer"]))))
    return tasks


def extract(text: str | None) -> int | None:
    """The last ``Answer: N`` in the text, else its last integer."""
    if not text:
        return None
    found = _ANSWER.findall(text) or _INTEGER.findall(text)
    if not found:
        return None
    try:
        return int(found[-1].replace(",", ""))
    except ValueError:
        return None


def wilson(correct: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson score interval of a proportion."""
    if n == 0:
        return 0.0, 0.0
    p = correct / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def majority(values: Iterable[int | None]) -> int | None:
    """The most frequent answer; a tie goes to the one that came first."""
    seen = [v for v in values if v is not None]
    if not seen:
        return None
    counts = Counter(seen)
    best = max(counts.values())
    return next(v for v in seen if counts[v] == best)


# -- running -----------------------------------------------------------------------------------


class Sampler:
    """Independent free-text calls of the config's first model on the bare question.

    One backend on one event loop for the whole benchmark, so a local model server is
    started once and its prompt cache stays warm, as it would for a user's repeated calls.
    """

    def __init__(self, config: TeamConfig, temperature: float) -> None:
        from massgen.backends import BackendContext, create

        self.loop = asyncio.new_event_loop()
        # No fixed seed: with one, every "independent" call on the same prompt is the same call.
        backend = config.agents[0].backend
        if getattr(backend, "seed", None) is not None:
            backend = backend.model_copy(update={"seed": None})
        self.backend = create(backend, BackendContext(agent_id="bench"))
        self.temperature = temperature
        self.loop.run_until_complete(self.backend.start())

    def sample(self, question: str) -> dict[str, Any]:
        return self.loop.run_until_complete(self._sample(question))

    async def _sample(self, question: str) -> dict[str, Any]:
        from massgen.messages.stream import ChatMessage, ModelRequest, StreamError, TextDelta, Usage

        start = time.perf_counter()
        text: list[str] = []
        usage, error = Usage(), None
        request = ModelRequest(messages=(ChatMessage(role="user", content=question),),
                               temperature=self.temperature, max_tokens=SAMPLE_MAX_TOKENS)
        async for event in self.backend.stream(request):
            if isinstance(event, TextDelta):
                text.append(event.text)
            elif isinstance(event, Usage):
                usage = event
            elif isinstance(event, StreamError):
                error = event.message
        return {"text": "".join(text), "calls": 1, "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens, "seconds": round(time.perf_counter() - start, 2),
                "error": error}

    def close(self) -> None:
        self.loop.run_until_complete(self.backend.aclose())
        self.loop.close()


def _team(config: TeamConfig, question: str, log_dir: Path) -> dict[str, Any]:
    import massgen

    start = time.perf_counter()
    shutil.rmtree(log_dir, ignore_errors=True)  # a run killed half-way starts again
    result = massgen.run_sync(question, config=config, log_dir=log_dir)
    usage = result.usage
    return {"text": result.final_answer, "calls": usage["model_calls"], "input_tokens": usage["input_tokens"],
            "output_tokens": usage["output_tokens"], "seconds": round(time.perf_counter() - start, 2),
            "status": result.status}


def load_rows(path: Path) -> list[dict[str, Any]]:
    """Rows of the answers file; a torn last line (a killed run) is ignored."""
    if not path.exists():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


def latest(rows: list[dict[str, Any]]) -> dict[tuple[str, str, int], dict[str, Any]]:
    """The newest row of each (task, method, index): a retried sample replaces the failed one."""
    return {(r["task_id"], r["method"], r["index"]): r for r in rows}


def _drop_torn_tail(path: Path) -> None:
    """A run killed mid-write leaves a line without its newline: cut it, so appends start clean."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        path.write_bytes(data[: data.rfind(b"\n") + 1])


def run(config: TeamConfig, tasks: list[Task], out: Path, samples: int, methods: set[str],
        temperature: float) -> None:
    answers = out / "answers.jsonl"
    _drop_torn_tail(answers)
    # A sample that failed for want of the server (a timeout on a loaded machine) says nothing of the
    # model's quality: it is asked again, and the report reads the newest row of each key.
    done = {key for key, r in latest(load_rows(answers)).items() if not r.get("error")}
    sampler = Sampler(config, temperature) if "sample" in methods else None
    with answers.open("a", encoding="utf-8") as sink:
        for number, task in enumerate(tasks, 1):
            jobs = [("sample", i) for i in range(samples)] if "sample" in methods else []
            jobs += [("team", 0)] if "team" in methods else []
            for method, index in jobs:
                if (task.task_id, method, index) in done:
                    continue
                print(f"[{time.strftime('%H:%M:%S')}] task {number}/{len(tasks)} {method} {index}", flush=True)
                outcome = (sampler.sample(task.question) if sampler is not None and method == "sample"
                           else _team(config, task.question, out / "runs" / task.task_id))
                got = extract(outcome["text"])
                row = {"task_id": task.task_id, "method": method, "index": index, "expected": task.expected,
                       "extracted": got, "correct": got == task.expected, **outcome}
                sink.write(json.dumps(row, ensure_ascii=False) + "\n")
                sink.flush()
                print(f"    -> {got} (expected {task.expected}) in {outcome['seconds']} s, "
                      f"{outcome['calls']} call(s)", flush=True)
    if sampler is not None:
        sampler.close()


# -- reporting ---------------------------------------------------------------------------------


@dataclass
class MethodScore:
    name: str
    correct: int
    n: int
    calls: float
    tokens: float
    seconds: float


def score(rows: list[dict[str, Any]], tasks: list[Task]) -> list[MethodScore]:
    by_task: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for row in latest(rows).values():
        by_task.setdefault(row["task_id"], {}).setdefault(row["method"], []).append(row)
    ids = [t.task_id for t in tasks if "team" in by_task.get(t.task_id, {})]
    expected = {t.task_id: t.expected for t in tasks}
    if not ids:
        ids = [t.task_id for t in tasks if "sample" in by_task.get(t.task_id, {})]
    scores: list[MethodScore] = []

    def samples(task_id: str) -> list[dict[str, Any]]:
        return sorted(by_task[task_id].get("sample", []), key=lambda r: r["index"])

    def add(name: str, picked: list[tuple[int | None, list[dict[str, Any]], str]]) -> None:
        n = len(picked)
        if n == 0:
            return
        correct = sum(1 for got, _, task_id in picked if got is not None and got == expected[task_id])
        calls = sum(sum(r["calls"] for r in used) for _, used, _ in picked) / n
        tokens = sum(sum(r["input_tokens"] + r["output_tokens"] for r in used) for _, used, _ in picked) / n
        seconds = sum(sum(r["seconds"] for r in used) for _, used, _ in picked) / n
        scores.append(MethodScore(name, correct, n, calls, tokens, seconds))

    with_samples = [t for t in ids if samples(t)]
    add("one call", [(samples(t)[0]["extracted"], samples(t)[:1], t) for t in with_samples])
    team_ids = [t for t in ids if by_task[t].get("team")]
    team_calls = (sum(by_task[t]["team"][0]["calls"] for t in team_ids) / len(team_ids)) if team_ids else 0
    most = min((len(samples(t)) for t in with_samples), default=0)
    for k in sorted({3, 5, max(1, min(most, round(team_calls)))}):
        if 1 < k <= most:
            add(f"majority of {k}", [(majority(r["extracted"] for r in samples(t)[:k]), samples(t)[:k], t)
                                     for t in with_samples])
    add("team", [(by_task[t]["team"][0]["extracted"], by_task[t]["team"][:1], t) for t in team_ids])
    return scores


def table(scores: list[MethodScore]) -> str:
    lines = ["| method | correct | accuracy (95 % Wilson) | calls/task | tokens/task | s/task |",
             "|---|---|---|---|---|---|"]
    for s in scores:
        low, high = wilson(s.correct, s.n)
        lines.append(f"| {s.name} | {s.correct}/{s.n} | {s.correct / s.n:.1%} ({low:.0%}-{high:.0%}) | "
                     f"{s.calls:.1f} | {s.tokens:.0f} | {s.seconds:.1f} |")
    return "\n".join(lines)


def plot(scores: list[MethodScore], path: Path) -> bool:
    """Accuracy against calls per task, as a PNG; False when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(6, 4))
    for s in scores:
        low, high = wilson(s.correct, s.n)
        acc = s.correct / s.n
        ax.errorbar([s.calls], [acc], yerr=[[max(0.0, acc - low)], [max(0.0, high - acc)]], fmt="o", capsize=4,
                    label=s.name)
    ax.set_xlabel("model calls per task")
    ax.set_ylabel("accuracy")
    ax.set_ylim(0, 1)
    ax.set_title(f"answer quality (n = {max((s.n for s in scores), default=0)})")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", help="config path or @examples/NAME (default: the local team)")
    parser.add_argument("--tasks", default="arithmetic", help="arithmetic, rg:basic_arithmetic or rg:chain_sum")
    parser.add_argument("--n", type=int, default=15)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--samples", type=int, default=7, help="independent single calls per task")
    parser.add_argument("--methods", default="sample,team", help="which to run: sample, team or both")
    parser.add_argument("--temperature", type=float, default=0.7, help="of the single calls")
    parser.add_argument("--out", type=Path, help="result folder (default bench/results/quality-TASKS-nN-sSEED)")
    parser.add_argument("--report", action="store_true", help="only print the table from the answers file")
    args = parser.parse_args(argv)
    logging.getLogger("pykka").setLevel(logging.CRITICAL)
    if args.tasks == "arithmetic":
        tasks = arithmetic_tasks(args.n, args.seed)
    elif args.tasks.startswith("rg:"):
        try:
            tasks = reasoning_gym_tasks(args.tasks[3:], args.n, args.seed)
        except ImportError:
            sys.exit("--tasks rg:...: reasoning-gym is not installed (pip install -e '.[bench]')")
    else:
        sys.exit(f"--tasks: unknown task set {args.tasks!r} (arithmetic, rg:basic_arithmetic, rg:chain_sum)")
    tag = args.tasks.replace(":", "_")
    out = args.out or Path("bench/results") / f"quality-{tag}-n{args.n}-s{args.seed}"
    out.mkdir(parents=True, exist_ok=True)
    if not args.report:
        config: TeamConfig = load_config(args.config)[0] if args.config else default_team({})
        methods = {m.strip() for m in args.methods.split(",") if m.strip()}
        run(config, tasks, out, args.samples, methods, args.temperature)
    scores = score(load_rows(out / "answers.jsonl"), tasks)
    report = table(scores)
    print(report)
    (out / "table.md").write_text(report + "\n", encoding="utf-8")
    if plot(scores, out / "accuracy_vs_calls.png"):
        print(f"plot: {out / 'accuracy_vs_calls.png'}")
    print(f"answers: {out / 'answers.jsonl'}")


if __name__ == "__main__":
    main()
