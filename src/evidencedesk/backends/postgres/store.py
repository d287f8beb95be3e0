"""PgStore: the scale-out system of record in PostgreSQL with pgvector, with the embedded Store's methods.

Documents and chunks are stored with their metadata as columns; each chunk also gets a BM25 row
(term frequencies and encoded ``sparsevec`` weights) and, once an embedder is in use, a dense
vector under an HNSW index. Every write (ingest, sync, upsert, delete) is one transaction under an
advisory lock, and leaves both index sides complete and current before it commits, so a search
always sees the last committed ingest and never a half-written one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence, Sized
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import psycopg
from psycopg import sql
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from evidencedesk.backends.postgres.bm25_sparse import BM25Encoder, check_params
from evidencedesk.backends.postgres.connection import open_pool, redact
from evidencedesk.backends.postgres.ingest import PgRun
from evidencedesk.backends.postgres.records import RecordsMixin
from evidencedesk.backends.postgres.replicas import ReadRouter, open_read_pool, split_replicas
from evidencedesk.backends.postgres.rows import CHUNK_SELECT, chunk_from_record, document_from_record
from evidencedesk.backends.postgres.schema import DEFAULT_SCHEMA, lock
from evidencedesk.backends.postgres.writer import Item, Writer
from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.documents import Chunk, Document
from evidencedesk.index.embedders import Embedder, embedder_from_name
from evidencedesk.index.embedding_cache import EmbeddingCache
from evidencedesk.index.tokenize import Tokenizer
from evidencedesk.ingest.errors import IngestError
from evidencedesk.ingest.folder import parse_file, scan
from evidencedesk.ingest.raw import DEFAULT_MAX_BYTES
from evidencedesk.store.apply import Chunker, Progress
from evidencedesk.store.records import IngestReport

T = TypeVar("T")


def _tidy(conn: psycopg.Connection) -> None:
    """After a write: reclaim the row versions it replaced (re-encoding rewrites every term row, and a
    search scans them) and refresh the planner's statistics. Runs outside the write's transaction."""
    conn.execute("VACUUM (ANALYZE) chunk_terms, chunk_vectors, chunks, documents, vocab")


class PgStore(RecordsMixin):
    """A store in schema ``schema`` of the PostgreSQL database at ``url`` (created and migrated if needed).

    ``tokenizer``, ``k1`` and ``b`` set the BM25 side; left None, the store keeps what it was built
    with (the defaults for a new store). A change re-tokenises or re-encodes the stored chunks.
    ``embedder``: when given, every write also embeds new chunks (through ``cache_path``); a store
    that already holds vectors keeps them current with the model it names, even without one.
    ``replicas``: URLs of read-only streaming replicas of this database (or ``?replicas=HOST:PORT,...``
    in ``url``); searches then read from them in turn while every write goes to the primary.
    """

    def __init__(
        self,
        url: str,
        *,
        schema: str = DEFAULT_SCHEMA,
        chunker: Chunker | None = None,
        tokenizer: Tokenizer | None = None,
        k1: float | None = None,
        b: float | None = None,
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
            from evidencedesk.chunking import chunk_document as chunker
        if tokenizer is not None and not isinstance(tokenizer, Tokenizer):
            raise ValueError(f"tokenizer: expected a Tokenizer, got {type(tokenizer).__name__}")
        check_params(k1 if k1 is not None else 1.5, b if b is not None else 0.75)
        self.url = url
        self.schema = schema
        self.embedder = embedder
        self._chunker: Chunker = chunker
        self._cache = EmbeddingCache(cache_path) if cache_path is not None else None
        self._embedders: dict[str, Embedder] = {}
        self.pool = open_pool(url, schema, min_size, max_size, timeout)
        self.replica_urls = [*named, *replicas]
        self.reads = ReadRouter(self.pool)
        try:
            for replica in self.replica_urls:
                self.reads.replicas.append(open_read_pool(replica, schema, min_size, max_size, timeout))
            self.reads = ReadRouter(self.pool, self.reads.replicas)
            self.encoder = self._stored_encoder()
            if self._bm25_wanted(tokenizer, k1, b).identity() != self.encoder.identity():
                self.configure_bm25(tokenizer, k1, b)
        except BaseException:
            self.close()
            raise

    def __repr__(self) -> str:
        return f"PgStore({redact(self.url)!r}, schema={self.schema!r})"

    # -- lifecycle -------------------------------------------------------------------------------
    def close(self) -> None:
        self.reads.close()
        self.pool.close()
        if self._cache is not None:
            self._cache.close()

    def __enter__(self) -> PgStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def destroy(self) -> None:
        """Drop the store's schema with everything in it, and close the store."""
        with self.pool.connection() as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(self.schema)))
        self.close()

    def wait_for_replicas(self, timeout: float = 30.0) -> None:
        """Block until every replica has replayed all the primary has committed (no-op without replicas)."""
        self.reads.wait(timeout)

    # -- writes ----------------------------------------------------------------------------------
    def _write(self, work: Callable[[Writer], T]) -> T:
        """Run ``work`` in one locked transaction, then bring BM25 weights and vectors up to date."""
        with self.pool.connection() as conn:
            with conn.transaction():
                lock(conn, self.schema)
                writer = Writer(conn, self.encoder)
                result = work(writer)
                writer.encode()
                embedder = self._vector_embedder(writer)
                if embedder is not None:
                    writer.fill_vectors(embedder, self._cache)
                    writer.ensure_hnsw()
            if writer.rewrote:  # other writes leave few dead rows: autovacuum's pace is enough
                _tidy(conn)
            return result

    def _vector_embedder(self, writer: Writer) -> Embedder | None:
        row = writer.conn.execute("SELECT value FROM settings WHERE key = 'vectors'").fetchone()
        if self.embedder is not None:
            writer.configure_vectors(self.embedder.name, self.embedder.dim)
            return self.embedder
        if row is None:
            return None
        name = row[0]["model"]
        if name not in self._embedders:
            self._embedders[name] = embedder_from_name(name)
        return self._embedders[name]

    def ingest(
        self,
        folder: Path,
        config: ChunkingConfig,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        progress: Progress | None = None,
        remove_missing: bool = True,
    ) -> IngestReport:
        """Parse every supported file under ``folder``, store what changed and record a build (as Store.ingest)."""
        if max_bytes < 1:
            raise ValueError(f"max_bytes: must be at least 1, got {max_bytes}")
        listing = scan(Path(folder))

        def parsed() -> Iterator[Document | IngestError]:
            for path, rel in listing.files:
                try:
                    yield parse_file(path, rel, max_bytes)
                except IngestError as exc:
                    yield exc

        def work(writer: Writer) -> IngestReport:
            run = PgRun(writer, config, self._chunker)
            run.feed(parsed(), len(listing.files), progress)
            return run.finish(remove_missing=remove_missing, skipped=listing.skipped)

        return self._write(work)

    def sync(
        self,
        documents: Iterable[Document],
        config: ChunkingConfig,
        *,
        failures: Iterable[IngestError] = (),
        remove_missing: bool = True,
    ) -> IngestReport:
        """Store already parsed documents the way ingest stores a folder's files (as Store.sync)."""
        total = len(documents) if isinstance(documents, Sized) else 0

        def work(writer: Writer) -> IngestReport:
            run = PgRun(writer, config, self._chunker)
            run.feed(documents, total)
            run.feed(failures)
            return run.finish(remove_missing=remove_missing)

        return self._write(work)

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
        self, tokenizer: Tokenizer | None = None, k1: float | None = None, b: float | None = None
    ) -> None:
        """Change the BM25 settings: a new tokenizer re-tokenises every chunk, new k1/b re-encode the weights."""
        new = self._bm25_wanted(tokenizer, k1, b)
        with self.pool.connection() as conn:
            with conn.transaction():
                lock(conn, self.schema)
                writer = Writer(conn, new)
                if new.tokenizer != self.encoder.tokenizer:
                    writer.retokenize()
                conn.execute("UPDATE bm25_stats SET tokenizer = %s", (Jsonb(new.tokenizer.to_dict()),))
                writer.encode(force=True)
            _tidy(conn)
        self.encoder = new

    def _bm25_wanted(self, tokenizer: Tokenizer | None, k1: float | None, b: float | None) -> BM25Encoder:
        """The stored BM25 settings with the given ones put in their place."""
        return BM25Encoder(
            tokenizer or self.encoder.tokenizer,
            k1 if k1 is not None else self.encoder.k1,
            b if b is not None else self.encoder.b,
        )

    def _stored_encoder(self) -> BM25Encoder:
        with self.pool.connection() as conn, conn.transaction():
            row = conn.execute("SELECT tokenizer, k1, b FROM bm25_stats").fetchone()
            if row is None:
                raise RuntimeError("bm25_stats has no row (the schema is damaged)")
            tokenizer = Tokenizer.from_dict(row[0]) if row[0] is not None else Tokenizer()
            if row[0] is None:
                conn.execute("UPDATE bm25_stats SET tokenizer = %s", (Jsonb(tokenizer.to_dict()),))
            return BM25Encoder(tokenizer, row[1], row[2])

    def ensure_vectors(self, embedder: Embedder, cache_path: str | Path | None = None, batch_size: int = 32) -> int:
        """Make the store hold ``embedder``'s vectors for every chunk (switching models re-embeds everything).

        Returns how many chunks were embedded now (0 when the store was complete).
        """
        cache = EmbeddingCache(cache_path) if cache_path is not None else self._cache
        try:
            with self.pool.connection() as conn:
                with conn.transaction():
                    lock(conn, self.schema)
                    writer = Writer(conn, self.encoder)
                    writer.configure_vectors(embedder.name, embedder.dim)
                    done = writer.fill_vectors(embedder, cache, batch_size)
                    writer.ensure_hnsw()
                if done:
                    _tidy(conn)
        finally:
            if cache is not None and cache is not self._cache:
                cache.close()
        self._embedders[embedder.name] = embedder
        return done

    def vector_model(self) -> dict[str, Any] | None:
        """``{"model", "dim"}`` of the vectors the store holds, or None."""
        rows = self._rows("SELECT value FROM settings WHERE key = 'vectors'")
        return dict(rows[0]["value"]) if rows else None

    # -- reading ---------------------------------------------------------------------------------
    def _rows(self, query: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            return cur.execute(query.encode(), params).fetchall()

    def documents(self) -> list[Document]:
        return [document_from_record(r) for r in self._rows("SELECT * FROM documents ORDER BY id")]

    def document(self, doc_id: str) -> Document | None:
        rows = self._rows("SELECT * FROM documents WHERE id = %s", (doc_id,))
        return document_from_record(rows[0]) if rows else None

    def chunks(self, doc_id: str | None = None) -> list[Chunk]:
        """All chunks (or one document's), ordered by document id then position."""
        if doc_id is None:
            rows = self._rows(f"{CHUNK_SELECT} ORDER BY c.doc_id, c.n")
        else:
            rows = self._rows(f"{CHUNK_SELECT} WHERE c.doc_id = %s ORDER BY c.n", (doc_id,))
        return [chunk_from_record(r) for r in rows]

    def chunk(self, chunk_id: str) -> Chunk | None:
        rows = self._rows(f"{CHUNK_SELECT} WHERE c.id = %s", (chunk_id,))
        return chunk_from_record(rows[0]) if rows else None

    def chunk_counts(self) -> dict[str, int]:
        """Number of chunks per document id (documents without chunks are absent)."""
        return {r["doc_id"]: r["n"] for r in self._rows("SELECT doc_id, count(*) AS n FROM chunks GROUP BY doc_id")}
