"""A segmented snapshot kept up to date through ingests, updates, deletions and merges ranks exactly
like a snapshot written afresh from the store (and like the in-memory BM25 index)."""

from __future__ import annotations

import random
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from evidencedesk.chunking.config import ChunkingConfig
from evidencedesk.ingest.sync import ingest_folder
from evidencedesk.retrieval import segments as segments_module
from evidencedesk.retrieval.lexical import BM25Searcher
from evidencedesk.retrieval.scope import Scope
from evidencedesk.retrieval.snapshot import Snapshot, SnapshotSearcher, write_snapshot
from evidencedesk.retrieval.snapshot_update import TieredPolicy, merge_snapshot, update_snapshot, writer_lock
from evidencedesk.store import Store
from evidencedesk.text.tokenizer import Tokenizer
from tests.support.embedders import RandomEmbedder

TOKENIZER = Tokenizer(stem=True, stopwords="english")
EMBEDDER = RandomEmbedder(dim=32)
SCOPES = [
    Scope.everything(),
    Scope(tenants=frozenset({"t1"}), statuses=None, audiences=None, check_validity=False),
    Scope(statuses=frozenset({"superseded"}), audiences=None, check_validity=False),
    Scope(valid_at=date(2026, 6, 1), audiences=frozenset({"public"})),
]
BM25_REL = 1e-12  # BM25 scores are computed with the same float64 operations: equal up to the last bits
DENSE_ABS = 1e-6  # cosine scores are float32 dot products


def vectorize(batch: list) -> np.ndarray:  # noqa: ANN001
    return EMBEDDER.embed([c.text for c in batch])


class Corpus:
    """Synthetic markdown documents in a folder, changed at random."""

    def __init__(self, folder: Path, rng: random.Random) -> None:
        self.folder = folder
        self.rng = rng
        self.words = [self._word() for _ in range(1500)]
        self.version: dict[str, int] = {}
        self.next = 0
        folder.mkdir()

    def _word(self) -> str:
        return "".join(self.rng.choice("abcdefghiklmnoprstuvw") for _ in range(self.rng.randint(3, 9)))

    def _sentence(self) -> str:
        # a skewed word distribution, as in real text: some terms are in most chunks, most in few
        n = self.rng.randint(6, 16)
        return " ".join(self.words[min(int(self.rng.paretovariate(0.8)) - 1, 1499)] for _ in range(n)).capitalize()

    def write(self, doc_id: str) -> None:
        version = self.version.get(doc_id, 0) + 1
        self.version[doc_id] = version
        rng = self.rng
        sections = []
        for s in range(rng.randint(3, 9)):
            body = ". ".join(self._sentence() for _ in range(rng.randint(2, 6)))
            sections.append(f"## Section {s} {self._sentence()}\n\n{body}.\n")
        front = (
            f"---\nid: {doc_id}\ntitle: Document {doc_id} v{version}\nstatus: "
            f"{rng.choice(['current', 'current', 'superseded'])}\naudience: {rng.choice(['public', 'staff'])}\n"
            f"lang: en\ntenant: t{rng.randint(0, 3)}\n"
            + (f"valid_from: 202{rng.randint(4, 7)}-01-01\n" if rng.random() < 0.3 else "")
            + "---\n\n"
        )
        (self.folder / f"{doc_id}.md").write_text(front + f"# Document {doc_id}\n\n" + "\n".join(sections))

    def add(self, n: int) -> None:
        for _ in range(n):
            self.write(f"d{self.next:05d}")
            self.next += 1

    def docs(self) -> list[str]:
        return sorted(p.stem for p in self.folder.glob("*.md"))

    def queries(self, n: int) -> list[str]:
        common, rare = self.words[:30], self.words[30:600]
        return [
            " ".join(self.rng.sample(common, self.rng.randint(0, 2)) + self.rng.sample(rare, self.rng.randint(1, 3)))
            for _ in range(n)
        ]


def chunks_of(store: Store):  # noqa: ANN201
    def read(doc_ids: list[str]):  # noqa: ANN202
        for doc_id in doc_ids:
            yield store.chunks(doc_id)

    return read


def assert_same_results(kept: Snapshot, fresh: Snapshot, store: Store, queries: list[str]) -> int:
    """Every query under every scope: the same ids, scores equal within the stated tolerance."""
    compared = 0
    for scope in SCOPES:
        for q in queries:
            terms = TOKENIZER.query_terms(q)
            got_ids, got = kept.bm25(terms, 10, scope)
            want_ids, want = fresh.bm25(terms, 10, scope)
            assert got_ids == want_ids, (q, scope)
            assert np.allclose(got, want, rtol=BM25_REL, atol=0), (q, scope)
            vector = EMBEDDER.embed([q])[0]
            got_ids, got = kept.dense(vector, 10, scope)
            want_ids, want = fresh.dense(vector, 10, scope)
            assert got_ids == want_ids, (q, scope)
            assert np.allclose(got, want, rtol=0, atol=DENSE_ABS), (q, scope)
            compared += bool(want_ids)
    return compared


