"""Writing to the PostgreSQL store inside an open transaction: replace documents with their chunks
(bulk, with COPY), delete documents, keep the BM25 side encoded and the dense side filled.

Replacing a document deletes its previous rows first (the chunks, their term rows and vectors go
with it through ON DELETE CASCADE), so a changed document never leaves a stale chunk behind.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from evidencedesk.backends.postgres import binary_rows as binary
from evidencedesk.backends.postgres import bm25_blocks
from evidencedesk.backends.postgres.bm25_drift import drifted
from evidencedesk.backends.postgres.bm25_sparse import ENCODE_ALL, ENCODE_NEW, SPARSE_DIM, BM25Encoder, TermCounts
from evidencedesk.backends.postgres.rows import (
    CHUNK_SELECT,
    CHUNK_TYPES,
    DOCUMENT_TYPES,
    SCOPE_COLUMNS,
    chunk_from_record,
    chunk_row,
    document_row,
    scope_values,
)
from evidencedesk.documents import Chunk, Document, Location
from evidencedesk.index.embedders import Embedder
from evidencedesk.index.embedding_cache import EmbeddingCache, embed_cached
from evidencedesk.retrieval.contextual import index_text
from evidencedesk.store.json_data import JsonObject
from evidencedesk.store.rows import CHUNK_COLUMNS, DOCUMENT_COLUMNS

Item = tuple[Document, Sequence[Chunk]]
_TERM_COLUMNS = ("chunk_id", *SCOPE_COLUMNS, "dl", "terms", "tfs", "weights", "row_id")
_RESERVE = (
    "SELECT setval(pg_get_serial_sequence('chunk_terms', 'row_id'),"
    " nextval(pg_get_serial_sequence('chunk_terms', 'row_id')) + %s - 1)"
)
_VECTOR_COLUMNS = ("chunk_id", *SCOPE_COLUMNS, "embedding")
FILL_BATCH = 2000
WRITE_BATCH = 2000  # chunks per COPY round of one replace
HNSW_BUILD_MEMORY_MB = 4096  # the most maintenance_work_mem an HNSW build asks for


def copy_rows(
    conn: psycopg.Connection, table: str, columns: Sequence[str], types: Sequence[str], rows: Sequence[Sequence[Any]]
) -> None:
    """Bulk insert with a binary COPY."""
    if not rows:
        return
    statement = f"COPY {table} ({', '.join(columns)}) FROM STDIN WITH (FORMAT BINARY)"
    with conn.cursor() as cur, cur.copy(statement.encode()) as copy:
        copy.set_types(list(types))
        for row in rows:
            copy.write_row(row)


class Vocabulary:
    """Term ids, created in the ``vocab`` table on first sight and remembered for the transaction."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn
        self.ids: dict[str, int] = {}

    def forget(self) -> None:
        """Drop the remembered ids (after a rollback to a savepoint, some may no longer exist)."""
        self.ids.clear()

    def lookup(self, terms: set[str]) -> dict[str, int]:
        missing = sorted(t for t in terms if t not in self.ids)
        if missing:
            self.conn.execute(
                "INSERT INTO vocab (term) SELECT unnest(%s::text[]) ON CONFLICT (term) DO NOTHING", (missing,)
            )
            rows = self.conn.execute("SELECT term, id FROM vocab WHERE term = ANY(%s::text[])", (missing,))
            self.ids.update(rows.fetchall())
        return self.ids


def _meta(chunk: Chunk, last: list[Any]) -> JsonObject:
    """The chunk's metadata as a dict, converted once for a run of chunks with equal metadata (a document's);
    ``last`` holds the previous chunk's (metadata, dict)."""
    m = chunk.metadata
    if last[0] is not m and last[0] != m:
        last[0], last[1] = m, m.to_dict()
    return last[1]  # type: ignore[no-any-return]


def _rounds(items: Sequence[Item], size: int) -> Iterator[Sequence[Item]]:
    """``items`` in consecutive runs of about ``size`` chunks (whole documents)."""
    start, n = 0, 0
    for i, (_, chunks) in enumerate(items):
        n += len(chunks)
        if n >= size:
            yield items[start : i + 1]
            start, n = i + 1, 0
    if start < len(items):
        yield items[start:]


