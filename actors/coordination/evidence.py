"""What a first answer is evidence of: a value a program computed, or a written answer stating one.

Issue 48's rule (bench/results/plain-127/RULE.md, written before its runs): execution outranks agreement,
agreement outranks listing order. Two questions only, both pure functions of text:

- ``computed_value``: does a program's printout count as a value it *computed*? Not when it printed nothing,
  printed prose (more than ``VALUE_WORDS`` words: a program computes values, text of more words is text it
  holds), or printed a literal of its own source (``print('lrohtam')`` printed what it was told to print; a
  fact or a haiku a program can only repeat). A program that failed never gets this far.
- ``states``: does a written answer's conclusion state a given computed value? The reader is never asked to
  invent a result, only whether an answer says this one: the value's words or numbers in order in the answer's
  last lines (numbers as numbers, ``True``/``False`` as yes/no, list brackets and commas aside), or the result
  the answer itself states (``results.stated_result``) equal to it.
- ``in_kind``: is a computed value of a kind some written answer gives? A truth value, a number, or words: the
  written answer (the question answered in its own terms) shows what kind of result the question asks for, and a
  value of another kind answers another question (``True`` for "which is bigger, 3/8 or 1/3?", a sum for a poem).
"""

from __future__ import annotations

import ast
import re
from typing import Literal

from massgen.actors.coordination.parsing import parse_module
from massgen.actors.coordination.results import closing_remark, stated_result

__all__ = ["VALUE_WORDS", "ResultKind", "computed_value", "conclusion_of", "in_kind", "result_kind", "states"]

VALUE_WORDS = 12
"""The most words a printout may have and still be a value (a list of twelve words is one; a sentence of
explanation is not)."""

_CONCLUSION_LINES = 3  # where a written answer concludes: its last lines outside code, closing remarks aside
_CONCLUSION_CHARS = 600  # what the judge is told of an answer's conclusion (``AnswerResult.conclusion``)
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_TOKEN = re.compile(r"-?\d[\d,]*(?:\.\d+)?|[^\W\d_]+(?:['\u2019-][^\W\d_]+)*", re.UNICODE)
_SPELLED = {"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
            "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12"}
_TRUTH = {"true": "yes", "false": "no"}


def _literal(node: ast.expr, bound: dict[str, list[ast.expr | None]]) -> bool:
    """Whether ``node`` only restates what the source wrote: a constant, an f-string of constants, a name
    every assignment of which is a literal, or a tuple or list of literals."""
    match node:
        case ast.Constant():
            return True
        case ast.JoinedStr():
            return all(isinstance(v, ast.Constant)
                       or (isinstance(v, ast.FormattedValue) and _literal(v.value, bound)) for v in node.values)
        case ast.Name():
            values = bound.get(node.id)
            return bool(values) and all(v is not None and _literal(v, {}) for v in values or ())
        case ast.Tuple() | ast.List():
            return all(_literal(e, bound) for e in node.elts)
        case _:
            return False


def _prints_literals(code: str) -> bool:
    """Whether every ``print`` of ``code`` prints only literals (``print('lrohtam')``, ``answer = 'Paris';
    print(answer)``): what it printed, it was told to print. A program that prints nothing through ``print``,
    or that does not parse, is taken at its word."""
    try:
        tree = parse_module(code)
    except (SyntaxError, ValueError):
        return False
    # name -> what was bound to it; None: something computed (no AST node is built here: CPython 3.11's AST
    # constructors are not safe to call beside another thread's ast.parse)
    bound: dict[str, list[ast.expr | None]] = {}
    computed = None

    def bind(target: ast.AST, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            bound.setdefault(target.id, []).append(value)
        else:  # unpacking, subscripts: not a plain binding of a literal
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    bound.setdefault(name.id, []).append(computed)

    def visit(node: ast.AST, under: bool) -> None:
        """Bindings; one under a condition, a loop or a function is decided, so no literal."""
        if isinstance(node, ast.Assign):
            for target in node.targets:
                bind(target, computed if under else node.value)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.comprehension,
                               ast.NamedExpr)):
            bind(node.target, computed)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name):  # ``x.sort()`` may change what ``x`` holds
            bind(node.func.value, computed)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.setdefault(node.name, []).append(computed)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound.setdefault(alias.asname or alias.name, []).append(computed)
        for child in ast.iter_child_nodes(node):
            visit(child, under or isinstance(node, _DECIDING))

    for statement in tree.body:
        visit(statement, False)
    told = [not decided and all(_literal(arg, bound) for arg in call.args) for call, decided in _prints(tree.body)]
    return bool(told) and all(told)


_DECIDING = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.Match, ast.With, ast.FunctionDef,
             ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.IfExp, ast.comprehension)


def _prints(nodes: list[ast.stmt]) -> list[tuple[ast.Call, bool]]:
    """The ``print`` calls under ``nodes``, each with whether it is under a condition, a loop or a function: which
    of its literals is printed, the program decided there (``if ...: print('Yes') else: print('No')``)."""
    found: list[tuple[ast.Call, bool]] = []

    def visit(node: ast.AST, under: bool) -> None:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            found.append((node, under))
        for child in ast.iter_child_nodes(node):
            visit(child, under or isinstance(node, _DECIDING))

    for statement in nodes:
        visit(statement, False)
    return found


