"""The types of JSON data: what ``json.loads`` gives and ``json.dumps`` takes, spelled out for mypy."""

from __future__ import annotations

from typing import TypeAlias

JsonScalar: TypeAlias = None | bool | int | float | str
"""A JSON value that holds no other: null, true/false, a number or a string."""

JsonValue: TypeAlias = "JsonScalar | list[JsonValue] | dict[str, JsonValue]"
"""Any JSON value: a scalar, an array of values or an object of values keyed by strings."""

JsonObject: TypeAlias = "dict[str, JsonValue]"
"""A JSON object."""

__all__ = ["JsonObject", "JsonScalar", "JsonValue"]
