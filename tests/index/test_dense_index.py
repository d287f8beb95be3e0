"""Exact vector search: filter before ranking, no padding, k whenever k allowed rows match, updates, persistence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evidencedesk.index.dense import DenseIndex


def unit_rows(n: int, dim: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def brute_force(vectors: np.ndarray, q: np.ndarray, k: int, mask: np.ndarray | None) -> list[int]:
    scores = vectors @ q
    rows = [r for r in np.argsort(-scores, kind="stable") if scores[r] > 0 and (mask is None or mask[r])]
    return rows[:k]


class Named:
    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, dim

    def embed(self, texts: list[str], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        raise AssertionError("not called")


def test_search_matches_brute_force_over_allowed_rows() -> None:
    vectors = unit_rows(300, 16, seed=1)
    index = DenseIndex(vectors, [f"c{i}" for i in range(300)], "m", 16)
    q = unit_rows(1, 16, seed=2)[0]
    mask = np.zeros(300, dtype=bool)
    mask[::7] = True
    rows, scores = index.search(q, 10, mask)
    assert list(rows) == brute_force(vectors, q, 10, mask)
    assert all(mask[rows])
    np.testing.assert_allclose(scores, vectors[rows] @ q, rtol=1e-6)
    assert list(scores) == sorted(scores, reverse=True)
    rows_all, _ = index.search(q, 10)
    assert list(rows_all) == brute_force(vectors, q, 10, None)


def test_never_pads_with_non_positive_scores() -> None:
    # Three rows: one points with the query, one against it, one orthogonal to it.
    vectors = np.array([[1, 0], [-1, 0], [0, 1]], dtype=np.float32)
    index = DenseIndex(vectors, ["a", "b", "c"], "m", 2)
    rows, scores = index.search(np.array([1, 0], dtype=np.float32), k=3)
    assert list(rows) == [0] and scores[0] == pytest.approx(1.0)
    rows, _ = index.search(np.array([1, 0], dtype=np.float32), k=3, allowed_mask=np.array([False, True, True]))
    assert len(rows) == 0


def test_ties_break_by_id_whatever_the_row_order() -> None:
    vectors = np.array([[1, 0], [1, 0], [1, 0], [0.6, 0.8]], dtype=np.float32)
    a = DenseIndex(vectors, ["z", "y", "x", "w"], "m", 2)
    rows, _ = a.search(np.array([1, 0], dtype=np.float32), k=2)
    assert [a.ids[r] for r in rows] == ["x", "y"]


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 60),
    k=st.integers(1, 15),
    seed=st.integers(0, 10_000),
    keep=st.floats(0.0, 1.0),
)
def test_filter_guarantee_property(n: int, k: int, seed: int, keep: float) -> None:
    vectors = unit_rows(n, 8, seed)
    mask = np.random.default_rng(seed + 1).random(n) < keep
    q = unit_rows(1, 8, seed + 2)[0]
    index = DenseIndex(vectors, [f"r{i}" for i in range(n)], "m", 8)
    rows, scores = index.search(q, k, mask)
    assert all(mask[rows]), "a row outside the filter came back"
    assert (scores > 0).all(), "padded with a non-positive score"
    n_positive_allowed = int(((vectors @ q) > 0)[mask].sum())
    assert len(rows) == min(k, n_positive_allowed)
    assert set(rows) == set(brute_force(vectors, q, k, mask))


def test_check_refuses_another_embedder() -> None:
    index = DenseIndex(unit_rows(3, 384, 0), ["a", "b", "c"], "all-MiniLM-L6-v2-onnx-int8", 384)
    index.check(Named("all-MiniLM-L6-v2-onnx-int8", 384))
    with pytest.raises(ValueError) as err:
        index.check(Named("BAAI/bge-base-en-v1.5", 768))
    assert str(err.value).startswith(
        "index built with all-MiniLM-L6-v2-onnx-int8 (dim 384) cannot be searched with BAAI/bge-base-en-v1.5 (dim 768)"
    )
    with pytest.raises(ValueError, match="cannot be searched with other-model"):
        index.check(Named("other-model", 384))


def test_incremental_updates_equal_a_fresh_build() -> None:
    vectors = unit_rows(50, 12, seed=5)
    ids = [f"d{i}" for i in range(50)]
    index = DenseIndex(vectors[:30], ids[:30], "m", 12)
    index.add(vectors[30:], ids[30:])
    index.remove(["d3", "d31", "d40", "not-there"])
    kept = [i for i, id_ in enumerate(ids) if id_ not in {"d3", "d31", "d40"}]
    fresh = DenseIndex(vectors[kept], [ids[i] for i in kept], "m", 12)
    assert index.ids == fresh.ids
    for seed in range(5):
        q = unit_rows(1, 12, 100 + seed)[0]
        mask = np.random.default_rng(seed).random(len(fresh)) < 0.6
        a_rows, a_scores = index.search(q, 8, mask)
        b_rows, b_scores = fresh.search(q, 8, mask)
        assert [index.ids[r] for r in a_rows] == [fresh.ids[r] for r in b_rows]
        np.testing.assert_allclose(a_scores, b_scores, rtol=1e-6)
    with pytest.raises(ValueError, match="already in the index"):
        index.add(vectors[:1], ["d0"])


def test_save_and_load_memory_mapped(tmp_path) -> None:
    vectors = unit_rows(20, 6, seed=9)
    index = DenseIndex(vectors, [f"x{i}" for i in range(20)], "m", 6)
    index.save(tmp_path / "dense")
    loaded = DenseIndex.load(tmp_path / "dense")
    assert isinstance(loaded.vectors.base, np.memmap) or isinstance(loaded.vectors, np.memmap)
    assert (loaded.model_name, loaded.dim, loaded.ids) == ("m", 6, index.ids)
    q = unit_rows(1, 6, 10)[0]
    assert [list(x) for x in loaded.search(q, 5)] == [list(x) for x in index.search(q, 5)]
    loaded.add(unit_rows(1, 6, 11), ["new"])  # a mapped index still takes updates (in memory)
    assert len(loaded) == 21
    with pytest.raises(ValueError, match="no dense index"):
        DenseIndex.load(tmp_path / "missing")


def test_validation() -> None:
    with pytest.raises(ValueError, match="ids"):
        DenseIndex(unit_rows(2, 4, 0), ["a"], "m", 4)
    with pytest.raises(ValueError, match="unique"):
        DenseIndex(unit_rows(2, 4, 0), ["a", "a"], "m", 4)
    with pytest.raises(ValueError, match="shape"):
        DenseIndex(unit_rows(2, 4, 0), ["a", "b"], "m", 8)
    with pytest.raises(ValueError, match="model_name"):
        DenseIndex(unit_rows(2, 4, 0), ["a", "b"], "", 4)
    index = DenseIndex(unit_rows(2, 4, 0), ["a", "b"], "m", 4)
    with pytest.raises(ValueError, match="k"):
        index.search(unit_rows(1, 4, 1)[0], 0)
    with pytest.raises(ValueError, match="allowed_mask"):
        index.search(unit_rows(1, 4, 1)[0], 1, np.ones(3, dtype=bool))
    with pytest.raises(ValueError, match="query vector"):
        index.search(np.ones(5, dtype=np.float32), 1)
    empty = DenseIndex(np.zeros((0, 4), np.float32), [], "m", 4)
    assert len(empty.search(unit_rows(1, 4, 1)[0], 3)[0]) == 0


def test_filtered_scores_are_read_in_place_and_match_the_gathered_product(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((2_000, 48)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = DenseIndex(vectors, [f"c{i}" for i in range(2_000)], "test-model", 48)
    query = rng.standard_normal(48).astype(np.float32)
    rows = np.flatnonzero(rng.random(2_000) < 0.1)
    np.testing.assert_allclose(index.scores(query, rows), vectors[rows] @ query, rtol=0, atol=1e-5)
    # a memory-mapped (read-only) index gives the same filtered ranking as the in-memory one
    mapped = DenseIndex.load(index.save(tmp_path), mmap=True)
    mask = np.zeros(2_000, dtype=bool)
    mask[rows] = True
    got_rows, got_scores = mapped.search(query, 10, mask)
    want = rows[np.argsort(-(vectors[rows] @ query), kind="stable")][:10]
    assert got_rows.tolist() == want.tolist()
    assert np.all(np.diff(got_scores) <= 0)


def test_filtered_ties_at_the_kth_score_break_by_id() -> None:
    # 40 identical rows (equal scores), ids in reverse row order: a filtered top 5 that cuts through
    # the tie must keep the 5 smallest ids, wherever their rows lie.
    vectors = np.tile(np.array([[0.6, 0.8]], dtype=np.float32), (60, 1))
    vectors[40:] = [0.8, -0.6]  # orthogonal to the query: score 0, never returned
    ids = [f"id{59 - i:02d}" for i in range(60)]
    index = DenseIndex(vectors, ids, "m", 2)
    mask = np.ones(60, dtype=bool)
    mask[::3] = False
    rows, scores = index.search(np.array([0.6, 0.8], dtype=np.float32), 5, mask)
    allowed_tied = sorted(ids[r] for r in range(40) if mask[r])
    assert [ids[r] for r in rows] == allowed_tied[:5]
    assert scores.tolist() == [scores[0]] * 5
    rows, _ = index.search(np.array([0.6, 0.8], dtype=np.float32), 100, mask)
    assert sorted(ids[r] for r in rows) == allowed_tied  # every positive allowed row, no zero-score ones


def test_one_thread_and_blas_paths_rank_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    import evidencedesk.index.dense as dense

    vectors = unit_rows(2_000, 32, seed=5)
    vectors[1500] = vectors[200]  # a tie at the top for some queries: the id decides
    index = DenseIndex(vectors, [f"c{i:04d}" for i in range(2_000)], "m", 32)
    for seed in range(20):
        q = unit_rows(1, 32, seed=100 + seed)[0] if seed else vectors[200]
        for k in (1, 10, 50):
            monkeypatch.setattr(dense, "ONE_THREAD_ROWS", 10**9)
            one_thread = index.search(q, k)
            monkeypatch.setattr(dense, "ONE_THREAD_ROWS", 0)
            blas = index.search(q, k)
            assert one_thread[0].tolist() == blas[0].tolist() == brute_force(vectors, q, k, None)[: len(blas[0])]
            np.testing.assert_allclose(one_thread[1], blas[1], atol=1e-5)