def computed_value(code: str, printed: str) -> bool:
    """Whether ``printed`` (a program's standard output, the program having exited 0) is a value the program
    computed: something printed, at most ``VALUE_WORDS`` words, and not only literals of ``code`` printed."""
    lines = [line.strip() for line in printed.splitlines() if line.strip()]
    if not lines:
        return False
    if len(_TOKEN.findall(" ".join(lines))) > VALUE_WORDS:
        return False
    return not _prints_literals(code)


_LIST_ITEM = re.compile(r"^(?:[-*\u2022]|\d{1,2}[.)])\s+(?P<item>.+)$")


def conclusion_of(text: str) -> str:
    """A written answer's last lines outside code, closing remarks and punctuation-only lines aside: where it
    concludes (at most ``_CONCLUSION_CHARS``, the end kept). A trailing bulleted or numbered list is one line, its
    items in order ("3, 7, 12, 19, 45"): the list is the conclusion, however long, and its markers are no values."""
    kept: list[str] = []
    in_code = False
    for raw in text.splitlines():
        if _FENCE.match(raw):
            in_code = not in_code
            continue
        if not in_code and raw.strip():
            kept.append(raw.strip())
    while kept and closing_remark(kept[-1]):
        kept.pop()
    items: list[str] = []
    while kept and (item := _LIST_ITEM.match(kept[-1])):
        items.insert(0, item.group("item").strip())
        kept.pop()
    if len(items) > 1:
        kept.append(", ".join(items))
    elif items:  # one item is a line like any other
        kept.append(items[0])
    return "\n".join(kept[-_CONCLUSION_LINES:])[-_CONCLUSION_CHARS:]


_FLOAT_DIGITS = 12  # a float's digits past these are its binary rounding: 0.79 is 0.7900000000000009


def _number(token: str) -> str:
    """A number as a person reads it: no thousands separators, no ``.0``, no binary rounding noise."""
    token = token.replace(",", "")
    if "." in token:
        token = f"{float(token):.{_FLOAT_DIGITS}g}"
        if "e" in token:  # too large or small for the digits kept: as written
            return token
    return token


def _tokens(text: str) -> list[str]:
    """Words and numbers, lowercased, numbers as ``_number`` reads them, spelled small numbers as digits,
    True/False as yes/no."""
    out: list[str] = []
    for token in _TOKEN.findall(text.lower()):
        if token[0].isdigit() or token[0] == "-":
            token = _number(token)
        out.append(_SPELLED.get(token, _TRUTH.get(token, token)))
    return out


def _contains(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return any(haystack[i:i + n] == needle for i in range(len(haystack) - n + 1))


def _numbers(tokens: list[str]) -> list[str]:
    return [t for t in tokens if t[0].isdigit() or (t[0] == "-" and t[1:2].isdigit())]


def states(conclusion: str, value: str) -> bool:
    """Whether a written answer whose conclusion is ``conclusion`` states ``value`` (a computed result). When the
    answer states a result of its own (``results.stated_result``: its ``Answer:``, its boxed value, its concluding
    number), that result is what it states: it holds the value's words, and the same numbers, no other (a
    conclusion that only mentions 2024 on the way to ``2024-05-09`` does not state 2024). Else the value's words
    or numbers in order anywhere in the conclusion, a yes or no as its first word."""
    wanted = _tokens(value)
    if not wanted or not conclusion.strip():
        return False
    said = stated_result(conclusion)
    if said:
        got = _tokens(said)
        return _contains(got, wanted) and _numbers(got) == _numbers(wanted)
    if wanted in (["yes"], ["no"]):
        return _tokens(conclusion)[:1] == wanted
    return _contains(_tokens(conclusion), wanted)


ResultKind = Literal["truth", "number", "words"]


def result_kind(value: str) -> ResultKind:
    """What kind of result ``value`` is: a yes or no (``True``/``False`` read as one), a number (every token a
    number: ``168``, ``0.375``, ``2026-12-04``), or words."""
    tokens = _tokens(value)
    if tokens in (["yes"], ["no"]):
        return "truth"
    if tokens and len(_numbers(tokens)) == len(tokens):
        return "number"
    return "words"


def in_kind(conclusion: str, value: str) -> bool:
    """Whether a written answer concluding ``conclusion`` gives a result of ``value``'s kind: a yes or no as its first
    word or its stated result, for a truth value; any number, for a number; anything, for words. Why: the written
    answer answers the question in its own terms, so it shows what the question asks for; a program that printed
    another kind of value answered another question (a check that printed ``True`` for "which is bigger", a sum
    for "write a poem")."""
    kind = result_kind(value)
    if kind == "words":
        return True
    tokens = _tokens(conclusion)
    if kind == "number":
        return bool(_numbers(tokens))
    return tokens[:1] in (["yes"], ["no"]) or _tokens(stated_result(conclusion)) in (["yes"], ["no"])
