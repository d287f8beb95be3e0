"""What the Desk keeps in the store besides documents: the traces of answers and the evaluation runs,
each optionally made by (and visible only to) one API key."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evidencedesk.errors import StoreError
from evidencedesk.store.base import DEFAULT_TRACE_KEEP

from .state import DeskState


class Records:
    """Saves and reads traces and evaluation runs."""

    def __init__(self, state: DeskState) -> None:
        self.state = state

    def save_trace(self, result: dict[str, Any], owner: str | None, keep: int | None = DEFAULT_TRACE_KEEP) -> str:
        trace_id = str(result["trace_id"])
        self.state.store.save_trace(trace_id, result, owner=owner, keep=keep)
        return trace_id

    def save_eval_run(self, run: dict[str, Any], owner: str | None) -> int:
        return self.state.store.save_eval_run(run, owner=owner)

    def trace(self, trace_id: str, owner: str | None) -> dict[str, Any] | None:
        return self.state.store.load_trace(trace_id, owner=owner)

    def traces(self, limit: int, owner: str | None) -> list[dict[str, Any]]:
        return self.state.store.traces(limit, owner=owner)

    def eval_run(self, run: int | Mapping[str, Any]) -> dict[str, Any]:
        if isinstance(run, Mapping):
            return dict(run)
        found = self.state.store.load_eval_run(run)
        if found is None:
            raise StoreError(f"no evaluation run {run} in store {self.state.location}")
        return found


__all__ = ["Records"]
