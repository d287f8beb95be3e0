"""BM25 speed on SciFact: our index against bm25s and rank_bm25, all fed the same tokens.

Measures indexing (docs/s), queries/s without a filter and with a filter that keeps ~10% of the
documents, and the memory the index holds per thousand chunks (tracemalloc). Every library gets
our tokenizer's tokens (lowercase words; ``--stopwords`` and ``--stem`` add English stopword removal
and Snowball stemming, close to bm25s's own default pipeline), the same k1 and b and the
Lucene idf (rank_bm25 through a subclass whose idf is Lucene's, so all three rank alike).

Filtered queries: ours filters before scoring (its default scope over chunks whose metadata keeps
every tenth one current); bm25s gets the same mask as its ``weight_mask``; rank_bm25 multiplies its
score array by the mask. rank_bm25 scores every document in Python per query term, so it runs a
subset of the queries (stated in the table).

    python bench/bm25_speed.py --scifact ../shared/datasets/scifact
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import math
import sys
import time
import tracemalloc
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from evidencedesk.documents import Chunk, Metadata
from evidencedesk.index.bm25 import BM25Index
from evidencedesk.retrieval.lexical import BM25Searcher
from evidencedesk.retrieval.rows import id_ranks, top_k
from evidencedesk.retrieval.scope import Scope
from evidencedesk.text.tokenizer import Tokenizer
from machine_info import machine

K = 10
K1, B = 1.5, 0.75
RESULTS = Path(__file__).with_name("RESULTS.md")


def load_scifact(folder: Path) -> tuple[list[dict[str, Any]], list[str]]:
    with gzip.open(folder / "corpus.jsonl.gz", "rt", encoding="utf-8") as f:
        docs = [json.loads(line) for line in f]
    test_ids = {line.split("\t")[0] for line in (folder / "qrels" / "test.tsv").read_text().splitlines()[1:]}
    with (folder / "queries.jsonl").open(encoding="utf-8") as f:
        queries = [q["text"] for q in map(json.loads, f) if q["_id"] in test_ids]
    return docs, queries


def best_time(run: Callable[[], Any], repeat: int) -> float:
    """The fastest of ``repeat`` runs (the machine is shared; the minimum is the least disturbed)."""
    times = []
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return min(times)


def held_bytes(build: Callable[[], Any]) -> tuple[Any, int]:
    """Build something and return it with the bytes it still holds (tracemalloc)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    obj = build()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return obj, after - before


def lucene_okapi() -> type:
    from rank_bm25 import BM25Okapi

    class LuceneOkapi(BM25Okapi):
        """rank_bm25's BM25Okapi with Lucene's idf instead of its floored Robertson idf."""

        def _calc_idf(self, nd: dict[str, int]) -> None:
            for word, freq in nd.items():
                self.idf[word] = math.log(1 + (self.corpus_size - freq + 0.5) / (freq + 0.5))

    return LuceneOkapi


