"""Searchers over a PgStore: BM25 as sparsevec inner products and dense cosine search with HNSW.

Both follow the Searcher contract: the Scope is a condition in the WHERE clause of the search
itself (never a filter applied afterwards), only matching chunks come back (sharing a term with
the query for BM25, a positive cosine for dense), ranks count from 1 and ties go to the smaller
chunk id. Each search reads one snapshot (a REPEATABLE READ, READ ONLY transaction), so the corpus
statistics and the rows it ranks always belong to the same committed ingest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from evidencedesk.backends.postgres import impact_jit
from evidencedesk.backends.postgres.bm25_drift import cut_is_exact, upper_ratio
from evidencedesk.backends.postgres.bm25_impact import ImpactStats, impact_top
from evidencedesk.backends.postgres.bm25_sparse import QueryTerm
from evidencedesk.backends.postgres.rows import CHUNK_SELECT, chunk_from_record
from evidencedesk.backends.postgres.scope_sql import SqlParams, limit_tenants, scope_condition
from evidencedesk.backends.postgres.store import PgStore
from evidencedesk.documents import Chunk
from evidencedesk.index.embedders import Embedder, default_embedder, embed_query
from evidencedesk.retrieval.candidates import Candidate, ranked
from evidencedesk.retrieval.dense import dense_identity
from evidencedesk.retrieval.row_searcher import check_k
from evidencedesk.retrieval.scope import Scope
from evidencedesk.store.json_data import JsonObject
from evidencedesk.text.tokenizer import Tokenizer

DENSE_MODES = ("hnsw", "exact")
HNSW_OVERFETCH = 4
_SNAPSHOT = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"

# The fallback plan for BM25 (no impact-ordered postings yet, or a query they cannot settle cheaply):
# score every chunk in scope, computing the inner product once per row (a positive score: a shared term).
_BM25_SCAN_SQL = (
    "SELECT chunk_id, terms, tfs, dl, neg FROM (SELECT chunk_id, terms, tfs, dl, weights <#> %(q)s AS neg"
    " FROM chunk_terms WHERE {scope} OFFSET 0) AS s WHERE neg < 0 ORDER BY neg, chunk_id LIMIT %(n)s"
)
BM25_PLANS = ("auto", "scan")
_TENANT_STATS = "SELECT count(*), coalesce(sum(dl), 0) FROM chunk_terms WHERE tenant = %s"
_TENANT_DF = (
    "SELECT v.term, v.id, count(*) FROM vocab v JOIN chunk_terms c ON c.terms && ARRAY[v.id]"
    " WHERE c.tenant = %s AND v.term = ANY(%s::text[]) GROUP BY v.term, v.id"
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

    The database ranks by the stored weights (float32, encoded at the store's encoded avgdl, which
    may trail the live one by up to ``bm25_drift.DRIFT``); ``k + margin`` rows are read and rescored
    in float64 from the stored term frequencies, so the scores and tie-breaks equal the embedded
    index's. When the k-th exact score cannot be proven above every unread row's (``cut_is_exact``),
    four times as many rows are read, until it can or every matching row was read.

    Which rows are read (``plan="auto"``): the impact-ordered postings (``bm25_blocks``) give each
    query term's best-weighted chunks first, and a threshold algorithm (``bm25_impact``) scores rows
    exactly until no unread row can enter the top k ("impact"). When no postings are built yet, or
    proving the top k would read too many of them, every chunk in scope is scored in one scan
    ("scan"); ``plan="scan"`` always does that.

    ``tenant_statistics`` ranks each tenant in scope with its own chunk count, total length and
    document frequencies (counted from ``chunk_terms`` at query time), as if it were alone in the
    store, and merges the tenants' lists by score.
    """

    name = "bm25"

    def __init__(self, store: PgStore, margin: int = 10, plan: str = "auto", tenant_statistics: bool = False) -> None:
        if not isinstance(store, PgStore):
            raise ValueError(f"store: expected a PgStore, got {type(store).__name__}")
        if margin < 0:
            raise ValueError(f"margin: must be at least 0, got {margin}")
        if plan not in BM25_PLANS:
            raise ValueError(f"plan: must be one of {', '.join(BM25_PLANS)}, got {plan!r}")
        self.store = store
        self.margin = margin
        self.plan = plan
        self.tenant_statistics = tenant_statistics
        self.last_path = ""  # which plan answered the last search: "impact" or "scan"
        self.last_reads = 0  # how many scan reads the last search needed to prove its top k exact
        self.impact = ImpactStats()  # what the impact plan read in the last search
        impact_jit.warm()  # compiled once per machine (numba's disk cache), loaded here rather than in a search
        self._blocks = False  # whether the store has its impact-ordered postings built
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

    def identity(self) -> JsonObject:
        """What makes two BM25 indexes over the same chunks interchangeable (the embedded searcher's keys)."""
        enc = self.store.encoder
        return {
            "method": self.name,
            "k1": enc.k1,
            "b": enc.b,
            "tokenizer": enc.tokenizer.to_dict(),
            "contextual": enc.contextual,
        }

    def search(self, query: str, k: int = 10, scope: Scope | None = None) -> list[Candidate]:
        k = check_k(k)
        words = self.store.encoder.query_terms(_check_query(query), self._langs())
        if not words:
            return []
        with self.store.reads.connection() as conn, conn.transaction():
            conn.execute(_SNAPSHOT)
            limit_tenants(conn, scope)
            encoded = conn.execute("SELECT encoded_avgdl, blocks_base_last IS NOT NULL FROM bm25_stats").fetchone()
            encoded_avgdl = encoded[0] if encoded else None
            self._blocks = bool(encoded and encoded[1])
            self.last_reads = 0
            if not self.tenant_statistics:
                stats = conn.execute("SELECT n_chunks, total_length FROM bm25_stats").fetchone()
                found = conn.execute("SELECT term, id, df FROM vocab WHERE term = ANY(%s::text[]) AND df > 0", (words,))
                scored = self._rank(conn, words, k, scope, stats, found.fetchall(), encoded_avgdl)
                return _candidates(conn, scored, self.name)
            scored = []
            for tenant in self._tenants(conn, scope):
                part = replace(scope or Scope(), tenants=frozenset({tenant}))
                stats = conn.execute(_TENANT_STATS, (tenant,)).fetchone()
                in_tenant = conn.execute(_TENANT_DF, (tenant, words)).fetchall()
                scored.extend(self._rank(conn, words, k, part, stats, in_tenant, encoded_avgdl))
            scored.sort(key=lambda p: (-p[1], p[0]))
            return _candidates(conn, scored[:k], self.name)

    @staticmethod
    def _tenants(conn: psycopg.Connection, scope: Scope | None) -> list[str]:
        if scope is not None and scope.tenants is not None:
            return sorted(scope.tenants)
        return [r[0] for r in conn.execute("SELECT DISTINCT tenant FROM chunk_terms ORDER BY tenant").fetchall()]

    def _rank(
        self,
        conn: psycopg.Connection,
        words: list[str],
        k: int,
        scope: Scope | None,
        stats: tuple[Any, ...] | None,
        found: Sequence[tuple[Any, ...]],
        encoded_avgdl: float | None,
    ) -> list[tuple[str, float]]:
        """The exact top ``k`` (chunk id, score) inside ``scope`` with these collection statistics
        (chunk count, total length) and document frequencies (term, id, df)."""
        encoder = self.store.encoder
        if not stats or not stats[0]:
            return []
        n, total = int(stats[0]), int(stats[1])
        avgdl = total / n
        by_term = {term: (tid, df) for term, tid, df in found}
        known = [w for w in words if w in by_term]
        if not known:
            return []
        idf = encoder.idf(n, [by_term[w][1] for w in known])
        terms = [QueryTerm(by_term[w][0], w, by_term[w][1], float(v)) for w, v in zip(known, idf, strict=True)]
        condition, params = scope_condition(scope)
        ratio = upper_ratio(avgdl, encoded_avgdl, encoder.b)
        if self.plan == "auto" and self._blocks:

            def exact(term_ids: Sequence[int], tfs: Sequence[int], dl: int) -> float:
                return encoder.score(terms, term_ids, tfs, dl, avgdl)

            vector = encoder.query_vector(terms)
            top = impact_top(conn, terms, k, scope, condition, params, exact, ratio, vector, self.impact)
            if top is not None:
                self.last_path = "impact"
                return top
        params["q"] = encoder.query_vector(terms)
        self.last_path = "scan"
        statement = sql.SQL(_BM25_SCAN_SQL).format(scope=condition)
        return self._read(conn, statement, params, terms, k, avgdl, ratio)[:k]

    def _read(
        self,
        conn: psycopg.Connection,
        statement: sql.Composed,
        params: SqlParams,
        terms: list[QueryTerm],
        k: int,
        avgdl: float,
        ratio: float,
    ) -> list[tuple[str, float]]:
        """Rows by stored score, rescored exactly, read until their top k is proven (see ``bm25_drift``)."""
        encoder = self.store.encoder
        want = k + self.margin
        while True:
            params["n"] = want
            rows = conn.execute(statement, params).fetchall()
            self.last_reads += 1
            scored = [(cid, encoder.score(terms, ids, tfs, dl, avgdl)) for cid, ids, tfs, dl, _ in rows]
            scored.sort(key=lambda p: (-p[1], p[0]))
            if len(rows) < want or cut_is_exact([s for _, s in scored], k, -float(rows[-1][4]), ratio):
                return scored
            want *= 4


