"""Growth curve from ten thousand to a million chunks: build, open, query, add; ours beside the peers.

    python bench/scale.py [--sizes 10k 100k 1m] [--cache-dir ~/.cache/evidencedesk-bench/scale]

For each size the data cache holds the generated documents (bench/corpus_gen.py), the embedded
store they were ingested into and the SciFact query vectors; it is made on the first run (the 1M
store takes about ten minutes to ingest) and reused after. Each run then measures, each stage in
a fresh process so peak memory (``ru_maxrss``) belongs to that stage alone:

- build: our index snapshot (BM25 postings, vectors, HNSW graph, scope columns) from the store;
  bm25s over the same tokens; time, peak memory and size on disk;
- open: the snapshot and store opened, first BM25 and dense answers, resident memory after;
- query: BM25 (ours, bm25s, rank_bm25 at 10k) and dense (ours exact, FAISS flat, ours HNSW with
  recall@10 against exact) latency p50/p99, unfiltered, with a tenant filter keeping 10% and with a
  document filter keeping 1%;
  hybrid ``ask`` end to end with the extractive generator;
- add: 1% more documents ingested into a copy of the store, and 1% more vectors into the graph.

Vectors: each chunk's vector is derived from the real MiniLM embedding of the SciFact article its
text comes from, plus seeded noise (bench/corpus_gen.py), so HNSW recall is meaningful; queries
are the real SciFact test queries embedded with MiniLM.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from machine_info import machine

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus_gen import DerivedVectors, generate, load_sources  # noqa: E402
from evidencedesk.ingest.sync import ingest_folder  # noqa: E402
from evidencedesk.retrieval.scope import Scope  # noqa: E402
from evidencedesk.text.tokenizer import Tokenizer  # noqa: E402

SIZES = {"10k": 10_000, "100k": 100_000, "1m": 1_000_000}
CHUNKS_PER_DOC = 14.3  # what the structure chunker makes of one generated document (measured)
TOKENIZER = Tokenizer(stem=True, stopwords="english")
K = 10
K1, B = 1.5, 0.75
EVERYTHING = Scope.everything()
TENTH = Scope(statuses=None, audiences=None, tenants=frozenset({"t3"}), check_validity=False)
FILTERS = ("all", "10%", "1%")


def hundredth(n_docs: int) -> Scope:
    """A filter keeping 1% of the chunks: every hundredth generated document, by id."""
    ids = frozenset(f"p{n:07d}" for n in range(0, n_docs, 100))
    return Scope(statuses=None, audiences=None, doc_ids=ids, check_validity=False)


RESULTS = HERE / "RESULTS.md"


# -- helpers -------------------------------------------------------------------------------------------
def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def folder_mb(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 2**20
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def latencies(run: Callable[[Any], Any], items: Sequence[Any], keep: list[Any] | None = None) -> dict[str, float]:
    """p50/p99 in ms and queries per second of ``run`` over ``items``, one at a time; ``keep``
    collects the results (so a slow exact search is not run twice to check agreement)."""
    for item in items[:2]:  # warm caches (scope masks, restricted postings) as a long-running service would
        run(item)
    times = []
    for item in items:
        t = time.perf_counter()
        result = run(item)
        times.append(time.perf_counter() - t)
        if keep is not None:
            keep.append(result)
    arr = np.array(times) * 1000
    return {
        "p50": float(np.percentile(arr, 50)),
        "p99": float(np.percentile(arr, 99)),
        "qps": len(arr) / arr.sum() * 1000,
    }


class Paths:
    def __init__(self, cache: Path, size: str) -> None:
        self.root = cache / size
        self.docs = self.root / "docs"
        self.extra = self.root / "extra-docs"
        self.store = self.root / "store"
        self.snapshot = self.root / "snapshot"
        self.bm25s = self.root / "bm25s"
        self.meta = self.root / "prepared.json"
        self.n_chunks = SIZES[size]
        self.n_docs = math.ceil(self.n_chunks / CHUNKS_PER_DOC)


# -- data cache ----------------------------------------------------------------------------------------
def scifact_vectors(scifact: Path, cache: Path) -> tuple[dict[str, np.ndarray], list[str], np.ndarray]:
    """``(title -> article vector, test queries, query vectors)``, embedded once and cached."""
    from evidencedesk.evaluation.beir import load_beir

    bases_file, queries_file = cache / "scifact-bases.npz", cache / "scifact-queries.npz"
    if not bases_file.is_file() or not queries_file.is_file():
        from evidencedesk.index.embedders import default_embedder

        embedder = default_embedder()
        ds = load_beir(scifact)
        sources = load_sources(scifact)
        vecs = embedder.embed([f"{s.title}\n\n{' '.join(s.sentences)}" for s in sources], progress=True)
        np.savez(bases_file, titles=np.array([s.title for s in sources]), vectors=vecs)
        qids = sorted(ds.queries)
        np.savez(
            queries_file,
            texts=np.array([ds.queries[q] for q in qids]),
            vectors=embedder.embed([ds.queries[q] for q in qids]),
        )
    b, q = np.load(bases_file), np.load(queries_file)
    bases = {str(t): v for t, v in zip(b["titles"], b["vectors"], strict=True)}
    return bases, [str(t) for t in q["texts"]], q["vectors"]


def prepare(p: Paths, scifact: Path) -> dict[str, Any]:
    """Generate the documents and ingest the store once; the ingest timing is kept with the cache."""
    from evidencedesk.chunking.config import ChunkingConfig
    from evidencedesk.store import Store

    if p.meta.is_file():
        return json.loads(p.meta.read_text())
    shutil.rmtree(p.root, ignore_errors=True)
    p.root.mkdir(parents=True)
    sources = load_sources(scifact)
    print(f"  generating {p.n_docs:,} documents", flush=True)
    generate(p.docs, sources, p.n_docs)
    generate(p.extra, sources, max(1, p.n_docs // 100), first=p.n_docs)  # the 1% added later
    print("  ingesting into the store", flush=True)
    t = time.perf_counter()
    with Store(p.store) as store:
        report = ingest_folder(store, p.docs, ChunkingConfig())
    seconds = time.perf_counter() - t
    meta = {
        "docs": report.n_documents,
        "chunks": report.n_chunks,
        "failed": len(report.failed),
        "ingest_s": seconds,
        "store_mb": folder_mb(p.store),
        "made": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    p.meta.write_text(json.dumps(meta, indent=1))
    return meta


# -- stages (each runs in its own process) -------------------------------------------------------------
def stage_build(p: Paths, scifact: Path, cache: Path) -> dict[str, Any]:
    from evidencedesk.index.embedders import MINILM_NAME
    from evidencedesk.retrieval.snapshot import write_snapshot
    from evidencedesk.store import Store

    bases, _, _ = scifact_vectors(scifact, cache)
    timings: dict[str, float] = {}
    t = time.perf_counter()
    with Store(p.store) as store:
        build = store.latest_build()
        write_snapshot(
            p.snapshot,
            store.iter_chunks(batch=20_000),
            tokenizer=TOKENIZER,
            k1=K1,
            b=B,
            vectorize=DerivedVectors(bases),
            model_name=MINILM_NAME,
            ann=True,
            threads=0,
            build_id=build.id if build else None,
            timings=timings,
        )
    seconds = time.perf_counter() - t
    return {"seconds": seconds, "timings": timings, "peak_mb": peak_mb(), "disk_mb": folder_mb(p.snapshot)}


def stage_bm25s_build(p: Paths) -> dict[str, Any]:
    import bm25s

    from evidencedesk.store import Store

    t = time.perf_counter()
    with Store(p.store) as store:
        tokens = [TOKENIZER.tokenize(c.text) for batch in store.iter_chunks(batch=20_000) for c in batch]
    t_tok = time.perf_counter() - t
    t = time.perf_counter()
    retriever = bm25s.BM25(method="lucene", k1=K1, b=B)
    retriever.index(tokens, show_progress=False)
    t_index = time.perf_counter() - t
    shutil.rmtree(p.bm25s, ignore_errors=True)
    retriever.save(str(p.bm25s))
    return {"read_tokenize_s": t_tok, "index_s": t_index, "peak_mb": peak_mb(), "disk_mb": folder_mb(p.bm25s)}


def stage_open(p: Paths, scifact: Path, cache: Path) -> dict[str, Any]:
    from evidencedesk.index.embedders import default_embedder
    from evidencedesk.retrieval.snapshot import Snapshot, SnapshotSearcher
    from evidencedesk.store import Store

    embedder = default_embedder()  # the model and the code are loaded first: they are not the index
    embedder.embed(["warm up"])
    base = rss_mb()
    t = time.perf_counter()
    store = Store(p.store)
    snap = Snapshot(p.snapshot)
    bm25 = SnapshotSearcher(snap, "bm25", store.chunks_by_id)
    dense = SnapshotSearcher(snap, "dense-ann", store.chunks_by_id, embedder)
    t_open = time.perf_counter() - t
    t = time.perf_counter()
    first_bm25 = bm25.search("vitamin D deficiency and bone fractures", K, TENTH)
    t_bm25 = time.perf_counter() - t
    t = time.perf_counter()
    first_dense = dense.search("vitamin D deficiency and bone fractures", K, TENTH)
    t_dense = time.perf_counter() - t
    assert len(first_bm25) == K and len(first_dense) == K, "the 10% filter must still give k results"
    store.close()
    return {
        "open_s": t_open,
        "first_bm25_s": t_bm25,
        "first_dense_s": t_dense,
        "rss_added_mb": rss_mb() - base,
        "index_mb": folder_mb(p.snapshot),
    }


Masks = dict[str, tuple[np.ndarray, Scope]]


def ours_bm25(snap: Any, scope: Scope) -> Callable[[list[str]], Any]:
    """Our BM25 over pre-tokenised queries (as bm25s gets them): term statistics, filter, top k ids."""

    def run(tokens: list[str]) -> Any:
        return snap.bm25(tokens, K, scope)[0]

    return run


def query_bm25s(p: Paths, snap: Any, masks: Masks, qtokens: list[list[str]]) -> dict[str, Any]:
    import bm25s

    out: dict[str, Any] = {}
    retriever = bm25s.BM25.load(str(p.bm25s), mmap=False)
    vocab = retriever.vocab_dict
    bq = [[t for t in q if t in vocab] for q in qtokens]
    for name, (mask, _) in masks.items():
        weight = None if mask.all() else mask.astype(np.float32)
        out[f"bm25_bm25s_{name}"] = latencies(
            lambda q, w=weight: retriever.retrieve([q], k=K, show_progress=False, n_threads=1, weight_mask=w), bq
        )
        t = time.perf_counter()
        retriever.retrieve(bq, k=K, show_progress=False, n_threads=0, weight_mask=weight)
        out[f"bm25_bm25s_batch_{name}"] = len(bq) / (time.perf_counter() - t)
    mine = ours_bm25(snap, masks["all"][1])
    ids = snap.segments[0].ids  # one segment written whole: its rows are the store's order, as bm25s's
    theirs, their_scores = retriever.retrieve(bq, k=K, show_progress=False)
    out["bm25_agree"] = sum(
        sorted(mine(q)) == sorted(ids[int(r)] for r in th) for q, th in zip(qtokens, theirs, strict=True)
    )
    # the generated text repeats, so equal scores tie at the cut and each system keeps other ids there;
    # the scores themselves must agree (bm25s's Lucene variant leaves out the constant factor k1 + 1)
    out["bm25_agree_scores"] = sum(
        np.allclose(np.sort(snap.bm25(q, K, EVERYTHING)[1]) / (K1 + 1), np.sort(s), rtol=1e-5)
        for q, s in zip(qtokens, their_scores, strict=True)
    )
    return out


def query_rank_bm25(store: Any, qtokens: list[list[str]]) -> dict[str, Any]:
    from rank_bm25 import BM25Okapi

    tokens = [TOKENIZER.tokenize(c.text) for batch in store.iter_chunks(batch=20_000) for c in batch]
    t = time.perf_counter()
    okapi = BM25Okapi(tokens, k1=K1, b=B)
    return {
        "rank_bm25_index_s": time.perf_counter() - t,
        "bm25_rank_bm25_all": latencies(lambda q: np.argsort(okapi.get_scores(q))[-K:], qtokens[:30]),
    }


def query_dense(snap: Any, masks: Masks, qvecs: np.ndarray) -> dict[str, Any]:
    """Ours exact (memory-mapped) and HNSW, FAISS flat (in RAM); HNSW recall against exact."""
    import faiss

    out: dict[str, Any] = {}
    (segment,) = snap.segments  # a snapshot written whole is one segment
    vectors = np.ascontiguousarray(segment.dense.vectors)
    t = time.perf_counter()
    flat = faiss.IndexFlatIP(vectors.shape[1])
    flat.add(vectors)
    out["faiss_add_s"] = time.perf_counter() - t
    del vectors
    queries = list(qvecs)
    for name, (mask, _) in masks.items():
        use = None if mask.all() else mask
        exact: list[Any] = []
        approx: list[Any] = []
        found: list[Any] = []
        out[f"dense_ours_exact_{name}"] = latencies(lambda v, m=use: segment.dense.search(v, K, m), queries, exact)
        out[f"dense_ours_hnsw_{name}"] = latencies(lambda v, m=use: segment.ann.search(v, K, m), queries, approx)
        params = None
        if use is not None:
            bits = np.packbits(mask, bitorder="little")  # kept alive while the selector points at it
            params = faiss.SearchParameters(sel=faiss.IDSelectorBitmap(bits))
        out[f"dense_faiss_flat_{name}"] = latencies(
            lambda v, ps=params: flat.search(v.reshape(1, -1), K, params=ps), queries, found
        )
        exact_sets = [set(rows.tolist()) for rows, _ in exact]
        approx_sets = [set(rows.tolist()) for rows, _ in approx]
        out[f"hnsw_recall_{name}"] = float(
            np.mean([len(a & e) / max(1, len(e)) for a, e in zip(approx_sets, exact_sets, strict=True)])
        )
        faiss_sets = [set(ids[0].tolist()) for _, ids in found]
        out[f"faiss_agree_{name}"] = sum(f == e for f, e in zip(faiss_sets, exact_sets, strict=True))
    return out


def query_ask(snap: Any, store: Any, queries: list[str]) -> dict[str, Any]:
    """Hybrid ask end to end: MiniLM query embedding, BM25 + HNSW fused, extractive answer, validation."""
    from evidencedesk.answer.generators import get_generator
    from evidencedesk.answer.pipeline import ask
    from evidencedesk.index.embedders import default_embedder
    from evidencedesk.retrieval.hybrid import HybridSearcher
    from evidencedesk.retrieval.snapshot import SnapshotSearcher
    from evidencedesk.store.lookup import StoredChunks

    hybrid = HybridSearcher(
        [
            (SnapshotSearcher(snap, "bm25", store.chunks_by_id), 40),
            (SnapshotSearcher(snap, "dense-ann", store.chunks_by_id, default_embedder()), 40),
        ]
    )
    generator = get_generator("extractive")
    by_id = StoredChunks(store)
    out = {}
    for name, scope in (("all", EVERYTHING), ("10%", TENTH)):
        out[f"hybrid_search_{name}"] = latencies(lambda q, s=scope: hybrid.search(q, 5, s), queries)
        out[f"ask_hybrid_{name}"] = latencies(
            lambda q, s=scope: ask(q, hybrid, by_id, generator, scope=s, k=5), queries
        )
    return out


def stage_query(p: Paths, scifact: Path, cache: Path, n_queries: int) -> dict[str, Any]:
    from evidencedesk.retrieval.snapshot import Snapshot
    from evidencedesk.store import Store

    _, queries, qvecs = scifact_vectors(scifact, cache)
    queries, qvecs = queries[:n_queries], qvecs[:n_queries]
    store = Store(p.store)
    snap = Snapshot(p.snapshot)
    # BM25 queries with no indexed term are left out for every system (bm25s cannot take an empty query)
    qtokens = [list(dict.fromkeys(TOKENIZER.tokenize(q))) for q in queries]
    terms = snap.segments[0].bm25.terms
    qtokens = [q for q in qtokens if any(terms.find(t) is not None for t in q)]
    scopes = (("all", EVERYTHING), ("10%", TENTH), ("1%", hundredth(p.n_docs)))
    masks: Masks = {name: (snap.segments[0].masks.mask(scope), scope) for name, scope in scopes}
    out: dict[str, Any] = {
        "queries": len(queries),
        "bm25_queries": len(qtokens),
        "filter_fraction": float(masks["10%"][0].mean()),
        "filter_fraction_1%": float(masks["1%"][0].mean()),
    }
    for name, (_, scope) in masks.items():
        out[f"bm25_ours_{name}"] = latencies(ours_bm25(snap, scope), qtokens)
    out.update(query_bm25s(p, snap, masks, qtokens))
    if p.n_chunks <= 10_000:  # rank_bm25 scores every document in Python: only the small size finishes
        out.update(query_rank_bm25(store, qtokens))
    out.update(query_dense(snap, masks, qvecs))
    out.update(query_ask(snap, store, queries[:50]))
    store.close()
    return out


def stage_add(p: Paths, scifact: Path, cache: Path) -> dict[str, Any]:
    """1% more documents: ingested into a copy of the store, and their vectors added to the graph."""
    import onnxruntime  # noqa: F401  (before usearch, see evidencedesk.index.ann)
    from usearch.index import Index

    from evidencedesk.chunking.config import ChunkingConfig
    from evidencedesk.retrieval.segments import GRAPH
    from evidencedesk.store import Store

    work = p.root / "store-copy"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(p.store, work)
    try:
        with Store(work) as store:
            t = time.perf_counter()
            report = ingest_folder(store, p.extra, ChunkingConfig(), remove_missing=False)
            t_ingest = time.perf_counter() - t
            new_chunks = [c for doc in report.added for c in store.chunks(doc)]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    bases, _, _ = scifact_vectors(scifact, cache)
    vecs = DerivedVectors(bases)(new_chunks)
    graph = Index.restore(str(p.snapshot / "segments" / "s000001" / GRAPH), view=False)
    n = len(graph)
    t = time.perf_counter()
    graph.add(np.arange(n, n + len(vecs), dtype=np.uint64), vecs, threads=0)
    t_graph = time.perf_counter() - t
    return {"docs": len(report.added), "chunks": len(new_chunks), "ingest_s": t_ingest, "hnsw_add_s": t_graph}


STAGES = {
    "build": stage_build,
    "bm25s_build": stage_bm25s_build,
    "open": stage_open,
    "query": stage_query,
    "add": stage_add,
}


def run_stage(stage: str, size: str, args: argparse.Namespace) -> dict[str, Any]:
    """Run one stage in a fresh interpreter and return what it printed as JSON on its last line."""
    cmd = [sys.executable, __file__, "--stage", stage, "--sizes", size, "--cache-dir", str(args.cache_dir),
           "--scifact", str(args.scifact), "--queries", str(args.queries)]  # fmt: skip
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
        raise SystemExit(f"stage {stage} at {size} failed (exit {proc.returncode})")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"  {stage}: {time.perf_counter() - t:.0f} s", flush=True)
    return result


# -- report --------------------------------------------------------------------------------------------
Cell = Callable[[dict[str, Any]], str]


def lat(key: str) -> Cell:
    """p50 / p99 of one query measurement."""
    return lambda r: f"{r['query'][key]['p50']:.2f} / {r['query'][key]['p99']:.2f}"


def qps_ratio(ours: str, peer: str) -> Cell:
    """Our queries/s over the peer's, unfiltered and under the 10% and 1% filters (those measured)."""

    def cell(r: dict[str, Any]) -> str:
        q = r["query"]
        found = [f for f in FILTERS if f"{ours}_{f}" in q]
        return " / ".join(f"{q[f'{ours}_{f}']['qps'] / q[f'{peer}_{f}']['qps']:.2f}x" for f in found)

    return cell


