"""Code answers checked by running them against the task's own examples.

Why: code answers never agree as text (two correct functions are written differently), so a
team could only vote on them by rereading, and a failing answer could win. Running each answer
on the task's examples gives evidence no rereading does: an answer that does not parse or fails
an example cannot beat one that passes, and two answers with the same outputs on the same
inputs agree, however they are written (CodeT's dual execution agreement, Chen et al. 2022).

A task is a code task when it shows calls of a function with their expected results: doctest
lines (``>>> f(x)`` and the expected output on the next line), ``f(x) == y`` lines in a
docstring, or ``assert f(x) == y`` lines. An answer's code is its last fenced Python block, else
its whole text when that parses as Python. The answer runs confined (``files/confined.py``) with the
task's calls, each under its own time limit, and reports what each returned (what the code prints is
kept out of it); whether that is what the task expects is judged here, outside, where the checked
code cannot reach the verdict.

Pure text functions here (``task_examples``, ``answer_code``, ``harness``, ``outcome``) and one
coroutine, ``check_answer``, which an agent's turn worker awaits (never the supervisor or the
judge: a run takes a fraction of a second to seconds).
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import json
import math
import re
import secrets
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from massgen.actors.coordination.parsing import literal, parse_expression, parse_module
from massgen.files import confined
from massgen.messages import AnswerView, CodeCheck, ExampleRun

__all__ = ["LONGEST_CHECK_SECONDS", "CodeTask", "ProgramRunner", "Ranked", "answer_code", "check_answer", "harness",
           "outcome", "passes", "program_code", "rank_answers", "same", "task_examples", "written_tests"]

MAX_EXAMPLES = 20
MAX_PROBES = 24
MAX_SHOWN = 200  # characters of a call, an expected value or a result kept in the trace
PER_CALL_SECONDS = 3
# How a check runs one program (``confined.run_python``, or a caller's wrapper that traces each run as work).
ProgramRunner = Callable[[str, confined.Limits], Awaitable[confined.ProgramRun]]


def _budget(task: CodeTask) -> float:
    """The wall clock one harness run may take: each call's limit, the definition's, and a margin."""
    return PER_CALL_SECONDS * (len(task.examples) + 1) + len(task.probes) + 5


# The longest one check run may take (the task's examples and the answers' written tests, at most
# MAX_EXAMPLES each, and the probes): while one runs, the agent is at work, not idle.
LONGEST_CHECK_SECONDS = PER_CALL_SECONDS * (2 * MAX_EXAMPLES + 1) + MAX_PROBES + 5

_FENCE = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
_DOCTEST = re.compile(r"^\s*>>>\s?(.*)$")
_ASSERT = re.compile(r"^\s*assert\s+(.+?)\s*==\s*(.+?)\s*(?:,\s*['\"].*)?$")
# "f(x) == y", "f(x) ==> y", "* f(x) => y", "f(x) ➞ y", "f(x) -> y", "f(x) should return y." (HumanEval's forms)
_EQUALS = re.compile(r"^\s*(?:\"\"\"|'''|[*-]\s)?\s*([A-Za-z_]\w*\(.*\))\s*"
                     r"(?:==>|==|=>|➞|->|\bshould\s+return\b|\breturns\b)\s*(.+?)\s*$", re.IGNORECASE)
_DEF = re.compile(r"^\s*def\s+([A-Za-z_]\w*)\s*\(", re.MULTILINE)
# The task's own top-level imports ("from typing import List"): an answer that writes only the function
# uses the names the task's signature uses, as the task's own tests would run it after the prompt.
_IMPORT = re.compile(r"^(?:from\s+[\w.]+\s+import\s+[\w ,*()]+|import\s+[\w., ]+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class CodeTask:
    """The calls a task shows and what each should give (both as the task wrote them), and its imports."""

    examples: tuple[tuple[str, str], ...]
    imports: str = ""
    # Calls made from the examples' own arguments, changed (``probes``): no expected value, they only tell
    # apart answers that pass the examples but behave differently elsewhere.
    probes: tuple[str, ...] = ()
    functions: tuple[str, ...] = ()  # the functions the task defines (its examples call them)


def _expression(text: str) -> bool:
    try:
        parse_expression(text)
    except (SyntaxError, ValueError):
        return False
    return True


def _calls(call: str, names: set[str]) -> bool:
    """Whether ``call`` calls one of the task's functions, naming nothing else but builtins
    (``is_happy(a) => False`` forgot its quotes: no example)."""
    try:
        tree = parse_expression(call)
    except (SyntaxError, ValueError):
        return False
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    if names and not used <= names | set(dir(builtins)):
        return False
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (node.func.id in names or not names)
               for node in ast.walk(tree))


def _value(text: str) -> str | None:
    """An expected value as written: "[5]", "True.", "19 - 5 - 6 = 8" (its last part); None when none parses."""
    text = text.strip().rstrip(".").strip()
    for candidate in (text, text.rsplit("=", 1)[-1].strip()):
        if candidate and _expression(candidate):
            return candidate
    return None


def task_examples(task: str) -> CodeTask | None:
    """The examples of a Python function the task asks for, or None when it shows none."""
    names = set(_DEF.findall(task))
    found: list[tuple[str, str]] = []
    lines = task.splitlines()
    for index, line in enumerate(lines):
        if (doctest := _DOCTEST.match(line)) is not None:
            call = doctest.group(1).strip()
            following = []  # the expected output, which may run over lines ("[1,\n 2]")
            for after in lines[index + 1:index + 7]:
                if not after.strip() or after.strip().startswith(">>>") or after.strip() in ('"""', "'''"):
                    break
                following.append(after.strip())
            expected = next((" ".join(following[:n]) for n in range(1, len(following) + 1)
                             if _expression(" ".join(following[:n]))), following[0] if following else "")
            if expected and _calls(call, names):
                found.append((call, expected))
            continue
        match = _ASSERT.match(line) or _EQUALS.match(line)
        if match is not None:
            call, value = match.group(1).strip(), _value(match.group(2))
            if value is not None and _calls(call, names):
                found.append((call, value))
    unique = tuple(dict.fromkeys(found))[:MAX_EXAMPLES]
    imports = "".join(f"{line.strip()}\n" for line in dict.fromkeys(_IMPORT.findall(task)) if _parses(line))
    return CodeTask(unique, imports, probes(call for call, _ in unique), tuple(sorted(names))) if unique else None


