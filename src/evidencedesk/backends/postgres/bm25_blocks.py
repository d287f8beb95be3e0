"""Impact-ordered BM25 postings in PostgreSQL: each term's chunks, per tenant, best weight first.

``bm25_blocks`` holds, for every (tenant, term), the chunk rows holding the term sorted by their
stored weight (the sparsevec value, encoded at ``encoded_avgdl``) from highest to lowest, cut into
blocks of ``BLOCK_SIZE`` postings. A block row keeps its largest weight (``max_w``) and two byte
strings: the chunks' row ids (big-endian int8) and their weights (big-endian float4). A search
(``bm25_impact``) reads a term's blocks in ``max_w`` order, so after reading some it knows that no
unread posting of the term weighs more than the next block's ``max_w``.

Upkeep at the end of every write transaction (``refresh``):

* the first build, a re-encoding of every weight, or changes since the last full build (new rows
  plus removed chunks) above ``REBUILD_SHARE`` of the rows it covered: every block is built again
  (generation 0), with the removed chunks' postings gone;
* otherwise the new rows get blocks of their own (a new generation, sorted within itself). Reading
  by ``max_w`` stays exact across generations; only the reading gets longer as they pile up, so
  once there are more than ``MAX_GENERATIONS`` the added generations are merged into one.

A removed chunk's postings may stay in a block until the next full build; a search scores only
rows that still exist, so they cost a little reading and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import psycopg
import psycopg.sql

from evidencedesk.backends.postgres import binary_rows as binary
from evidencedesk.backends.postgres.blocks_copy_jit import block_rows
from evidencedesk.index.bm25_weight import term_weight

BLOCK_SIZE = 256  # postings per block: 3 KB a row, stored inline (toast_tuple_target)
REBUILD_SHARE = 0.10
MAX_GENERATIONS = 8
_LEVELS = (1 << 12) - 1  # weights are sorted on 12-bit levels; each block's max_w is exact regardless

_STATE = (
    "SELECT blocks_base_last, blocks_base_rows, blocks_last, blocks_delta_rows, blocks_gens, blocks_removed"
    " FROM bm25_stats"
)
# every posting of the rows with row_id > lo: (row id, tenant number, term id, tf, length), fixed width, in
# row order (as an ingest adds them), so equal weights keep one order whichever way the postings came
_POSTINGS = (
    "COPY (SELECT c.row_id, array_position({tenants}::text[], c.tenant)::int4, u.t, u.tf, c.dl"
    " FROM (SELECT * FROM chunk_terms WHERE row_id > {lo} ORDER BY row_id) AS c,"
    " unnest(c.terms, c.tfs) AS u(t, tf)) TO STDOUT (FORMAT BINARY)"
)
_POSTING_ROW = np.dtype([
    ("n", ">i2"), ("l0", ">i4"), ("row", ">i8"), ("l1", ">i4"), ("tenant", ">i4"), ("l2", ">i4"), ("term", ">i4"),
    ("l3", ">i4"), ("tf", ">i4"), ("l4", ">i4"), ("dl", ">i4"),
])  # fmt: skip


@dataclass
class Postings:
    """Postings as parallel arrays: chunk row id, tenant (an index into ``tenants``), term id, weight."""

    tenants: list[str] = field(default_factory=list)
    rows: list[np.ndarray] = field(default_factory=list)
    tenant: list[np.ndarray] = field(default_factory=list)
    term: list[np.ndarray] = field(default_factory=list)
    w: list[np.ndarray] = field(default_factory=list)
    n_rows: int = 0  # chunk rows these postings come from
    _codes: dict[str, int] = field(default_factory=dict)

    def add(self, rows: np.ndarray, tenant: np.ndarray, term: np.ndarray, w: np.ndarray, n_rows: int) -> None:
        self.rows.append(np.asarray(rows, dtype=np.int64))
        self.tenant.append(np.asarray(tenant, dtype=np.int32))
        self.term.append(np.asarray(term, dtype=np.int32))
        self.w.append(np.asarray(w, dtype=np.float32))
        self.n_rows += n_rows

    def code(self, tenant: str) -> int:
        """The tenant's index in ``tenants`` (added on first sight)."""
        if tenant not in self._codes:
            self._codes[tenant] = len(self.tenants)
            self.tenants.append(tenant)
        return self._codes[tenant]