def build_parts(r: dict[str, Any]) -> str:
    t = r["build"]["timings"]
    return " / ".join(f"{t.get(k, 0):.1f}" for k in ("read", "tokenize", "count", "bm25", "vectors", "ann"))


def ingest_rate(r: dict[str, Any]) -> str:
    prep = r["prep"]
    return f"{prep['docs'] / prep['ingest_s']:,.0f}; {prep['chunks'] / prep['ingest_s']:,.0f}"


def both(key: str, fmt: str = "{:.3f}") -> Cell:
    return lambda r: " / ".join(fmt.format(r["query"][f"{key}_{f}"]) for f in FILTERS if f"{key}_{f}" in r["query"])


BUILD_ROWS: list[tuple[str, Cell]] = [
    ("store ingest (docs/s; chunks/s)", ingest_rate),
    ("store on disk (MB)", lambda r: f"{r['prep']['store_mb']:,.0f}"),
    ("snapshot build, ours (s)", lambda r: f"{r['build']['seconds']:.1f}"),
    ("  read / tokenise / count / postings / vectors / HNSW (s)", build_parts),
    ("snapshot build peak memory (MB)", lambda r: f"{r['build']['peak_mb']:,.0f}"),
    ("snapshot on disk (MB)", lambda r: f"{r['build']['disk_mb']:,.0f}"),
    ("bm25s: read + tokenise / index (s)",
     lambda r: f"{r['bm25s']['read_tokenize_s']:.1f} / {r['bm25s']['index_s']:.1f}"),
    ("BM25 from tokens: ours (count + postings) / bm25s (s)",
     lambda r: f"{r['build']['timings']['count'] + r['build']['timings']['bm25']:.1f} / {r['bm25s']['index_s']:.1f}"),
    ("bm25s build peak memory (MB)", lambda r: f"{r['bm25s']['peak_mb']:,.0f}"),
    ("open snapshot + store (ms)", lambda r: f"{r['open']['open_s'] * 1000:.1f}"),
    ("first filtered BM25 / dense answer after open (ms)",
     lambda r: f"{r['open']['first_bm25_s'] * 1000:.0f} / {r['open']['first_dense_s'] * 1000:.0f}"),
    ("resident memory added by open + 2 queries (MB)",
     lambda r: f"{r['open']['rss_added_mb']:,.0f} of {r['open']['index_mb']:,.0f} on disk"),
]  # fmt: skip
QUERY_ROWS: list[tuple[str, Cell]] = [
    ("BM25 ours, all", lat("bm25_ours_all")),
    ("BM25 bm25s, all", lat("bm25_bm25s_all")),
    ("BM25 ours, 10%", lat("bm25_ours_10%")),
    ("BM25 bm25s, 10% (weight_mask)", lat("bm25_bm25s_10%")),
    ("BM25 ours, 1%", lat("bm25_ours_1%")),
    ("BM25 bm25s, 1% (weight_mask)", lat("bm25_bm25s_1%")),
    ("BM25 rank_bm25, all (30 queries)", lat("bm25_rank_bm25_all")),
    ("**BM25 q/s, ours / bm25s, all / 10% / 1%**", qps_ratio("bm25_ours", "bm25_bm25s")),
    ("BM25 q/s ours, all / 10%",
     lambda r: f"{r['query']['bm25_ours_all']['qps']:,.0f} / {r['query']['bm25_ours_10%']['qps']:,.0f}"),
    ("BM25 q/s bm25s batched (all threads), all / 10% / 1%", both("bm25_bm25s_batch", "{:,.0f}")),
    ("same top-10 as bm25s (queries)", lambda r: f"{r['query']['bm25_agree']} of {r['query']['bm25_queries']}"),
    ("same top-10 scores as bm25s, ties aside (queries)",
     lambda r: f"{r['query']['bm25_agree_scores']} of {r['query']['bm25_queries']}"),
    ("dense exact ours (mmap), all", lat("dense_ours_exact_all")),
    ("dense FAISS flat, all", lat("dense_faiss_flat_all")),
    ("dense exact ours, 10%", lat("dense_ours_exact_10%")),
    ("dense FAISS flat, 10% (IDSelectorBitmap)", lat("dense_faiss_flat_10%")),
    ("dense exact ours, 1%", lat("dense_ours_exact_1%")),
    ("dense FAISS flat, 1% (IDSelectorBitmap)", lat("dense_faiss_flat_1%")),
    ("**dense exact q/s, ours / FAISS, all / 10% / 1%**", qps_ratio("dense_ours_exact", "dense_faiss_flat")),
    ("dense HNSW ours, all", lat("dense_ours_hnsw_all")),
    ("dense HNSW ours, 10%", lat("dense_ours_hnsw_10%")),
    ("dense HNSW ours, 1% (exact inside small filters)", lat("dense_ours_hnsw_1%")),
    ("**HNSW recall@10 against exact, all / 10% / 1%**", both("hnsw_recall")),
    ("FAISS flat top-10 = our exact top-10 (queries), all / 10% / 1%", both("faiss_agree", "{}")),
    ("hybrid search (MiniLM query, BM25 + HNSW, RRF, text), all", lat("hybrid_search_all")),
    ("hybrid search, 10%", lat("hybrid_search_10%")),
    ("hybrid ask (extractive, 50 queries), all", lat("ask_hybrid_all")),
    ("hybrid ask (extractive, 50 queries), 10%", lat("ask_hybrid_10%")),
]  # fmt: skip
ADD_ROWS: list[tuple[str, Cell]] = [
    ("store ingest of the 1% (s)", lambda r: f"{r['add']['ingest_s']:.1f}"),
    ("  documents, chunks", lambda r: f"{r['add']['docs']:,}, {r['add']['chunks']:,}"),
    ("HNSW add of their vectors (s)", lambda r: f"{r['add']['hnsw_add_s']:.2f}"),
    ("snapshot rewrite (s, = build)", lambda r: f"{r['build']['seconds']:.1f}"),
]


