"""Python source parsed by the agents' threads, one parse at a time.

``ast.parse`` from two agents' threads at once raised SystemError ("AST constructor recursion depth mismatch")
on Python 3.11.7: the ast module's recursion counter is shared by every thread (CPython gh-106905, fixed in
3.11.8), so every parse of ours takes its turn here.
"""

from __future__ import annotations

import ast
import threading

__all__ = ["literal", "parse_expression", "parse_module"]

_PARSING = threading.Lock()


def parse_module(source: str) -> ast.Module:
    with _PARSING:
        return ast.parse(source)


def parse_expression(source: str) -> ast.Expression:
    with _PARSING:
        return ast.parse(source, mode="eval")


def literal(source: str | ast.expr) -> object:
    with _PARSING:
        return ast.literal_eval(source)
