"""Time from ingesting 1% more documents to their being searchable: a new segment against a rewrite.

    python bench/refresh.py [--sizes 10k 100k] [--cache-dir ~/.cache/evidencedesk-bench/scale]

Uses bench/scale.py's data cache (generated documents, the ingested store, SciFact vectors; made
on the first run). For each size, in one run:

- the peer: the snapshot written whole from the store (what every ingest cost before segments);
- ours: a copy of the store and that snapshot; 1% more documents are ingested, the snapshot gets one
  new segment for them (``update_snapshot``, with the default tiered merge policy), is reopened, and
  a BM25 search for the text of one new chunk returns it. The clock runs from the start of the
  ingest to that answer;
- BM25 and exact dense latency over one segment and over two (p50, SciFact test queries), to show
  what searching several segments costs;
- ``merge_snapshot``: the two segments merged back into one (HNSW graph included), the price paid
  later by the merge policy or by ``evidencedesk index --merge``.

Vectors of the new chunks are derived the way the build derives them (bench/corpus_gen.py), as in
bench/scale.py: the time to embed them with a real model is not included. ``--random-bases`` puts
seeded random unit vectors in place of the MiniLM embeddings of the SciFact articles and queries
(in a cache of their own): timings do not depend on what the vectors hold, and no model has to run
first, which on a loaded 2-core machine takes longer than the benchmark.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from evidencedesk.ingest.sync import ingest_folder

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus_gen import DerivedVectors  # noqa: E402
from machine_info import machine, replace_section  # noqa: E402
from scale import (  # noqa: E402
    EVERYTHING,
    RESULTS,
    SIZES,
    TENTH,
    TOKENIZER,
    K,
    Paths,
    latencies,
    prepare,
    scifact_vectors,
    stage_build,
)

HEADING = "## Time from ingest to searchable: a new segment against a rewrite (bench/refresh.py"


def random_bases(scifact: Path, cache: Path, dim: int = 384) -> None:
    """Write the SciFact vector cache with seeded random unit vectors (no model runs)."""
    from corpus_gen import load_sources
    from evidencedesk.evaluation.beir import load_beir

    bases_file, queries_file = cache / "scifact-bases.npz", cache / "scifact-queries.npz"
    if bases_file.is_file() and queries_file.is_file():
        return
    rng = np.random.default_rng(18)

    def unit(n: int) -> np.ndarray:
        v = rng.standard_normal((n, dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    titles = [s.title for s in load_sources(scifact)]
    np.savez(bases_file, titles=np.array(titles), vectors=unit(len(titles)))
    ds = load_beir(scifact)
    qids = sorted(ds.queries)
    np.savez(queries_file, texts=np.array([ds.queries[q] for q in qids]), vectors=unit(len(qids)))


def search_latency(snap: Any, qtokens: list[list[str]], qvecs: np.ndarray) -> dict[str, float]:
    out = {}
    for name, scope in (("all", EVERYTHING), ("10%", TENTH)):
        out[f"bm25_{name}"] = latencies(lambda q, s=scope: snap.bm25(q, K, s), qtokens)["p50"]
        out[f"dense_{name}"] = latencies(lambda v, s=scope: snap.dense(v, K, s), list(qvecs))["p50"]
    return out


def refresh(p: Paths, scifact: Path, cache: Path, n_queries: int, merge: bool = True) -> dict[str, Any]:
    from evidencedesk.chunking.config import ChunkingConfig
    from evidencedesk.documents import Chunk
    from evidencedesk.retrieval.scope import Scope
    from evidencedesk.retrieval.snapshot import Snapshot, SnapshotSearcher
    from evidencedesk.retrieval.snapshot_update import merge_snapshot, update_snapshot, writer_lock
    from evidencedesk.store import Store

    bases, queries, qvecs = scifact_vectors(scifact, cache)
    qtokens = [q for q in (list(dict.fromkeys(TOKENIZER.tokenize(x))) for x in queries[:n_queries]) if q]
    qvecs = qvecs[:n_queries]
    work = p.root / "refresh"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(p.store, work)
    shutil.copytree(p.snapshot, work / "snapshot")
    out: dict[str, Any] = {"before": search_latency(Snapshot(work / "snapshot"), qtokens, qvecs)}
    vectorize = DerivedVectors(bases)
    timings: dict[str, float] = {}
    try:
        with Store(work) as store:

            def chunks_of(doc_ids: Sequence[str]) -> Iterator[list[Chunk]]:
                for start in range(0, len(doc_ids), 200):
                    yield [c for d in doc_ids[start : start + 200] for c in store.chunks(d)]

            t0 = time.perf_counter()
            report = ingest_folder(store, p.extra, ChunkingConfig(), remove_missing=False)
            t_ingest = time.perf_counter() - t0
            with writer_lock(store.snapshot_dir):
                done = update_snapshot(
                    store.snapshot_dir,
                    build_id=store.latest_build_id(),
                    documents=store.document_builds(),
                    chunks_of=chunks_of,
                    vectorize=vectorize,
                    timings=timings,
                )
            t_update = time.perf_counter() - t0 - t_ingest
            snap = Snapshot(store.snapshot_dir)
            probe = store.chunks(report.added[-1])[-1]
            # inside its own document: at 1M chunks, generated text repeats, so more than K other chunks
            # can score as high as the probe on the whole corpus
            own = Scope(statuses=None, audiences=None, doc_ids=frozenset({probe.doc_id}), check_validity=False)
            hits = SnapshotSearcher(snap, "bm25", store.chunks_by_id).search(probe.text, K, own)
            t_total = time.perf_counter() - t0
            assert probe.id in [h.chunk.id for h in hits], "the new chunk must be found"
            assert snap.build_id == store.latest_build_id() and len(snap) == store.chunk_count()
            out.update(
                docs=len(report.added),
                chunks=done["added"],
                segments=len(snap.segments),
                ingest_s=t_ingest,
                update_s=t_update,
                first_search_s=t_total - t_ingest - t_update,
                searchable_s=t_total,
                timings=timings,
                after=search_latency(snap, qtokens, qvecs),
            )
            if merge:
                t = time.perf_counter()
                with writer_lock(store.snapshot_dir):
                    merge_snapshot(store.snapshot_dir)
                out["merge_s"] = time.perf_counter() - t
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def before_after(key: str) -> Any:
    """p50 over one segment (the snapshot written whole) / over two (after the ingest)."""
    return lambda r: f"{r['refresh']['before'][key]:.2f} / {r['refresh']['after'][key]:.2f}"


def parts(r: dict[str, Any]) -> str:
    x = r["refresh"]
    stages = " / ".join(f"{x['timings'].get(k, 0):.2f}" for k in ("read", "tokenize", "vectors", "bm25"))
    return f"{x['ingest_s']:.2f} / {x['update_s']:.2f} ({stages}) / {x['first_search_s']:.3f}"


def _cell(cell: Any, r: dict[str, Any]) -> str:
    try:
        return str(cell(r))
    except KeyError:  # a step skipped by --quick
        return "-"


def render(results: dict[str, dict[str, Any]]) -> str:
    sizes = list(results)
    head = "| | " + " | ".join(f"{results[s]['prep']['chunks']:,} chunks" for s in sizes) + " |"
    rows: list[tuple[str, Any]] = [
        ("1% more: documents, chunks", lambda r: f"{r['refresh']['docs']:,}, {r['refresh']['chunks']:,}"),
        ("**ingest to searchable, new segment (s)**", lambda r: f"{r['refresh']['searchable_s']:.1f}"),
        ("  store ingest / segment (read, tokenise, vectors, BM25) / reopen + first search (s)", parts),
        ("peer: the snapshot rewritten whole (s)", lambda r: f"{r['build']['seconds']:.1f}"),
        ("**rewrite / new segment**", lambda r: f"{r['build']['seconds'] / r['refresh']['searchable_s']:.1f}x"),
        ("segments after the ingest", lambda r: f"{r['refresh']['segments']}"),
        ("BM25 p50 (ms), 1 segment / 2, all", before_after("bm25_all")),
        ("BM25 p50 (ms), 1 segment / 2, 10%", before_after("bm25_10%")),
        ("dense exact p50 (ms), 1 segment / 2, all", before_after("dense_all")),
        ("dense exact p50 (ms), 1 segment / 2, 10%", before_after("dense_10%")),
        ("merge of the 2 segments into 1, HNSW included (s)", lambda r: f"{r['refresh']['merge_s']:.1f}"),
    ]
    lines = [head, "|---" * (len(sizes) + 1) + "|"]
    for label, cell in rows:
        lines.append(f"| {label} | " + " | ".join(_cell(cell, results[s]) for s in sizes) + " |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="+", default=["10k", "100k"], choices=list(SIZES))
    ap.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache" / "evidencedesk-bench" / "scale")
    ap.add_argument("--scifact", type=Path, default=HERE.parent.parent / "shared" / "datasets" / "scifact")
    ap.add_argument("--queries", type=int, default=100, help="SciFact test queries to time (at most 300)")
    ap.add_argument("--no-write", action="store_true", help=f"do not write the section of {RESULTS.name}")
    ap.add_argument("--random-bases", action="store_true", help="seeded random vectors instead of MiniLM's")
    ap.add_argument(
        "--quick",
        nargs="+",
        default=[],
        choices=list(SIZES),
        metavar="SIZE",
        help="at these sizes, skip the peer (the snapshot rewritten whole, where the data cache has one) and "
        "the final merge: their rows read '-' (bench/scale.py's build stage times the same rewrite)",
    )
    args = ap.parse_args()
    if not (args.scifact / "corpus.jsonl.gz").is_file():
        print(f"SciFact not found at {args.scifact}; pass --scifact DIR", file=sys.stderr)
        return 1
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    if args.random_bases:
        random_bases(args.scifact, args.cache_dir)
    results: dict[str, dict[str, Any]] = {}
    for size in args.sizes:
        print(f"== {size}", flush=True)
        p = Paths(args.cache_dir, size)
        r: dict[str, Any] = {"prep": prepare(p, args.scifact)}
        if size in args.quick and p.snapshot.is_dir():
            r["build"] = {}
        else:
            r["build"] = stage_build(p, args.scifact, args.cache_dir)
            print(f"  rewrite: {r['build']['seconds']:.1f} s", flush=True)
        r["refresh"] = refresh(p, args.scifact, args.cache_dir, args.queries, merge=size not in args.quick)
        print(f"  new segment: {r['refresh']['searchable_s']:.1f} s", flush=True)
        results[size] = r
        (p.root / "refresh.json").write_text(json.dumps(r, indent=1))
    table = render(results)
    print(table)
    if not args.no_write:
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        command = "python bench/refresh.py " + " ".join(sys.argv[1:])
        section = (
            f"{HEADING}, {stamp})\n\nMachine: {machine()}, shared with other jobs (a loaded 2-core machine: "
            "absolute times vary from run to run).  \n"
            f"Command: `{command.strip()}` ({time.perf_counter() - started:.0f} s, "
            "making the data cache where absent). "
            "Vectors of the new chunks are derived as the build derives them (bench/corpus_gen.py): embedding "
            "them with a real model is not included"
            + (" (and the SciFact bases are seeded random vectors: --random-bases)" if args.random_bases else "")
            + ". Results after the update equal a snapshot written afresh "
            "(tests/retrieval/test_snapshot_segments.py)"
            + (
                f". At {', '.join(args.quick)} (--quick) the rewrite and the merge were not run: '-'"
                if args.quick
                else ""
            )
            + ".\n\n"
            f"{table}\n"
        )
        RESULTS.write_text(replace_section(RESULTS.read_text(encoding="utf-8"), HEADING, section), encoding="utf-8")
        print(f"wrote its section of {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
