"""What the Desk keeps in the store besides documents: the traces of answers and the evaluation runs,
each optionally made by (and visible only to) one API key."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evidencedesk.errors import StoreError
from evidencedesk.results.ask import AskResult, JSONObject
from evidencedesk.store import RecordStore
from evidencedesk.store.base import DEFAULT_TRACE_KEEP


class Records:
    """Saves and reads traces and evaluation runs: it needs only the store's records (``RecordStore``)."""

    def __init__(self, store: RecordStore, location: str) -> None:
        self.store = store
        self.location = location  # named in errors

    def save_trace(self, result: AskResult, owner: str | None, keep: int | None = DEFAULT_TRACE_KEEP) -> str:
        self.store.save_trace(result.trace_id, result.to_dict(), owner=owner, keep=keep)
        return result.trace_id

    def save_eval_run(self, run: dict[str, Any], owner: str | None) -> int:
        return self.store.save_eval_run(run, owner=owner)

    def trace(self, trace_id: str, owner: str | None) -> JSONObject | None:
        return self.store.load_trace(trace_id, owner=owner)

    def traces(self, limit: int, owner: str | None) -> list[JSONObject]:
        return self.store.traces(limit, owner=owner)

    def eval_run(self, run: int | Mapping[str, Any]) -> dict[str, Any]:
        if isinstance(run, Mapping):
            return dict(run)
        found = self.store.load_eval_run(run)
        if found is None:
            raise StoreError(f"no evaluation run {run} in store {self.location}")
        return found


__all__ = ["Records"]
