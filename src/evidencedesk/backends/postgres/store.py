"""PgStore: the scale-out system of record in PostgreSQL with pgvector, with the embedded Store's methods.

Documents and chunks are stored with their metadata as columns; each chunk also gets a BM25 row
(term frequencies and encoded ``sparsevec`` weights) and, once an embedder is in use, a dense
vector under an HNSW index. Every write (sync, upsert, delete) is one transaction under an
advisory lock, and leaves both index sides complete and current before it commits, so a search
always sees the last committed ingest and never a half-written one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import psycopg
from psycopg import sql
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from evidencedesk.backends.postgres.bm25_sparse import BM25Encoder
from evidencedesk.backends.postgres.connection import open_pool
from evidencedesk.backends.postgres.ingest import PgIngestWriter
from evidencedesk.backends.postgres.replicas import ReadRouter, open_read_pool, split_replicas
from evidencedesk.backends.postgres.rows import CHUNK_SELECT, chunk_from_record, document_from_record
from evidencedesk.backends.postgres.schema import DEFAULT_SCHEMA, lock
from evidencedesk.backends.postgres.writer import Item, Writer
from evidencedesk.documents import Chunk, Document
from evidencedesk.index.bm25_weight import DEFAULT_B, DEFAULT_K1, check_params
from evidencedesk.index.embedders import Embedder, embedder_from_name
from evidencedesk.index.embedding_cache import EmbeddingCache
from evidencedesk.retrieval.candidates import Searcher
from evidencedesk.store.base import StoreBase
from evidencedesk.store.contract import Chunker, VectorModel
from evidencedesk.store.ingest_plan import DocumentWriter
from evidencedesk.store.json_data import JsonObject
from evidencedesk.store.records import IngestReport
from evidencedesk.text.tokenizer import Tokenizer
from evidencedesk.urls import redact_url

T = TypeVar("T")


_TABLES = ("chunk_terms", "chunk_vectors", "chunks", "documents", "vocab", "bm25_blocks")


def _tidy(conn: psycopg.Connection, vacuum: Sequence[str] = _TABLES) -> None:
    """After a write: reclaim the row versions it replaced in ``vacuum`` (re-encoding rewrites every term
    row, a rebuild every block, and a search reads them) and refresh the planner's statistics of every
    table (ANALYZE samples, so it stays quick at any size). Runs outside the write's transaction."""
    rest = [t for t in _TABLES if t not in vacuum]
    if vacuum:
        conn.execute(f"VACUUM (ANALYZE) {', '.join(vacuum)}")
    if rest:
        conn.execute(f"ANALYZE {', '.join(rest)}")


