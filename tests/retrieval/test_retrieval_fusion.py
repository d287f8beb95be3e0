"""Reciprocal rank fusion, normalised fusion and the hybrid searcher."""

from __future__ import annotations

from fractions import Fraction

import pytest

from evidencedesk.retrieval.candidates import Candidate, ranked
from evidencedesk.retrieval.fusion import normalized_fusion, rrf
from evidencedesk.retrieval.hybrid import HybridSearcher
from evidencedesk.retrieval.lexical import BM25Searcher, LsaSearcher, TfidfSearcher
from evidencedesk.retrieval.scope import Scope
from tests.support.retrieval import chunk, fare_chunks


def listing(names: str, source: str, scores: list[float] | None = None) -> list[Candidate]:
    ids = names.split()
    scores = scores or [float(len(ids) - n) for n in range(len(ids))]
    return ranked([(chunk(f"{i}:c0", i), s) for i, s in zip(ids, scores, strict=True)], source)


def ids(cands: list[Candidate]) -> list[str]:
    return [c.chunk.doc_id for c in cands]


def test_rrf_worked_example_waterproof_boots() -> None:
    fused = rrf([listing("A B C D", "bm25"), listing("C A E B", "vector")], k=60)
    assert ids(fused) == ["A", "C", "B", "E", "D"]
    hand = {
        "A": Fraction(1, 61) + Fraction(1, 62),
        "C": Fraction(1, 63) + Fraction(1, 61),
        "B": Fraction(1, 62) + Fraction(1, 64),
        "E": Fraction(1, 63),
        "D": Fraction(1, 64),
    }
    for c in fused:
        assert c.score == float(hand[c.chunk.doc_id])
    assert [c.score for c in fused] == pytest.approx([0.03252, 0.03227, 0.03175, 0.01587, 0.01563], abs=5.1e-6)
    assert [c.rank for c in fused] == [1, 2, 3, 4, 5]
    a = fused[0]
    assert [(p.source, p.rank) for p in a.parts] == [("bm25", 1), ("vector", 2)]
    assert a.parts[0].score == 4.0 and a.parts[1].score == 3.0  # raw scores kept
    assert [(p.source, p.rank) for p in fused[3].parts] == [("vector", 3)]


def test_rrf_agreement_beats_a_single_first_place() -> None:
    fused = rrf([listing("d1 d2 d3", "bm25"), listing("d3 d1 d4", "dense")], k=60)
    assert ids(fused) == ["d1", "d3", "d2", "d4"]
    assert fused[0].score == float(Fraction(1, 61) + Fraction(1, 62))
    assert fused[1].score == float(Fraction(1, 63) + Fraction(1, 61))


def test_rrf_small_k_lets_a_first_place_win() -> None:
    lists = [listing("p x y q", "a"), listing("r s t q", "b")]
    assert ids(rrf(lists, k=1))[0] in {"p", "r"}
    assert ids(rrf(lists, k=60))[0] == "q"  # the chunk both lists hold


def test_rrf_ties_go_to_best_rank_then_chunk_id() -> None:
    # x: ranks 1 and 4, y: ranks 2 and 2 -> 1/61 + 1/64 vs 2/62: different sums; build an exact tie instead.
    fused = rrf([listing("b a", "one"), listing("a b", "two")], k=60)
    assert fused[0].score == fused[1].score
    assert ids(fused) == ["a", "b"]  # same sum, same best rank: chunk id decides
    fused = rrf([listing("z", "one"), listing("y", "two")], k=60)
    assert ids(fused) == ["y", "z"]


def test_rrf_top_and_validation() -> None:
    lists = [listing("A B C D", "bm25"), listing("C A E B", "vector")]
    assert ids(rrf(lists, top=2)) == ["A", "C"]
    assert rrf([], k=60) == []
    with pytest.raises(ValueError, match="k"):
        rrf(lists, k=-1)
    with pytest.raises(ValueError, match="top"):
        rrf(lists, top=0)


def test_normalized_fusion_min_max_weighted() -> None:
    one = listing("A B C", "bm25", [10.0, 5.0, 0.0])  # -> 1, 0.5, 0
    two = listing("C B", "dense", [0.9, 0.5])  # -> 1, 0
    fused = normalized_fusion([one, two])
    got = {c.chunk.doc_id: c.score for c in fused}
    assert got == pytest.approx({"A": 1.0, "B": 0.5, "C": 1.0})
    assert ids(fused) == ["A", "C", "B"]  # A and C tie; A has the better best rank? both rank 1 -> id
    weighted = {c.chunk.doc_id: c.score for c in normalized_fusion([one, two], weights=[1.0, 3.0])}
    assert weighted == pytest.approx({"A": 1.0, "B": 0.5, "C": 3.0})
    flat = normalized_fusion([listing("A B", "x", [2.0, 2.0])])
    assert [c.score for c in flat] == [1.0, 1.0]
    with pytest.raises(ValueError, match="weights"):
        normalized_fusion([one, two], weights=[1.0])
    with pytest.raises(ValueError, match="weights"):
        normalized_fusion([one, two], weights=[1.0, -1.0])


