"""Tools an agent is offered when it checks the answers in view (``backend.check_tools``).

Why: a model checking answers by reading them mostly restates one of them; the trace of
the local team showed every vote round re-deriving the answer listed to it, right or
wrong (README, issue 20). The literature agrees: models rarely correct their own
reasoning without outside feedback (Huang et al. 2023), and do when a tool checks the
claim (CRITIC, Gou et al. 2023). So a turn with answers in view may compute instead of
recompute: ``calculate`` evaluates an arithmetic expression exactly. A first answer is
the model's own work and gets no check tools, so first answers stay independent of them.

The expression is model output, hence hostile input: it is evaluated by ``simpleeval``
(no names, no attribute tricks, no calls but ``abs``/``min``/``max``/``round``), every
operator takes numbers only, and sizes are bounded, so no expression can hang or exhaust
the agent's process. Every refusal is a tool error the model reads.

``run_python(code)`` (``check_tools: [python]``) is the general case (PAL, Gao et al. 2022):
the model writes a short program and reads its output, standard error and exit status. The
program is hostile too: it runs confined (``files/confined.py``: CPython compiled to WebAssembly,
with no host files, environment or network, and memory, wall-clock and output limits for the whole
run). Where no sandbox can be had the tool is not offered (``withheld``), and the run says so once
(``actors/run/team.py``).
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Iterable
from typing import Any, Literal

import simpleeval

from massgen.actors.agent.turn_io import ToolExecutor
from massgen.actors.coordination import parsing
from massgen.files import confined
from massgen.messages import ToolSpec

CheckToolName = Literal["calculator", "python", "code_examples", "code_ranking"]
CALCULATE = "calculate"
EXPRESSION = "expression"
RUN_PYTHON = "run_python"
CODE = "code"
MAX_CODE_CHARS = 20_000
MAX_EXPRESSION_CHARS = 1_000
MAX_RESULT_BITS = 4_000  # about 1,200 digits: more than any check needs, little enough to stay instant

Number = int | float


class CalculationError(ValueError):
    """The expression cannot be evaluated as asked; the message says why, for the model to read."""


def _number(value: object) -> Number:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CalculationError(f"only numbers can be calculated, not {type(value).__name__}")
    return value


def _bounded(value: Number) -> Number:
    if isinstance(value, int) and value.bit_length() > MAX_RESULT_BITS:
        raise CalculationError(f"a number in the calculation has more than {MAX_RESULT_BITS} bits")
    if isinstance(value, float) and not math.isfinite(value):
        raise CalculationError("the calculation overflows")
    return value


def _binary(op: Callable[[Any, Any], Any]) -> Callable[[object, object], Number]:
    def apply(left: object, right: object) -> Number:
        a, b = _number(left), _number(right)
        if isinstance(a, int) and isinstance(b, int) and op is operator.mul \
                and a.bit_length() + b.bit_length() > MAX_RESULT_BITS + 1:
            raise CalculationError(f"a number in the calculation has more than {MAX_RESULT_BITS} bits")
        return _bounded(op(a, b))
    return apply


def _power(base: object, exponent: object) -> Number:
    a, b = _number(base), _number(exponent)
    if abs(b) > MAX_RESULT_BITS or (isinstance(a, int) and isinstance(b, int) and b > 0
                                    and max(a.bit_length(), 1) * b > MAX_RESULT_BITS + 64):
        raise CalculationError(f"{a} ** {b} is too large to calculate")
    try:
        return _bounded(operator.pow(a, b))
    except OverflowError as exc:
        raise CalculationError("the calculation overflows") from exc


def _unary(op: Callable[[Any], Any]) -> Callable[[object], Number]:
    return lambda value: _bounded(op(_number(value)))


def _compare(op: Callable[[Any, Any], bool]) -> Callable[[object, object], bool]:
    return lambda left, right: bool(op(_number(left), _number(right)))


_OPERATORS: dict[type, Any] = {
    ast.Add: _binary(operator.add), ast.Sub: _binary(operator.sub), ast.Mult: _binary(operator.mul),
    ast.Div: _binary(operator.truediv), ast.FloorDiv: _binary(operator.floordiv), ast.Mod: _binary(operator.mod),
    ast.Pow: _power, ast.USub: _unary(operator.neg), ast.UAdd: _unary(operator.pos),
    ast.Gt: _compare(operator.gt), ast.Lt: _compare(operator.lt), ast.GtE: _compare(operator.ge),
    ast.LtE: _compare(operator.le), ast.Eq: _compare(operator.eq), ast.NotEq: _compare(operator.ne),
}


def _round(value: object, digits: object = 0) -> Number:
    places = _number(digits)
    if not isinstance(places, int) or abs(places) > 100:
        raise CalculationError("round() takes a whole number of digits, at most 100")
    rounded: Number = round(_number(value), places)
    return int(rounded) if places <= 0 else rounded


_FUNCTIONS: dict[str, Any] = {
    "abs": _unary(abs),
    "min": lambda *values: min(_number(v) for v in values),
    "max": lambda *values: max(_number(v) for v in values),
    "round": _round,
}


def _text(value: Number | bool) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))  # 6 / 3 is 2, the way an answer writes it, not 2.0
    return repr(value)


def calculate(expression: str) -> str:
    """``expression = value``, evaluated exactly; ``CalculationError`` says why it cannot be."""
    expression = " ".join(expression.split())
    if not expression:
        raise CalculationError("the expression is empty")
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise CalculationError(f"the expression is longer than {MAX_EXPRESSION_CHARS} characters")
    evaluator = simpleeval.SimpleEval(operators=_OPERATORS, functions=_FUNCTIONS, names={})
    try:
        value = evaluator.eval(expression.replace("^", "**").replace("\u00d7", "*").replace("\u00f7", "/"))
    except CalculationError:
        raise
    except ZeroDivisionError as exc:
        raise CalculationError("division by zero") from exc
    except SyntaxError as exc:
        raise CalculationError(f"not an arithmetic expression: {exc.msg}") from exc
    except (simpleeval.InvalidExpression, TypeError, ValueError, OverflowError, RecursionError,
            MemoryError, AttributeError, IndexError, KeyError) as exc:
        raise CalculationError(f"cannot calculate it: {type(exc).__name__}: {exc}") from exc
    if not isinstance(value, bool):
        value = _number(value)
    return f"{expression} = {_text(value)}"


CALCULATOR_SPEC = ToolSpec(
    name=CALCULATE,
    description=("Calculate an arithmetic expression exactly (numbers, + - * / // % **, parentheses, "
                 "comparisons, abs, min, max, round), to check a result instead of redoing it by hand."),
    parameters={
        "type": "object",
        "properties": {EXPRESSION: {"type": "string", "maxLength": MAX_EXPRESSION_CHARS,
                                    "description": "the expression, e.g. 12 + 7 * 3 - 4"}},
        "required": [EXPRESSION],
        "additionalProperties": False,
    },
)
PYTHON_SPEC = ToolSpec(
    name=RUN_PYTHON,
    description=("Run a short Python program in a sandbox (no network, no files but its own, a few seconds) "
                 "and read what it prints, to check a result instead of redoing it by hand."),
    parameters={
        "type": "object",
        "properties": {CODE: {"type": "string", "maxLength": MAX_CODE_CHARS,
                              "description": "the program; print what it finds, e.g. print(sum(range(1, 11)))"}},
        "required": [CODE],
        "additionalProperties": False,
    },
)
_SPECS: dict[CheckToolName, ToolSpec] = {"calculator": CALCULATOR_SPEC, "python": PYTHON_SPEC}
# Check tools that run code: only where a sandbox can be had. code_examples is no tool the model calls: the
# agent runs each code answer it writes against the task's examples (actors/coordination/code_checks.py).
NEEDS_SANDBOX = frozenset({"python", "code_examples", "code_ranking"})


def withheld(names: Iterable[str]) -> str | None:
    """Why the check tools among ``names`` that run code cannot be offered here, or None."""
    return confined.unavailable() if NEEDS_SANDBOX.intersection(names) else None


_ORDER: dict[type[ast.cmpop], tuple[Callable[[Number, Number], bool], str]] = {
    ast.Gt: (operator.gt, "larger"), ast.GtE: (operator.gt, "larger"),
    ast.Lt: (operator.lt, "smaller"), ast.LtE: (operator.lt, "smaller"),
}


def _literal(node: ast.expr, source: str) -> tuple[Number, str] | None:
    """A number written in the expression (a sign allowed), with its text as written."""
    inner = node.operand if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd) else node
    if not isinstance(inner, ast.Constant) or isinstance(inner.value, bool) \
            or not isinstance(inner.value, int | float):
        return None
    text = ast.get_source_segment(source, node)
    value = -inner.value if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) else inner.value
    return (value, text) if text else None


def order_shown(expression: str, holds: bool) -> tuple[str, str, str] | None:
    """``(first, sense, second)`` when ``expression`` is one order comparison of two numbers that evaluated to
    ``holds``: ``9.11 > 9.9`` False is ``("9.9", "larger", "9.11")``, the numbers as written; else None."""
    source = expression.strip()
    try:
        tree = parsing.parse_expression(source).body
    except SyntaxError:
        return None
    if not isinstance(tree, ast.Compare) or len(tree.ops) != 1 or type(tree.ops[0]) not in _ORDER:
        return None
    left, right = _literal(tree.left, source), _literal(tree.comparators[0], source)
    if left is None or right is None or left[0] == right[0]:
        return None
    order, sense = _ORDER[type(tree.ops[0])]
    left_first = order(left[0], right[0])
    if left_first != holds:
        return None  # not what the comparison evaluates to: nothing is shown
    first, second = (left, right) if left_first else (right, left)
    return first[1], sense, second[1]


def comparison_meaning(content: str) -> str:
    """What a calculated order comparison of two numbers shows, in words: ``9.11 > 9.9 = False`` is
    "9.9 is larger than 9.11" (the comparison's own sense, the number that satisfies it first); "" for
    anything else (equal numbers, chains, ``==``, arithmetic).

    Why: a truth value is no answer's result, so a vote that checked "which is larger" by calculating it
    computed nothing the judge could count, and the prior's wrong 9.11 stood (README's first command,
    bench/results/computed-comparison-preregistered.md). The sentence reads as the number it states."""
    expression, _, value = content.rpartition(" = ")
    shown = order_shown(expression, value == "True") if value in ("True", "False") else None
    return f"{shown[0]} is {shown[1]} than {shown[2]}" if shown else ""


def computed(name: str, content: str) -> str:
    """What a check tool's result says it computed: a program's standard output, not its status line; a
    calculated comparison of two numbers, the number it shows larger or smaller (``comparison_meaning``)."""
    if name == CALCULATE:
        return comparison_meaning(content) or content
    if name != RUN_PYTHON:
        return content
    lines = content.splitlines()
    body = lines[1:] if lines and lines[0].startswith("[exit code") else lines
    if body and body[0] == "stderr:":
        return ""  # it said more than its result: no one value it computed
    return "\n".join(body)


class CheckTools:
    """The check tools an agent's config names: their specs, and one executor for them.

    One that runs code is left out where no sandbox can be had (``withheld``); the run says so."""

    def __init__(self, names: list[CheckToolName] | tuple[CheckToolName, ...],
                 limits: confined.Limits | None = None) -> None:
        kept = [n for n in dict.fromkeys(names) if n in _SPECS and not (n in NEEDS_SANDBOX and withheld([n]))]
        self._specs = tuple(_SPECS[name] for name in kept)
        self.limits = limits or confined.Limits()

    def specs(self) -> tuple[ToolSpec, ...]:
        return self._specs

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """Run one call (the turn has checked the arguments against the schema); ``(text, is_error)``."""
        if name == RUN_PYTHON and PYTHON_SPEC in self._specs:
            run = await confined.run_python(str(arguments.get(CODE, "")), self.limits)
            return run.text(), not run.ok  # a program that failed checked nothing: the model reads why
        if name != CALCULATE or CALCULATOR_SPEC not in self._specs:
            return f"unknown tool {name!r}", True
        try:
            return calculate(str(arguments.get(EXPRESSION, ""))), False
        except CalculationError as exc:
            return f"{CALCULATE}: {exc}", True

    def chain(self, other: ToolExecutor | None) -> ToolExecutor:
        """One executor: these tools here, every other name to ``other``."""
        names = {spec.name for spec in self._specs}

        async def call(name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
            if name in names or other is None:
                return await self.call(name, arguments)
            return await other(name, arguments)
        return call