@dataclass(frozen=True)
class BlockState:
    base_last: int | None  # the largest row id the full build covered (None: never built)
    base_rows: int  # chunk rows the full build covered
    last: int  # the largest row id any block covers
    delta_rows: int  # chunk rows added since the full build
    generations: int  # generations added since the full build
    removed: int  # chunk rows removed since the full build


def state(conn: psycopg.Connection) -> BlockState:
    row = conn.execute(_STATE).fetchone()
    assert row is not None
    base_last, base_rows, last, delta, gens, removed = row
    return BlockState(base_last, int(base_rows), int(last or 0), int(delta), int(gens), int(removed))


def weights(tf: np.ndarray, dl: np.ndarray, k1: float, b: float, avgdl: float) -> np.ndarray:
    """The stored (float32) weight of each posting, computed as the ingest computes it."""
    encoded: np.ndarray = term_weight(tf.astype(np.float64), dl.astype(np.float64), k1, b, avgdl)
    return encoded.astype(np.float32)


def read_postings(conn: psycopg.Connection, lo: int, k1: float, b: float, avgdl: float) -> Postings:
    """Every posting of the chunk rows with row id > ``lo``, read with one binary COPY."""
    tenants = [r[0] for r in conn.execute("SELECT DISTINCT tenant FROM chunk_terms WHERE row_id > %s", (lo,))]
    out = Postings(tenants=tenants)
    if not tenants:
        return out
    statement = psycopg.sql.SQL(_POSTINGS).format(tenants=psycopg.sql.Literal(tenants), lo=psycopg.sql.Literal(lo))
    with conn.cursor() as cur, cur.copy(statement) as copy:
        data = b"".join(bytes(part) for part in copy)
    body = data[len(binary.SIGNATURE) : len(data) - len(binary.TRAILER)]
    p = np.frombuffer(body, dtype=_POSTING_ROW)
    n = conn.execute("SELECT count(*) FROM chunk_terms WHERE row_id > %s", (lo,)).fetchone()
    out.add(p["row"], p["tenant"] - 1, p["term"], weights(p["tf"], p["dl"], k1, b, avgdl), int(n[0]) if n else 0)
    return out


def build(conn: psycopg.Connection, gen: int, postings: Postings) -> int:
    """Write ``postings`` as blocks of generation ``gen``: per (tenant, term), best weight first, cut every
    ``BLOCK_SIZE``; returns the number of blocks."""
    if not postings.rows or not sum(len(r) for r in postings.rows):
        return 0
    rows, w = np.concatenate(postings.rows), np.concatenate(postings.w)
    tenant = np.concatenate(postings.tenant).astype(np.int64)
    term = np.concatenate(postings.term).astype(np.int64)
    order = _order(tenant, term, w)
    rows, tenant, term, w = rows[order], tenant[order], term[order], w[order]
    n = len(rows)
    new_group = np.ones(n, dtype=bool)
    new_group[1:] = (tenant[1:] != tenant[:-1]) | (term[1:] != term[:-1])
    group_start = np.maximum.accumulate(np.where(new_group, np.arange(n), 0))
    starts = np.flatnonzero((np.arange(n) - group_start) % BLOCK_SIZE == 0)
    ends = np.append(starts[1:], n)
    max_w = np.maximum.reduceat(w, starts)
    body = block_rows(gen, starts, ends, tenant[starts], term[starts], max_w, rows, w, postings.tenants)
    statement = b"COPY bm25_blocks (gen, tenant, term_id, max_w, rows, ws) FROM STDIN WITH (FORMAT BINARY)"
    with conn.cursor() as cur, cur.copy(statement) as copy:
        copy.write(binary.SIGNATURE)
        copy.write(body)
        copy.write(binary.TRAILER)
    return len(starts)


