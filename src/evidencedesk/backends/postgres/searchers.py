"""Searchers over a PgStore: BM25 as sparsevec inner products and dense cosine search with HNSW.

Both follow the Searcher contract: the Scope is a condition in the WHERE clause of the search
itself (never a filter applied afterwards), only matching chunks come back (sharing a term with
the query for BM25, a positive cosine for dense), ranks count from 1 and ties go to the smaller
chunk id. Each search reads one snapshot (a REPEATABLE READ, READ ONLY transaction), so the corpus
statistics and the rows it ranks always belong to the same committed ingest.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from evidencedesk.backends.postgres.bm25_sparse import QueryTerm
from evidencedesk.backends.postgres.rows import CHUNK_SELECT, chunk_from_record
from evidencedesk.backends.postgres.scope_sql import scope_condition
from evidencedesk.backends.postgres.store import PgStore
from evidencedesk.documents import Chunk
from evidencedesk.index.embedders import Embedder, default_embedder, embed_query
from evidencedesk.retrieval.candidates import Candidate, ranked
from evidencedesk.retrieval.row_searcher import check_k
from evidencedesk.retrieval.scope import Scope
from evidencedesk.text.tokenizer import Tokenizer

DENSE_MODES = ("hnsw", "exact")
_SNAPSHOT = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"

# Two exact plans for BM25. Rare query terms: the GIN index on the term ids finds the few chunks holding one.
# Common terms: scan, computing the inner product once per row (a positive score means a shared term). The
# plan to avoid is a scan testing the generic array overlap row by row: it costs twice the inner product.
_BM25_INDEX_SQL = (
    "SELECT chunk_id, terms, tfs, dl FROM chunk_terms WHERE terms && %(ids)s::int4[] AND {scope}"
    " ORDER BY weights <#> %(q)s, chunk_id LIMIT %(n)s"
)
_BM25_SCAN_SQL = (
    "SELECT chunk_id, terms, tfs, dl FROM (SELECT chunk_id, terms, tfs, dl, weights <#> %(q)s AS neg"
    " FROM chunk_terms WHERE {scope} OFFSET 0) AS s WHERE neg < 0 ORDER BY neg, chunk_id LIMIT %(n)s"
)
_HNSW_SQL = (
    "SELECT chunk_id, (embedding <#> %(q)s) AS neg FROM chunk_vectors WHERE {scope}"
    " ORDER BY embedding <=> %(q)s LIMIT %(n)s"
)
_EXACT_SQL = (
    "SELECT chunk_id, (embedding <#> %(q)s) AS neg FROM chunk_vectors WHERE {scope}"
    " ORDER BY embedding <#> %(q)s, chunk_id LIMIT %(n)s"
)


def _check_query(query: object) -> str:
    if not isinstance(query, str):
        raise ValueError(f"query: must be a string, got {type(query).__name__}")
    return query


def fetch_chunks(conn: psycopg.Connection, ids: Sequence[str]) -> dict[str, Chunk]:
    """The chunks with these ids, by id."""
    if not ids:
        return {}
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(f"{CHUNK_SELECT} WHERE c.id = ANY(%s::text[])".encode(), (list(ids),)).fetchall()
    return {r["id"]: chunk_from_record(r) for r in rows}


def _candidates(conn: psycopg.Connection, scored: list[tuple[str, float]], name: str) -> list[Candidate]:
    chunks = fetch_chunks(conn, [cid for cid, _ in scored])
    return ranked(((chunks[cid], score) for cid, score in scored if cid in chunks), name)


class PgBM25Searcher:
    """BM25 (Lucene idf) over the store's chunks, with the store's tokenizer, k1 and b.

    The database ranks by the sparsevec inner product (float32); ``margin`` extra rows are read
    and rescored in float64 from the stored term frequencies, so near-ties at the cut fall the
    way the embedded index breaks them and the scores equal the embedded index's. When the query
    terms' postings (the sum of their document frequencies) number fewer than ``index_fraction``
    times the chunks, candidates come from the GIN index on term ids; otherwise from a scan.
    """

    name = "bm25"

    def __init__(self, store: PgStore, margin: int = 10, index_fraction: float = 0.05) -> None:
        if not isinstance(store, PgStore):
            raise ValueError(f"store: expected a PgStore, got {type(store).__name__}")
        if margin < 0:
            raise ValueError(f"margin: must be at least 0, got {margin}")
        if not index_fraction >= 0:
            raise ValueError(f"index_fraction: must be a number >= 0, got {index_fraction}")
        self.store = store
        self.margin = margin
        self.index_fraction = index_fraction
        self.last_path = ""  # which plan answered the last search: "index" or "scan"
        self._lang_list: list[str] | None = None

    @property
    def tokenizer(self) -> Tokenizer:
        return self.store.encoder.tokenizer

    def _langs(self) -> list[str]:
        """The stored chunks' languages, read once per searcher (a per-language tokenizer needs them)."""
        if not self.tokenizer.per_language:
            return ["en"]
        if self._lang_list is None:
            with self.store.pool.connection() as conn:
                rows = conn.execute("SELECT DISTINCT lang FROM chunks ORDER BY lang").fetchall()
            self._lang_list = [r[0] if isinstance(r, tuple) else r["lang"] for r in rows] or ["en"]
        return self._lang_list

    @property
    def k1(self) -> float:
        return self.store.encoder.k1

    @property
    def b(self) -> float:
        return self.store.encoder.b

    def identity(self) -> dict[str, Any]:
        """What makes two BM25 indexes over the same chunks interchangeable (the embedded searcher's keys)."""
        enc = self.store.encoder
        return {"method": self.name, "k1": enc.k1, "b": enc.b, "tokenizer": enc.tokenizer.to_dict()}

    def search(self, query: str, k: int = 10, scope: Scope | None = None) -> list[Candidate]:
        k = check_k(k)
        encoder = self.store.encoder
        words = encoder.query_terms(_check_query(query), self._langs())
        if not words:
            return []
        with self.store.pool.connection() as conn, conn.transaction():
            conn.execute(_SNAPSHOT)
            stats = conn.execute("SELECT n_chunks, total_length FROM bm25_stats").fetchone()
            if not stats or not stats[0]:
                return []
            n, total = int(stats[0]), int(stats[1])
            found = conn.execute("SELECT term, id, df FROM vocab WHERE term = ANY(%s::text[]) AND df > 0", (words,))
            by_term = {term: (tid, df) for term, tid, df in found.fetchall()}
            known = [w for w in words if w in by_term]
            if not known:
                return []
            idf = encoder.idf(n, [by_term[w][1] for w in known])
            terms = [QueryTerm(by_term[w][0], w, by_term[w][1], float(v)) for w, v in zip(known, idf, strict=True)]
            condition, params = scope_condition(scope)
            self.last_path = "index" if sum(t.df for t in terms) < self.index_fraction * n else "scan"
            if self.last_path == "index":  # a scan testing the array overlap row by row is the slowest plan
                conn.execute("SELECT set_config('enable_seqscan', 'off', true)")
            statement = sql.SQL(_BM25_INDEX_SQL if self.last_path == "index" else _BM25_SCAN_SQL).format(
                scope=condition
            )
            params.update(ids=[t.id for t in terms], q=encoder.query_vector(terms), n=k + self.margin)
            rows = conn.execute(statement, params).fetchall()
            avgdl = total / n
            scored = [(cid, encoder.score(terms, ids, tfs, dl, avgdl)) for cid, ids, tfs, dl in rows]
            scored.sort(key=lambda p: (-p[1], p[0]))
            return _candidates(conn, scored[:k], self.name)