def _changed(value: object) -> list[object]:
    """Nearby values of an example's argument: the edges a function's behaviour often differs on."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, value - 1, 0, -value]
    if isinstance(value, float):
        return [value * 2, -value, 0.0]
    if isinstance(value, str):
        return [value[::-1], value.upper(), "", value + value[:1]]
    if isinstance(value, list):
        return [value[::-1], value[:-1], [], [*value, *value[:1]]]
    if isinstance(value, tuple):
        return [value[::-1], value[:-1], (), (*value, *value[:1])]
    return []


def probes(calls: Iterable[str], limit: int = MAX_PROBES) -> tuple[str, ...]:
    """Calls like the examples', one literal argument changed at a time; at most ``limit``, in a fixed order."""
    made: dict[str, None] = {}
    seen = set(calls := list(calls))
    for call in calls:
        tree = parse_expression(call)
        if not isinstance(tree.body, ast.Call):
            continue
        for index, argument in enumerate(tree.body.args):
            try:
                value = literal(argument)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
            for changed in _changed(value):
                args = list(tree.body.args)
                args[index] = parse_expression(repr(changed)).body
                text = ast.unparse(ast.Call(func=tree.body.func, args=args, keywords=tree.body.keywords))
                if text not in seen:
                    made[text] = None
    return tuple(made)[:limit]


def _parses(code: str) -> bool:
    try:
        parse_module(code)
    except (SyntaxError, ValueError):
        return False
    return True


def program_code(reply: str) -> str:
    """The program a reply asked for one holds: its first fenced Python block (a later block is mostly the
    output the model expects, which is no program), else its text when that parses; "" when neither."""
    blocks = _FENCE.findall(reply)
    return str(blocks[0]) if blocks else answer_code(reply) or ""


def answer_code(answer: str) -> str | None:
    """The code of an answer: its last fenced Python block, else its text when that parses; else None."""
    blocks = _FENCE.findall(answer)
    if blocks:
        return str(blocks[-1])
    try:
        parse_module(answer)
    except (SyntaxError, ValueError):
        return None
    return answer


