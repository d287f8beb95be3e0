"""BEIR benchmarks: read a dataset in BEIR layout, index it through the store, run and score every query.

Layout: ``corpus.jsonl`` (or ``corpus.jsonl.gz``) with ``_id``, ``title``, ``text``; ``queries.jsonl``
with ``_id``, ``text``; ``qrels/<split>.tsv`` with a header line and ``query-id corpus-id score`` rows.

Each corpus row becomes one Document whose text is ``title + "\\n\\n" + text`` (how BEIR's own
baselines and Pyserini's flat index read a row), stored as ONE chunk (``<id>:c0``), so every method
sees the title. The store skips unchanged documents by hash and the dense vectors come from the
store's embedding cache, so running a benchmark twice neither re-chunks nor re-embeds.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.constants import EMBEDDINGS_FILE
from evidencedesk.documents import Chunk, Document, Metadata
from evidencedesk.evaluation.metrics import mean, mrr, ndcg, recall
from evidencedesk.ingest.json_lines import json_lines
from evidencedesk.results.evaluation import BeirSummary
from evidencedesk.retrieval.candidates import Searcher
from evidencedesk.retrieval.scope import Scope

# One section per document (plain text has one section), never cut: a BEIR row is one chunk.
BEIR_CHUNKING = ChunkingConfig(name="section", size=1_000_000, unit="words")
RUN_DEPTH = 100  # documents kept per query: enough for recall@100
METRIC_KEYS = ("ndcg@10", "recall@100", "mrr@10")

Qrels = dict[str, dict[str, int]]
DocRun = dict[str, dict[str, float]]


@dataclass(frozen=True)
class BeirDataset:
    """A BEIR dataset for one split: its documents, the queries judged in that split, and their qrels."""

    name: str
    split: str
    documents: list[Document]
    queries: dict[str, str]
    qrels: Qrels


def _open_text(path: Path) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with _open_text(path) as fh:
        for n, row in json_lines(fh, path.name):
            if not isinstance(row, dict) or "_id" not in row:
                raise ValueError(f"{path.name} line {n}: expected an object with an _id")
            yield row


def corpus_file(dataset_dir: Path) -> Path:
    for name in ("corpus.jsonl", "corpus.jsonl.gz"):
        if (dataset_dir / name).is_file():
            return dataset_dir / name
    raise ValueError(f"{dataset_dir}: no corpus.jsonl or corpus.jsonl.gz (not a BEIR dataset folder?)")


def beir_document(row: Mapping[str, Any], title_in_text: bool = True, source: str = "corpus.jsonl") -> Document:
    """One corpus row as a Document (metadata defaults: current, public, en, so the default Scope allows it)."""
    doc_id = str(row["_id"])
    title = str(row.get("title") or "").strip()
    body = str(row.get("text") or "").strip()
    text = f"{title}\n\n{body}" if title_in_text and title and body else (body or title)
    digest = hashlib.sha256(json.dumps([title, text], ensure_ascii=False).encode("utf-8")).hexdigest()
    return Document(
        id=doc_id,
        title=title or doc_id,
        path=f"{source}#{doc_id}",
        format="text",
        text=text,
        content_hash=digest,
        metadata=Metadata(),
    )


def read_corpus(dataset_dir: str | Path, title_in_text: bool = True) -> list[Document]:
    path = corpus_file(Path(dataset_dir))
    docs = [beir_document(row, title_in_text, path.name.removesuffix(".gz")) for row in _jsonl(path)]
    docs = [d for d in docs if d.text]
    if len({d.id for d in docs}) != len(docs):
        raise ValueError(f"{path.name}: repeated _id values")
    return docs


def read_queries(dataset_dir: str | Path) -> dict[str, str]:
    path = Path(dataset_dir) / "queries.jsonl"
    if not path.is_file():
        raise ValueError(f"{dataset_dir}: no queries.jsonl")
    return {str(row["_id"]): str(row.get("text") or "") for row in _jsonl(path)}


def read_qrels(dataset_dir: str | Path, split: str = "test") -> Qrels:
    path = Path(dataset_dir) / "qrels" / f"{split}.tsv"
    if not path.is_file():
        raise ValueError(f"{dataset_dir}: no qrels/{split}.tsv (split {split!r} missing)")
    qrels: Qrels = {}
    with path.open(encoding="utf-8", newline="") as fh:
        for n, cells in enumerate(csv.reader(fh, delimiter="\t"), 1):
            if not cells or not "".join(cells).strip():
                continue
            if len(cells) < 3:
                raise ValueError(f"qrels/{split}.tsv line {n}: expected query-id, corpus-id, score")
            try:
                grade = int(cells[-1])
            except ValueError:
                if n == 1:
                    continue  # the header line
                raise ValueError(f"qrels/{split}.tsv line {n}: score {cells[-1]!r} is not an integer") from None
            qrels.setdefault(cells[0].strip(), {})[cells[1].strip()] = grade
    return qrels


def load_beir(dataset_dir: str | Path, split: str = "test", title_in_text: bool = True) -> BeirDataset:
    """Read a BEIR folder; ``queries`` holds only the queries judged in ``split``."""
    dataset_dir = Path(dataset_dir)
    if not dataset_dir.is_dir():
        raise ValueError(f"dataset: {dataset_dir} is not a folder")
    qrels = read_qrels(dataset_dir, split)
    all_queries = read_queries(dataset_dir)
    missing = sorted(set(qrels) - set(all_queries))
    if missing:
        raise ValueError(f"qrels/{split}.tsv: {len(missing)} query id(s) not in queries.jsonl: {missing[:5]}")
    queries = {qid: all_queries[qid] for qid in qrels}
    return BeirDataset(dataset_dir.name, split, read_corpus(dataset_dir, title_in_text), queries, qrels)


def store_chunks(dataset: BeirDataset, store_dir: str | Path) -> list[Chunk]:
    """Sync the corpus into the store at ``store_dir`` (unchanged documents are skipped) and return its chunks."""
    from evidencedesk.store import Store

    with Store(store_dir) as store:
        store.sync(dataset.documents, BEIR_CHUNKING, remove_missing=True)
        return store.chunks()


def doc_run(
    searcher: Searcher,
    queries: Mapping[str, str],
    chunks: Sequence[Chunk],
    k: int = RUN_DEPTH,
    scope: Scope | None = None,
) -> DocRun:
    """Each query's top ``k`` documents in the searcher's order (a dict keeps it); a document takes the
    rank and score of its best chunk."""
    per_doc: dict[str, int] = {}
    for c in chunks:
        per_doc[c.doc_id] = per_doc.get(c.doc_id, 0) + 1
    depth = min(max(1, len(chunks)), k * max(per_doc.values(), default=1))
    run: DocRun = {}
    for qid, text in queries.items():
        docs: dict[str, float] = {}
        for cand in searcher.search(text, depth, scope):
            if len(docs) == k:
                break
            docs.setdefault(cand.chunk.doc_id, cand.score)
        run[qid] = docs
    return run


def score_run(qrels: Qrels, run: DocRun) -> dict[str, float]:
    """nDCG@10, recall@100 and MRR@10 averaged over the judged queries (trec_eval definitions).

    Documents are ranked as trec_eval ranks a run file: by score, equal scores by document id
    (descending), so the numbers are exactly what trec_eval gives for ``write_trec_run``'s file.
    """
    ranked = {qid: trec_order(docs) for qid, docs in run.items()}
    return {
        "ndcg@10": mean(ndcg(qrels, ranked, 10)),
        "recall@100": mean(recall(qrels, ranked, 100)),
        "mrr@10": mean(mrr(qrels, ranked, 10)),
    }


def trec_order(docs: Mapping[str, float]) -> list[str]:
    """Document ids as trec_eval orders them: score descending, then document id descending."""
    return [doc for doc, _ in sorted(docs.items(), key=lambda item: (item[1], item[0]), reverse=True)]


def write_trec_run(run: DocRun, path: str | Path, tag: str) -> Path:
    """``qid Q0 docid rank score tag`` lines, rank 1 first, in trec_eval's order (``trec_order``);
    scores are written in full (``repr``), so reading the file back gives the same ranking."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tag = "".join(ch for ch in tag if not ch.isspace()) or "evidencedesk"
    with path.open("w", encoding="utf-8") as fh:
        for qid, docs in run.items():
            for rank, doc in enumerate(trec_order(docs), 1):
                fh.write(f"{qid} Q0 {doc} {rank} {float(docs[doc])!r} {tag}\n")
    return path


