"""diagnose: each stage's failure produced by a deliberately broken run on the real Kestrel corpus."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from evidencedesk.answer.context import assemble
from evidencedesk.chunking import ChunkingConfig
from evidencedesk.documents import Chunk
from evidencedesk.evaluation.labels import Label
from evidencedesk.evaluation.runner import evaluate, evaluate_one
from evidencedesk.evaluation.taxonomy import LABELS, STAGES, diagnose, label_counts
from evidencedesk.retrieval.candidates import ranked
from evidencedesk.retrieval.factory import make_searcher
from evidencedesk.retrieval.scope import Scope
from evidencedesk.trace import Trace
from tests.support.evaluation import by_id, chunk_all, holder

RETURNS = "q01"  # "Can I still send back a bike I bought five weeks ago?" -> 30 days (returns v3)


def pairs(findings: list) -> list[tuple[str, str]]:
    return [(f.stage, f.label) for f in findings]


@pytest.fixture(scope="module")
def bm25(chunks: list[Chunk]):
    return make_searcher("bm25", chunks)


@pytest.fixture(scope="module")
def deep(bm25, labels: list[Label], chunks: list[Chunk]):
    """Every label evaluated with bm25 at k = 20, the default scope."""
    return {r.id: r for r in evaluate(bm25, labels, chunks, Scope(), 20)}


def test_stage_and_label_names() -> None:
    assert STAGES == ("ingestion", "retrieval", "context", "generation", "citation")
    assert LABELS == ("missed_evidence", "irrelevant_match", "stale_document", "duplicate_chunks", "unsupported_answer")


def test_ingestion_missed_evidence_with_windows_far_too_small(documents, labels, chunks) -> None:
    cut = chunk_all(documents, ChunkingConfig("fixed", size=60, unit="chars"))
    label = by_id(labels, RETURNS)
    assert any(label.grade_of(c) == 2 for c in chunks)  # the structure chunker keeps it whole
    result = evaluate_one(make_searcher("bm25", cut), label, cut, cut, Scope(), 3)
    assert pairs(result.findings)[0] == ("ingestion", "missed_evidence")
    assert "whole in no indexed chunk" in result.findings[0].detail
    assert result.metrics["recall@3"] == 0.0  # the lost answer scores 0, it is not skipped
    lost = [x.id for x in labels if x.answerable and not any(x.grade_of(c) == 2 for c in cut)]
    assert len(lost) > len([x for x in labels if x.answerable]) // 2


def test_retrieval_missed_evidence_when_k_is_too_small(deep, bm25, labels, chunks) -> None:
    deeper = [r for r in deep.values() if r.answerable and r.rank and r.rank > 1 and len(r.relevant) == 1]
    assert deeper, "bm25 ranks every answer first; no question to cut"
    case = deeper[0]
    label = by_id(labels, case.id)
    k = case.rank - 1
    result = evaluate_one(bm25, label, chunks, chunks, Scope(), k)
    assert pairs(result.findings)[0] == ("retrieval", "missed_evidence")
    detail = result.findings[0].detail
    assert detail.startswith(f"answer not in the top {k}; rank 1 is {result.ranking[0]}")
    assert f"found at rank {case.rank}" in detail


def test_retrieval_irrelevant_match_when_the_answer_is_outranked(deep) -> None:
    outranked = [r for r in deep.values() if r.answerable and r.rank and r.rank > 1 and r.grades[0] == 0]
    assert outranked
    for r in outranked:
        found = [f for f in r.findings if (f.stage, f.label) == ("retrieval", "irrelevant_match")]
        assert found and found[0].detail.startswith(f"answer outranked: rank {r.rank}")


def test_context_missed_evidence_when_the_floor_drops_the_answer(deep, bm25, labels, chunks) -> None:
    case = next(r for r in deep.values() if r.answerable and r.rank == 1)
    label = by_id(labels, case.id)
    floor = case.top_score + 0.01
    result = evaluate_one(bm25, label, chunks, chunks, Scope(), 3, floor=floor)
    assert pairs(result.findings)[0] == ("context", "missed_evidence")
    assert result.findings[0].detail.startswith("retrieved at rank 1 but dropped before the prompt (floor")
    assert result.context == []


def test_context_missed_evidence_reads_the_budget_reason_from_real_context_assembly(deep, bm25, labels, chunks):
    case = next(r for r in deep.values() if r.answerable and r.rank == 1)
    label = by_id(labels, case.id)
    found = bm25.search(label.question, 3, Scope())
    assembled = assemble(found, budget_tokens=30)  # room for the delimiters only
    trace = Trace(label.question, retrieved=found, context=assembled.candidates, dropped=assembled.dropped)
    findings = diagnose(label, trace, chunks, k=3)
    assert pairs(findings)[0] == ("context", "missed_evidence")
    assert "(budget" in findings[0].detail


def test_context_duplicate_chunks_from_a_reimport_that_kept_two_copies(deep, labels, chunks) -> None:
    case = next(r for r in deep.values() if r.answerable and r.rank == 1 and r.grades[0] == 2)
    label = by_id(labels, case.id)
    original = next(c for c in chunks if c.id == case.ranking[0])
    twin = replace(original, id=original.id + "-copy")
    doubled = [*chunks, twin]
    result = evaluate_one(make_searcher("bm25", doubled), label, doubled, doubled, Scope(), 3)
    assert {original.id, twin.id} <= set(result.context)
    assert pairs(result.findings) == [("context", "duplicate_chunks")]
    assert "share 100% of their words" in result.findings[0].detail


def test_retrieval_stale_document_without_the_filter_and_gone_with_it(bm25, labels, chunks) -> None:
    label = by_id(labels, RETURNS)
    assert "stale" in label.tags
    open_ = evaluate(bm25, [x for x in labels if "stale" in x.tags], chunks, Scope.everything(), 5)
    shut = evaluate(bm25, [x for x in labels if "stale" in x.tags], chunks, Scope(), 5)
    stale = [f for r in open_ for f in r.findings if f.label == "stale_document"]
    assert stale and all(f.stage == "retrieval" for f in stale)
    assert any("superseded" in f.detail for f in stale)
    assert label_counts(open_)[("retrieval", "stale_document")] > 0
    assert label_counts(shut)[("retrieval", "stale_document")] == 0


def test_expired_document_is_stale_on_the_scope_date(labels, chunks) -> None:
    label = by_id(labels, RETURNS)
    current = holder(label, chunks)
    assert current.metadata.status == "current"
    expired = replace(current, metadata=replace(current.metadata, valid_to=date(2020, 1, 1), valid_from=None))
    hit = ranked([(expired, 1.0)], "bm25")
    trace = Trace(label.question, retrieved=hit, context=hit)
    found = diagnose(label, trace, [expired], day=date(2026, 6, 1))
    assert pairs(found) == [("retrieval", "stale_document")]
    assert "not valid on 2026-06-01" in found[0].detail


def test_context_irrelevant_match_for_an_unanswerable_question_and_silence_on_abstain(bm25, labels, chunks) -> None:
    label = next(x for x in labels if not x.answerable)
    result = evaluate_one(bm25, label, chunks, chunks, Scope(), 3)
    assert result.context, "bm25 found nothing for the unanswerable question"
    assert pairs(result.findings)[0] == ("context", "irrelevant_match")
    assert result.findings[0].detail == f"{len(result.context)} chunk(s) shown; no document answers the question"
    found = bm25.search(label.question, 3, Scope())
    abstained = Trace(label.question, retrieved=found, context=found, abstained=True, abstain_reason="no support")
    assert diagnose(label, abstained, chunks) == []
    answered = Trace(label.question, retrieved=found, context=[], answer="Yes, we do.", cited=(found[0].chunk.id,))
    assert ("generation", "unsupported_answer") in pairs(diagnose(label, answered, chunks))


def test_generation_unsupported_answer_for_a_wrong_number(labels, chunks) -> None:
    label = by_id(labels, RETURNS)
    current = holder(label, chunks)
    hit = ranked([(current, 0.55)], "dense")
    trace = Trace(label.question, retrieved=hit, context=hit, answer="Return within 60 days.", cited=(current.id,))
    found = diagnose(label, trace, chunks)
    assert pairs(found) == [("generation", "unsupported_answer")]
    assert "60" in found[0].detail
    right = Trace(
        label.question,
        retrieved=hit,
        context=hit,
        answer=label.gold[0].evidence + f" [{current.id}]",
        cited=(current.id,),
    )
    assert diagnose(label, right, chunks) == []


def test_generation_unsupported_answer_when_few_key_words_are_in_the_cited_text(labels, chunks) -> None:
    label = by_id(labels, RETURNS)
    current = holder(label, chunks)
    hit = ranked([(current, 0.55)], "dense")
    answer = "Yes: bicycles purchased online qualify for exchange vouchers redeemable instantly."
    trace = Trace(label.question, retrieved=hit, context=hit, answer=answer, cited=(current.id,))
    found = diagnose(label, trace, chunks)
    assert pairs(found) == [("generation", "unsupported_answer")]
    assert "key words" in found[0].detail


def test_generation_missed_evidence_when_abstaining_with_the_answer_shown(labels, chunks) -> None:
    label = by_id(labels, RETURNS)
    hit = ranked([(holder(label, chunks), 0.9)], "bm25")
    trace = Trace(label.question, retrieved=hit, context=hit, abstained=True)
    assert pairs(diagnose(label, trace, chunks)) == [("generation", "missed_evidence")]


def test_citation_unsupported_answer_for_a_chunk_that_was_not_shown(labels, chunks) -> None:
    label = by_id(labels, RETURNS)
    current = holder(label, chunks)
    other = next(c for c in chunks if c.doc_id != current.doc_id)
    hit = ranked([(current, 0.55)], "dense")
    answer = label.gold[0].evidence
    shown_elsewhere = Trace(label.question, retrieved=hit, context=hit, answer=answer, cited=(other.id,))
    found = diagnose(label, shown_elsewhere, chunks)
    assert pairs(found) == [("citation", "unsupported_answer")]
    assert f"cites {other.id}, which was not shown" in found[0].detail and "exists in the index" in found[0].detail
    nowhere = Trace(label.question, retrieved=hit, context=hit, answer=answer, cited=("kc-nothing:c9",))
    assert "exists nowhere in the index" in diagnose(label, nowhere, chunks)[0].detail
    uncited = Trace(label.question, retrieved=hit, context=hit, answer=answer)
    assert [f.detail for f in diagnose(label, uncited, chunks)] == ["the answer cites no chunk"]


def test_findings_come_sorted_by_stage_so_the_first_is_the_root_cause(labels, chunks) -> None:
    label = by_id(labels, RETURNS)
    current = holder(label, chunks)
    twin = replace(current, id=current.id + "-copy")
    both = ranked([(current, 0.9), (twin, 0.9)], "bm25")
    trace = Trace(label.question, retrieved=both, context=both, answer="Within 60 days.", cited=("nowhere:c1",))
    found = pairs(diagnose(label, trace, [*chunks, twin]))
    assert found == [
        ("context", "duplicate_chunks"),
        ("generation", "unsupported_answer"),
        ("citation", "unsupported_answer"),
    ]
    with pytest.raises(ValueError, match="k"):
        diagnose(label, trace, chunks, k=0)


def test_label_counts_counts_each_pair_once_per_question(deep) -> None:
    counts = label_counts(deep.values())
    assert sum(counts.values()) == sum(len({(f.stage, f.label) for f in r.findings}) for r in deep.values())
    assert counts == label_counts([r.findings for r in deep.values()])
