"""Reading a request body, and the checks that must happen before (or instead of) trusting the parser.

Every route that takes a body (``/v1/chat/completions`` and the Web UI's controls) reads it with
``read_body`` and parses it with ``json_object``, so the bounds (size while streaming, a deadline,
nesting depth) are decided once, here. A body is never buffered whole before its size is known
to be acceptable, and a half-sent body cannot hold a connection past the deadline.

``json.loads`` recurses once per nesting level, so a body of a thousand ``[`` raises
``RecursionError`` (a 500) and a deeper one costs stack; the nesting depth is therefore
counted on the raw bytes first. JSON may also carry lone surrogates (``"\\ud800"``),
which no UTF-8 response, log or provider accepts: they are refused, naming the field.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.requests import Request

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


async def read_body(request: Request, limit: int, timeout_s: float, *, limit_name: str) -> bytes:
    """The body, refused with 413 as soon as it is known to pass ``limit`` (declared or streamed),
    and with 408 when it has not all arrived within ``timeout_s`` (a half-sent body holds a slot).
    ``limit_name`` says which limit it was, so the client knows what to change or ask for."""
    declared = request.headers.get("content-length", "")
    too_big = ApiError(413, f"the request body is larger than {limit:,} bytes ({limit_name})",
                       code="request_too_large")
    if declared.isdigit() and int(declared) > limit:
        raise too_big
    received = bytearray()
    try:
        async with asyncio.timeout(timeout_s):
            async for chunk in request.stream():
                received += chunk
                if len(received) > limit:
                    raise too_big
    except TimeoutError:
        raise ApiError(408, f"the request body did not arrive within {timeout_s:g} s",
                       code="request_timeout") from None
    return bytes(received)


def _whole_number(digits: str) -> int:
    """``int``, but past Python's digit limit the message is for the client: ``int``'s own advises
    calling ``sys.set_int_max_str_digits``, which only the server's operator could do."""
    try:
        return int(digits)
    except ValueError:
        raise ValueError(f"a number of {len(digits.lstrip('-'))} digits is longer than this server reads") from None


def json_object(body: bytes, max_depth: int) -> dict[str, Any]:
    """``body`` as a JSON object: 400 when it nests too deep (counted before ``json.loads``, which recurses
    once per level), is not JSON, or is not an object; a lone surrogate is refused naming its field."""
    check_depth(body, max_depth)
    try:
        data = json.loads(body, parse_int=_whole_number)
    except ValueError as exc:  # UnicodeDecodeError (not UTF-8) is a ValueError too
        raise ApiError(400, f"the request body is not valid JSON: {exc}", code="invalid_json") from None
    if not isinstance(data, dict):
        raise ApiError(400, "the request body must be a JSON object", code="invalid_json")
    check_text(data)
    return data
