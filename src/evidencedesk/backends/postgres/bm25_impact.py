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
otherwise the terms whose unread postings could add the most read until they hold ``GROWTH`` times
as many blocks, and past ``MAX_POSTINGS`` the search gives up (the caller scores every chunk in scope
instead). Once every block of every term is read, each row's stored score is known: the rows are then
checked against the scope and rescored from the best stored score down, a few at a time.

Blocks are kept per tenant, so a scope naming its tenants reads only theirs; the scope's other
conditions apply when rows are scored, inside the database, before any ranking.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from evidencedesk.backends.postgres.bm25_drift import FLOAT32_SLACK
from evidencedesk.backends.postgres.bm25_sparse import QueryTerm
from evidencedesk.backends.postgres.impact_jit import MAX_TERMS, Gather
from evidencedesk.backends.postgres.scope_sql import SqlParams
from evidencedesk.retrieval.scope import Scope

# Blocks read per term at first, and the factor a term's read blocks grow by each round it is read
# again: tuned on SciFact's training queries over the 1M-chunk bench corpus (bench/postgres_scale.py):
# 4 and 2 gave unfiltered p50 42 to 52 ms and p99 151 to 204 over two runs, 8 and 3 p50 36 to 38 and
# p99 137 to 138 (3.4 rounds a query instead of 5.3).
START_BLOCKS = 8
GROWTH = 3
MAX_POSTINGS = 3_000_000  # postings read before giving up on a query (the caller then scans its scope)
PROBE = 64  # rows by best bound whose stored score is read first, to learn what the k-th scores
MAX_SCORED = 4_000  # rows whose stored score may be read in one round; more: read deeper first
RESCORE = 20  # rows rescored exactly at first (k more); more when the bound asks for them

