"""PostgreSQL from 10k to a million chunks, side by side with the embedded store, in one run.

    python bench/postgres_scale.py [--sizes 10k 100k 1m] [--pg-url URL] [--queries 300] [--dense-queries 100]

Data: bench/scale.py's cache (generated policy documents ingested into the embedded store, and its
index snapshot); a size missing there is made first, as bench/scale.py makes it. For each size:

* ingest: each chunk's vector (``corpus_gen.DerivedVectors``: the real MiniLM vector of its SciFact
  article plus noise) goes once into an embedding cache; then the store's documents and chunks go
  into a fresh PgStore schema with ``PgStore.upsert`` (binary COPY of documents, chunks, BM25 term
  rows and the vectors read from the cache, then the impact-ordered postings built from what was
  written, then the HNSW index built over the vectors); chunks/s without the HNSW build, the build
  on its own, and CPU seconds of this process and of the PostgreSQL backend; then ``PgStore.vacuum``
  (timed), so that autovacuum's scan of the freshly loaded tables does not run beside the queries;
* size on disk of both stores (the embedded one with its snapshot);
* BM25, SciFact test queries, k 10, text in and chunks out on both sides (the embedded side is the
  snapshot searcher a service uses): p50/p99 unfiltered and with a tenant filter keeping 10%, and
  how many queries return the same ids and scores;
* dense: HNSW (iterative scan) recall@10 against exact search in the same database, unfiltered and
  at 10%, with p50/p99 of HNSW, exact PostgreSQL and the embedded exact search, on the real SciFact
  query vectors.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus_gen import DerivedVectors  # noqa: E402
from machine_info import machine  # noqa: E402
from scale import SIZES, TENTH, TOKENIZER, Paths, folder_mb, prepare, scifact_vectors, stage_build  # noqa: E402

RESULTS = HERE / "RESULTS.md"
SECTION = "## PostgreSQL at scale, beside the embedded store (bench/postgres_scale.py)"
K = 10


class LookupVectors:
    """An embedder answering from vectors computed beforehand (chunk texts and query texts)."""

    def __init__(self, name: str, vectors: dict[str, np.ndarray]) -> None:
        self.name, self.vectors = name, vectors
        self.dim = len(next(iter(vectors.values())))

    def embed(self, texts: list[str], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        return np.array([self.vectors[t] for t in texts], dtype=np.float32)


def percentiles(ms: list[float]) -> tuple[float, float]:
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 99))


def timed_all(run: Callable[[Any], Any], items: Sequence[Any]) -> tuple[list[Any], list[float]]:
    out, ms = [], []
    for item in items:
        t = time.perf_counter()
        out.append(run(item))
        ms.append((time.perf_counter() - t) * 1000)
    return out, ms


def cpu_seconds(backend_pid: int) -> tuple[float, float]:
    """CPU seconds used so far by this process and by the PostgreSQL server process ``backend_pid``
    (read from /proc: the server must run on this machine; 0 for it otherwise)."""
    try:
        fields = Path(f"/proc/{backend_pid}/stat").read_text().rsplit(")", 1)[1].split()
        server = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        server = 0.0
    return time.process_time(), server


def pg_mb(store: Any) -> float:
    with store.pool.connection() as conn:
        row = conn.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind IN ('r', 'm')",
            (store.schema,),
        ).fetchone()
    return float(row[0]) / 2**20 if row else 0.0


def run_size(size: str, args: argparse.Namespace) -> dict[str, Any]:
    from evidencedesk.backends.postgres import PgBM25Searcher, PgDenseSearcher, PgStore
    from evidencedesk.index.embedding_cache import EmbeddingCache, embed_cached
    from evidencedesk.retrieval.scope import Scope
    from evidencedesk.retrieval.snapshot import Snapshot, SnapshotSearcher
    from evidencedesk.store import Store

    p = Paths(args.cache_dir, size)
    prepare(p, args.scifact)
    if not (p.snapshot / "manifest.json").is_file():
        print(f"[{size}] building the embedded snapshot", flush=True)
        stage_build(p, args.scifact, args.cache_dir)
    bases, queries, qvecs = scifact_vectors(args.scifact, args.cache_dir)
    queries = queries[: args.queries]
    r: dict[str, Any] = {"size": size}
    store = Store(p.store)
    snap = Snapshot(p.snapshot)
    docs, chunks = store.documents(), store.chunks()
    r["chunks"] = len(chunks)
    r["emb_mb"] = folder_mb(p.store) + folder_mb(p.snapshot)
    print(f"[{size}] {len(chunks):,} chunks read from the embedded store", flush=True)

    vectors = DerivedVectors(bases)(chunks)
    lookup = {c.text: v for c, v in zip(chunks, vectors, strict=True)}
    lookup.update(zip(queries, qvecs[: len(queries)], strict=True))
    # the snapshot holds these same vectors under the model's name, so both sides check out as one model
    embedder = LookupVectors(snap.manifest["dense"]["model_name"], lookup)
    cache = p.root / "pg-embeddings.sqlite"
    t = time.perf_counter()
    with EmbeddingCache(cache) as ec:  # each distinct chunk text once, then read from the cache
        embed_cached(embedder, [c.text for c in chunks], ec, batch_size=4096)
    r["embed_s"] = time.perf_counter() - t
    del vectors

    by_doc: dict[str, list[Any]] = {}
    for c in chunks:
        by_doc.setdefault(c.doc_id, []).append(c)
    items = [(d, by_doc.get(d.id, [])) for d in docs]
    del by_doc
    # one connection, so its server process is the one measured; vectors come from the embedding cache
    pg = PgStore(args.pg_url, schema=f"bench_{uuid.uuid4().hex[:10]}", max_size=1, embedder=embedder, cache_path=cache)
    try:
        pg.configure_bm25(tokenizer=TOKENIZER)
        with pg.pool.connection() as conn:
            backend = conn.info.backend_pid
        t, cpu = time.perf_counter(), cpu_seconds(backend)
        pg.upsert(items)
        r["pg_write_s"] = time.perf_counter() - t
        r["pg_write_cpu"] = [a - b for a, b in zip(cpu_seconds(backend), cpu, strict=True)]
        r["pg_blocks_s"] = pg.last_timings.get("blocks", 0.0)
        r["pg_hnsw_s"] = pg.last_timings.get("hnsw", 0.0)
        del items
        # settle before timing: VACUUM now what autovacuum would otherwise scan beside the queries
        t = time.perf_counter()
        pg.vacuum()
        r["pg_vacuum_s"] = time.perf_counter() - t
        r["pg_mb"] = pg_mb(pg)
        print(f"[{size}] postgres: ingest {r['pg_write_s']:.1f} s (HNSW {r['pg_hnsw_s']:.1f} s), {r['pg_mb']:.0f} MB",
              flush=True)  # fmt: skip

        r["filter_share"] = sum(c.metadata.tenant == "t3" for c in chunks) / len(chunks)
        del chunks, docs
        embedder.vectors = {q: lookup[q] for q in queries}  # only the queries are embedded from here on
        del lookup
        with pg.pool.connection() as conn:  # a warm server: the BM25 tables read once into the OS cache
            conn.execute("SELECT sum(length(rows) + length(ws)) FROM bm25_blocks").fetchone()
            conn.execute("SELECT sum(dl + cardinality(terms)) FROM chunk_terms").fetchone()
        scopes = {"none": Scope.everything(), "10%": TENTH}
        ours = SnapshotSearcher(snap, "bm25", store.chunks_by_id)
        pgb = PgBM25Searcher(pg)
        for q in queries[:5]:  # warm: caches, compiled kernels
            ours.search(q, K), pgb.search(q, K)
        for name, scope in scopes.items():
            want, ms_e = timed_all(lambda q, s=scope: ours.search(q, K, s), queries)
            paths: list[str] = []

            def run(q: str, s: Scope = scope, seen: list[str] = paths) -> Any:
                out = pgb.search(q, K, s)
                seen.append(pgb.last_path)
                return out

            got, ms_p = timed_all(run, queries)
            same = sum([c.chunk.id for c in a] == [c.chunk.id for c in b] for a, b in zip(want, got, strict=True))
            pairs = [(x, y) for a, b in zip(want, got, strict=True) for x, y in zip(a, b, strict=False)]
            gap = max((abs(x.score - y.score) for x, y in pairs), default=0.0)
            r[f"bm25_{name}"] = {
                "emb": percentiles(ms_e), "pg": percentiles(ms_p), "same": same, "n": len(queries),
                "gap": gap, "scan": paths.count("scan"),
            }  # fmt: skip
            print(f"[{size}] bm25 {name}: {r[f'bm25_{name}']}", flush=True)

        dq = queries[: args.dense_queries]
        exact = PgDenseSearcher(pg, embedder=embedder, mode="exact")
        edense = SnapshotSearcher(snap, "dense", store.chunks_by_id, embedder)
        hnsw = {ef: PgDenseSearcher(pg, embedder=embedder, mode="hnsw", ef_search=ef) for ef in args.ef_search}
        for q in dq[:3]:
            edense.search(q, K), *(h.search(q, K) for h in hnsw.values())
        for name, scope in scopes.items():
            truth, ms_x = timed_all(lambda q, s=scope: exact.search(q, K, s), dq)
            _, ms_d = timed_all(lambda q, s=scope: edense.search(q, K, s), dq)
            r[f"dense_{name}"] = {"exact": percentiles(ms_x), "emb": percentiles(ms_d), "n": len(dq), "hnsw": {}}
            for ef, searcher in hnsw.items():
                approx, ms_h = timed_all(lambda q, s=scope, h=searcher: h.search(q, K, s), dq)
                hits = [len({c.chunk.id for c in a} & {c.chunk.id for c in b}) / max(1, len(b))
                        for a, b in zip(approx, truth, strict=True)]  # fmt: skip
                r[f"dense_{name}"]["hnsw"][str(ef)] = {"recall": float(np.mean(hits)), "ms": percentiles(ms_h)}
            print(f"[{size}] dense {name}: {r[f'dense_{name}']}", flush=True)
    finally:
        pg.destroy()
        store.close()
    return r


def ingest_s(r: dict[str, Any]) -> float:
    return float(r["pg_write_s"] - r["pg_hnsw_s"])


def same_cell(b: dict[str, Any]) -> str:
    return f"{b['same']} / {b['n']} ({b['gap']:.0e})"


def cpu_cell(r: dict[str, Any], key: str) -> str:
    client, server = r[key]
    return f"{client:.1f} + {server:.1f}"


def render(results: list[dict[str, Any]], header: str) -> str:
    def lat(pair: tuple[float, float]) -> str:
        return f"{pair[0]:.1f} / {pair[1]:.1f}"

    lines = [f"{SECTION}", "", header, "", "| measure | " + " | ".join(r["size"] for r in results) + " |",
             "| --- | " + " | ".join("---" for _ in results) + " |"]  # fmt: skip

    def row(label: str, cell: Callable[[dict[str, Any]], str]) -> None:
        lines.append(f"| {label} | " + " | ".join(cell(r) for r in results) + " |")

    row("chunks", lambda r: f"{r['chunks']:,}")
    row("PostgreSQL ingest chunks/s: documents, chunks, BM25 rows, postings and vectors (cached) by COPY",
        lambda r: f"{r['chunks'] / ingest_s(r):,.0f}")  # fmt: skip
    row("of which building the impact-ordered postings (s)", lambda r: f"{r['pg_blocks_s']:.1f}")
    row("ingest CPU s: this process + PostgreSQL backend (HNSW build included)", lambda r: cpu_cell(r, "pg_write_cpu"))
    row("then the HNSW index build (s; m 16, ef_construction 64)", lambda r: f"{r['pg_hnsw_s']:.1f}")
    row("then VACUUM (ANALYZE) of the loaded tables before timing (s; PgStore.vacuum)",
        lambda r: f"{r['pg_vacuum_s']:.1f}")  # fmt: skip
    row("size on disk MB: embedded (store + snapshot) / PostgreSQL",
        lambda r: f"{r['emb_mb']:,.0f} / {r['pg_mb']:,.0f}")  # fmt: skip
    for f in ("none", "10%"):
        row(f"BM25 p50 / p99 ms, filter {f}: embedded", lambda r, f=f: lat(r[f"bm25_{f}"]["emb"]))
        row(f"BM25 p50 / p99 ms, filter {f}: PostgreSQL", lambda r, f=f: lat(r[f"bm25_{f}"]["pg"]))
        row(f"BM25 same top-10 ids as embedded, filter {f} (score gap)", lambda r, f=f: same_cell(r[f"bm25_{f}"]))
        row(f"BM25 queries that fell back to a scan, filter {f}", lambda r, f=f: f"{r[f'bm25_{f}']['scan']}")
    for f in ("none", "10%"):
        for ef in results[-1][f"dense_{f}"]["hnsw"]:
            row(f"dense recall@10 HNSW (ef_search {ef}) vs exact, filter {f}",
                lambda r, f=f, ef=ef: f"{r[f'dense_{f}']['hnsw'][ef]['recall']:.3f}")  # fmt: skip
            row(f"dense p50 / p99 ms, filter {f}: PostgreSQL HNSW (ef_search {ef})",
                lambda r, f=f, ef=ef: lat(r[f"dense_{f}"]["hnsw"][ef]["ms"]))  # fmt: skip
        row(f"dense p50 / p99 ms, filter {f}: PostgreSQL exact", lambda r, f=f: lat(r[f"dense_{f}"]["exact"]))
        row(f"dense p50 / p99 ms, filter {f}: embedded exact", lambda r, f=f: lat(r[f"dense_{f}"]["emb"]))
    lines += ["", NOTES]
    return "\n".join(lines) + "\n"


NOTES = (
    "Reading the table: PostgreSQL runs on the same 2-core machine (loopback), with the settings"
    " scripts/start-postgres.sh gives it (shared_buffers 256MB). BM25 in PostgreSQL reads impact-ordered"
    " postings (bm25_blocks) and proves its top 10 exact with a threshold algorithm (bm25_impact); the ids"
    " and scores equal the embedded snapshot's (the gap is the largest score difference over all queries);"
    " a query with more than 64 terms or one that would read more than 3,000,000 postings scores its whole"
    " scope instead (the scan row)."
    " The write rate includes building the postings; the HNSW build is timed on its own (it runs once,"
    " after the vectors are in; pgvector builds it with a parallel worker and maintenance_work_mem sized to"
    " hold the graph). Dense: HNSW with iterative scan (relaxed order) reads 4 x k rows and keeps"
    " the best k; recall is against exact search in the same database."
)


def write_section(text: str, path: Path = RESULTS) -> None:
    """Replace this benchmark's section of RESULTS.md (or append it)."""
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    start = old.find(SECTION)
    if start >= 0:
        nxt = old.find("\n## ", start + len(SECTION))
        old = old[:start].rstrip("\n") + ("\n\n" + old[nxt + 1 :] if nxt >= 0 else "\n")
    path.write_text(old.rstrip("\n") + "\n\n" + text, encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="+", default=list(SIZES), choices=list(SIZES))
    ap.add_argument("--pg-url", default=os.environ.get("EVIDENCEDESK_PG_URL", ""))
    ap.add_argument("--scifact", type=Path, default=HERE.parents[1] / "shared" / "datasets" / "scifact")
    ap.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache" / "evidencedesk-bench" / "scale")
    ap.add_argument("--queries", type=int, default=300, help="SciFact test queries for BM25 (at most 300)")
    ap.add_argument("--dense-queries", type=int, default=100, help="of those, how many for dense search")
    ap.add_argument("--ef-search", type=int, nargs="+", default=[100, 400, 1000], help="HNSW ef_search values")
    ap.add_argument("--no-append", action="store_true")
    args = ap.parse_args()
    if not args.pg_url:
        ap.error("--pg-url or EVIDENCEDESK_PG_URL is required")
    started = time.perf_counter()
    results = []
    for size in args.sizes:
        results.append(run_size(size, args))
        header = (
            f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {machine()};"
            f" `python bench/postgres_scale.py --sizes {' '.join(args.sizes)}`"
            f" ({time.perf_counter() - started:.0f} s). {args.queries} SciFact test queries for BM25,"
            f" the first {args.dense_queries} for dense search; filter 10% = one tenant of ten; the BM25 tables"
            " read once before timing (a warm server). p50 / p99 in ms."
        )
        text = render(results, header)
        print(text)
        if not args.no_append:  # after each size, so a long run keeps what it measured
            write_section(text)
            print(f"wrote its section of {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
