"""The 422 answer for a request FastAPI could not validate, safe for any input.

FastAPI's own handler echoes each offending value back, and a value such as ``NaN`` or ``Infinity``
(which Python's JSON reader accepts) cannot be written as JSON, so the answer itself failed with a
500. Here every echoed value is made JSON-safe first: non-finite numbers become their names, bytes
are decoded with replacement, lone surrogates replaced, and long values are cut short.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from fastapi import Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from evidencedesk.json_types import JsonValue

ECHO_CHARS = 200  # an echoed input longer than this is cut, so a large body is not sent back whole


def json_safe(value: object, depth: int = 0) -> JsonValue:
    """``value`` with non-finite floats as strings, bytes as text, long strings cut and deep nesting dropped."""
    if depth > 20:
        return "..."
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        return (
            value
            if math.isfinite(value)
            else ("NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity"))
        )
    if isinstance(value, bytes | bytearray):
        value = bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, str):  # a lone surrogate (``"\\ud800"`` in JSON) cannot be written as UTF-8
        value = value.encode("utf-8", errors="replace").decode("utf-8")
        return value if len(value) <= ECHO_CHARS else value[:ECHO_CHARS] + "..."
    if isinstance(value, dict):
        return {str(json_safe(k, depth + 1)): json_safe(v, depth + 1) for k, v in list(value.items())[:50]}
    if isinstance(value, list | tuple | set | frozenset):
        return [json_safe(v, depth + 1) for v in list(value)[:50]]
    return json_safe(str(value), depth + 1)


def _error(error: Mapping[str, object]) -> JsonValue:
    return json_safe({k: v for k, v in error.items() if k != "url"})  # loc may hold a caller's field names


async def validation_failed(request: Request, exc: Exception) -> JSONResponse:
    """422 with FastAPI's list of errors, each value JSON-safe."""
    errors = exc.errors() if isinstance(exc, RequestValidationError) else []
    return JSONResponse({"detail": jsonable_encoder([_error(dict(e)) for e in errors])}, 422)


__all__ = ["ECHO_CHARS", "json_safe", "validation_failed"]