def searcher_params(
    method: str,
    store_dir: str | Path | None = None,
    k1: float | None = None,
    b: float | None = None,
    stem: bool = True,
    stopwords: bool = True,
    contextual: bool = False,
    progress: bool = False,
    stopword_list: str = "english",
    language: str = "english",
    embedder: str | None = None,
) -> dict[str, Any]:
    """``make_searcher`` parameters for a BEIR run: stemming and stopwords for lexical legs (English
    unless ``stopword_list``/``language`` say ``auto``), the store's embedding cache for dense legs;
    ``contextual`` indexes (BM25) and embeds (dense) each chunk after its ``title > headings`` line."""
    lexical: dict[str, Any] = {"stem": stem, "stopwords": stopword_list if stopwords else None, "language": language}
    bm25 = {**lexical, "contextual": contextual, **({"k1": k1} if k1 is not None else {}),
            **({"b": b} if b is not None else {})}  # fmt: skip
    dense: dict[str, Any] = {"contextual": contextual, "progress": progress}
    if embedder is not None and embedder != "minilm":
        dense["embedder"] = embedder
    if store_dir is not None:
        dense["cache_path"] = Path(store_dir) / EMBEDDINGS_FILE
    if method == "bm25":
        return bm25
    if method in ("tfidf", "lsa"):
        return lexical
    if method == "dense":
        return dense
    if method == "hybrid":
        return {"legs": ["bm25", "dense"], "leg_params": {"bm25": bm25, "dense": dense}}
    raise ValueError(f"method: unknown method {method!r}; choose from bm25, tfidf, lsa, dense, hybrid")


def run_beir(
    dataset_dir: str | Path,
    method: str,
    store_dir: str | Path,
    split: str = "test",
    run_out: str | Path | None = None,
    params: Mapping[str, Any] | None = None,
    scope: Scope | None = None,
) -> BeirSummary:
    """Load, index (through the store), search every judged query and score; returns the summary."""
    from evidencedesk.retrieval.factory import make_searcher

    started = time.perf_counter()
    dataset = load_beir(dataset_dir, split)
    chunks = store_chunks(dataset, store_dir)
    searcher = make_searcher(method, chunks, **dict(params or searcher_params(method, store_dir)))
    run = doc_run(searcher, dataset.queries, chunks, RUN_DEPTH, scope)
    scores = score_run(dataset.qrels, run)
    if run_out is not None:
        write_trec_run(run, run_out, f"evidencedesk-{method}")
    summary = BeirSummary(
        method=method,
        split=split,
        n_queries=len(dataset.queries),
        n_docs=len(dataset.documents),
        scores={key: round(scores[key], 4) for key in METRIC_KEYS},
        seconds=round(time.perf_counter() - started, 2),
    )
    close = getattr(searcher, "close", None)
    if callable(close):
        close()
    return summary