class Writer:
    """Every write of one transaction on ``conn``."""

    def __init__(self, conn: psycopg.Connection, encoder: BM25Encoder) -> None:
        self.conn = conn
        self.encoder = encoder
        self.vocab = Vocabulary(conn)
        self.rewrote = False  # True once this transaction re-encoded every BM25 row
        self.blocks = "none"  # what the last ``encode`` did to the impact-ordered postings (bm25_blocks.refresh)
        # the postings this transaction added, for the blocks (None once some rows were left unencoded)
        self.pending: bm25_blocks.Postings | None = bm25_blocks.Postings()
        self.pending_avgdl: float | None = None
        self.df_added = np.zeros(0, dtype=np.int64)  # per term id: rows added, not yet in vocab.df
        # the embedder (with its cache, and whether it embeds contextual text) that writes each round's vectors
        self.vectors: tuple[Embedder, EmbeddingCache | None, bool] | None = None
        self.timings: dict[str, float] = {}  # seconds spent on the postings ("blocks") and the HNSW build ("hnsw")

    # -- documents and chunks ------------------------------------------------------------------------
    def delete(self, doc_ids: Sequence[str]) -> int:
        """Delete documents and (by cascade) their chunks, term rows and vectors; returns the chunks removed."""
        if not doc_ids:
            return 0
        ids = list(doc_ids)
        n = self.conn.execute("SELECT count(*) FROM chunks WHERE doc_id = ANY(%s::text[])", (ids,)).fetchone()
        self.conn.execute("DELETE FROM documents WHERE id = ANY(%s::text[])", (ids,))
        return int(n[0]) if n else 0

    def replace(self, items: Sequence[Item], chunking_hash: str, build_id: int | None) -> None:
        """Store each document with exactly ``chunks``, replacing any stored version.

        Written in rounds of about ``WRITE_BATCH`` chunks: while the server takes one round's COPY (on a
        second thread, which waits on the socket), this one tokenises the next round.
        """
        if not items:
            return
        df_added, kept = self.df_added.copy(), self._kept()
        try:
            self.delete([doc.id for doc, _ in items])
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="evidencedesk-copy") as server:
                running: Future[None] | None = None
                for part in _rounds(items, WRITE_BATCH):
                    prepared = self._prepare(part, chunking_hash, build_id)
                    if running is not None:
                        running.result()
                    running = server.submit(self._write_prepared, *prepared)
                if running is not None:
                    running.result()
        except BaseException:  # the caller rolls the database back (to a savepoint): forget these counts too
            self.df_added = df_added
            self._forget_since(kept)
            raise

    def _kept(self) -> tuple[int, int] | None:
        return None if self.pending is None else (len(self.pending.rows), self.pending.n_rows)

    def _forget_since(self, kept: tuple[int, int] | None) -> None:
        if self.pending is None or kept is None:
            self.pending = None  # unknown: the blocks read their postings back from the database
            return
        n, n_rows = kept
        for part in (self.pending.rows, self.pending.tenant, self.pending.term, self.pending.w):
            del part[n:]
        self.pending.n_rows = n_rows

    def _prepare(
        self, items: Sequence[Item], chunking_hash: str, build_id: int | None
    ) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[Chunk], list[TermCounts], np.ndarray | None]:
        """One round's document and chunk rows, the chunks' term counts and, when the store keeps vectors,
        their vectors (through the embedding cache); no database work."""
        metas: list[Any] = [None, None]
        docs = [document_row(doc, chunking_hash, build_id) for doc, _ in items]
        rows = [chunk_row(c, n, _meta(c, metas)) for _, cs in items for n, c in enumerate(cs)]
        chunks = [c for _, cs in items for c in cs]
        vectors = None
        if self.vectors is not None:
            embedder, cache, contextual = self.vectors
            texts = [
                index_text(Chunk(c.id, c.doc_id, c.text, location=c.location, title=doc.title), True)
                if contextual else c.text
                for doc, cs in items for c in cs
            ]  # fmt: skip
            vectors = embed_cached(embedder, texts, cache, batch_size=256)
        return docs, rows, chunks, [self.encoder.chunk_counts(c) for c in chunks], vectors

    def _write_prepared(
        self, docs: list[tuple[Any, ...]], rows: list[tuple[Any, ...]], chunks: list[Chunk], counts: list[TermCounts],
        vectors: np.ndarray | None,
    ) -> None:  # fmt: skip
        copy_rows(self.conn, "documents", DOCUMENT_COLUMNS, DOCUMENT_TYPES, docs)
        copy_rows(self.conn, "chunks", CHUNK_COLUMNS, CHUNK_TYPES, rows)
        self.add_terms(chunks, counts)
        if vectors is not None:
            self._copy_vectors([(c.id, *scope_values(c)) for c in chunks], vectors)

    def _copy_vectors(self, rows: Sequence[Sequence[Any]], vectors: np.ndarray) -> None:
        """COPY rows of ``chunk_vectors``: (chunk id, the seven scope values) and each row's vector."""
        data = binary.copy_data(
            (binary.text(r[0]), binary.text(r[1]), binary.text(r[2]), binary.text(r[3]), binary.text(r[4]),
             binary.text(r[5]), binary.day(r[6]), binary.day(r[7]), v)
            for r, v in zip(rows, binary.vectors(vectors), strict=True)
        )  # fmt: skip
        statement = f"COPY chunk_vectors ({', '.join(_VECTOR_COLUMNS)}) FROM STDIN WITH (FORMAT BINARY)"
        with self.conn.cursor() as cur, cur.copy(statement.encode()) as copy:
            copy.write(data)

    def add_terms(self, chunks: Sequence[Chunk], counts: Sequence[TermCounts] | None = None) -> None:
        """The BM25 rows of ``chunks``, their weights encoded at the store's encoded avgdl (see ``bm25_drift``);
        left NULL for ``encode`` when every row is due for re-encoding anyway. Written by binary COPY.
        ``counts``: the chunks' term counts when the caller has them already."""
        if counts is None:
            counts = [self.encoder.chunk_counts(c) for c in chunks]
        ids = self.vocab.lookup({t for tc in counts for t in tc.tf})
        avgdl = self._encoding_avgdl(len(counts), sum(tc.length for tc in counts))
        sizes = np.array([len(tc.tf) for tc in counts], dtype=np.int64)
        term = np.fromiter((ids[t] for tc in counts for t in tc.tf), dtype=np.int64, count=int(sizes.sum()))
        tf = np.fromiter((f for tc in counts for f in tc.tf.values()), dtype=np.int64, count=len(term))
        row_of = np.repeat(np.arange(len(counts)), sizes)
        order = np.lexsort((term, row_of))  # by chunk, then term id
        term, tf = term[order], tf[order]
        weights = None
        if avgdl is not None:
            dl = np.array([tc.length for tc in counts], dtype=np.float64)[row_of]
            weights = bm25_blocks.weights(tf, dl, self.encoder.k1, self.encoder.b, avgdl)
        ends = np.cumsum(sizes)
        last = self.conn.execute(_RESERVE, (len(counts),)).fetchone()
        assert last is not None
        row_ids = np.arange(int(last[0]) - len(counts) + 1, int(last[0]) + 1, dtype=np.int64)
        self._keep_postings(chunks, row_ids, sizes, term, weights, avgdl)
        rows = []
        for i, (c, tc) in enumerate(zip(chunks, counts, strict=True)):
            lo, hi = int(ends[i] - sizes[i]), int(ends[i])
            doc_id, status, audience, lang, tenant, valid_from, valid_to = scope_values(c)
            rows.append((
                binary.text(c.id), binary.text(doc_id), binary.text(status), binary.text(audience),
                binary.text(lang), binary.text(tenant), binary.day(valid_from), binary.day(valid_to),
                binary.int4(tc.length), binary.int4_array(term[lo:hi]), binary.int4_array(tf[lo:hi]),
                binary.NULL if weights is None else binary.sparsevec(term[lo:hi] - 1, weights[lo:hi], SPARSE_DIM),
                binary.int8(int(row_ids[i])),
            ))  # fmt: skip
        statement = f"COPY chunk_terms ({', '.join(_TERM_COLUMNS)}) FROM STDIN WITH (FORMAT BINARY)"
        with self.conn.cursor() as cur, cur.copy(statement.encode()) as copy:
            copy.write(binary.copy_data(rows))
        self.conn.execute(
            "UPDATE bm25_stats SET n_chunks = n_chunks + %s, total_length = total_length + %s",
            (len(counts), int(sum(tc.length for tc in counts))),
        )
        if len(term):
            if int(term.max()) >= len(self.df_added):
                grown = np.zeros(int(term.max()) + 1 + len(self.df_added), dtype=np.int64)
                grown[: len(self.df_added)] = self.df_added
                self.df_added = grown
            self.df_added += np.bincount(term, minlength=len(self.df_added))

    def flush_df(self) -> None:
        """Add the document frequencies of the rows this transaction wrote to ``vocab.df``, in one statement."""
        ids = np.flatnonzero(self.df_added)
        if len(ids):
            self.conn.execute(
                "UPDATE vocab v SET df = v.df + d.n FROM unnest(%s::int4[], %s::int4[]) AS d(t, n) WHERE v.id = d.t",
                (ids.tolist(), self.df_added[ids].tolist()),
            )
        self.df_added = np.zeros(0, dtype=np.int64)

    def _keep_postings(
        self, chunks: Sequence[Chunk], row_ids: np.ndarray, sizes: np.ndarray, term: np.ndarray,
        weights: np.ndarray | None, avgdl: float | None,
    ) -> None:  # fmt: skip
        """Remember the batch's postings for the blocks, while every batch is weighted at one avgdl."""
        if self.pending is None:
            return
        if weights is None or avgdl is None or self.pending_avgdl not in (None, avgdl):
            self.pending = None
            return
        self.pending_avgdl = avgdl
        tenants = np.array([self.pending.code(c.metadata.tenant) for c in chunks], dtype=np.int64)
        self.pending.add(np.repeat(row_ids, sizes), np.repeat(tenants, sizes), term, weights, len(chunks))

    def _encoding_avgdl(self, n_new: int, length_new: int) -> float | None:
        """The avgdl new rows are encoded at: the stored ``encoded_avgdl`` (set from the corpus with these
        rows when the store has none); None when the stored weights are due for re-encoding."""
        row = self.conn.execute("SELECT n_chunks, total_length, k1, b, encoded_avgdl FROM bm25_stats").fetchone()
        assert row is not None
        n, total, k1, b, encoded = row
        if k1 != self.encoder.k1 or b != self.encoder.b:
            return None
        n, total = n + n_new, total + length_new
        avgdl = total / n if n else 0.0
        if encoded is None or encoded <= 0:
            if n == n_new and avgdl > 0:  # no stored weights yet: these rows fix the encoded avgdl
                self.conn.execute("UPDATE bm25_stats SET encoded_avgdl = %s", (avgdl,))
                return float(avgdl)
            return None
        return None if drifted(avgdl, encoded) else float(encoded)

    # -- BM25 encoding -------------------------------------------------------------------------------
    def encode(self, force: bool = False) -> float:
        """Bring every chunk's weights, and the impact-ordered postings, up to date with the corpus; returns
        the avgdl the weights are encoded at.

        When k1, b or the tokenizer changed, or the corpus avgdl drifted past ``bm25_drift.DRIFT`` from the
        encoded one, every row is re-encoded at the current avgdl; otherwise only rows without weights,
        at the encoded avgdl.
        """
        self.flush_df()
        row = self.conn.execute("SELECT n_chunks, total_length, k1, b, encoded_avgdl FROM bm25_stats").fetchone()
        assert row is not None
        n, total, k1, b, encoded = row
        avgdl = total / n if n else 0.0
        stale = force or k1 != self.encoder.k1 or b != self.encoder.b or (n > 0 and drifted(avgdl, encoded))
        use = avgdl if stale or encoded is None else float(encoded)
        params = {"k1": self.encoder.k1, "b": self.encoder.b, "avgdl": use, "dim": SPARSE_DIM}
        self.conn.execute(ENCODE_ALL if stale else ENCODE_NEW, params)
        self.rewrote = self.rewrote or stale
        self.conn.execute(
            "UPDATE bm25_stats SET encoded_avgdl = %s, k1 = %s, b = %s", (use, self.encoder.k1, self.encoder.b)
        )
        pending = self.pending if self.pending_avgdl == use and not stale else None
        started = time.perf_counter()
        self.blocks = bm25_blocks.refresh(self.conn, self.encoder.k1, self.encoder.b, use, full=stale, pending=pending)
        self.timings["blocks"] = self.timings.get("blocks", 0.0) + time.perf_counter() - started
        self.pending, self.pending_avgdl = bm25_blocks.Postings(), None
        return use

    def retokenize(self) -> None:
        """Rebuild the whole BM25 side from the chunks' text (after a tokenizer change)."""
        self.conn.execute("TRUNCATE chunk_terms, vocab RESTART IDENTITY")
        self.conn.execute("UPDATE bm25_stats SET n_chunks = 0, total_length = 0, encoded_avgdl = NULL")
        self.vocab = Vocabulary(self.conn)
        self.df_added = np.zeros(0, dtype=np.int64)
        with self.conn.cursor(name="retokenize", row_factory=dict_row) as cur:
            cur.execute(f"{CHUNK_SELECT} ORDER BY c.id")
            while batch := cur.fetchmany(FILL_BATCH):
                self.add_terms([chunk_from_record(r) for r in batch])

    # -- dense vectors -------------------------------------------------------------------------------
    def configure_vectors(self, model: str, dim: int, contextual: bool = False) -> bool:
        """Make ``chunk_vectors`` hold ``model``'s vectors of the chunks' text (after their context line when
        ``contextual``); returns True when it was reset for a new model or text."""
        row = self.conn.execute("SELECT value FROM settings WHERE key = 'vectors'").fetchone()
        wanted = {"model": model, "dim": dim, "contextual": bool(contextual)}
        if row is not None and {"contextual": False, **row[0]} == wanted:
            return False
        self.conn.execute("TRUNCATE chunk_vectors")
        self.conn.execute("DROP INDEX IF EXISTS chunk_vectors_hnsw")
        self.conn.execute(f"ALTER TABLE chunk_vectors ALTER COLUMN embedding TYPE vector({int(dim)})")
        self.conn.execute(
            "INSERT INTO settings (key, value) VALUES ('vectors', %s) ON CONFLICT (key) DO UPDATE SET value = %s",
            (Jsonb(wanted),) * 2,
        )
        return True

    def fill_vectors(
        self, embedder: Embedder, cache: EmbeddingCache | None, batch_size: int = 32, contextual: bool = False
    ) -> int:
        """Embed every chunk that has no vector yet (through ``cache``), after its context line when
        ``contextual``; returns how many were embedded."""
        done, last = 0, ""
        while True:
            rows = self.conn.execute(
                "SELECT c.id, c.text, c.doc_id, c.status, c.audience, c.lang, c.tenant, c.valid_from, c.valid_to,"
                " c.heading_path, d.title FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE c.id > %s"
                " AND NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.chunk_id = c.id)"
                " ORDER BY c.id LIMIT %s",
                (last, FILL_BATCH),
            ).fetchall()
            if not rows:
                break
            last = rows[-1][0]
            texts = [
                index_text(Chunk(r[0], r[2], r[1], location=Location.from_stored(r[9], 0, 0), title=r[10]), contextual)
                for r in rows
            ]
            vectors = embed_cached(embedder, texts, cache, batch_size=batch_size)
            self._copy_vectors([(r[0], *r[2:9]) for r in rows], vectors)
            done += len(rows)
        return done

    def ensure_hnsw(self, m: int = 16, ef_construction: int = 64) -> bool:
        """Build the HNSW index (cosine) once the vector column has its dimension and rows; True when built now.

        The build gets ``maintenance_work_mem`` enough to hold the graph in memory (pgvector builds far
        slower once it spills), up to ``HNSW_BUILD_MEMORY_MB``; a server set higher keeps its value.
        """
        exists = self.conn.execute("SELECT to_regclass('chunk_vectors_hnsw')").fetchone()
        configured = self.conn.execute("SELECT value FROM settings WHERE key = 'vectors'").fetchone()
        if (exists and exists[0] is not None) or not configured:
            return False
        rows = self.conn.execute("SELECT count(*) FROM chunk_vectors").fetchone()
        if not rows or not rows[0]:  # built over the first vectors written: one bulk build, not row by row
            return False
        dim = int(configured[0].get("dim", 0))
        need_mb = int((rows[0] if rows else 0) * (4 * dim + 24 * m + 64) * 1.3 / 2**20) + 64
        have = self.conn.execute("SELECT setting::bigint / 1024 FROM pg_settings WHERE name = 'maintenance_work_mem'")
        have_mb = (have.fetchone() or (0,))[0]
        if need_mb > have_mb:
            self.conn.execute("SELECT set_config('maintenance_work_mem', %s, true)",
                              (f"{min(need_mb, HNSW_BUILD_MEMORY_MB)}MB",))  # fmt: skip
        started = time.perf_counter()
        self.conn.execute(
            "CREATE INDEX chunk_vectors_hnsw ON chunk_vectors USING hnsw (embedding vector_cosine_ops)"
            f" WITH (m = {int(m)}, ef_construction = {int(ef_construction)})"
        )
        self.timings["hnsw"] = time.perf_counter() - started
        return True