class PgStore(StoreBase):
    """A store in schema ``schema`` of the PostgreSQL database at ``url`` (created and migrated if needed).

    ``tokenizer``, ``k1``, ``b`` and ``contextual`` (index each chunk after its ``title > heading path``
    line) set the BM25 side; left None, the store keeps what it was built with (the defaults for a new
    store). A change re-tokenises or re-encodes the stored chunks.
    ``embedder``: when given, every write also embeds new chunks (through ``cache_path``); a store
    that already holds vectors keeps them current with the model it names, even without one.
    ``replicas``: URLs of read-only streaming replicas of this database (or ``?replicas=HOST:PORT,...``
    in ``url``); searches then read from them in turn while every write goes to the primary.
    """

    MARK = "%s"
    EMPTY_SECTIONS = "'[]'::jsonb"
    CHUNK_SELECT = CHUNK_SELECT
    TRACE_ORDER = "created_at DESC, seq DESC"

    def __init__(
        self,
        url: str,
        *,
        schema: str = DEFAULT_SCHEMA,
        chunker: Chunker | None = None,
        tokenizer: Tokenizer | None = None,
        k1: float | None = None,
        b: float | None = None,
        contextual: bool | None = None,
        embedder: Embedder | None = None,
        cache_path: str | Path | None = None,
        min_size: int = 1,
        max_size: int = 4,
        timeout: float = 10.0,
        replicas: Sequence[str] = (),
    ) -> None:
        if isinstance(replicas, str):
            raise ValueError("replicas: must be a list of URLs, not one string")
        url, named = split_replicas(url)
        if chunker is None:
            from evidencedesk.chunking import chunk_document

            chunker = chunk_document
        if tokenizer is not None and not isinstance(tokenizer, Tokenizer):
            raise ValueError(f"tokenizer: expected a Tokenizer, got {type(tokenizer).__name__}")
        check_params(k1 if k1 is not None else DEFAULT_K1, b if b is not None else DEFAULT_B)
        self.url = url
        self.schema = schema
        self.embedder = embedder
        self._chunker: Chunker = chunker
        self._cache = EmbeddingCache(cache_path) if cache_path is not None else None
        self._writer: Writer | None = None  # the last write's, for its timings
        self._embedders: dict[str, Embedder] = {}
        self.pool = open_pool(url, schema, min_size, max_size, timeout)
        self.replica_urls = [*named, *replicas]
        self.reads = ReadRouter(self.pool)
        try:
            for replica in self.replica_urls:
                self.reads.replicas.append(open_read_pool(replica, schema, min_size, max_size, timeout))
            self.reads = ReadRouter(self.pool, self.reads.replicas)
            self.encoder = self._stored_encoder()
            if self._bm25_wanted(tokenizer, k1, b, contextual).identity() != self.encoder.identity():
                self.configure_bm25(tokenizer, k1, b, contextual)
        except BaseException:
            self.close()
            raise

    def __repr__(self) -> str:
        return f"PgStore({redact_url(self.url)!r}, schema={self.schema!r})"

    # -- lifecycle -------------------------------------------------------------------------------
    def close(self) -> None:
        self.reads.close()
        self.pool.close()
        if self._cache is not None:
            self._cache.close()

    def destroy(self) -> None:
        """Drop the store's schema with everything in it, and close the store."""
        with self.pool.connection() as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(self.schema)))
        self.close()

    def vacuum(self) -> None:
        """``VACUUM (ANALYZE)`` every table of the store. A bulk insert leaves its tables for autovacuum
        to scan later (to set the visibility map); after a large load, running it here does that work
        at once instead of beside the first queries (docs/scale-out.md)."""
        with self.pool.connection() as conn:
            _tidy(conn)

    @property
    def last_timings(self) -> dict[str, float]:
        """Seconds the last write spent building the BM25 postings ("blocks") and the HNSW index ("hnsw")."""
        return dict(self._writer.timings) if self._writer is not None else {}

    def wait_for_replicas(self, timeout: float = 30.0) -> None:
        """Block until every replica has replayed all the primary has committed (no-op without replicas)."""
        self.reads.wait(timeout)

    # -- writes ----------------------------------------------------------------------------------
    def _write(self, work: Callable[[Writer], T]) -> T:
        """Run ``work`` in one locked transaction, then bring BM25 weights and vectors up to date."""
        with self.pool.connection() as conn:
            with conn.transaction():
                lock(conn, self.schema)
                writer = self._writer = Writer(conn, self.encoder)
                vectors = self._vector_embedder(writer)
                if vectors is not None:  # each round of the write carries its chunks' vectors
                    writer.vectors = (vectors[0], self._cache, vectors[1])
                result = work(writer)
                writer.encode()
                if vectors is not None:  # any chunk still without a vector (e.g. written before the model)
                    writer.fill_vectors(vectors[0], self._cache, contextual=vectors[1])
                    writer.ensure_hnsw()
            # a bulk insert leaves no dead rows (autovacuum sets the visibility map later); rewrites do
            if writer.rewrote or writer.blocks in ("rebuilt", "merged"):
                _tidy(conn, [*(["chunk_terms"] if writer.rewrote else []), "vocab", "bm25_blocks"])
            return result

    def _vector_embedder(self, writer: Writer) -> tuple[Embedder, bool] | None:
        """The embedder (and whether it embeds contextual text) that keeps the stored vectors current."""
        row = writer.conn.execute("SELECT value FROM settings WHERE key = 'vectors'").fetchone()
        contextual = bool(row[0].get("contextual", False)) if row is not None else False
        if self.embedder is not None:
            writer.configure_vectors(self.embedder.name, self.embedder.dim, contextual)
            return self.embedder, contextual
        if row is None:
            return None
        name = row[0]["model"]
        if name not in self._embedders:
            self._embedders[name] = embedder_from_name(name)
        return self._embedders[name], contextual

    def upsert(self, items: Iterable[tuple[Document, Sequence[Chunk]]], chunking_hash: str = "") -> int:
        """Store each document with exactly the given chunks, replacing any stored version; returns chunks written."""
        batch: list[Item] = [(doc, list(chunks)) for doc, chunks in items]
        for doc, chunks in batch:
            wrong = next((c.id for c in chunks if c.doc_id != doc.id), None)
            if wrong is not None:
                raise ValueError(f"chunks: chunk {wrong} does not belong to document {doc.id}")
        if len({doc.id for doc, _ in batch}) != len(batch):
            raise ValueError("items: a document id appears twice")

        def work(writer: Writer) -> int:
            writer.replace(batch, chunking_hash, None)
            return sum(len(chunks) for _, chunks in batch)

        return self._write(work)

    def delete(self, doc_ids: Iterable[str]) -> int:
        """Delete documents with all their chunks; returns how many chunks left the store."""
        if isinstance(doc_ids, str):
            raise ValueError("doc_ids: must be a list of document ids, not one string")
        ids = list(dict.fromkeys(doc_ids))
        return self._write(lambda writer: writer.delete(ids))

    def configure_bm25(
        self,
        tokenizer: Tokenizer | None = None,
        k1: float | None = None,
        b: float | None = None,
        contextual: bool | None = None,
    ) -> None:
        """Change the BM25 settings: a new tokenizer or contextual setting re-tokenises every chunk, new k1/b
        re-encode the weights."""
        new = self._bm25_wanted(tokenizer, k1, b, contextual)
        with self.pool.connection() as conn:
            with conn.transaction():
                lock(conn, self.schema)
                writer = Writer(conn, new)
                if new.tokenizer != self.encoder.tokenizer or new.contextual != self.encoder.contextual:
                    writer.retokenize()
                conn.execute("UPDATE bm25_stats SET tokenizer = %s", (Jsonb(new.tokenizer.to_dict()),))
                conn.execute(
                    "INSERT INTO settings (key, value) VALUES ('bm25_contextual', %s)"
                    " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                    (Jsonb(new.contextual),),
                )
                writer.encode(force=True)
            _tidy(conn)
        self.encoder = new

    def _bm25_wanted(
        self, tokenizer: Tokenizer | None, k1: float | None, b: float | None, contextual: bool | None = None
    ) -> BM25Encoder:
        """The stored BM25 settings with the given ones put in their place."""
        return BM25Encoder(
            tokenizer or self.encoder.tokenizer,
            k1 if k1 is not None else self.encoder.k1,
            b if b is not None else self.encoder.b,
            contextual if contextual is not None else self.encoder.contextual,
        )

    def _stored_encoder(self) -> BM25Encoder:
        with self.pool.connection() as conn, conn.transaction():
            row = conn.execute("SELECT tokenizer, k1, b FROM bm25_stats").fetchone()
            if row is None:
                raise RuntimeError("bm25_stats has no row (the schema is damaged)")
            tokenizer = Tokenizer.from_dict(row[0]) if row[0] is not None else Tokenizer()
            if row[0] is None:
                conn.execute("UPDATE bm25_stats SET tokenizer = %s", (Jsonb(tokenizer.to_dict()),))
            flag = conn.execute("SELECT value FROM settings WHERE key = 'bm25_contextual'").fetchone()
            return BM25Encoder(tokenizer, row[1], row[2], bool(flag[0]) if flag is not None else False)

    def ensure_vectors(
        self,
        embedder: Embedder,
        cache_path: str | Path | None = None,
        batch_size: int = 32,
        contextual: bool = False,
    ) -> int:
        """Make the store hold ``embedder``'s vectors for every chunk, of its text after its context line when
        ``contextual`` (switching models or text re-embeds everything).

        Returns how many chunks were embedded now (0 when the store was complete).
        """
        cache = EmbeddingCache(cache_path) if cache_path is not None else self._cache
        try:
            with self.pool.connection() as conn:
                with conn.transaction():
                    lock(conn, self.schema)
                    writer = self._writer = Writer(conn, self.encoder)
                    writer.configure_vectors(embedder.name, embedder.dim, contextual)
                    done = writer.fill_vectors(embedder, cache, batch_size, contextual)
                    writer.ensure_hnsw()
                if done:
                    _tidy(conn)
        finally:
            if cache is not None and cache is not self._cache:
                cache.close()
        self._embedders[embedder.name] = embedder
        return done

    def searcher(self, method: str, **params: Any) -> Searcher:
        """A searcher of ``method`` over this store: bm25 and dense search inside the database (see ``pg_searcher``)."""
        from evidencedesk.backends.postgres.factory import pg_searcher

        return pg_searcher(method, self, **params)

    def vector_model(self) -> VectorModel | None:
        """``{"model", "dim", "contextual"}`` of the vectors the store holds, or None."""
        rows = self._rows("SELECT value FROM settings WHERE key = 'vectors'")
        if not rows:
            return None
        value = rows[0]["value"]
        found = VectorModel(model=value["model"], dim=value["dim"])
        if "contextual" in value:
            found["contextual"] = value["contextual"]
        return found

    # -- the primitives StoreBase needs ------------------------------------------------------------
    def _rows(self, query: str, params: Sequence[Any] = ()) -> list[Any]:
        with self.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            return cur.execute(query.encode(), params).fetchall()

    def _document_from(self, row: Any) -> Document:
        return document_from_record(row)

    def _chunk_from(self, row: Any) -> Chunk:
        return chunk_from_record(row)

    def _json_from(self, value: Any) -> Any:
        return value  # jsonb arrives parsed

    def _ingest(self, work: Callable[[DocumentWriter], IngestReport]) -> IngestReport:
        return self._write(lambda writer: work(PgIngestWriter(writer)))

    def _put_trace(self, trace_id: str, created_at: str, data: JsonObject, owner: str | None) -> None:
        with self.pool.connection() as conn:
            conn.execute(
                "INSERT INTO traces (id, created_at, data, owner) VALUES (%s, %s, %s, %s)"
                " ON CONFLICT (id) DO UPDATE SET created_at = EXCLUDED.created_at, data = EXCLUDED.data,"
                " owner = EXCLUDED.owner, seq = DEFAULT",
                (trace_id, created_at, Jsonb(data), owner),
            )

    def _put_eval_run(self, created_at: str, build_id: int | None, data: JsonObject, owner: str | None) -> int:
        with self.pool.connection() as conn:
            row = conn.execute(
                "INSERT INTO eval_runs (created_at, build_id, data, owner) VALUES (%s, %s, %s, %s) RETURNING id",
                (created_at, build_id, Jsonb(data), owner),
            ).fetchone()
        return int(row[0]) if row else 0
