"""SciFact retrieval quality: BM25, dense MiniLM, hybrids, contextual text, ANN; tuned on train, reported on test.

    .venv/bin/python bench/scifact_quality.py --scifact /work/shared/datasets/scifact

Every setting (BM25 k1 and b, fusion kind, RRF k, weights, depth) is chosen by nDCG@10 on the
train split (809 queries); the test split (300 queries) is only scored. The corpus goes through the
store, the embeddings through the SQLite cache in --cache-dir, so a second run embeds nothing.
Prints a table and appends a section to bench/RESULTS.md (use --no-append to skip).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evidencedesk.documents import Chunk
from evidencedesk.evaluation.beir import BeirDataset, DocRun, doc_run, load_beir, score_run, store_chunks
from evidencedesk.evaluation.metrics import mean, mrr, ndcg, recall
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.retrieval.candidates import Candidate, Searcher
from evidencedesk.retrieval.dense import DenseSearcher
from evidencedesk.retrieval.factory import make_searcher
from evidencedesk.retrieval.fusion import normalized_fusion, rrf
from machine_info import machine

REPO = Path(__file__).resolve().parents[1]
LEXICAL = {"stem": True, "stopwords": "english"}
PUBLISHED = {
    "bm25": "Pyserini flat 0.6789; bm25s (stem) 0.687",
    "dense": "MTEB all-MiniLM-L6-v2 0.6451",
    "hybrid": "Pyserini BM25 + bge-base RRF 0.7420",
}
Lists = dict[str, list[list[Candidate]]]  # query id -> each leg's ranked list


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def scores_of(qrels: dict[str, dict[str, int]], run: DocRun) -> dict[str, float]:
    return score_run(qrels, run)


def run_of(searcher: Searcher, ds: BeirDataset, chunks: Sequence[Chunk], k: int = 100) -> DocRun:
    return doc_run(searcher, ds.queries, chunks, k)


def leg_lists(legs: Sequence[Searcher], ds: BeirDataset, depth: int = 100) -> Lists:
    return {qid: [leg.search(text, depth) for leg in legs] for qid, text in ds.queries.items()}


def fused_run(lists: Lists, fuse: Callable[[list[list[Candidate]]], list[Candidate]], depth: int) -> DocRun:
    run: DocRun = {}
    for qid, per_leg in lists.items():
        best: dict[str, float] = {}
        for cand in fuse([leg[:depth] for leg in per_leg]):
            best.setdefault(cand.chunk.doc_id, cand.score)
        run[qid] = best
    return run


def tune_bm25(chunks: list[Chunk], train: BeirDataset) -> tuple[dict[str, float], list[tuple[float, float, float]]]:
    grid = []
    for k1 in (0.6, 0.9, 1.2, 1.5, 1.8):
        for b in (0.4, 0.6, 0.75, 0.9):
            searcher = make_searcher("bm25", chunks, k1=k1, b=b, **LEXICAL)
            score = scores_of(train.qrels, run_of(searcher, train, chunks))["ndcg@10"]
            grid.append((k1, b, score))
            log(f"bm25 train k1={k1} b={b}: nDCG@10 {score:.4f}")
    k1, b, _ = max(grid, key=lambda t: (t[2], t[0] == 1.5 and t[1] == 0.75))
    return {"k1": k1, "b": b}, grid


def tune_fusion(train_lists: Lists, qrels: dict[str, dict[str, int]]) -> list[tuple[str, dict[str, Any], float]]:
    """Every fusion setting with its train nDCG@10."""
    tried = []
    for depth in (20, 50, 100):
        for k in (1, 5, 10, 20, 40, 60, 100):
            run = fused_run(train_lists, lambda lists, k=k: rrf(lists, k, top=100), depth)
            tried.append(("rrf", {"rrf_k": k, "depth": depth}, scores_of(qrels, run)["ndcg@10"]))
        for w in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
            weights = [w, 1 - w]
            run = fused_run(train_lists, lambda lists, ws=weights: normalized_fusion(lists, ws, top=100), depth)
            tried.append(("normalized", {"weights": weights, "depth": depth}, scores_of(qrels, run)["ndcg@10"]))
    return tried


def ann_agreement(exact: DenseSearcher, ann: DenseSearcher, ds: BeirDataset, k: int = 10) -> float:
    found = total = 0
    for text in ds.queries.values():
        truth = {c.chunk.id for c in exact.search(text, k)}
        found += len(truth & {c.chunk.id for c in ann.search(text, k)})
        total += len(truth)
    return found / max(total, 1)


def kestrel_contextual(folder: Path, store_dir: Path, cache: Path) -> dict[str, dict[str, float]] | None:
    """Dense retrieval on the example corpus's labelled questions, with and without contextual text."""
    from evidencedesk.chunking.config import ChunkingConfig
    from evidencedesk.evaluation.labels import load_labels
    from evidencedesk.retrieval.scope import Scope
    from evidencedesk.store import Store

    docs, labels_path = folder / "docs", folder / "labels.jsonl"
    if not docs.is_dir() or not labels_path.is_file():
        return None
    with Store(store_dir) as store:
        ingest_folder(store, docs, ChunkingConfig())
        chunks = store.chunks()
    labels = [x for x in load_labels(labels_path, strict=False) if x.answerable]
    allowed = [c for c in chunks if Scope().allows_chunk(c)]
    qrels = {x.id: x.qrels(allowed) for x in labels}
    qrels = {q: g for q, g in qrels.items() if g}
    out: dict[str, dict[str, float]] = {}
    for contextual in (False, True):
        searcher = DenseSearcher(chunks, cache_path=cache, contextual=contextual)
        run = {x.id: [c.chunk.id for c in searcher.search(x.question, 10)] for x in labels if x.id in qrels}
        out["on" if contextual else "off"] = {
            "recall@5": mean(recall(qrels, run, 5)),
            "mrr@10": mean(mrr(qrels, run, 10)),
            "ndcg@10": mean(ndcg(qrels, run, 10)),
            "n": float(len(qrels)),
        }
    return out