def test_hybrid_fuses_legs_under_one_scope_and_keeps_parts() -> None:
    chunks = fare_chunks()
    bm25, lsa = BM25Searcher(chunks), LsaSearcher(chunks)
    hybrid = HybridSearcher([(bm25, 5), (lsa, 5)])
    query = "how many kg of checked baggage are included on economy"
    got = hybrid.search(query, k=3)
    expected = rrf([bm25.search(query, 5), lsa.search(query, 5)], top=3)
    assert [(c.chunk.id, c.score) for c in got] == [(c.chunk.id, c.score) for c in expected]
    assert all(c.chunk.metadata.status == "current" for c in got)
    assert {p.source for c in got for p in c.parts} <= {"bm25", "lsa"}
    assert got[0].source == "hybrid"
    everything = hybrid.search(query, k=3, scope=Scope.everything())
    assert "c2:c0" in [c.chunk.id for c in everything]


def test_hybrid_normalized_and_depth_at_least_k() -> None:
    chunks = fare_chunks()
    hybrid = HybridSearcher([(BM25Searcher(chunks), 1), TfidfSearcher(chunks)], fusion="normalized", weights=[1, 1])
    lists = hybrid.leg_lists("EUR", k=3)
    assert len(lists[0]) == 2  # depth raised from 1 to k; only two current chunks hold the word
    assert len(hybrid.search("fares", k=4)) == 3  # three allowed chunks say "fares": never padded to 4


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"legs": []}, "legs"),
        ({"fusion": "max"}, "fusion"),
        ({"rrf_k": -1}, "rrf_k"),
        ({"weights": [1.0, 1.0]}, "weights"),
        ({"legs": [("not a searcher", 5)]}, "legs"),
        ({"depth": 0}, "k"),
    ],
)
def test_hybrid_validates_eagerly(kwargs: dict, match: str) -> None:
    bm25 = BM25Searcher(fare_chunks())
    args = {"legs": [bm25, bm25]} | kwargs
    with pytest.raises(ValueError, match=match):
        HybridSearcher(**args)


def test_hybrid_updates_reach_every_leg() -> None:
    chunks = fare_chunks()
    hybrid = HybridSearcher([BM25Searcher(chunks), TfidfSearcher(chunks)])
    hybrid.add([chunk("c7:c0", "Lounges: flex fares include lounge access.")])
    assert "c7:c0" in [c.chunk.id for c in hybrid.search("lounge access", 3)]
    assert hybrid.remove(["c7"]) == 1
    assert hybrid.search("lounge access", 3) == []


def test_fast_candidate_matches_the_constructor() -> None:
    import dataclasses

    from evidencedesk.retrieval.candidates import Part, candidate

    c = chunk("A:c0", "A")
    parts = (Part("bm25", 1, 2.5),)
    fast, slow = candidate(c, 0.5, 3, "hybrid", parts), Candidate(c, 0.5, 3, "hybrid", parts)
    assert fast == slow and repr(fast) == repr(slow)
    assert fast.to_dict() == slow.to_dict()
    assert candidate(c, 0.5, 3, "bm25").parts == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.score = 1.0  # type: ignore[misc]
    assert dataclasses.replace(fast, rank=1) == Candidate(c, 0.5, 1, "hybrid", parts)


def _reference(lists: list[list[Candidate]], totals_of: str, top: int | None) -> list[tuple[str, float, tuple]]:
    """The fused lists spelled out directly: every chunk's parts, total, best rank, sorted in full."""
    parts: dict[str, list[tuple[str, int, float]]] = {}
    for lst in lists:
        for rank, c in enumerate(lst, 1):
            parts.setdefault(c.chunk.id, []).append((c.source, rank, c.score))
    totals: dict[str, float] = {}
    if totals_of == "rrf":
        for cid, ps in parts.items():
            totals[cid] = float(sum((Fraction(1, 60 + r) for _, r, _ in ps), Fraction(0)))
    else:
        totals = dict.fromkeys(parts, 0.0)
        for lst in lists:
            if lst:
                lo, hi = min(c.score for c in lst), max(c.score for c in lst)
                for c in lst:
                    totals[c.chunk.id] += (c.score - lo) / (hi - lo) if hi > lo else 1.0
    best = {cid: min(r for _, r, _ in ps) for cid, ps in parts.items()}
    order = sorted(totals, key=lambda cid: (-totals[cid], best[cid], cid))[:top]
    return [(cid, totals[cid], tuple(parts[cid])) for cid in order]


@pytest.mark.parametrize("seed", range(20))
def test_fusion_matches_the_direct_definition_on_random_lists(seed: int) -> None:
    import random

    rng = random.Random(seed)
    pool = [f"d{n}" for n in range(30)]
    lists = []
    for source in ("bm25", "dense", "lsa")[: rng.randint(1, 3)]:
        names = rng.sample(pool, rng.randint(0, 25))
        scores = sorted((round(rng.uniform(0, 5), rng.choice([0, 1, 3])) for _ in names), reverse=True)
        lists.append(listing(" ".join(names), source, scores) if names else [])
    top = rng.choice([None, 1, 5, 10, 100])
    for name in ("rrf", "normalized"):
        fused = rrf(lists, 60, top=top) if name == "rrf" else normalized_fusion(lists, top=top)
        want = _reference(lists, name, top)
        assert [c.chunk.id for c in fused] == [cid for cid, _, _ in want]
        assert [c.score for c in fused] == [total for _, total, _ in want]
        assert [tuple((p.source, p.rank, p.score) for p in c.parts) for c in fused] == [p for _, _, p in want]
        assert [c.rank for c in fused] == list(range(1, len(fused) + 1))
