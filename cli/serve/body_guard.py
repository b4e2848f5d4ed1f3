"""Checks on a request body that must happen before (or instead of) trusting the parser.

``json.loads`` recurses once per nesting level, so a body of a thousand ``[`` raises
``RecursionError`` (a 500) and a deeper one costs stack; the nesting depth is therefore
counted on the raw bytes first. JSON may also carry lone surrogates (``"\\ud800"``),
which no UTF-8 response, log or provider accepts: they are refused, naming the field.
"""

from __future__ import annotations

from typing import Any

from massgen.cli.serve.errors import ApiError

_OPEN, _CLOSE, _QUOTE, _BACKSLASH = frozenset(b"[{"), frozenset(b"]}"), ord('"'), ord("\\")


def json_depth(body: bytes, limit: int) -> int:
    """The deepest nesting of arrays and objects in ``body``, counting stops once past ``limit``."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in body:
        if in_string:
            if escaped:
                escaped = False
            elif byte == _BACKSLASH:
                escaped = True
            elif byte == _QUOTE:
                in_string = False
        elif byte == _QUOTE:
            in_string = True
        elif byte in _OPEN:
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif byte in _CLOSE:
            depth -= 1
    return deepest


def check_depth(body: bytes, limit: int) -> None:
    if json_depth(body, limit) > limit:
        raise ApiError(400, f"the request body nests arrays/objects deeper than {limit} levels",
                       code="invalid_json")


def _bad_text(value: Any, path: str) -> str | None:
    """Path of the first string (key or value) in ``value`` that is not valid Unicode."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path or "body"
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            found = _bad_text(key, where) or _bad_text(item, where)
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _bad_text(item, f"{path}[{index}]")
            if found:
                return found
    return None


def check_text(data: Any) -> None:
    where = _bad_text(data, "")
    if where is not None:
        raise ApiError(400, f"{where}: text with a lone surrogate (\\ud800-\\udfff) is not valid Unicode",
                       code="invalid_value", param=where)
