"""The JSON a store keeps and gives back (traces, evaluation runs, build reports), as types.

A store saves any mapping made JSON-safe (dates and other objects become strings) and reads it back
as a ``JsonObject``. The types themselves live in :mod:`evidencedesk.json_types`.
"""

from __future__ import annotations

from evidencedesk.json_types import JsonObject, JsonValue

__all__ = ["JsonObject", "JsonValue"]