def _order(tenant: np.ndarray, term: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The postings' order in blocks: by tenant, term, weight from highest (on ``_LEVELS`` levels: each
    block's max_w stays exact) and then as given (row order)."""
    n = len(w)
    level = _LEVELS - np.minimum(np.floor(w.astype(np.float64) / max(float(w.max()), 1e-30) * _LEVELS), _LEVELS)
    level = level.astype(np.int64)
    bits = [int(tenant.max()).bit_length(), int(term.max()).bit_length(), _LEVELS.bit_length()]
    bits.append(max(n - 1, 1).bit_length())
    if sum(bits) > 63:
        return np.lexsort((np.arange(n), level, term, tenant))
    key = (((tenant << bits[1]) | term) << bits[2]) | level
    key = (key << bits[3]) | np.arange(n, dtype=np.int64)
    key.sort()  # every key distinct: an unstable sort gives one order
    order: np.ndarray = key & ((1 << bits[3]) - 1)
    return order


def refresh(
    conn: psycopg.Connection, k1: float, b: float, avgdl: float, full: bool = False, pending: Postings | None = None
) -> str:
    """Bring the blocks up to date with ``chunk_terms`` (weights encoded at ``avgdl``) inside the caller's
    transaction; returns what was done: "none", "added", "merged" or "rebuilt".

    ``pending``: the postings of the rows this transaction added, weighted at ``avgdl``, when the caller
    kept them; they spare reading those rows back from the database.
    """
    s = state(conn)
    row = conn.execute("SELECT coalesce(max(row_id), 0), count(*) FROM chunk_terms").fetchone()
    assert row is not None
    top, live = int(row[0]), int(row[1])
    new = conn.execute("SELECT count(*) FROM chunk_terms WHERE row_id > %s", (s.last,)).fetchone()
    n_new = int(new[0]) if new else 0

    def gather(lo: int) -> Postings:
        """The postings of the rows with row id > ``lo``: the pending ones when they are exactly those."""
        if pending is not None and pending.n_rows and pending.rows:
            first = int(min(r.min() for r in pending.rows if len(r)))
            held = conn.execute("SELECT count(*) FROM chunk_terms WHERE row_id > %s", (lo,)).fetchone()
            mine = conn.execute("SELECT count(*) FROM chunk_terms WHERE row_id >= %s", (first,)).fetchone()
            if held and mine and first > lo and int(held[0]) == int(mine[0]) == pending.n_rows:
                return pending
        return read_postings(conn, lo, k1, b, avgdl)

    changed = s.delta_rows + n_new + s.removed
    if full or s.base_last is None or changed > REBUILD_SHARE * max(s.base_rows, 1):
        conn.execute("DELETE FROM bm25_blocks")
        build(conn, 0, gather(0))
        conn.execute(
            "UPDATE bm25_stats SET blocks_base_last = %s, blocks_base_rows = %s, blocks_last = %s,"
            " blocks_delta_rows = 0, blocks_gens = 0, blocks_removed = 0",
            (top, live, top),
        )
        return "rebuilt"
    if n_new == 0:
        return "none"
    if s.generations + 1 > MAX_GENERATIONS:  # merge every added generation, with the new rows, into one
        conn.execute("DELETE FROM bm25_blocks WHERE gen > 0")
        build(conn, 1, gather(s.base_last))
        gens, done = 1, "merged"
    else:
        build(conn, s.generations + 1, gather(s.last))
        gens, done = s.generations + 1, "added"
    conn.execute(
        "UPDATE bm25_stats SET blocks_last = %s, blocks_delta_rows = blocks_delta_rows + %s, blocks_gens = %s",
        (top, n_new, gens),
    )
    return done
