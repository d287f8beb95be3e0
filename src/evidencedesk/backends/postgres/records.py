"""Builds, traces and evaluation runs in the PostgreSQL store (the same methods as the embedded Store)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from evidencedesk.backends.postgres.ingest import now
from evidencedesk.store.records import Build
from evidencedesk.store.store import DEFAULT_TRACE_KEEP


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

    # -- traces ----------------------------------------------------------------------------------
    def save_trace(
        self, trace_id: str, data: dict[str, Any], owner: str | None = None, keep: int | None = DEFAULT_TRACE_KEEP
    ) -> None:
        """Save (or replace) a trace under ``trace_id``, made by the key ``owner`` (None: outside the
        service); then only the ``keep`` newest traces are kept (None: all)."""
        if not trace_id:
            raise ValueError("trace_id: must not be empty")
        if keep is not None and keep < 1:
            raise ValueError(f"keep: must be at least 1, got {keep}")
        with self.pool.connection() as conn, conn.transaction():
            conn.execute(
                "INSERT INTO traces (id, created_at, data, owner) VALUES (%s, %s, %s, %s)"
                " ON CONFLICT (id) DO UPDATE SET created_at = EXCLUDED.created_at, data = EXCLUDED.data,"
                " owner = EXCLUDED.owner, seq = DEFAULT",
                (trace_id, now(), Jsonb(_plain(data)), owner),
            )
            if keep is not None:
                conn.execute(
                    "DELETE FROM traces WHERE seq < (SELECT min(seq) FROM "
                    "(SELECT seq FROM traces ORDER BY seq DESC LIMIT %s) AS newest)",
                    (keep,),
                )

    def load_trace(self, trace_id: str, owner: str | None = None) -> dict[str, Any] | None:
        """The trace saved under ``trace_id``; with ``owner``, only when that key made it."""
        if owner is None:
            rows = self._rows("SELECT data FROM traces WHERE id = %s", (trace_id,))
        else:
            rows = self._rows("SELECT data FROM traces WHERE id = %s AND owner = %s", (trace_id, owner))
        return rows[0]["data"] if rows else None

    def traces(self, limit: int = 50, owner: str | None = None) -> list[dict[str, Any]]:
        """The ``limit`` most recently saved traces, newest first (with ``owner``: only that key's)."""
        if limit < 1:
            raise ValueError(f"limit: must be at least 1, got {limit}")
        if owner is None:
            rows = self._rows("SELECT data FROM traces ORDER BY created_at DESC, seq DESC LIMIT %s", (limit,))
        else:
            rows = self._rows(
                "SELECT data FROM traces WHERE owner = %s ORDER BY created_at DESC, seq DESC LIMIT %s", (owner, limit)
            )
        return [r["data"] for r in rows]

    # -- evaluation runs -------------------------------------------------------------------------
    def save_eval_run(self, data: dict[str, Any], owner: str | None = None) -> int:
        """Save an evaluation run made by the key ``owner`` and return its id; ``build_id`` is taken
        from ``data`` or the latest build."""
        build_id = data.get("build_id")
        if build_id is None:
            latest = self.latest_build()
            build_id = latest.id if latest else None
        with self.pool.connection() as conn:
            row = conn.execute(
                "INSERT INTO eval_runs (created_at, build_id, data, owner) VALUES (%s, %s, %s, %s) RETURNING id",
                (now(), build_id, Jsonb(_plain(data)), owner),
            ).fetchone()
        return int(row[0]) if row else 0

    @staticmethod
    def _eval_run(r: dict[str, Any]) -> dict[str, Any]:
        return {**r["data"], "id": r["id"], "created_at": r["created_at"], "build_id": r["build_id"]}

    def load_eval_run(self, run_id: int, owner: str | None = None) -> dict[str, Any] | None:
        """The saved data with ``id``, ``created_at`` and ``build_id`` added (with ``owner``: only that key's)."""
        if owner is None:
            rows = self._rows("SELECT * FROM eval_runs WHERE id = %s", (run_id,))
        else:
            rows = self._rows("SELECT * FROM eval_runs WHERE id = %s AND owner = %s", (run_id, owner))
        return self._eval_run(rows[0]) if rows else None

    def eval_runs(self, owner: str | None = None) -> list[dict[str, Any]]:
        """Every evaluation run, oldest first, each as load_eval_run returns it (with ``owner``: only that key's)."""
        if owner is not None:
            rows = self._rows("SELECT * FROM eval_runs WHERE owner = %s ORDER BY id", (owner,))
            return [self._eval_run(r) for r in rows]
        return [self._eval_run(r) for r in self._rows("SELECT * FROM eval_runs ORDER BY id")]