class PgDenseSearcher:
    """Cosine similarity between the query's embedding and the chunks' vectors.

    ``mode="hnsw"`` walks the HNSW index with ``hnsw.iterative_scan = relaxed_order``, so a
    selective scope still yields k rows (``ef_search`` and ``max_scan_tuples`` bound the walk);
    when the walk still ends short of k rows, an exact search answers instead (``fallback``).
    ``mode="exact"`` scores every allowed row. Creating the searcher embeds the chunks that have
    no vector yet (through ``cache_path`` or the store's cache).
    """

    name = "dense"

    def __init__(
        self,
        store: PgStore,
        embedder: Embedder | None = None,
        cache_path: str | Path | None = None,
        mode: str = "hnsw",
        ef_search: int = 100,
        max_scan_tuples: int = 20_000,
        fallback: bool = True,
        batch_size: int = 32,
    ) -> None:
        if not isinstance(store, PgStore):
            raise ValueError(f"store: expected a PgStore, got {type(store).__name__}")
        if mode not in DENSE_MODES:
            raise ValueError(f"mode: must be one of {', '.join(DENSE_MODES)}, got {mode!r}")
        if not 1 <= ef_search <= 1000:
            raise ValueError(f"ef_search: must be between 1 and 1000, got {ef_search}")
        if max_scan_tuples < 1:
            raise ValueError(f"max_scan_tuples: must be at least 1, got {max_scan_tuples}")
        self.store = store
        self.embedder = embedder if embedder is not None else store.embedder or default_embedder()
        self.mode = mode
        self.ef_search = ef_search
        self.max_scan_tuples = max_scan_tuples
        self.fallback = fallback
        self.last_path = ""  # which path answered the last search: "hnsw", "exact" or "exact-fallback"
        store.ensure_vectors(self.embedder, cache_path, batch_size)

    def identity(self) -> dict[str, Any]:
        return {
            "method": self.name,
            "embedder": self.embedder.name,
            "dim": self.embedder.dim,
            "contextual": False,
            "ann": self.mode == "hnsw",
        }

    def embed_query(self, query: str) -> np.ndarray:
        return embed_query(self.embedder, query)

    def search(self, query: str, k: int = 10, scope: Scope | None = None) -> list[Candidate]:
        k = check_k(k)
        if not _check_query(query).strip():
            return []
        q = self.embed_query(query)
        condition, params = scope_condition(scope)
        params.update(q=q, n=k)
        with self.store.pool.connection() as conn, conn.transaction():
            conn.execute(_SNAPSHOT)
            self._check_model(conn)
            rows: list[tuple[str, float]] = []
            path = "exact"
            if self.mode == "hnsw":
                conn.execute(
                    "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),"
                    " set_config('hnsw.ef_search', %s, true), set_config('hnsw.max_scan_tuples', %s, true),"
                    " set_config('enable_seqscan', 'off', true)",
                    (str(max(self.ef_search, min(k, 1000))), str(self.max_scan_tuples)),
                )
                rows = conn.execute(sql.SQL(_HNSW_SQL).format(scope=condition), params).fetchall()
                path = "hnsw"
                if len(rows) < k and self.fallback:
                    conn.execute("SELECT set_config('enable_seqscan', 'on', true)")
                    path = "exact-fallback"
            if path != "hnsw":
                rows = conn.execute(sql.SQL(_EXACT_SQL).format(scope=condition), params).fetchall()
            self.last_path = path
            scored = [(cid, -float(neg)) for cid, neg in rows if -float(neg) > 0]
            scored.sort(key=lambda p: (-p[1], p[0]))
            return _candidates(conn, scored[:k], self.name)

    def _check_model(self, conn: psycopg.Connection) -> None:
        row = conn.execute("SELECT value FROM settings WHERE key = 'vectors'").fetchone()
        model = row[0] if row else None
        if model != {"model": self.embedder.name, "dim": self.embedder.dim}:
            raise ValueError(
                f"the store holds vectors of {model} but this searcher embeds with {self.embedder.name} "
                f"(dim {self.embedder.dim}); create the searcher again to re-embed the store"
            )

    def close(self) -> None:
        """Nothing to release (the store owns the connections); here for the embedded searcher's interface."""
