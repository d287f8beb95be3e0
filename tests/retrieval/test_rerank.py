"""Second-stage rerankers: the overlap baseline, TwoStage as a Searcher, and the recall ceiling."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from evidencedesk.chunking import ChunkingConfig, chunk_document
from evidencedesk.documents import Chunk, Location
from evidencedesk.evaluation.labels import load_labels
from evidencedesk.ingest.folder import parse_folder
from evidencedesk.retrieval.candidates import Candidate, Part, Searcher, ranked
from evidencedesk.retrieval.factory import make_searcher
from evidencedesk.retrieval.rerank import Ceiling, OverlapReranker, Reranker, TwoStage, ceiling, get_reranker
from evidencedesk.retrieval.scope import Scope

KESTREL = Path(__file__).resolve().parents[2] / "examples" / "kestrel"


def chunk(cid: str, text: str) -> Chunk:
    return Chunk(cid, cid.split(":")[0], text, location=Location(("Doc",), 1, 2))


@cache
def kestrel() -> tuple[list[Chunk], Searcher, dict[str, str], dict[str, set[str]]]:
    chunks = [c for d in parse_folder(KESTREL / "docs").documents for c in chunk_document(d, ChunkingConfig())]
    labels = [x for x in load_labels(KESTREL / "labels.jsonl") if x.answerable]
    queries = {x.id: x.question for x in labels}
    relevant = {x.id: {c.id for c in chunks if x.grade_of(c) == 2} for x in labels}
    return chunks, make_searcher("bm25", chunks), queries, relevant


def test_overlap_scores_are_the_share_of_query_words_present() -> None:
    found = ranked(
        [
            (chunk("a:c0", "Stem faceplate bolts need 6 Nm."), 3.0),
            (chunk("b:c0", "Stem bolts are tightened to 5 Nm with a torque wrench."), 2.0),
            (chunk("c:c0", "Pedals have a reverse thread."), 1.0),
        ],
        "bm25",
    )
    out = OverlapReranker().rerank("torque for the stem bolts", found)
    assert [c.chunk.id for c in out] == ["b:c0", "a:c0", "c:c0"]
    assert [c.score for c in out] == [1.0, pytest.approx(2 / 3), 0.0]
    assert [c.rank for c in out] == [1, 2, 3] and {c.source for c in out} == {"overlap"}
    assert out[0].parts == (Part("bm25", 2, 2.0),)  # where it stood before reranking


def test_ties_keep_the_first_stage_order_and_fused_parts_survive() -> None:
    fused = [
        Candidate(chunk("x:c0", "refund policy"), 0.03, 1, "hybrid", (Part("bm25", 1, 9.0), Part("dense", 2, 0.7))),
        Candidate(chunk("y:c0", "refund policy text"), 0.02, 2, "hybrid", (Part("bm25", 2, 8.0),)),
    ]
    out = OverlapReranker().rerank("refund policy", fused)
    assert [c.chunk.id for c in out] == ["x:c0", "y:c0"] and out[0].score == out[1].score == 1.0
    assert out[0].parts == (Part("bm25", 1, 9.0), Part("dense", 2, 0.7), Part("hybrid", 1, 0.03))
    assert OverlapReranker().rerank("the of and", fused)[0].score == 0.0  # nothing to look for
    assert OverlapReranker().rerank("refund", []) == []


def test_two_stage_is_a_searcher_that_counts_its_cost() -> None:
    chunks, bm25, _, _ = kestrel()
    two = TwoStage(bm25, OverlapReranker(), candidates=10, final=3)
    assert isinstance(two, Searcher) and isinstance(OverlapReranker(), Reranker)
    assert two.name == "bm25+overlap"
    out = two.search("What torque do the crank arm bolts need on a large frame?")
    assert len(out) == 3 and two.scored == 10 and two.searches == 1
    wide = bm25.search("What torque do the crank arm bolts need on a large frame?", 10, Scope())
    assert {c.chunk.id for c in out} <= {c.chunk.id for c in wide}
    matching = len(bm25.search("crank arm bolts", 10, Scope()))  # BM25 never pads with non-matches
    assert len(two.search("crank arm bolts", k=5)) == 5 and two.scored == 10 + matching < 20
    assert two.scored_per_search == (10 + matching) / 2
    staff = Scope(audiences=frozenset({"staff"}))
    assert all(c.chunk.metadata.audience == "staff" for c in two.search("goodwill refund", 3, staff))


def test_ceiling_reports_recall_at_candidate_depth_beside_the_final_k() -> None:
    _, bm25, queries, relevant = kestrel()
    rows: dict[int, Ceiling] = {
        n: ceiling(TwoStage(bm25, OverlapReranker(), n, 3), queries, relevant) for n in (3, 10, 30)
    }
    for n, row in rows.items():
        # Recomputed by hand from the first stage alone.
        judged = [q for q in queries if relevant[q]]
        by_hand = sum(
            len(relevant[q] & {c.chunk.id for c in bm25.search(queries[q], n, Scope())}) / len(relevant[q])
            for q in judged
        ) / len(judged)
        assert row.recall_at_candidates == pytest.approx(by_hand)
        assert row.reranked_at_final <= row.recall_at_candidates + 1e-12  # a reranker cannot beat its ceiling
        assert 0 < row.scored_per_query <= n
        assert row.headroom == pytest.approx(row.recall_at_candidates - row.reranked_at_final)
    # Same depth as the final k: reranking only reorders, so recall at k cannot change.
    assert rows[3].reranked_at_final == pytest.approx(rows[3].first_stage_at_final)
    assert rows[3].recall_at_candidates <= rows[10].recall_at_candidates <= rows[30].recall_at_candidates
    assert rows[10].first_stage_at_final == rows[30].first_stage_at_final
    assert set(rows[10].to_dict()) >= {"recall_at_candidates", "reranked_at_final", "headroom", "scored_per_query"}


def test_construction_and_names_are_validated() -> None:
    _, bm25, queries, _ = kestrel()
    with pytest.raises(ValueError, match="final"):
        TwoStage(bm25, OverlapReranker(), candidates=3, final=5)
    with pytest.raises(ValueError, match="candidates"):
        TwoStage(bm25, OverlapReranker(), candidates=0)
    with pytest.raises(ValueError, match="relevant"):
        ceiling(TwoStage(bm25, OverlapReranker()), queries, {})
    assert get_reranker("none") is None and get_reranker(None) is None
    assert isinstance(get_reranker("overlap"), OverlapReranker)
    with pytest.raises(ValueError, match="rerank"):
        get_reranker("magic")
