"""Embedded store against PostgreSQL + pgvector on SciFact: quality parity, ingest speed, query latency.

    sudo scripts/start-postgres.sh      # once: PostgreSQL 15 + pgvector on 127.0.0.1:55432
    .venv/bin/python bench/backends.py --scifact /work/shared/datasets/scifact

Both backends get the same SciFact test corpus (5,183 abstracts, one chunk each), the same BM25
settings (k1 1.5, b 0.75, English stemming and stopwords) and the same MiniLM vectors (from the
embedding cache in --cache-dir, filled on the first run, so no timing below includes embedding
the corpus). Reported per backend: ingest from nothing in documents per second (parse-free: the
documents are already read), the time to make the search indexes ready, nDCG@10 / recall@100 on
the 300 test queries, and single-query latency p50/p99 at k = 10 (query embeddings memoised, so
latency is the search alone). The PostgreSQL store lives in a schema of its own, dropped after.
Prints a table and replaces its section of bench/RESULTS.md (--no-append to skip).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import numpy as np

from evidencedesk.backends.postgres import PgBM25Searcher, PgDenseSearcher, PgStore
from evidencedesk.evaluation.beir import BEIR_CHUNKING, doc_run, load_beir, score_run
from evidencedesk.index.embedders import default_embedder
from evidencedesk.index.embedding_cache import EmbeddingCache, embed_cached
from evidencedesk.retrieval.candidates import Searcher
from evidencedesk.retrieval.dense import DenseSearcher
from evidencedesk.retrieval.lexical import BM25Searcher
from evidencedesk.store import Store
from evidencedesk.text.tokenizer import Tokenizer
from machine_info import machine, replace_section

REPO = Path(__file__).resolve().parents[1]
DEFAULT_URL = "postgresql://postgres@127.0.0.1:55432/evidencedesk_test"
TOKENIZER = Tokenizer(stem=True, stopwords="english")
TOLERANCE = 0.002


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class MemoEmbedder:
    """The default embedder, remembering query vectors so latency measures the search alone."""

    def __init__(self) -> None:
        self.inner = default_embedder()
        self.name, self.dim = self.inner.name, self.inner.dim
        self.seen: dict[str, np.ndarray] = {}

    def embed(self, texts: list[str], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        if len(texts) != 1:
            return self.inner.embed(texts, batch_size=batch_size, progress=progress)
        if texts[0] not in self.seen:
            self.seen[texts[0]] = self.inner.embed(texts)[0]
        return self.seen[texts[0]][None, :]


def timed(work: Callable[[], Any]) -> tuple[Any, float]:
    started = time.perf_counter()
    out = work()
    return out, time.perf_counter() - started


def latency(searcher: Searcher, queries: list[str], k: int = 10) -> tuple[float, float]:
    """p50 and p99 in milliseconds of one search each (after one warm-up pass over a few queries)."""
    for q in queries[:5]:
        searcher.search(q, k)
    times = []
    for q in queries:
        started = time.perf_counter()
        searcher.search(q, k)
        times.append((time.perf_counter() - started) * 1000)
    return float(np.percentile(times, 50)), float(np.percentile(times, 99))


def same_top10(a: Searcher, b: Searcher, queries: list[str]) -> tuple[int, float]:
    """How many queries get identical top-10 chunk ids from both, and the largest score difference."""
    same, worst = 0, 0.0
    for q in queries:
        x, y = a.search(q, 10), b.search(q, 10)
        same += [c.chunk.id for c in x] == [c.chunk.id for c in y]
        worst = max([worst, *(abs(c.score - d.score) for c, d in zip(x, y, strict=False))])
    return same, worst


def server_version(store: PgStore) -> str:
    with store.pool.connection() as conn:
        pg = conn.execute("SHOW server_version").fetchone()
        vec = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    return f"PostgreSQL {pg[0] if pg else '?'}, pgvector {vec[0] if vec else '?'}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scifact", type=Path, required=True, help="SciFact in BEIR layout")
    ap.add_argument("--url", default=os.environ.get("EVIDENCEDESK_PG_URL", DEFAULT_URL), help="PostgreSQL URL")
    ap.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache" / "evidencedesk-bench")
    ap.add_argument("--results", type=Path, default=REPO / "bench" / "RESULTS.md")
    ap.add_argument("--no-append", action="store_true", help="print only; do not write to RESULTS.md")
    args = ap.parse_args(argv)
    host, started = machine(), time.perf_counter()
    cache_path = args.cache_dir / "embeddings.sqlite"

    log("loading SciFact (test split)")
    ds = load_beir(args.scifact, "test")
    queries = list(ds.queries.values())
    embedder = MemoEmbedder()
    rows: dict[str, dict[str, Any]] = {}

    with TemporaryDirectory() as tmp:
        log("embedded store: ingest")
        store = Store(Path(tmp) / "store")
        report, t_ingest = timed(lambda: store.sync(ds.documents, BEIR_CHUNKING))
        chunks = store.chunks()
        log(f"embedding cache: {cache_path} (the first run embeds the corpus)")
        with EmbeddingCache(cache_path) as cache:
            embed_cached(embedder.inner, [c.text for c in chunks], cache, progress=True)
        bm25, t_bm25 = timed(lambda: BM25Searcher(chunks, tokenizer=TOKENIZER))
        dense, t_dense = timed(lambda: DenseSearcher(chunks, embedder=embedder, cache_path=cache_path))
        rows["embedded"] = {"docs": report.n_documents, "ingest_s": t_ingest, "index_s": t_bm25 + t_dense}

        log("PostgreSQL store: ingest, then vectors from the cache and the HNSW index")
        schema = f"bench_{uuid.uuid4().hex[:8]}"
        pg = PgStore(args.url, schema=schema, tokenizer=TOKENIZER, cache_path=cache_path)
        try:
            pg_report, t_pg_ingest = timed(lambda: pg.sync(ds.documents, BEIR_CHUNKING))
            assert pg_report.n_chunks == report.n_chunks, (pg_report.n_chunks, report.n_chunks)
            _, t_pg_vectors = timed(lambda: pg.ensure_vectors(embedder))
            rows["postgres"] = {"docs": pg_report.n_documents, "ingest_s": t_pg_ingest, "index_s": t_pg_vectors}
            searchers: dict[str, dict[str, Searcher]] = {
                "embedded": {"bm25": bm25, "dense (exact)": dense},
                "postgres": {
                    "bm25": PgBM25Searcher(pg),
                    "dense (exact)": PgDenseSearcher(pg, embedder=embedder, mode="exact"),
                    "dense (HNSW)": PgDenseSearcher(pg, embedder=embedder, mode="hnsw"),
                },
            }
            results: list[dict[str, Any]] = []
            for backend, methods in searchers.items():
                for method, searcher in methods.items():
                    log(f"{backend} {method}: 300 queries at depth 100, then latency at k = 10")
                    scores = score_run(ds.qrels, doc_run(searcher, ds.queries, chunks, 100))
                    p50, p99 = latency(searcher, queries)
                    results.append({"backend": backend, "method": method, **scores, "p50": p50, "p99": p99})
            parity = {
                "bm25": same_top10(bm25, searchers["postgres"]["bm25"], queries),
                "dense (exact)": same_top10(dense, searchers["postgres"]["dense (exact)"], queries),
            }
            versions = server_version(pg)
        finally:
            pg.destroy()
        store.close()

    seconds = time.perf_counter() - started
    report_text = render(results, rows, parity, host, versions, len(queries), seconds)
    print(report_text)
    if not args.no_append:
        old = args.results.read_text(encoding="utf-8") if args.results.exists() else "# Benchmark results\n"
        title = report_text.split("\n", 1)[0]
        args.results.write_text(replace_section(old, title, report_text.rstrip("\n") + "\n\n"), encoding="utf-8")
        log(f"wrote its section of {args.results}")
    return 0


def render(
    results: list[dict[str, Any]],
    rows: dict[str, dict[str, Any]],
    parity: dict[str, tuple[int, float]],
    host: str,
    versions: str,
    n_queries: int,
    seconds: float,
) -> str:
    cmd = " ".join(shlex.quote(a) for a in [".venv/bin/python", "bench/backends.py", *sys.argv[1:]])
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    ref = {r["method"]: r["ndcg@10"] for r in results if r["backend"] == "embedded"}
    out = [
        "## Backends: embedded store vs PostgreSQL + pgvector on SciFact (bench/backends.py)",
        "",
        f"- command: `{cmd}`",
        f"- date: {when}; machine: {host}; {versions} on the same machine (loopback); wall time {seconds / 60:.1f} min",
        "- data: BEIR SciFact test split, 5,183 abstracts as one chunk each (title + text), 300 queries. BM25 k1 1.5,"
        " b 0.75, English stemming + stopwords; dense all-MiniLM-L6-v2 int8 ONNX, vectors from the embedding cache.",
        "",
        "| backend | method | test nDCG@10 | diff vs embedded | recall@100 | MRR@10 | p50 ms | p99 ms |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        base = ref.get(r["method"].replace("HNSW", "exact"))
        diff = f"{r['ndcg@10'] - base:+.4f}" if base is not None and r["backend"] != "embedded" else "-"
        out.append(
            f"| {r['backend']} | {r['method']} | {r['ndcg@10']:.4f} | {diff} | {r['recall@100']:.4f} "
            f"| {r['mrr@10']:.4f} | {r['p50']:.2f} | {r['p99']:.2f} |"
        )
    out += ["", "| backend | ingest docs/s | ingest s | indexes ready s |", "|---|---:|---:|---:|"]
    for backend, r in rows.items():
        out.append(f"| {backend} | {r['docs'] / r['ingest_s']:,.0f} | {r['ingest_s']:.2f} | {r['index_s']:.2f} |")
    out.append("")
    checks = []
    for method, (same, worst) in parity.items():
        checks.append(f"{method}: same top-10 ids on {same} of {n_queries} queries, largest score gap {worst:.2e}")
    out.append("- parity (embedded vs PostgreSQL): " + "; ".join(checks))
    bad = [
        f"{r['method']} {r['ndcg@10'] - ref[r['method']]:+.4f}"
        for r in results
        if r["backend"] == "postgres" and r["method"] in ref and abs(r["ndcg@10"] - ref[r["method"]]) > TOLERANCE
    ]
    verdict = "yes" if not bad else f"NO ({', '.join(bad)})"
    out.append(f"- nDCG@10 within {TOLERANCE} of the embedded store: {verdict}")
    out.append(
        "- ingest: embedded = Store.sync (SQLite); PostgreSQL = PgStore.sync (COPY of documents, chunks and BM25"
        " term rows, then the sparsevec weights encoded in SQL). Indexes ready: embedded = building the in-memory"
        " BM25 and dense searchers; PostgreSQL = loading the vectors from the cache with COPY and building HNSW"
        " (m 16, ef_construction 64). HNSW search: iterative_scan relaxed_order, ef_search 1000 (the default)."
    )
    out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    raise SystemExit(main())