def run(folder: Path, repeat: int, rank_queries: int, tok: Tokenizer) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    import bm25s

    docs, queries = load_scifact(folder)
    texts = [f"{d['title']} {d['text']}".strip() for d in docs]
    every_tenth = [Metadata(status="current" if n % 10 == 0 else "superseded") for n in range(len(docs))]
    chunks = [
        Chunk(f"{d['_id']}:c0", d["_id"], t, metadata=m) for d, t, m in zip(docs, texts, every_tenth, strict=True)
    ]
    t_tok = best_time(lambda: [tok.tokenize(t) for t in texts], 1)
    corpus_tokens = [tok.tokenize(t) for t in texts]
    query_tokens = [list(dict.fromkeys(tok.tokenize(q))) for q in queries]  # a repeated query word counts once
    mask = Scope().mask(chunks)
    n = len(chunks)

    # -- ours -------------------------------------------------------------------------------------------
    index, ours_bytes = held_bytes(lambda: BM25Index(corpus_tokens, K1, B))
    t_ours_index = best_time(lambda: BM25Index(corpus_tokens, K1, B), repeat)
    t_ours_e2e = best_time(lambda: BM25Searcher(chunks, tok, K1, B), 1)
    searcher = BM25Searcher(chunks, tok, K1, B)
    tie = id_ranks([c.id for c in chunks])
    everything = Scope.everything()

    def ours_tokens(allowed: np.ndarray | None, key: Any) -> list[np.ndarray]:
        out = []
        for q in query_tokens:
            rows, scores = index.scores(q, allowed, key)
            out.append(top_k(rows, scores, K, tie)[0] if len(rows) else rows)
        return out

    searcher.search(queries[0], K)  # the default scope's mask is computed once and cached
    searcher.search(queries[1], K)  # its second use builds the restricted postings
    ours_q = best_time(lambda: ours_tokens(None, None), repeat)
    ours_qf = best_time(lambda: ours_tokens(mask, "bench"), repeat)
    ours_search = best_time(lambda: [searcher.search(q, K, everything) for q in queries], repeat)
    ours_search_f = best_time(lambda: [searcher.search(q, K) for q in queries], repeat)
    t_view = best_time(lambda: index.postings.restrict(mask), repeat)

    # -- bm25s ------------------------------------------------------------------------------------------
    def bm25s_build() -> Any:
        r = bm25s.BM25(method="lucene", k1=K1, b=B)
        r.index(corpus_tokens, show_progress=False)
        return r

    retriever, bm25s_bytes = held_bytes(bm25s_build)
    t_bm25s_index = best_time(bm25s_build, repeat)
    vocab = retriever.vocab_dict
    bm_queries = [[t for t in q if t in vocab] for q in query_tokens]
    weight = mask.astype(np.float32)
    bm25s_q = best_time(lambda: retriever.retrieve(bm_queries, k=K, show_progress=False, n_threads=0), repeat)
    bm25s_qf = best_time(
        lambda: retriever.retrieve(bm_queries, k=K, show_progress=False, n_threads=0, weight_mask=weight), repeat
    )
    agree = sum(
        list(ours) == list(theirs)
        for ours, theirs in zip(ours_tokens(None, None), retriever.retrieve(bm_queries, k=K, show_progress=False)[0],
                                strict=True)
    )  # fmt: skip

    # -- rank_bm25 ----------------------------------------------------------------------------------------
    okapi_cls = lucene_okapi()
    okapi, okapi_bytes = held_bytes(lambda: okapi_cls(corpus_tokens, k1=K1, b=B))
    t_okapi_index = best_time(lambda: okapi_cls(corpus_tokens, k1=K1, b=B), 1)
    subset = query_tokens[:rank_queries]

    def okapi_run(allowed: np.ndarray | None) -> None:
        for q in subset:
            s = okapi.get_scores(q)
            if allowed is not None:
                s = s * allowed
            np.argpartition(-s, K)[:K]

    okapi_q = best_time(lambda: okapi_run(None), 1)
    okapi_qf = best_time(lambda: okapi_run(mask), 1)

    nq = len(queries)
    rows = [
        {"name": "ours (BM25Index, from tokens)", "index": n / t_ours_index, "q": nq / ours_q, "qf": nq / ours_qf,
         "kib": ours_bytes / 1024 / (n / 1000), "nq": nq},
        {"name": "ours (BM25Searcher.search, text in)", "index": n / t_ours_e2e, "q": nq / ours_search,
         "qf": nq / ours_search_f, "kib": None, "nq": nq},
        {"name": f"bm25s {bm25s.__version__} (lucene)", "index": n / t_bm25s_index, "q": nq / bm25s_q,
         "qf": nq / bm25s_qf, "kib": bm25s_bytes / 1024 / (n / 1000), "nq": nq},
        {"name": "rank_bm25 0.2.2 (Lucene idf)", "index": n / t_okapi_index, "q": len(subset) / okapi_q,
         "qf": len(subset) / okapi_qf, "kib": okapi_bytes / 1024 / (n / 1000), "nq": len(subset)},
    ]  # fmt: skip
    notes = {
        "docs": n,
        "queries": nq,
        "allowed": int(mask.sum()),
        "tokenise_docs_per_s": n / t_tok,
        "view_ms": t_view * 1000,
        "agree": agree,
    }
    return rows, notes


