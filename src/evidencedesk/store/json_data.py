"""The JSON a store keeps and gives back (traces, evaluation runs, build reports), as types.

``JsonValue`` is what ``json.loads`` returns; ``JsonObject`` is a JSON object. A store saves any
mapping made JSON-safe (dates and other objects become strings) and reads it back as a
``JsonObject``.
"""

from __future__ import annotations

from typing import TypeAlias

JsonValue: TypeAlias = "str | int | float | bool | None | list[JsonValue] | dict[str, JsonValue]"
"""A JSON value: a string, number, boolean, null, array or object."""
JsonObject: TypeAlias = "dict[str, JsonValue]"
"""A JSON object."""

__all__ = ["JsonObject", "JsonValue"]
