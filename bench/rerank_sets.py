"""The development sets of bench/rerank.py: chunks, questions, a first-stage searcher and what counts as found.

Each set gives ``(chunks, questions, searcher, judge)``: ``questions`` are ``(id, text)`` pairs and
``judge(id, ranked chunks)`` says what the ranking got right (a dict of metric values). The first stage
is the default ``ask`` path's: ``Settings()`` hybrid (BM25 + MiniLM, min-max fusion, page collapse),
except SciFact, which uses ``evidencedesk beir``'s defaults (the figures bench/RESULTS.md reports).
Embeddings are cached under ``work`` so the corpora are embedded once.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from evidencedesk.config import Settings
from evidencedesk.documents import Chunk
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.retrieval.candidates import Candidate, Searcher
from evidencedesk.retrieval.factory import make_searcher
from evidencedesk.retrieval.scope import Scope
from evidencedesk.wiring import searcher_params, with_collapse

Judge = Callable[[str, Sequence[Chunk]], dict[str, float]]
EVERYTHING = Scope.everything()


class Set:
    def __init__(self, name: str, chunks: list[Chunk], questions: list[tuple[str, str]], searcher: Searcher,
                 judge: Judge, scope: Scope, hit: Callable[[str, Sequence[Chunk]], bool]) -> None:  # fmt: skip
        self.name, self.chunks, self.questions, self.searcher = name, chunks, questions, searcher
        self.judge, self.scope, self.hit = judge, scope, hit


def default_searcher(chunks: list[Chunk], cache: Path) -> Searcher:
    settings = Settings()
    params = searcher_params(settings, "hybrid", cache)
    return with_collapse(make_searcher("hybrid", chunks, **params.as_kwargs()), settings)


def ndcg_at(relevant: dict[str, int], docs: Sequence[str], k: int = 10) -> float:
    gains = [relevant.get(d, 0) for d in docs[:k]]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def scifact(folder: Path, work: Path, split: str, limit: int = 0, seed: int = 3) -> Set:
    from evidencedesk.evaluation.beir import load_beir, store_chunks
    from evidencedesk.evaluation.beir import searcher_params as beir_params

    data = load_beir(folder, split)
    store = work / "scifact-store"
    chunks = store_chunks(data, store)
    params = beir_params("hybrid", store, stopword_list="auto", language="auto", contextual=True)
    params |= {"fusion": "normalized", "depth": 100}
    searcher = make_searcher("hybrid", chunks, **params)
    qids = sorted(data.queries)
    if limit and limit < len(qids):
        qids = sorted(random.Random(seed).sample(qids, limit))

    def judge(qid: str, ranked: Sequence[Chunk]) -> dict[str, float]:
        docs = list(dict.fromkeys(c.doc_id for c in ranked))
        return {"nDCG@10": ndcg_at(data.qrels[qid], docs)}

    def hit(qid: str, ranked: Sequence[Chunk]) -> bool:
        return any(data.qrels[qid].get(c.doc_id, 0) > 0 for c in ranked)

    return Set(f"SciFact {split}", chunks, [(q, data.queries[q]) for q in qids], searcher, judge, EVERYTHING, hit)


def squad(folder: Path, work: Path, limit: int = 0, seed: int = 3) -> Set:
    data = json.loads((folder / "dev-v2.0-half.json").read_text(encoding="utf-8"))
    chunks: list[Chunk] = []
    gold: dict[str, str] = {}
    questions: list[tuple[str, str]] = []
    for a, article in enumerate(data["data"]):
        title = article["title"].replace("_", " ")
        for p, para in enumerate(article["paragraphs"]):
            cid = f"a{a}:c{p}"
            chunks.append(Chunk(cid, f"a{a}", para["context"], title=title))
            for qa in para["qas"]:
                if not qa.get("is_impossible"):
                    gold[qa["id"]] = cid
                    questions.append((qa["id"], qa["question"]))
    if limit and limit < len(questions):
        questions = random.Random(seed).sample(questions, limit)

    def judge(qid: str, ranked: Sequence[Chunk]) -> dict[str, float]:
        ids = [c.id for c in ranked]
        return {"hit@1": float(ids[:1] == [gold[qid]]), "hit@5": float(gold[qid] in ids[:5])}

    def hit(qid: str, ranked: Sequence[Chunk]) -> bool:
        return any(c.id == gold[qid] for c in ranked)

    searcher = default_searcher(chunks, work / "squad-embeddings.sqlite")
    return Set("squad2-dev", chunks, questions, searcher, judge, EVERYTHING, hit)


def squad_store(folder: Path, store: Path, limit: int = 0, seed: int = 3) -> Set:
    """squad2-dev over the store bench/squad2.py and scripts/fit_answerability.py ingest (one Markdown
    document per article): a chunk is the gold one when it holds the start of the question's paragraph
    or lies inside it."""
    from evidencedesk.desk import Desk

    data = json.loads((folder / "dev-v2.0-half.json").read_text(encoding="utf-8"))
    gold: dict[str, str] = {}
    questions: list[tuple[str, str]] = []
    for article in data["data"]:
        for para in article["paragraphs"]:
            for qa in para["qas"]:
                if not qa.get("is_impossible"):
                    gold[qa["id"]] = " ".join(para["context"].split())
                    questions.append((qa["id"], qa["question"]))
    if limit and limit < len(questions):
        questions = random.Random(seed).sample(questions, limit)
    desk = Desk(store)
    chunks = desk.chunks()

    def is_gold(qid: str, chunk: Chunk) -> bool:
        text, para = " ".join(chunk.text.split()), gold[qid]
        return bool(text) and (text in para or para[:80] in text)

    def judge(qid: str, ranked: Sequence[Chunk]) -> dict[str, float]:
        return {"hit@1": float(any(is_gold(qid, c) for c in ranked[:1])),
                "hit@5": float(any(is_gold(qid, c) for c in ranked[:5]))}  # fmt: skip

    def hit(qid: str, ranked: Sequence[Chunk]) -> bool:
        return any(is_gold(qid, c) for c in ranked)

    return Set("squad2-dev", chunks, questions, desk.searcher(), judge, EVERYTHING, hit)


def financebench_chunks(folder: Path, work: Path) -> list[Chunk]:
    from evidencedesk.chunking import chunk_document
    from evidencedesk.ingest.pdf import parse_pdf

    cached = work / "financebench-chunks.json"
    if cached.exists():
        return [Chunk.from_dict(d) for d in json.loads(cached.read_text(encoding="utf-8"))]
    chunking = Settings().chunker.to_chunking()
    chunks: list[Chunk] = []
    for pdf in sorted((folder / "pdfs").glob("*.pdf")):
        chunks += chunk_document(parse_pdf(pdf.read_bytes(), pdf.name), chunking)
    work.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps([c.to_dict() for c in chunks]), encoding="utf-8")
    return chunks


def financebench(folder: Path, work: Path) -> Set:
    from evidencedesk.ingest.raw import doc_id_from_path

    chunks = financebench_chunks(folder, work)
    lines = (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    gold = {
        str(i): (doc_id_from_path(q["doc_name"] + ".pdf"), {int(e["evidence_page_num"]) + 1 for e in q["evidence"]})
        for i, q in enumerate(rows)
    }

    def pages(chunk: Chunk) -> set[int]:
        if chunk.location.pages:
            return set(range(chunk.location.pages[0], chunk.location.pages[-1] + 1))
        return {int(h.split()[1]) for h in chunk.location.heading_path if re.fullmatch(r"page \d+", h)}

    def hit(qid: str, ranked: Sequence[Chunk]) -> bool:
        filing, want = gold[qid]
        return any(c.doc_id == filing and bool(pages(c) & want) for c in ranked)

    def judge(qid: str, ranked: Sequence[Chunk]) -> dict[str, float]:
        return {"page@5": float(hit(qid, ranked[:5]))}

    searcher = default_searcher(chunks, work / "financebench-embeddings.sqlite")
    return Set("financebench-dev", chunks, [(str(i), q["question"]) for i, q in enumerate(rows)], searcher, judge,
               Settings().scope.to_scope(), hit)  # fmt: skip


def kestrel(root: Path, work: Path) -> Set:
    from evidencedesk.evaluation.labels import load_labels
    from evidencedesk.store import Store

    settings = Settings()
    with Store(work / "kestrel") as store:
        ingest_folder(store, root / "docs", settings.chunker.to_chunking())
        chunks = store.chunks()
    labels = [x for x in load_labels(root / "labels.jsonl") if x.answerable]
    by_id = {str(i): x for i, x in enumerate(labels)}
    judged = {qid: {c.id for c in chunks if x.grade_of(c) > 0} for qid, x in by_id.items()}
    questions = [(qid, x.question) for qid, x in by_id.items() if judged[qid]]

    def judge(qid: str, ranked: Sequence[Chunk]) -> dict[str, float]:
        want = judged[qid]
        return {"recall@5": len(want & {c.id for c in ranked[:5]}) / len(want)}

    def hit(qid: str, ranked: Sequence[Chunk]) -> bool:
        return bool(judged[qid] & {c.id for c in ranked})

    searcher = default_searcher(chunks, work / "kestrel" / "embeddings.sqlite")
    return Set("kestrel (example)", chunks, questions, searcher, judge, settings.scope.to_scope(), hit)


def first_stage(s: Set, depth: int) -> dict[str, list[Candidate]]:
    return {qid: s.searcher.search(text, depth, s.scope) for qid, text in s.questions}


__all__ = ["Set", "financebench", "first_stage", "kestrel", "scifact", "squad"]