def test_ingests_updates_deletes_and_merges_in_random_order_rank_like_a_fresh_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(segments_module, "ANN_MIN_ROWS", 400)  # small segments get HNSW graphs too
    rng = random.Random(18)
    corpus = Corpus(tmp_path / "docs", rng)
    corpus.add(260)
    store = Store(tmp_path / "store")
    ingest_folder(store, corpus.folder, ChunkingConfig())
    kept = tmp_path / "kept"
    write_snapshot(kept, store.iter_chunks(batch=500), tokenizer=TOKENIZER, vectorize=vectorize,
                   model_name=EMBEDDER.name, ann=True, build_id=store.latest_build_id())  # fmt: skip
    policy = TieredPolicy(per_tier=3)
    seen = {"segments": 1, "deleted": 0, "merges": 0, "explicit": 0, "graphs": 0}
    steps = ["add", "update", "delete", "mixed", "merge"] * 3
    rng.shuffle(steps)
    for step in ["add", *steps]:
        docs = corpus.docs()
        if step in ("add", "mixed"):
            corpus.add(rng.randint(8, 30))
        if step in ("update", "mixed"):
            for doc_id in rng.sample(docs, rng.randint(3, 12)):
                corpus.write(doc_id)
        if step in ("delete", "mixed"):
            for doc_id in rng.sample(docs, rng.randint(3, 10)):
                (corpus.folder / f"{doc_id}.md").unlink()
        with writer_lock(kept):
            if step == "merge":
                done = merge_snapshot(kept)
                seen["explicit"] += 1
                assert done["segments"] == 1
            else:
                report = ingest_folder(store, corpus.folder, ChunkingConfig())
                assert not report.failed
                done = update_snapshot(kept, build_id=store.latest_build_id(), documents=store.document_builds(),
                                       chunks_of=chunks_of(store), vectorize=vectorize, policy=policy)  # fmt: skip
                seen["merges"] += len(done["merged"])
        snap = Snapshot(kept)
        seen["segments"] = max(seen["segments"], len(snap.segments))
        seen["deleted"] = max(seen["deleted"], snap.n_deleted)
        seen["graphs"] = max(seen["graphs"], sum(s.ann is not None for s in snap.segments))
        assert snap.build_id == store.latest_build_id()
        assert len(snap) == store.chunk_count()
        fresh = tmp_path / "fresh"
        write_snapshot(fresh, store.iter_chunks(batch=1000), tokenizer=TOKENIZER, vectorize=vectorize,
                       model_name=EMBEDDER.name, build_id=store.latest_build_id())  # fmt: skip
        assert assert_same_results(snap, Snapshot(fresh), store, corpus.queries(12)) > 30, step
    # the run went through what it claims to: several live segments, tombstones, both kinds of merge
    assert seen["segments"] >= 3 and seen["deleted"] > 0 and seen["merges"] > 0 and seen["explicit"] == 3
    assert seen["graphs"] >= 1
    assert store.chunk_count() > 2000

    # the same snapshot, through the searcher every front end uses: as the in-memory BM25 index ranks
    snap = Snapshot(kept)
    memory = BM25Searcher(store.chunks(), tokenizer=TOKENIZER)
    mapped = SnapshotSearcher(snap, "bm25", store.chunks_by_id)
    for q in corpus.queries(20):
        for scope in SCOPES:
            want = [(c.chunk.id, c.score) for c in memory.search(q, 10, scope)]
            got = [(c.chunk.id, c.score) for c in mapped.search(q, 10, scope)]
            assert [i for i, _ in got] == [i for i, _ in want]
            assert np.allclose([s for _, s in got], [s for _, s in want], rtol=BM25_REL, atol=0)
    # HNSW per segment finds (nearly) what exact search across segments finds
    ann = SnapshotSearcher(snap, "dense-ann", store.chunks_by_id, EMBEDDER)
    exact = SnapshotSearcher(snap, "dense", store.chunks_by_id, EMBEDDER)
    overlap = [
        len({c.chunk.id for c in ann.search(q, 10)} & {c.chunk.id for c in exact.search(q, 10)}) / 10
        for q in corpus.queries(20)
    ]
    assert np.mean(overlap) >= 0.9
    store.close()


def test_tiered_policy_merges_a_full_tier_and_a_mostly_deleted_segment(tmp_path: Path) -> None:
    rng = random.Random(7)
    corpus = Corpus(tmp_path / "docs", rng)
    corpus.add(10)
    with Store(tmp_path / "store") as store:
        ingest_folder(store, corpus.folder, ChunkingConfig())
        kept = tmp_path / "kept"
        write_snapshot(kept, store.iter_chunks(), tokenizer=TOKENIZER, build_id=store.latest_build_id())
        policy = TieredPolicy(per_tier=4, tier_factor=1000)
        counts = []
        for _ in range(4):
            corpus.add(2)
            ingest_folder(store, corpus.folder, ChunkingConfig())
            done = update_snapshot(kept, build_id=store.latest_build_id(), documents=store.document_builds(),
                                   chunks_of=chunks_of(store), policy=policy)  # fmt: skip
            counts.append(done["segments"])
        assert counts == [2, 3, 1, 2]  # four segments of one tier became one on the third update
        for doc_id in corpus.docs()[:12]:  # most rows of the big segment
            (corpus.folder / f"{doc_id}.md").unlink()
        ingest_folder(store, corpus.folder, ChunkingConfig())
        opened = Snapshot(kept)  # a reader that opened the snapshot before the merge, and searches after it
        query = TOKENIZER.query_terms(" ".join(corpus.words[:40]))
        done = update_snapshot(kept, build_id=store.latest_build_id(), documents=store.document_builds(),
                               chunks_of=chunks_of(store), policy=policy)  # fmt: skip
        assert len(opened.bm25(query, 10)[0]) == 10  # its files are gone; what it mapped still reads
        snap = Snapshot(kept)
        assert done["merged"] and snap.n_deleted == 0 and len(snap) == store.chunk_count()
        # files of replaced segments and old tombstones are gone
        named = {e["name"] for e in snap.manifest["segments"]}
        assert {p.name for p in (kept / "segments").iterdir()} == named
    with pytest.raises(ValueError, match="per_tier"):
        TieredPolicy(per_tier=1)