class PgDenseSearcher:
    """Cosine similarity between the query's embedding and the chunks' vectors.

    ``mode="hnsw"`` walks the HNSW index with ``hnsw.iterative_scan = relaxed_order``, so a
    selective scope still yields k rows (``ef_search`` and ``max_scan_tuples`` bound the walk;
    ``ef_search`` 1000, pgvector's largest, keeps recall@10 above 0.95 at a million chunks, where 100
    gave 0.81: see bench/RESULTS.md);
    when the walk still ends short of k rows, an exact search answers instead (``fallback``).
    ``mode="exact"`` scores every allowed row. Creating the searcher embeds the chunks that have
    no vector yet (through ``cache_path`` or the store's cache), after its context line when
    ``contextual``; a store embedded with the other setting is embedded again.
    """

    name = "dense"

    def __init__(
        self,
        store: PgStore,
        embedder: Embedder | None = None,
        cache_path: str | Path | None = None,
        mode: str = "hnsw",
        ef_search: int = 1000,
        max_scan_tuples: int = 20_000,
        fallback: bool = True,
        batch_size: int = 32,
        contextual: bool = False,
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
        self.contextual = bool(contextual)
        store.ensure_vectors(self.embedder, cache_path, batch_size, self.contextual)

    def identity(self) -> JsonObject:
        return dense_identity(self.name, self.embedder, self.contextual, self.mode == "hnsw")

    def embed_query(self, query: str) -> np.ndarray:
        return embed_query(self.embedder, query)

    def search(self, query: str, k: int = 10, scope: Scope | None = None) -> list[Candidate]:
        k = check_k(k)
        if not _check_query(query).strip():
            return []
        q = self.embed_query(query)
        condition, params = scope_condition(scope)
        params.update(q=q, n=k)
        with self.store.reads.connection() as conn, conn.transaction():
            conn.execute(_SNAPSHOT)
            limit_tenants(conn, scope)
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
                # read HNSW_OVERFETCH times k rows and keep the k nearest: relaxed_order returns them
                # roughly ordered, and the extra rows raise recall at the cost of a slightly longer walk
                wide = {**params, "n": max(k, min(1000, k * HNSW_OVERFETCH))}
                rows = conn.execute(sql.SQL(_HNSW_SQL).format(scope=condition), wide).fetchall()
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
        wanted = {"model": self.embedder.name, "dim": self.embedder.dim, "contextual": self.contextual}
        if model is None or {"contextual": False, **model} != wanted:
            raise ValueError(
                f"the store holds vectors of {model} but this searcher embeds with {self.embedder.name} "
                f"(dim {self.embedder.dim}); create the searcher again to re-embed the store"
            )

    def close(self) -> None:
        """Nothing to release (the store owns the connections); here for the embedded searcher's interface."""