# Runs in the sandbox: the answer's code, then each call, each under its own time limit, with what the code
# prints kept out of the report. The harness sees the calls only, never what they should give: the verdict is
# computed outside (``outcome``), where the checked code cannot reach it. (Inside, it could rewrite anything
# of the harness's: its globals, its comparison, its mark; the worst it can do now is report values it did not
# return, which is what a function that returns them would do.) The guest has no signals, so a call's limit is
# a trace function that looks at the clock every few hundred lines; code that removes it meets the run's own
# deadline instead.
_HARNESS = r"""
import contextlib, io, json, sys, time
SOURCE = {source}
IMPORTS = {imports}
CALLS = {calls}
MARK = {mark}
def cap(text, size):
    return text if len(text) <= size else text[:size] + "..."
class Late(Exception):
    pass
limit = [0.0, 0.0]
def watch(frame, event, arg):
    limit[1] += 1
    if limit[1] % 256 == 0 and time.monotonic() > limit[0]:
        raise Late("took more than the limit")
    return watch
def timed(seconds, action):
    limit[0], limit[1] = time.monotonic() + seconds, 0
    sys.settrace(watch)
    try:
        return action()
    finally:
        sys.settrace(None)
report = {{"parsed": True, "error": "", "results": []}}
sink = io.StringIO()
try:
    code = compile(SOURCE, "answer.py", "exec")
except (SyntaxError, ValueError) as exc:
    report["parsed"] = False
    report["error"] = "does not parse: " + cap(str(exc), {shown})
    code = None
space = {{"__name__": "answer"}}
def define():
    with contextlib.redirect_stdout(sink):
        try:
            exec(IMPORTS, space)
        except BaseException:
            pass  # the task's imports are a courtesy: one the sandbox lacks is the answer's to need
        exec(code, space)
if code is not None:
    try:
        timed({per_call}, define)
    except BaseException as exc:
        report["error"] = "raised " + type(exc).__name__ + " when defined: " + cap(str(exc), {shown})
if code is not None and not report["error"]:
    for call, seconds in CALLS:
        def one():
            with contextlib.redirect_stdout(sink):
                return eval(call, space)
        try:
            got = timed(seconds, one)
            entry = [cap(repr(got), {kept}), cap(str(got), {kept}), ""]
        except BaseException as exc:
            entry = ["", "", "raised " + type(exc).__name__]
        report["results"].append(entry)
print(MARK + json.dumps(report), flush=True)
"""
KEPT = 64 * 1024  # characters of a returned value's repr the verdict compares (and MAX_SHOWN of it is shown)


def harness(code: str, task: CodeTask, mark: str) -> str:
    """The program that runs ``code`` on the task's calls (examples, then probes) and prints one marked JSON
    report of what each returned; it holds no expected value."""
    calls = [[c, PER_CALL_SECONDS] for c, _ in task.examples] + [[c, 1] for c in task.probes]
    return _HARNESS.format(source=repr(code), imports=repr(task.imports), calls=repr(calls), mark=repr(mark),
                           shown=MAX_SHOWN, per_call=PER_CALL_SECONDS, kept=KEPT)


class _NotLiteral:
    """A value written in a way ``ast.literal_eval`` cannot read: compared as text."""


def _value_of(text: str) -> object:
    try:
        return literal(text)
    except Exception:  # ValueError, SyntaxError, MemoryError, RecursionError: compared as text instead
        return _NotLiteral


def same(got: object, expected: object) -> bool:
    """Equal as a test means it: floats within a relative 1e-6, lists and tuples element by element."""
    if isinstance(got, float) and isinstance(expected, int | float) and not isinstance(expected, bool):
        return math.isclose(got, expected, rel_tol=1e-6, abs_tol=1e-9)
    if isinstance(got, list | tuple) and isinstance(expected, list | tuple) and len(got) == len(expected) \
            and type(got) is type(expected):
        return all(same(g, e) for g, e in zip(got, expected, strict=True))
    try:
        return bool(got == expected)
    except Exception:
        return False


def passes(got_repr: str, got_str: str, expected: str) -> bool:
    """The verdict on one call, computed outside the sandbox from what the call returned (its ``repr``)."""
    got, want = _value_of(got_repr), _value_of(expected)
    if got is not _NotLiteral and want is not _NotLiteral:
        return same(got, want)
    return got_repr == expected or got_str == expected or got_str.lower() == expected.lower() in ("true", "false")


