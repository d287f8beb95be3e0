"""StoreBase: the storage contract written once, over a few backend primitives.

A backend supplies how to run a query (``_rows``), its parameter mark, how a row becomes a
Document, Chunk or JSON value, how an ingest transaction is opened (``_ingest``), and the two
statements that differ between SQL dialects (saving a trace, inserting an evaluation run).
Everything else (sync, reading documents and chunks, builds, traces and evaluation
runs) is the same code for every backend, so the backends cannot drift apart.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from typing import Any, ClassVar, Self

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.documents import Chunk, Document
from evidencedesk.errors import IngestError
from evidencedesk.progress import Meter
from evidencedesk.store.contract import Chunker
from evidencedesk.store.ingest_plan import DocumentWriter, IngestRun, now
from evidencedesk.store.json_data import JsonObject
from evidencedesk.store.records import Build, IngestReport

IN_BATCH = 500  # ids per ``IN (...)`` list (SQLite's bound-parameter limit is 999)
DEFAULT_TRACE_KEEP = 10_000  # traces kept by default: the newest ones; older ones are deleted as new ones arrive


def plain_json(data: Mapping[str, object]) -> JsonObject:
    """A JSON-safe copy of ``data``: dates and other objects become strings, on every backend alike."""
    copy: JsonObject = json.loads(json.dumps(data, ensure_ascii=False, default=str))
    return copy


class StoreBase(ABC):
    """The shared part of every store; subclasses fill in the primitives below."""

    MARK: ClassVar[str]
    """The parameter placeholder of the backend's driver (``?`` or ``%s``)."""
    CHUNK_SELECT: ClassVar[str]
    """``SELECT`` of chunk rows (with ``n``) joined with their document's title and path, aliased ``c``."""
    TRACE_ORDER: ClassVar[str]
    """``ORDER BY`` terms for traces, newest first."""
    EMPTY_SECTIONS: ClassVar[str]
    """An empty ``sections`` column value in SQL (JSON text or jsonb)."""

    _chunker: Chunker

    # -- primitives -----------------------------------------------------------------------------
    @abstractmethod
    def _rows(self, query: str, params: Sequence[Any] = ()) -> list[Any]:
        """Run ``query`` and return its rows, each readable by column name."""

    @abstractmethod
    def _document_from(self, row: Any) -> Document: ...

    @abstractmethod
    def _chunk_from(self, row: Any) -> Chunk: ...

    @abstractmethod
    def _json_from(self, value: Any) -> Any:
        """A JSON column's value as Python data."""

    @abstractmethod
    def _ingest(self, work: Callable[[DocumentWriter], IngestReport]) -> IngestReport:
        """Run ``work`` with this backend's writer inside one write transaction; commit what it returns."""

    @abstractmethod
    def _put_trace(self, trace_id: str, created_at: str, data: JsonObject, owner: str | None) -> None:
        """Insert or replace the trace ``trace_id`` (``data`` is JSON-safe) made by the key ``owner``."""

    @abstractmethod
    def _put_eval_run(self, created_at: str, build_id: int | None, data: JsonObject, owner: str | None) -> int:
        """Insert an evaluation run (``data`` is JSON-safe) made by the key ``owner`` and return its id."""

    @abstractmethod
    def close(self) -> None: ...

    # -- lifecycle ------------------------------------------------------------------------------
    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writes -------------------------------------------------------------------------------
    def sync(
        self,
        documents: Iterable[Document | IngestError],
        config: ChunkingConfig,
        *,
        failures: Iterable[IngestError] = (),
        remove_missing: bool = True,
        skipped: Iterable[str] = (),
        meter: Meter | None = None,
    ) -> IngestReport:
        """Store parsed documents (a folder's files, a BEIR corpus) as one build; see ``DocumentStore.sync``."""
        if meter is not None and meter.total:
            total = meter.total
        else:
            total = len(documents) if isinstance(documents, Sized) else 0

        def work(writer: DocumentWriter) -> IngestReport:
            run = IngestRun(writer, config, self._chunker)
            run.feed(documents, total, None if meter is None else meter.update)
            run.feed(failures)
            if meter is not None:
                run.report.progress = {"files": meter.summary()}  # recorded with the build, too
            return run.finish(remove_missing=remove_missing, skipped=skipped)

        return self._ingest(work)

    # -- documents and chunks -------------------------------------------------------------------
    def documents(self) -> list[Document]:
        return [self._document_from(r) for r in self._rows("SELECT * FROM documents ORDER BY id")]

    def document_headers(self) -> list[Document]:
        """Every document, ordered by id, without its text and sections (``text`` is empty): what a
        listing or a scope check needs, without reading every document's text into memory."""
        sql = (
            "SELECT id, title, path, format, content_hash, metadata, first_line, '' AS text,"
            f" {self.EMPTY_SECTIONS} AS sections FROM documents ORDER BY id"
        )
        return [self._document_from(r) for r in self._rows(sql)]

    def document(self, doc_id: str) -> Document | None:
        rows = self._rows(f"SELECT * FROM documents WHERE id = {self.MARK}", (doc_id,))
        return self._document_from(rows[0]) if rows else None

    def chunks(self, doc_id: str | None = None) -> list[Chunk]:
        """All chunks (or one document's), ordered by document id then position."""
        if doc_id is None:
            rows = self._rows(f"{self.CHUNK_SELECT} ORDER BY c.doc_id, c.n")
        else:
            rows = self._rows(f"{self.CHUNK_SELECT} WHERE c.doc_id = {self.MARK} ORDER BY c.n", (doc_id,))
        return [self._chunk_from(r) for r in rows]

    def iter_chunks(self, batch: int = 5000) -> Iterator[list[Chunk]]:
        """Every chunk in ``chunks()`` order, ``batch`` at a time (for indexes too large to list at once)."""
        if batch < 1:
            raise ValueError(f"batch: must be at least 1, got {batch}")
        m = self.MARK
        last: tuple[str, int] | None = None
        while True:  # keyset pages: no lock or cursor is held between batches
            if last is None:
                rows = self._rows(f"{self.CHUNK_SELECT} ORDER BY c.doc_id, c.n LIMIT {m}", (batch,))
            else:
                where = f"WHERE (c.doc_id, c.n) > ({m}, {m})"
                rows = self._rows(f"{self.CHUNK_SELECT} {where} ORDER BY c.doc_id, c.n LIMIT {m}", (*last, batch))
            if not rows:
                return
            last = (rows[-1]["doc_id"], rows[-1]["n"])
            yield [self._chunk_from(r) for r in rows]

    def document_builds(self) -> dict[str, int | None]:
        """Every stored document id with the id of the build that last wrote it (what changed since a build)."""
        return {r["id"]: r["build_id"] for r in self._rows("SELECT id, build_id FROM documents")}

    def chunk(self, chunk_id: str) -> Chunk | None:
        rows = self._rows(f"{self.CHUNK_SELECT} WHERE c.id = {self.MARK}", (chunk_id,))
        return self._chunk_from(rows[0]) if rows else None

    def chunks_by_id(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """The chunks with these ids, in the order asked (ids not stored are left out)."""
        found: dict[str, Chunk] = {}
        ids = list(dict.fromkeys(chunk_ids))
        for start in range(0, len(ids), IN_BATCH):
            part = ids[start : start + IN_BATCH]
            marks = ",".join([self.MARK] * len(part))
            for r in self._rows(f"{self.CHUNK_SELECT} WHERE c.id IN ({marks})", part):
                chunk = self._chunk_from(r)
                found[chunk.id] = chunk
        return [found[i] for i in chunk_ids if i in found]

    def chunk_ids(self) -> list[str]:
        """Every chunk id, in ``chunks()`` order."""
        return [r["id"] for r in self._rows("SELECT id FROM chunks ORDER BY doc_id, n")]

    def chunk_count(self) -> int:
        return int(self._rows("SELECT count(*) AS n FROM chunks")[0]["n"])

    def chunk_counts(self) -> dict[str, int]:
        """Number of chunks per document id (documents without chunks are absent)."""
        rows = self._rows("SELECT doc_id, count(*) AS n FROM chunks GROUP BY doc_id")
        return {r["doc_id"]: int(r["n"]) for r in rows}

    # -- builds ---------------------------------------------------------------------------------
    def _build(self, row: Any) -> Build:
        return Build(
            id=int(row["id"]),
            created_at=row["created_at"],
            chunking=self._json_from(row["chunking"]),
            chunking_hash=row["chunking_hash"],
            n_documents=int(row["n_documents"]),
            n_chunks=int(row["n_chunks"]),
            report=self._json_from(row["report"]),
        )

    def builds(self) -> list[Build]:
        """Every recorded build, oldest first."""
        return [self._build(r) for r in self._rows("SELECT * FROM builds ORDER BY id")]

    def latest_build(self) -> Build | None:
        rows = self._rows("SELECT * FROM builds ORDER BY id DESC LIMIT 1")
        return self._build(rows[0]) if rows else None

    def tenants(self) -> list[str]:
        """The distinct tenants of the stored documents, sorted."""
        return sorted(str(r["tenant"]) for r in self._rows("SELECT DISTINCT tenant FROM documents"))

    def latest_build_id(self) -> int | None:
        """The latest build's id without reading its report (a search checks it on every call)."""
        rows = self._rows("SELECT MAX(id) AS id FROM builds")
        return None if not rows or rows[0]["id"] is None else int(rows[0]["id"])

    # -- traces ---------------------------------------------------------------------------------
    # ``owner`` names the API key that made a record (None: made outside the service); a read with
    # an owner returns only that key's records.
    def _where(self, owner: str | None, **equal: Any) -> tuple[str, list[Any]]:
        """A `` WHERE`` clause and its parameters: each column equals its value and, with ``owner``,
        only that key's records match (``""`` when there is nothing to match)."""
        if owner is not None:
            equal["owner"] = owner
        clause = " AND ".join(f"{column} = {self.MARK}" for column in equal)
        return (f" WHERE {clause}" if clause else ""), list(equal.values())

    def save_trace(
        self, trace_id: str, data: Mapping[str, object], owner: str | None = None, keep: int | None = DEFAULT_TRACE_KEEP
    ) -> None:
        """Save (or replace) a trace under ``trace_id``; then only the ``keep`` newest are kept (None: all)."""
        if not trace_id:
            raise ValueError("trace_id: must not be empty")
        if keep is not None and keep < 1:
            raise ValueError(f"keep: must be at least 1, got {keep}")
        self._put_trace(trace_id, now(), plain_json(data), owner)
        if keep is not None:
            m = self.MARK
            self._rows(
                f"DELETE FROM traces WHERE id NOT IN (SELECT id FROM traces ORDER BY {self.TRACE_ORDER} LIMIT {m})"
                " RETURNING id",
                (keep,),
            )

    def load_trace(self, trace_id: str, owner: str | None = None) -> JsonObject | None:
        """The trace saved under ``trace_id``; with ``owner``, only when that key made it."""
        where, params = self._where(owner, id=trace_id)
        rows = self._rows(f"SELECT data FROM traces{where}", params)
        return dict(self._json_from(rows[0]["data"])) if rows else None

    def traces(self, limit: int = 50, owner: str | None = None) -> list[JsonObject]:
        """The ``limit`` most recently saved traces, newest first (with ``owner``: only that key's)."""
        if limit < 1:
            raise ValueError(f"limit: must be at least 1, got {limit}")
        where, params = self._where(owner)
        query = f"SELECT data FROM traces{where} ORDER BY {self.TRACE_ORDER} LIMIT {self.MARK}"
        rows = self._rows(query, [*params, limit])
        return [dict(self._json_from(r["data"])) for r in rows]

    # -- evaluation runs ------------------------------------------------------------------------
    def save_eval_run(self, data: Mapping[str, object], owner: str | None = None) -> int:
        """Save an evaluation run made by the key ``owner`` and return its id; ``build_id`` is taken
        from ``data`` (a build id) or the latest build."""
        given = data.get("build_id")
        build_id = given if isinstance(given, int) else None
        if build_id is None:
            latest = self.latest_build()
            build_id = latest.id if latest else None
        return self._put_eval_run(now(), build_id, plain_json(data), owner)

    def _eval_run(self, row: Any) -> JsonObject:
        return {
            **self._json_from(row["data"]),
            "id": int(row["id"]),
            "created_at": row["created_at"],
            "build_id": row["build_id"],
        }

    def load_eval_run(self, run_id: int, owner: str | None = None) -> JsonObject | None:
        """The saved data with ``id``, ``created_at`` and ``build_id`` added (with ``owner``: only that key's)."""
        where, params = self._where(owner, id=run_id)
        rows = self._rows(f"SELECT * FROM eval_runs{where}", params)
        return self._eval_run(rows[0]) if rows else None

    def eval_runs(self, owner: str | None = None) -> list[JsonObject]:
        """Every evaluation run, oldest first, each as load_eval_run returns it (with ``owner``: only that key's)."""
        where, params = self._where(owner)
        return [self._eval_run(r) for r in self._rows(f"SELECT * FROM eval_runs{where} ORDER BY id", params)]


__all__ = ["DEFAULT_TRACE_KEEP", "IN_BATCH", "StoreBase", "plain_json"]