def ratio(value: float | None, ours: float | None) -> str:
    return f"{value / ours:.2f}x" if value and ours else "-"


def render(rows: list[dict[str, Any]], notes: dict[str, Any]) -> tuple[Table, str]:
    ours = rows[0]
    table = Table(title=f"BM25 on SciFact: {notes['docs']} docs, {notes['queries']} test queries, k={K}")
    head = ["implementation", "index docs/s", "q/s no filter", "q/s 10% filter", "KiB per 1k chunks",
            "q/s vs ours", "filtered q/s vs ours", "queries timed"]  # fmt: skip
    for h in head:
        table.add_column(h, justify="left" if h == "implementation" else "right")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [
            r["name"],
            f"{r['index']:,.0f}",
            f"{r['q']:,.0f}",
            f"{r['qf']:,.0f}",
            f"{r['kib']:,.0f}" if r["kib"] is not None else "-",
            ratio(r["q"], ours["q"]),
            ratio(r["qf"], ours["qf"]),
            str(r["nq"]),
        ]
        table.add_row(*cells)
        lines.append("| " + " | ".join(cells) + " |")
    return table, "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scifact", type=Path, default=Path("../shared/datasets/scifact"), help="BEIR SciFact folder")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the fastest counts")
    parser.add_argument("--rank-bm25-queries", type=int, default=30, help="queries for rank_bm25 (it is slow)")
    parser.add_argument("--stopwords", action="store_true", help="drop English stopwords (all implementations)")
    parser.add_argument("--stem", action="store_true", help="Snowball English stemming (all implementations)")
    parser.add_argument("--no-append", action="store_true", help=f"do not append the table to {RESULTS.name}")
    args = parser.parse_args(argv)
    tok = Tokenizer(stopwords="english" if args.stopwords else None, stem=args.stem)
    if not (args.scifact / "corpus.jsonl.gz").exists():
        print(f"no SciFact corpus under {args.scifact} (expected corpus.jsonl.gz); pass --scifact DIR", file=sys.stderr)
        return 1
    where = machine()
    rows, notes = run(args.scifact, args.repeat, args.rank_bm25_queries, tok)
    notes["tokenizer"] = tok.to_dict()
    table, markdown = render(rows, notes)
    console = Console()
    console.print(table)
    summary = (
        f"Tokens (ours, fed to all): {notes['tokenizer']}, {notes['tokenise_docs_per_s']:,.0f} docs/s. "
        f"Filter: default scope over metadata that keeps {notes['allowed']} of {notes['docs']} chunks. "
        f"Restricted postings for a new scope are built on its second use ({notes['view_ms']:.1f} ms here). "
        f"Same top-{K} ids as bm25s on {notes['agree']} of {notes['queries']} queries."
    )
    console.print(summary, highlight=False)
    if not args.no_append:
        command = "python bench/bm25_speed.py " + " ".join(argv if argv is not None else sys.argv[1:])
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        section = (
            f"\n## BM25 speed on SciFact ({stamp})\n\n"
            f"Machine: {where}.  \nCommand: `{command.strip()}`\n\n{markdown}\n\n{summary}\n"
        )
        if not RESULTS.exists():
            RESULTS.write_text("# Benchmark results\n", encoding="utf-8")
        with RESULTS.open("a", encoding="utf-8") as f:
            f.write(section)
        console.print(f"appended to {RESULTS}", highlight=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
