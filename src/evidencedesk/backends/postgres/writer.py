"""Writing to the PostgreSQL store inside an open transaction: replace documents with their chunks
(bulk, with COPY), delete documents, keep the BM25 side encoded and the dense side filled.

Replacing a document deletes its previous rows first (the chunks, their term rows and vectors go
with it through ON DELETE CASCADE), so a changed document never leaves a stale chunk behind.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from evidencedesk.backends.postgres.bm25_sparse import ENCODE_ALL, ENCODE_NEW, SPARSE_DIM, BM25Encoder
from evidencedesk.backends.postgres.rows import (
    CHUNK_SELECT,
    CHUNK_TYPES,
    DOCUMENT_TYPES,
    SCOPE_COLUMNS,
    SCOPE_TYPES,
    chunk_from_record,
    chunk_row,
    document_row,
    scope_values,
)
from evidencedesk.documents import Chunk, Document
from evidencedesk.index.embedders import Embedder
from evidencedesk.index.embedding_cache import EmbeddingCache, embed_cached
from evidencedesk.store.rows import CHUNK_COLUMNS, DOCUMENT_COLUMNS

Item = tuple[Document, Sequence[Chunk]]
_TERM_COLUMNS = ("chunk_id", *SCOPE_COLUMNS, "dl", "terms", "tfs")
_TERM_TYPES = ("text", *SCOPE_TYPES, "int4", "int4[]", "int4[]")
_VECTOR_COLUMNS = ("chunk_id", *SCOPE_COLUMNS, "embedding")
FILL_BATCH = 2000


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


class Writer:
    """Every write of one transaction on ``conn``."""

    def __init__(self, conn: psycopg.Connection, encoder: BM25Encoder) -> None:
        self.conn = conn
        self.encoder = encoder
        self.vocab = Vocabulary(conn)

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
        """Store each document with exactly ``chunks``, replacing any stored version."""
        if not items:
            return
        self.delete([doc.id for doc, _ in items])
        copy_rows(
            self.conn, "documents", DOCUMENT_COLUMNS, DOCUMENT_TYPES,
            [document_row(doc, chunking_hash, build_id) for doc, _ in items],
        )  # fmt: skip
        chunks = [c for _, cs in items for c in cs]
        copy_rows(
            self.conn, "chunks", CHUNK_COLUMNS, CHUNK_TYPES,
            [chunk_row(c, n) for _, cs in items for n, c in enumerate(cs)],
        )  # fmt: skip
        self.add_terms(chunks)

    def add_terms(self, chunks: Sequence[Chunk]) -> None:
        """The BM25 rows of ``chunks`` (weights left NULL until ``encode``)."""
        counts = [self.encoder.counts(c.text, c.metadata.lang) for c in chunks]
        ids = self.vocab.lookup({t for tc in counts for t in tc.tf})
        rows = []
        for c, tc in zip(chunks, counts, strict=True):
            pairs = sorted((ids[t], f) for t, f in tc.tf.items())
            rows.append((c.id, *scope_values(c), tc.length, [p[0] for p in pairs], [p[1] for p in pairs]))
        copy_rows(self.conn, "chunk_terms", _TERM_COLUMNS, _TERM_TYPES, rows)

    # -- BM25 encoding -------------------------------------------------------------------------------
    def encode(self, force: bool = False) -> float:
        """Bring every chunk's weights up to date with the corpus; returns the avgdl they now use.

        When avgdl (or k1, b) differs from what the stored weights were encoded with, every chunk is
        re-encoded; otherwise only the chunks written since.
        """
        row = self.conn.execute("SELECT n_chunks, total_length, k1, b, encoded_avgdl FROM bm25_stats").fetchone()
        assert row is not None
        n, total, k1, b, encoded = row
        avgdl = total / n if n else 0.0
        params = {"k1": self.encoder.k1, "b": self.encoder.b, "avgdl": avgdl, "dim": SPARSE_DIM}
        stale = force or encoded != avgdl or k1 != self.encoder.k1 or b != self.encoder.b
        self.conn.execute(ENCODE_ALL if stale else ENCODE_NEW, params)
        self.conn.execute(
            "UPDATE bm25_stats SET encoded_avgdl = %s, k1 = %s, b = %s", (avgdl, self.encoder.k1, self.encoder.b)
        )
        return avgdl

    def retokenize(self) -> None:
        """Rebuild the whole BM25 side from the chunks' text (after a tokenizer change)."""
        self.conn.execute("TRUNCATE chunk_terms, vocab RESTART IDENTITY")
        self.conn.execute("UPDATE bm25_stats SET n_chunks = 0, total_length = 0, encoded_avgdl = NULL")
        self.vocab = Vocabulary(self.conn)
        with self.conn.cursor(name="retokenize", row_factory=dict_row) as cur:
            cur.execute(f"{CHUNK_SELECT} ORDER BY c.id")
            while batch := cur.fetchmany(FILL_BATCH):
                self.add_terms([chunk_from_record(r) for r in batch])

    # -- dense vectors -------------------------------------------------------------------------------
    def configure_vectors(self, model: str, dim: int) -> bool:
        """Make ``chunk_vectors`` hold ``model``'s vectors; returns True when it was reset for a new model."""
        row = self.conn.execute("SELECT value FROM settings WHERE key = 'vectors'").fetchone()
        if row is not None and row[0] == {"model": model, "dim": dim}:
            return False
        self.conn.execute("TRUNCATE chunk_vectors")
        self.conn.execute("DROP INDEX IF EXISTS chunk_vectors_hnsw")
        self.conn.execute(f"ALTER TABLE chunk_vectors ALTER COLUMN embedding TYPE vector({int(dim)})")
        self.conn.execute(
            "INSERT INTO settings (key, value) VALUES ('vectors', %s) ON CONFLICT (key) DO UPDATE SET value = %s",
            (Jsonb({"model": model, "dim": dim}),) * 2,
        )
        return True

    def fill_vectors(self, embedder: Embedder, cache: EmbeddingCache | None, batch_size: int = 32) -> int:
        """Embed every chunk that has no vector yet (through ``cache``); returns how many were embedded."""
        done, last = 0, ""
        while True:
            rows = self.conn.execute(
                "SELECT c.id, c.text, c.doc_id, c.status, c.audience, c.lang, c.tenant, c.valid_from, c.valid_to"
                " FROM chunks c WHERE c.id > %s"
                " AND NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.chunk_id = c.id)"
                " ORDER BY c.id LIMIT %s",
                (last, FILL_BATCH),
            ).fetchall()
            if not rows:
                break
            last = rows[-1][0]
            vectors = embed_cached(embedder, [r[1] for r in rows], cache, batch_size=batch_size)
            vectors = np.ascontiguousarray(vectors, dtype=np.float32)
            copy_rows(
                self.conn, "chunk_vectors", _VECTOR_COLUMNS, ("text", *SCOPE_TYPES, "vector"),
                [(r[0], *r[2:], v) for r, v in zip(rows, vectors, strict=True)],
            )  # fmt: skip
            done += len(rows)
        return done

    def ensure_hnsw(self, m: int = 16, ef_construction: int = 64) -> bool:
        """Build the HNSW index (cosine) once the vector column has its dimension; True when built now."""
        exists = self.conn.execute("SELECT to_regclass('chunk_vectors_hnsw')").fetchone()
        configured = self.conn.execute("SELECT 1 FROM settings WHERE key = 'vectors'").fetchone()
        if (exists and exists[0] is not None) or not configured:
            return False
        self.conn.execute(
            "CREATE INDEX chunk_vectors_hnsw ON chunk_vectors USING hnsw (embedding vector_cosine_ops)"
            f" WITH (m = {int(m)}, ef_construction = {int(ef_construction)})"
        )
        return True