def render(results: dict[str, dict[str, Any]]) -> str:
    sizes = list(results)
    head = "| | " + " | ".join(f"{results[s]['prep']['chunks']:,} chunks" for s in sizes) + " |"
    sep = "|---" * (len(sizes) + 1) + "|"

    def table(rows: list[tuple[str, Cell]]) -> list[str]:
        out = [head, sep]
        for label, cell in rows:
            cells = []
            for s in sizes:
                try:
                    cells.append(cell(results[s]))
                except KeyError:
                    cells.append("-")
            out.append(f"| {label} | " + " | ".join(cells) + " |")
        return out

    return "\n".join(
        [
            "**Build and open**", "", *table(BUILD_ROWS), "",
            "**Queries** (latency p50 / p99 in ms, one query at a time; 10% = one tenant of ten; "
            "1% = every hundredth document)", "",
            *table(QUERY_ROWS), "",
            "**Adding 1% more documents**", "", *table(ADD_ROWS),
        ]
    )  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="+", default=list(SIZES), choices=list(SIZES))
    ap.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache" / "evidencedesk-bench" / "scale")
    ap.add_argument("--scifact", type=Path, default=HERE.parent.parent / "shared" / "datasets" / "scifact")
    ap.add_argument("--queries", type=int, default=300, help="SciFact test queries to time (at most 300)")
    ap.add_argument("--stage", choices=list(STAGES), help=argparse.SUPPRESS)
    ap.add_argument(
        "--only", nargs="+", choices=list(STAGES), help="rerun these stages, keeping the others' last results"
    )
    ap.add_argument("--no-append", action="store_true", help=f"do not append to {RESULTS.name}")
    args = ap.parse_args()
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    if args.stage:  # a child process: one stage, one size, JSON on the last line
        p = Paths(args.cache_dir, args.sizes[0])
        fn = STAGES[args.stage]
        extra: list[Any] = {"build": [args.scifact, args.cache_dir], "bm25s_build": [],
                            "open": [args.scifact, args.cache_dir],
                            "query": [args.scifact, args.cache_dir, args.queries],
                            "add": [args.scifact, args.cache_dir]}[args.stage]  # fmt: skip
        print(json.dumps(fn(p, *extra)))
        return 0
    if not (args.scifact / "corpus.jsonl.gz").is_file():
        print(f"SciFact not found at {args.scifact}; pass --scifact DIR", file=sys.stderr)
        return 1
    started = time.perf_counter()
    scifact_vectors(args.scifact, args.cache_dir)
    results: dict[str, dict[str, Any]] = {}
    for size in args.sizes:
        print(f"== {size}", flush=True)
        p = Paths(args.cache_dir, size)
        saved = p.root / "results.json"
        r: dict[str, Any] = json.loads(saved.read_text()) if args.only and saved.is_file() else {}
        r["prep"] = prepare(p, args.scifact)
        for stage in args.only or ("build", "bm25s_build", "open", "query", "add"):
            r["bm25s" if stage == "bm25s_build" else stage] = run_stage(stage, size, args)
        results[size] = r
        saved.write_text(json.dumps(r, indent=1))
    table = render(results)
    print(table)
    if not args.no_append:
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        command = "python bench/scale.py " + " ".join(sys.argv[1:])
        with RESULTS.open("a", encoding="utf-8") as f:
            f.write(
                f"\n## Growth from 10k to 1M chunks ({stamp})\n\nMachine: {machine()}.  \n"
                f"Command: `{command.strip()}` ({time.perf_counter() - started:.0f} s with the data cache present)"
                + (f"; stages rerun: {', '.join(args.only)}, the others from the last full run" if args.only else "")
                + "\n\n"
                f"{table}\n"
            )
        print(f"appended to {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
