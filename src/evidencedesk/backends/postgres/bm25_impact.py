"""Exact top-k BM25 over the impact-ordered postings (``bm25_blocks``), reading as few as it can prove.

A threshold algorithm. Each query term t (idf ``idf_t``) reads its best blocks, best ``max_w`` first;
``ceil_t`` is the ``max_w`` of its first unread block (0 once every block was read), so no unread
posting of t weighs more. For every chunk row seen in some block:

    low(d)  = sum over the terms whose read blocks hold d of idf_t * w(t, d)
    high(d) = low(d) + sum over the other terms of idf_t * ceil_t

and a row seen in no block scores at most ``unseen = sum of idf_t * ceil_t``. Weights are the stored
ones (encoded at ``encoded_avgdl``); a true score is at most ``ratio`` times the stored one
(``bm25_drift``). The rows are scored exactly (float64, from their term frequencies, in the scope's
WHERE clause) from the highest ``high`` down, until the k-th exact score beats ``ratio * high`` of
every row not yet scored. The top k is then exact when that k-th score also beats ``ratio * unseen``;
otherwise each unfinished term reads ``GROWTH`` times as many blocks, and past ``MAX_POSTINGS`` the
search gives up (the caller scores every chunk in scope instead).

Blocks are kept per tenant, so a scope naming its tenants reads only theirs; the scope's other
conditions apply when rows are scored, inside the database, before any ranking.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from evidencedesk.backends.postgres.bm25_drift import FLOAT32_SLACK
from evidencedesk.backends.postgres.bm25_sparse import QueryTerm
from evidencedesk.retrieval.scope import Scope

START_BLOCKS = 8
GROWTH = 4
MAX_POSTINGS = 400_000  # postings read before giving up on a query (the caller then scans its scope)
MAX_SCORED = 20_000  # rows whose stored score may be read at once; more: read deeper first
RESCORE = 20  # rows rescored exactly at first (k more); more when the bound asks for them

_BLOCKS = (
    "SELECT q.i, b.max_w, b.rows, b.ws FROM unnest(%(tids)s::int4[], %(lims)s::int4[]) WITH ORDINALITY AS q(t, lim, i)"
    " CROSS JOIN LATERAL (SELECT max_w, rows, ws FROM bm25_blocks WHERE term_id = q.t{tenant}"
    " ORDER BY max_w DESC LIMIT q.lim) AS b"
)
_STORED = "SELECT row_id, -(weights <#> %(q)s) FROM chunk_terms WHERE row_id = ANY(%(rows)s::int8[]) AND {scope}"
_EXACT = "SELECT row_id, chunk_id, terms, tfs, dl FROM chunk_terms WHERE row_id = ANY(%(rows)s::int8[])"


def int8_array(values: Sequence[int] | np.ndarray) -> str:
    """An ``int8[]`` literal (far quicker to send than a list of Python ints adapted one by one)."""
    return "{" + ",".join(map(str, np.asarray(values, dtype=np.int64).tolist())) + "}"


@dataclass
class ImpactStats:
    """What the last search read: rounds of block reads, postings, rows whose stored score was read,
    rows rescored exactly."""

    rounds: int = 0
    postings: int = 0
    stored: int = 0
    rescored: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def _tenant_filter(scope: Scope | None, params: dict[str, Any]) -> str | None:
    """The block query's tenant condition; None when the scope allows no tenant at all."""
    if scope is None or scope.tenants is None:
        return ""
    names = sorted(v for v in scope.tenants if "\x00" not in v)
    if not names:
        return None
    if len(names) == 1:
        params["tenant"] = names[0]
        return " AND tenant = %(tenant)s"
    params["tenants"] = names
    return " AND tenant = ANY(%(tenants)s::text[])"


@dataclass
class _Bounds:
    """One round's reading: the candidate rows with their stored-score bounds, and the unseen bound."""

    rows: np.ndarray  # row ids, ascending
    low: np.ndarray  # stored score from the postings read
    high: np.ndarray  # low plus what the unread postings of the other terms can add
    unseen: float  # the most a row in no block read can score (stored units)
    postings: int
    finished: np.ndarray  # per term: every block read


def _read_blocks(
    conn: psycopg.Connection, statement: bytes, params: dict[str, Any], ids: list[int], idf: np.ndarray,
    n_blocks: np.ndarray,
) -> _Bounds:  # fmt: skip
    params.update(tids=ids, lims=[int(n) + 1 for n in n_blocks])
    got: list[list[tuple[float, bytes, bytes]]] = [[] for _ in ids]
    for i, max_w, rows, ws in conn.execute(statement, params):
        got[int(i) - 1].append((float(max_w), rows, ws))
    ceil = np.zeros(len(ids), dtype=np.float64)
    finished = np.zeros(len(ids), dtype=bool)
    id_parts, low_parts, cap_parts = [], [], []
    for j, blocks in enumerate(got):
        if len(blocks) > n_blocks[j]:
            ceil[j] = blocks[-1][0]
            blocks = blocks[:-1]
        else:
            finished[j] = True
        rows_j = np.frombuffer(b"".join(b[1] for b in blocks), dtype=">i8")
        id_parts.append(rows_j)
        low_parts.append(np.frombuffer(b"".join(b[2] for b in blocks), dtype=">f4").astype(np.float64) * idf[j])
        cap_parts.append(np.full(len(rows_j), idf[j] * ceil[j]))
    all_rows = np.concatenate(id_parts)
    uniq, inv = np.unique(all_rows, return_inverse=True)
    low = np.bincount(inv, weights=np.concatenate(low_parts), minlength=len(uniq))
    unseen = float(idf @ ceil)
    high = low + unseen - np.bincount(inv, weights=np.concatenate(cap_parts), minlength=len(uniq))
    return _Bounds(uniq, low, high, unseen, len(all_rows), finished)