_BLOCKS = (
    "SELECT q.i, b.max_w, b.rows, b.ws FROM unnest(%(tids)s::int4[], %(offs)s::int4[], %(lims)s::int4[])"
    " WITH ORDINALITY AS q(t, off, lim, i) CROSS JOIN LATERAL (SELECT max_w, rows, ws FROM bm25_blocks"
    " WHERE term_id = q.t{tenant} ORDER BY max_w DESC, id OFFSET q.off LIMIT q.lim) AS b"
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


def _tenant_filter(scope: Scope | None, params: SqlParams) -> str | None:
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


class _Terms:
    """The postings read so far, gathered per chunk row (``impact_jit.Gather``), and what each query
    term has left unread."""

    def __init__(self, statement: bytes, params: SqlParams, terms: Sequence[QueryTerm]) -> None:
        self.statement, self.params = statement, params
        self.ids = [t.id for t in terms]
        self.idf = np.array([t.idf for t in terms], dtype=np.float64)
        self.read = np.zeros(len(terms), dtype=np.int64)  # blocks read per term
        self.ceil = np.zeros(len(terms), dtype=np.float64)  # max_w of the first unread block (0: none left)
        self.finished = np.zeros(len(terms), dtype=bool)
        self.postings = 0
        self.gather = Gather(START_BLOCKS * 128 * len(terms))

    def more(self, conn: psycopg.Connection, wanted: np.ndarray) -> None:
        """Read ``wanted[j]`` more blocks of each term j (0: none), plus a look at the next one's max_w."""
        pick = np.flatnonzero((wanted > 0) & ~self.finished)
        if not len(pick):
            return
        self.params.update(
            tids=[self.ids[j] for j in pick], offs=[int(self.read[j]) for j in pick],
            lims=[int(wanted[j]) + 1 for j in pick],
        )  # fmt: skip
        got: list[list[tuple[float, bytes, bytes]]] = [[] for _ in pick]
        for i, max_w, rows, ws in conn.execute(self.statement, self.params, binary=True):  # bytea as raw bytes
            got[int(i) - 1].append((float(max_w), rows, ws))
        for blocks, j in zip(got, pick, strict=True):
            if len(blocks) > wanted[j]:
                self.ceil[j] = blocks[-1][0]
                blocks = blocks[:-1]
            else:
                self.ceil[j], self.finished[j] = 0.0, True
            self.read[j] += len(blocks)
            if blocks:
                rows = np.frombuffer(b"".join(b[1] for b in blocks), dtype=">i8")
                ws = np.frombuffer(b"".join(b[2] for b in blocks), dtype=">f4")
                self.gather.add(int(j), rows, ws.astype(np.float64) * self.idf[j])
                self.postings += len(rows)

    def bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """(row ids, low, high, unseen): each row's stored score from the postings read, plus what the
        unread postings of the other terms can add; and the most a row met in no block can score."""
        return self.gather.bounds(self.idf * self.ceil)


def impact_top(
    conn: psycopg.Connection,
    terms: Sequence[QueryTerm],
    k: int,
    scope: Scope | None,
    condition: sql.Composable,
    params: SqlParams,
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
    if len(terms) > MAX_TERMS:
        return None
    params = dict(params, q=query_vector)
    tenant = _tenant_filter(scope, params)
    if tenant is None:
        return []
    reader = _Terms(_BLOCKS.format(tenant=tenant).encode(), params, terms)
    stored_sql = sql.SQL(_STORED).format(scope=condition)
    slack = ratio * (1 + FLOAT32_SLACK)
    asked = np.zeros(0, dtype=bool)  # per gathered row: its stored score was asked for
    stored: dict[int, float] = {}  # in-scope row id -> stored score
    exact_of: dict[int, tuple[str, float]] = {}  # row id -> (chunk id, exact score)
    stats.rounds = stats.postings = stats.stored = stats.rescored = 0

    def ask(rows: np.ndarray, slots: np.ndarray) -> None:
        if len(slots):  # stored scores inside the scope (rows out of scope, or gone, do not come back)
            found = conn.execute(stored_sql, {**params, "rows": int8_array(rows[slots])}).fetchall()
            stats.stored += len(slots)
            asked[slots] = True
            stored.update((int(r), float(v)) for r, v in found)

    def kth_stored() -> float:
        if len(stored) < k:
            return 0.0
        values = np.fromiter(stored.values(), dtype=np.float64, count=len(stored))
        return float(np.partition(values, len(values) - k)[len(values) - k])

    reader.more(conn, np.full(len(terms), START_BLOCKS))
    while True:
        stats.rounds += 1
        stats.postings = reader.postings
        rows, low, high, unseen = reader.bounds()
        asked = np.concatenate([asked, np.zeros(len(rows) - len(asked), dtype=bool)])
        if reader.finished.all():  # every posting read: ``high`` is each row's whole stored score
            rescore = lambda: _rescore(conn, stored, exact_of, k, slack, exact, stats)  # noqa: E731
            return _best_of_all(rows, high, asked, ask, rescore, k, slack)
        # what the k-th scores: the stored scores of the rows with the best bounds
        first = np.flatnonzero(~asked)
        if len(first) > PROBE:
            first = first[np.argpartition(-high[first], PROBE)[:PROBE]]
        ask(rows, first)
        theta = kth_stored()
        want = np.flatnonzero(~asked & (high * slack >= theta))  # the rows that may still reach the top k
        if theta > slack * unseen and len(want) <= MAX_SCORED:
            ask(rows, want)
            best = _rescore(conn, stored, exact_of, k, slack, exact, stats)
            rest = high[~asked]
            if len(best) >= k:
                kth = best[k - 1][1]
                if kth > slack * unseen and (not len(rest) or kth > slack * float(rest.max())):
                    return best[:k]
        if reader.postings >= MAX_POSTINGS:
            return None
        # read deeper where the bound is loosest: the terms whose unread postings could add the most
        caps = reader.idf * reader.ceil
        grow = ~reader.finished & (caps >= 0.5 * caps.max())
        reader.more(conn, np.where(grow, np.maximum(reader.read * (GROWTH - 1), START_BLOCKS), 0))


def _best_of_all(
    rows: np.ndarray,
    high: np.ndarray,
    asked: np.ndarray,
    ask: Callable[[np.ndarray, np.ndarray], None],
    rescore: Callable[[], list[tuple[str, float]]],
    k: int,
    slack: float,
) -> list[tuple[str, float]]:
    """The top ``k`` once every posting of every term is read: each row's stored score is known
    (``high``), so the rows are checked against the scope and rescored from the best stored score down,
    ``PROBE`` rows first and four times as many each round, until the k-th exact score beats ``slack``
    times the best stored score not yet checked. (Asking the database for every row a common query's
    postings hold, hundreds of thousands at a million chunks, took seconds.)"""
    step = max(PROBE, 4 * k)
    while True:
        left = np.flatnonzero(~asked)
        best = rescore()
        if not len(left) or (len(best) >= k and best[k - 1][1] > slack * float(high[left].max())):
            return best[:k]
        if len(left) > step:
            left = left[np.argpartition(-high[left], step)[:step]]
        ask(rows, left)
        step *= 4


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