def _digest(examples: tuple[ExampleRun, ...]) -> str:
    outputs = json.dumps([[e.call, e.got] for e in examples], ensure_ascii=False)
    return "code behaviour " + hashlib.sha256(outputs.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def _short(text: str) -> str:
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "..."


def outcome(run: confined.ProgramRun, mark: str, task: CodeTask) -> CodeCheck:
    """The check a harness run reports, judged here against the task's expected values; a run that ended
    without its report failed every example."""
    line = next((ln for ln in reversed(run.stdout.splitlines()) if ln.startswith(mark)), None)
    if line is None:
        why = run.status().strip("[]") if not run.ok else "ended without its report"
        failed = tuple(ExampleRun(call=_short(c), expected=_short(e), got=why, passed=False) for c, e in task.examples)
        return CodeCheck(parsed=True, examples=failed, error=why)
    try:
        report = json.loads(line[len(mark):])
        results = [(str(r), str(t), str(e)) for r, t, e in report["results"]]
        parsed, error = bool(report["parsed"]), str(report["error"])
    except (ValueError, KeyError, TypeError):
        return CodeCheck(parsed=True, error="its report could not be read")
    calls = [(c, e, False) for c, e in task.examples] + [(c, "", True) for c in task.probes]
    if not error and len(results) != len(calls):
        return CodeCheck(parsed=parsed, error="its report does not match the calls it was given")
    examples = []
    for (call, expected, probe), (got_repr, got_str, raised) in zip(calls, results, strict=False):
        # A probe has no expected value: what it returned only tells behaviours apart.
        passed = not raised if probe else not raised and passes(got_repr, got_str, expected)
        examples.append(ExampleRun(call=_short(call), expected=_short(expected), got=_short(raised or got_repr),
                                   passed=passed, probe=probe))
    found = tuple(examples)
    return CodeCheck(parsed=parsed, examples=found, behaviour=_digest(found) if found else "", error=error)


async def check_answer(task_text: str, answer: str, limits: confined.Limits | None = None,
                       run: ProgramRunner = confined.run_python) -> CodeCheck | None:
    """Run ``answer``'s code against the examples in ``task_text``; None when the task shows none."""
    task = task_examples(task_text)
    if task is None:
        return None
    code = answer_code(answer)
    if code is None:
        return CodeCheck(parsed=False, error="no Python code in the answer (no ```python block, and the text "
                                             "does not parse)")
    mark = f"@@massgen-check-{secrets.token_hex(8)}@@"
    budget = _budget(task)
    limits = limits or confined.Limits(wall_seconds=budget, cpu_seconds=int(budget))
    return outcome(await run(harness(code, task, mark), limits), mark, task)


# -- dual execution agreement in a checking turn (check_tools: [code_ranking]) ----------------------------


@dataclass(frozen=True)
class Ranked:
    """The answer a checking agent votes for after running every answer in view on the same inputs."""

    target: str  # the agent label ("agent2") of the answer voted for
    result: str  # that answer's behaviour, as its own check reported it (its result in the judge's eyes)
    reason: str  # what ran and what it showed, in words


def written_tests(task: CodeTask, answers: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """The ``assert f(x) == y`` lines the answers' own code writes for the task's functions (CodeT's tests)."""
    shown = set(task.examples)
    found: dict[tuple[str, str], None] = {}
    for answer in answers:
        for line in (answer_code(answer) or "").splitlines():
            match = _ASSERT.match(line)
            if match is None:
                continue
            call, value = match.group(1).strip(), _value(match.group(2))
            if value is not None and _calls(call, set(task.functions)) and (call, value) not in shown:
                found[(call, value)] = None
    return tuple(found)[:MAX_EXAMPLES]


def _label_order(label: str) -> tuple[int, str]:
    return len(label), label


async def rank_answers(task_text: str, view: AnswerView, limits: confined.Limits | None = None,
                       run: ProgramRunner = confined.run_python) -> Ranked | None:
    """Run every answer in view on the task's examples, the tests the answers write and the probes; the answer
    to vote for (CodeT: the behaviour most answers share times the written tests it passes, among those that
    pass the task's examples), or None when the task shows no examples or no answer passes them."""
    task = task_examples(task_text)
    if task is None or not view.answers:
        return None
    tests = written_tests(task, (a.content for a in view.answers))
    suite = CodeTask(task.examples + tests, task.imports, task.probes, task.functions)
    shown, written = len(task.examples), len(tests)
    scored: list[tuple[str, str, str, int]] = []  # (label, agent, cluster key, written tests passed)
    own: dict[str, str] = {}  # label -> its behaviour as its own check reported it
    for answer in view.answers:
        code = answer_code(answer.content)
        if code is None:
            continue
        mark = f"@@massgen-check-{secrets.token_hex(8)}@@"
        budget = _budget(suite)
        ran = outcome(await run(harness(code, suite, mark), limits or confined.Limits(
            wall_seconds=budget, cpu_seconds=int(budget))), mark, suite)
        runs = ran.examples
        if not ran.parsed or ran.error or len(runs) != len(suite.examples) + len(suite.probes):
            continue
        if not all(e.passed for e in runs[:shown]):
            continue  # fails the task's own examples: not a candidate
        own[answer.label] = _digest(runs[:shown] + runs[shown + written:])
        scored.append((answer.label, answer.agent, _digest(runs), sum(e.passed for e in runs[shown:shown + written])))
    if not scored:
        return None
    clusters: dict[str, list[tuple[str, str, str, int]]] = {}
    for entry in scored:
        clusters.setdefault(entry[2], []).append(entry)

    def rank(members: list[tuple[str, str, str, int]]) -> tuple[int, tuple[int, str]]:
        """Most answers alike times written tests passed first; a tie to the answer labelled first."""
        return -len(members) * (members[0][3] + 1), min(_label_order(m[0]) for m in members)

    best = min(clusters.values(), key=rank)
    label, agent, _key, passed = min(best, key=lambda m: _label_order(m[0]))
    reason = (f"ran the {len(view.answers)} answers in view on the task's {shown} examples, {written} tests the "
              f"answers wrote and {len(task.probes)} probes: {len(best)} of the {len(scored)} that pass the "
              f"examples behave alike, passing {passed} of the {written} written tests")
    return Ranked(target=agent, result=own[label], reason=reason)