def impact_top(
    conn: psycopg.Connection,
    terms: Sequence[QueryTerm],
    k: int,
    scope: Scope | None,
    condition: sql.Composable,
    params: dict[str, Any],
    exact: Callable[[Sequence[int], Sequence[int], int], float],
    ratio: float,
    query_vector: Any,
    stats: ImpactStats,
) -> list[tuple[str, float]] | None:
    """The exact top ``k`` (chunk id, score) in scope, best first (ties to the smaller id); None when
    proving it would read more than ``MAX_POSTINGS`` postings.

    ``condition``/``params``: the scope as SQL; ``exact(term_ids, tfs, dl)``: a row's float64 score;
    ``query_vector``: the idf sparsevec the stored weights are dotted with.
    """
    params = dict(params, q=query_vector)
    tenant = _tenant_filter(scope, params)
    if tenant is None:
        return []
    blocks_sql = _BLOCKS.format(tenant=tenant).encode()
    stored_sql = sql.SQL(_STORED).format(scope=condition)
    ids = [t.id for t in terms]
    idf = np.array([t.idf for t in terms], dtype=np.float64)
    n_blocks = np.full(len(terms), START_BLOCKS, dtype=np.int64)
    slack = ratio * (1 + FLOAT32_SLACK)
    outside = np.zeros(0, dtype=np.int64)  # rows known to be out of scope (or gone)
    asked = np.zeros(0, dtype=np.int64)  # rows whose stored score was asked for
    stored: dict[int, float] = {}  # in-scope row id -> stored score
    exact_of: dict[int, tuple[str, float]] = {}  # row id -> (chunk id, exact score)
    stats.rounds = stats.postings = stats.stored = stats.rescored = 0
    while True:
        stats.rounds += 1
        b = _read_blocks(conn, blocks_sql, params, ids, idf, n_blocks)
        stats.postings = b.postings
        done = bool(b.finished.all())  # every posting read: low is each row's whole stored score
        live = np.isin(b.rows, outside, invert=True)
        lows = b.low[live]
        theta = float(np.partition(lows, len(lows) - k)[len(lows) - k]) if len(lows) >= k and not done else 0.0
        want = live & (b.high >= theta)  # the rows that may reach the top k
        if done or theta > b.unseen and int(want.sum()) <= MAX_SCORED:
            fresh = b.rows[want]
            fresh = fresh[np.isin(fresh, asked, invert=True)]
            if len(fresh):  # their stored scores, inside the scope (rows out of scope do not come back)
                found = dict(conn.execute(stored_sql, {**params, "rows": int8_array(fresh)}).fetchall())
                stats.stored += len(fresh)
                asked = np.concatenate([asked, fresh])
                got = np.fromiter(found, dtype=np.int64, count=len(found))
                outside = np.concatenate([outside, fresh[np.isin(fresh, got, invert=True)]])
                stored.update((int(r), float(v)) for r, v in found.items())
            best = _rescore(conn, stored, exact_of, k, slack, exact, stats)
            if done:
                return best[:k]
            rest = b.high[live & ~want]
            if len(best) >= k:
                kth = best[k - 1][1]
                if kth > slack * b.unseen and (not len(rest) or kth > slack * float(rest.max())):
                    return best[:k]
        if b.postings * GROWTH > MAX_POSTINGS:
            return None
        n_blocks[~b.finished] *= GROWTH


def _rescore(
    conn: psycopg.Connection,
    stored: dict[int, float],
    exact_of: dict[int, tuple[str, float]],
    k: int,
    slack: float,
    exact: Callable[[Sequence[int], Sequence[int], int], float],
    stats: ImpactStats,
) -> list[tuple[str, float]]:
    """Exact scores for the best rows by stored score, enough of them that no row left unrescored (its
    true score at most ``slack`` times its stored one) can pass the k-th; best first."""
    order = sorted(stored, key=lambda r: -stored[r])
    n = min(len(order), k + RESCORE)
    while True:
        todo = [r for r in order[:n] if r not in exact_of]
        if todo:
            for row_id, chunk_id, term_ids, tfs, dl in conn.execute(_EXACT, {"rows": int8_array(todo)}):
                exact_of[int(row_id)] = (chunk_id, exact(term_ids, tfs, dl))
            stats.rescored += len(todo)
        best = sorted((exact_of[r] for r in order[:n] if r in exact_of), key=lambda p: (-p[1], p[0]))
        if n >= len(order) or len(best) >= k and best[k - 1][1] > slack * stored[order[n]]:
            return best
        n = min(len(order), n * 4)
