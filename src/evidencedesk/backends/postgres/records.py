"""Builds, traces and evaluation runs in the PostgreSQL store (the same methods as the embedded Store)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from evidencedesk.backends.postgres.ingest import now
from evidencedesk.store.records import Build


def _plain(data: dict[str, Any]) -> Any:
    """JSON-safe copy of ``data`` (dates and other objects become strings, as the embedded store writes them)."""
    return json.loads(json.dumps(data, ensure_ascii=False, default=str))


class RecordsMixin:
    """Needs ``self.pool`` and ``self._rows``."""

    pool: ConnectionPool

    def _rows(self, query: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        raise NotImplementedError

    # -- builds ----------------------------------------------------------------------------------
    @staticmethod
    def _build(r: dict[str, Any]) -> Build:
        return Build(
            id=r["id"],
            created_at=r["created_at"],
            chunking=r["chunking"],
            chunking_hash=r["chunking_hash"],
            n_documents=r["n_documents"],
            n_chunks=r["n_chunks"],
            report=r["report"],
        )

    def builds(self) -> list[Build]:
        """Every recorded build, oldest first."""
        return [self._build(r) for r in self._rows("SELECT * FROM builds ORDER BY id")]

    def latest_build(self) -> Build | None:
        rows = self._rows("SELECT * FROM builds ORDER BY id DESC LIMIT 1")
        return self._build(rows[0]) if rows else None

    def latest_build_id(self) -> int | None:
        """The latest build's id without reading its report (a search checks it on every call)."""
        rows = self._rows("SELECT MAX(id) AS id FROM builds")
        return None if not rows or rows[0]["id"] is None else int(rows[0]["id"])

    # -- traces ----------------------------------------------------------------------------------
    def save_trace(self, trace_id: str, data: dict[str, Any]) -> None:
        """Save (or replace) a trace under ``trace_id``."""
        if not trace_id:
            raise ValueError("trace_id: must not be empty")
        with self.pool.connection() as conn:
            conn.execute(
                "INSERT INTO traces (id, created_at, data) VALUES (%s, %s, %s)"
                " ON CONFLICT (id) DO UPDATE SET created_at = EXCLUDED.created_at, data = EXCLUDED.data,"
                " seq = DEFAULT",
                (trace_id, now(), Jsonb(_plain(data))),
            )

    def load_trace(self, trace_id: str) -> dict[str, Any] | None:
        rows = self._rows("SELECT data FROM traces WHERE id = %s", (trace_id,))
        return rows[0]["data"] if rows else None

    def traces(self, limit: int = 50) -> list[dict[str, Any]]:
        """The ``limit`` most recently saved traces, newest first."""
        if limit < 1:
            raise ValueError(f"limit: must be at least 1, got {limit}")
        rows = self._rows("SELECT data FROM traces ORDER BY created_at DESC, seq DESC LIMIT %s", (limit,))
        return [r["data"] for r in rows]

    # -- evaluation runs -------------------------------------------------------------------------
    def save_eval_run(self, data: dict[str, Any]) -> int:
        """Save an evaluation run and return its id; ``build_id`` is taken from ``data`` or the latest build."""
        build_id = data.get("build_id")
        if build_id is None:
            latest = self.latest_build()
            build_id = latest.id if latest else None
        with self.pool.connection() as conn:
            row = conn.execute(
                "INSERT INTO eval_runs (created_at, build_id, data) VALUES (%s, %s, %s) RETURNING id",
                (now(), build_id, Jsonb(_plain(data))),
            ).fetchone()
        return int(row[0]) if row else 0

    @staticmethod
    def _eval_run(r: dict[str, Any]) -> dict[str, Any]:
        return {**r["data"], "id": r["id"], "created_at": r["created_at"], "build_id": r["build_id"]}

    def load_eval_run(self, run_id: int) -> dict[str, Any] | None:
        """The saved data with ``id``, ``created_at`` and ``build_id`` added."""
        rows = self._rows("SELECT * FROM eval_runs WHERE id = %s", (run_id,))
        return self._eval_run(rows[0]) if rows else None

    def eval_runs(self) -> list[dict[str, Any]]:
        """Every evaluation run, oldest first, each as load_eval_run returns it."""
        return [self._eval_run(r) for r in self._rows("SELECT * FROM eval_runs ORDER BY id")]
