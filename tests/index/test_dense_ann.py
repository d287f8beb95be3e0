"""HNSW search (usearch): recall against exact search on real MiniLM vectors, and the filter guarantee."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from evidencedesk.index.ann import AnnIndex
from evidencedesk.index.dense import DenseIndex
from evidencedesk.index.embedders import default_embedder, minilm_model_dir


def unit_rows(n: int, dim: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def recall_at_k(ann: AnnIndex, exact: DenseIndex, queries: np.ndarray, k: int, mask: np.ndarray | None) -> float:
    found = total = 0
    for q in queries:
        truth = set(exact.search(q, k, mask)[0].tolist())
        got = set(ann.search(q, k, mask)[0].tolist())
        found += len(truth & got)
        total += len(truth)
    return found / total


@pytest.fixture(scope="module")
def word_vectors() -> tuple[np.ndarray, np.ndarray]:
    """Real MiniLM vectors of 3,000 English words from the model's own vocabulary, plus 60 query words."""
    vocab = json.loads((minilm_model_dir() / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    words = sorted(w for w in vocab if w.isascii() and w.isalpha() and len(w) >= 4)
    rng = np.random.default_rng(0)
    picked = [words[i] for i in rng.choice(len(words), size=3060, replace=False)]
    vectors = default_embedder().embed(picked, batch_size=256)
    return vectors[:3000], vectors[3000:]


@pytest.mark.slow
def test_recall_at_10_against_exact_on_real_embeddings(word_vectors: tuple[np.ndarray, np.ndarray]) -> None:
    corpus, queries = word_vectors
    exact = DenseIndex(corpus, [f"w{i}" for i in range(len(corpus))], "minilm", 384)
    ann = AnnIndex(DenseIndex(corpus.copy(), list(exact.ids), "minilm", 384), exact_rows=0, exact_fraction=0.0)
    unfiltered = recall_at_k(ann, exact, queries, 10, None)
    half = np.random.default_rng(1).random(len(corpus)) < 0.5  # exercises the expanding graph search
    filtered = recall_at_k(ann, exact, queries, 10, half)
    print(f"\nANN recall@10 vs exact, {len(corpus)} MiniLM vectors: {unfiltered:.3f}; 50% filter: {filtered:.3f}")
    assert unfiltered >= 0.9
    assert filtered >= 0.9


@pytest.mark.parametrize("keep", [0.01, 0.2, 0.6, 1.0])
def test_filter_guarantee_at_every_selectivity(keep: float) -> None:
    n = 3000
    vectors = unit_rows(n, 16, seed=3)
    ids = [f"r{i}" for i in range(n)]
    ann = AnnIndex(DenseIndex(vectors, ids, "m", 16), exact_rows=100, exact_fraction=0.02)
    exact = DenseIndex(vectors, ids, "m", 16)
    rng = np.random.default_rng(4)
    for trial in range(10):
        mask = rng.random(n) < keep
        q = unit_rows(1, 16, seed=100 + trial)[0]
        rows, scores = ann.search(q, 10, mask)
        assert all(mask[rows]), "a row outside the filter came back"
        assert (scores > 0).all()
        expected = min(10, int(((vectors @ q) > 0)[mask].sum()))
        assert len(rows) == expected
        np.testing.assert_allclose(scores, vectors[rows] @ q, atol=1e-6)  # exact scores, not graph distances
        assert len(set(rows) & set(exact.search(q, 10, mask)[0])) >= 8


def test_few_positive_matches_still_returns_all_of_them() -> None:
    # 500 rows opposite the query and 3 rows near it: the graph search must not stop short.
    rng = np.random.default_rng(5)
    q = np.zeros(8, dtype=np.float32)
    q[0] = 1
    far = -np.abs(unit_rows(500, 8, seed=6))
    near = np.abs(unit_rows(3, 8, seed=7))
    vectors = np.vstack([far, near]).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    order = rng.permutation(len(vectors))
    vectors = vectors[order]
    ids = [f"r{i}" for i in range(len(vectors))]
    ann = AnnIndex(DenseIndex(vectors, ids, "m", 8), exact_rows=0, exact_fraction=0.0)
    rows, scores = ann.search(q, 10)
    assert len(rows) == int(((vectors @ q) > 0).sum()) and (scores > 0).all()


def test_updates_keep_graph_and_rows_in_step() -> None:
    vectors = unit_rows(400, 16, seed=8)
    ids = [f"r{i}" for i in range(400)]
    ann = AnnIndex(DenseIndex(vectors[:300], ids[:300], "m", 16), exact_rows=0, exact_fraction=0.0)
    ann.add(vectors[300:], ids[300:])
    removed = {f"r{i}" for i in range(0, 400, 3)}
    ann.remove(sorted(removed))
    kept = [i for i in range(400) if ids[i] not in removed]
    fresh = DenseIndex(vectors[kept], [ids[i] for i in kept], "m", 16)
    for trial in range(10):
        q = unit_rows(1, 16, seed=200 + trial)[0]
        got = [ann.dense.ids[r] for r in ann.search(q, 5)[0]]
        assert removed.isdisjoint(got)
        want = [fresh.ids[r] for r in fresh.search(q, 5)[0]]
        assert len(set(got) & set(want)) >= 4


def test_validation() -> None:
    dense = DenseIndex(unit_rows(5, 4, 0), list("abcde"), "m", 4)
    with pytest.raises(ValueError, match="connectivity"):
        AnnIndex(dense, connectivity=1)
    with pytest.raises(ValueError, match="exact_fraction"):
        AnnIndex(dense, exact_fraction=2.0)
    ann = AnnIndex(dense)
    with pytest.raises(ValueError, match="allowed_mask"):
        ann.search(unit_rows(1, 4, 1)[0], 3, np.ones(2, dtype=bool))
    assert len(ann.search(unit_rows(1, 4, 1)[0], 3, np.zeros(5, dtype=bool))[0]) == 0


def test_loading_usearch_first_does_not_crash_the_embedder() -> None:
    code = (
        "import evidencedesk.index.ann\n"
        "from evidencedesk.index.embedders import OnnxMiniLM\n"
        "print(OnnxMiniLM().embed(['ok']).shape)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "(1, 384)" in done.stdout