def trec_eval_check(qrels: dict[str, dict[str, int]], run: DocRun) -> dict[str, float] | None:
    try:
        import pytrec_eval
    except ImportError:
        return None
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100"})
    # Scores from the rank, so trec_eval sees our exact order (it would re-sort tied scores by doc id).
    res = evaluator.evaluate({q: {d: float(-n) for n, d in enumerate(docs)} for q, docs in run.items()})
    return {
        "ndcg@10": sum(r["ndcg_cut_10"] for r in res.values()) / len(qrels),
        "recall@100": sum(r["recall_100"] for r in res.values()) / len(qrels),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scifact", type=Path, required=True, help="SciFact in BEIR layout")
    ap.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache" / "evidencedesk-bench")
    ap.add_argument("--kestrel", type=Path, default=REPO / "examples" / "kestrel")
    ap.add_argument("--results", type=Path, default=REPO / "bench" / "RESULTS.md")
    ap.add_argument("--no-append", action="store_true", help="print only; do not append to RESULTS.md")
    args = ap.parse_args(argv)
    started, host = time.perf_counter(), machine()
    cache = args.cache_dir / "embeddings.sqlite"

    log("loading SciFact and syncing the stores")
    test, train = load_beir(args.scifact, "test"), load_beir(args.scifact, "train")
    chunks = store_chunks(test, args.cache_dir / "scifact-title")
    body_test = load_beir(args.scifact, "test", title_in_text=False)
    body_chunks = store_chunks(body_test, args.cache_dir / "scifact-body")
    rows: list[dict[str, Any]] = []

    def add(method: str, settings: str, run_test: DocRun, run_train: DocRun | None, ref: str = "") -> None:
        s = scores_of(test.qrels, run_test)
        tr = scores_of(train.qrels, run_train)["ndcg@10"] if run_train is not None else None
        rows.append({"method": method, "settings": settings, "train": tr, **s, "ref": ref})
        log(f"{method} [{settings}] test nDCG@10 {s['ndcg@10']:.4f}")

    log("BM25: default, then k1/b tuned on train")
    bm25_default = make_searcher("bm25", chunks, **LEXICAL)
    bm25_default_test = run_of(bm25_default, test, chunks)
    add(
        "bm25",
        "k1 1.5, b 0.75, stem+stopwords",
        bm25_default_test,
        run_of(bm25_default, train, chunks),
        PUBLISHED["bm25"],
    )
    best_bm25, _grid = tune_bm25(chunks, train)
    bm25 = make_searcher("bm25", chunks, **best_bm25, **LEXICAL)
    if best_bm25 != {"k1": 1.5, "b": 0.75}:
        add(
            "bm25 (tuned)",
            f"k1 {best_bm25['k1']}, b {best_bm25['b']} (train)",
            run_of(bm25, test, chunks),
            run_of(bm25, train, chunks),
        )
    parity = trec_eval_check(test.qrels, bm25_default_test)

    log("dense MiniLM (embeddings from the cache; the first run embeds the corpus)")
    dense = DenseSearcher(chunks, cache_path=cache, progress=True)
    add(
        "dense",
        "MiniLM int8, title + text",
        run_of(dense, test, chunks),
        run_of(dense, train, chunks),
        PUBLISHED["dense"],
    )
    body_plain = DenseSearcher(body_chunks, cache_path=cache, progress=True)
    add("dense", "text only, contextual off", run_of(body_plain, body_test, body_chunks), None)
    body_ctx = DenseSearcher(body_chunks, cache_path=cache, contextual=True, progress=True)
    add("dense", "text only, contextual on (title prefix)", run_of(body_ctx, body_test, body_chunks), None)

    log("ANN (usearch HNSW) against exact search")
    ann = DenseSearcher(chunks, cache_path=cache, ann=True)
    ann_recall = ann_agreement(dense, ann, test)
    add("dense ANN", f"HNSW M16 ef64; recall@10 vs exact {ann_recall:.3f}", run_of(ann, test, chunks), None)

    log("hybrids: defaults, then fusion tuned on train")
    legs = {"bm25": dict(LEXICAL, **best_bm25), "dense": {"cache_path": cache}}
    leg = f"bm25 (k1 {best_bm25['k1']}, b {best_bm25['b']}) + dense"
    for fusion in ("rrf", "normalized"):
        hybrid = make_searcher("hybrid", chunks, legs=["bm25", "dense"], leg_params=legs, fusion=fusion)
        add(
            "hybrid",
            f"{leg}, rrf k 60, depth 50 (defaults)"
            if fusion == "rrf"
            else f"{leg}, normalized, equal weights, depth 50 (defaults)",
            run_of(hybrid, test, chunks),
            None,
            PUBLISHED["hybrid"] if fusion == "rrf" else "Pyserini bge-base min-max 0.7472",
        )
    train_lists = leg_lists([bm25, dense], train)
    test_lists = leg_lists([bm25, dense], test)
    tried = tune_fusion(train_lists, train.qrels)
    for kind in ("rrf", "normalized"):
        name, params, train_score = max((t for t in tried if t[0] == kind), key=lambda t: t[2])
        if kind == "rrf":

            def fuse(lists: list[list[Candidate]], k: int = params["rrf_k"]) -> list[Candidate]:
                return rrf(lists, k, top=100)

            label = f"{leg}, rrf k {params['rrf_k']}, depth {params['depth']} (train)"
        else:

            def fuse(lists: list[list[Candidate]], ws: list[float] = params["weights"]) -> list[Candidate]:
                return normalized_fusion(lists, ws, top=100)

            label = f"{leg}, normalized w_bm25 {params['weights'][0]:.1f}, depth {params['depth']} (train)"
        rows.append(
            {
                "method": "hybrid (tuned)",
                "settings": label,
                "train": train_score,
                **scores_of(test.qrels, fused_run(test_lists, fuse, params["depth"])),
                "ref": "",
            }
        )
        log(f"hybrid tuned {label}: test nDCG@10 {rows[-1]['ndcg@10']:.4f}")

    log("kestrel labels: contextual on/off")
    kestrel = kestrel_contextual(args.kestrel, args.cache_dir / "kestrel", cache)
    seconds = time.perf_counter() - started
    report = render(rows, parity, kestrel, host, seconds)
    print(report)
    if not args.no_append:
        args.results.parent.mkdir(parents=True, exist_ok=True)
        with args.results.open("a", encoding="utf-8") as fh:
            if args.results.stat().st_size == 0:
                fh.write("# Benchmark results\n")
            fh.write("\n" + report)
        log(f"appended to {args.results}")
    return 0


def render(
    rows: list[dict[str, Any]],
    parity: dict[str, float] | None,
    kestrel: dict[str, dict[str, float]] | None,
    host: str,
    seconds: float,
) -> str:
    cmd = " ".join(shlex.quote(a) for a in [".venv/bin/python", "bench/scifact_quality.py", *sys.argv[1:]])
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    out = [
        "## SciFact retrieval quality (bench/scifact_quality.py)",
        "",
        f"- command: `{cmd}`",
        f"- date: {when}; machine: {host}; wall time {seconds / 60:.1f} min",
        "- data: BEIR SciFact, 5,183 abstracts; test split 300 queries (reported), train split 809 queries "
        "(used for every tuned setting). Each abstract is one chunk: title + blank line + text.",
        "",
        "| method | settings | train nDCG@10 | test nDCG@10 | test recall@100 | test MRR@10 "
        "| published (test nDCG@10) |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        train = f"{r['train']:.4f}" if r["train"] is not None else "-"
        out.append(
            f"| {r['method']} | {r['settings']} | {train} | {r['ndcg@10']:.4f} | {r['recall@100']:.4f} "
            f"| {r['mrr@10']:.4f} | {r['ref']} |"
        )
    out.append("")
    if parity:
        out.append(
            f"- metric cross-check (BM25 default, test, same ranking): pytrec_eval nDCG@10 {parity['ndcg@10']:.4f}, "
            f"recall@100 {parity['recall@100']:.4f}"
        )
    if kestrel:

        def trio(m: dict[str, float]) -> str:
            return f"recall@5 {m['recall@5']:.3f} / MRR@10 {m['mrr@10']:.3f} / nDCG@10 {m['ndcg@10']:.3f}"

        out.append(
            f"- kestrel labels ({int(kestrel['off']['n'])} answerable questions with gold chunks, default scope, "
            f"dense MiniLM): contextual off {trio(kestrel['off'])}; contextual on {trio(kestrel['on'])}"
        )
    out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    raise SystemExit(main())
