"""Evaluation keeps only the chunks that hold a gold phrase, and scores and diagnoses exactly as with all of them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from evidencedesk import Desk
from evidencedesk.config import parse_settings
from evidencedesk.documents import Chunk
from evidencedesk.evaluation.evidence import gather_evidence
from evidencedesk.evaluation.labels import Label
from evidencedesk.evaluation.run import counts_rows
from evidencedesk.evaluation.runner import evaluate
from evidencedesk.retrieval.scope import Scope
from tests.support.paths import KESTREL_DOCS, KESTREL_LABELS

BM25 = {"retrieval": {"legs": [{"method": "bm25"}]}}


def test_the_evidence_holds_every_gold_chunk_and_little_else(chunks: list[Chunk], labels: list[Label]) -> None:
    batches = [chunks[i : i + 7] for i in range(0, len(chunks), 7)]
    found = gather_evidence(batches, labels)
    assert found.read == found.in_scope == len(chunks)
    assert 0 < len(found.chunks) < len(chunks)
    for label in labels:
        assert label.qrels(found.chunks) == label.qrels(chunks)
    scope = Scope()
    inside = gather_evidence(batches, labels, scope)
    assert inside.in_scope == sum(scope.allows_chunk(c) for c in chunks)
    assert [c.id for c in inside.chunks] == [c.id for c in found.chunks if scope.allows_chunk(c)]


def _comparable(results: list[Any]) -> list[Any]:
    return [(r.id, r.rank, r.ranking, r.relevant, r.metrics, [f.to_dict() for f in r.findings]) for r in results]


def test_desk_evaluate_never_lists_the_whole_store_and_matches_evaluating_over_every_chunk(
    tmp_path: Path, labels: list[Label], monkeypatch: pytest.MonkeyPatch
) -> None:
    some = labels[::3]  # answered too: each answer runs the reranker and the reader
    with Desk(tmp_path / "store", parse_settings(BM25)) as desk:
        desk.ingest(KESTREL_DOCS)
        every = desk.store.chunks()
        searcher = desk.searcher()  # built (from the stored chunks) before listing them is forbidden
        scope = desk.scope()
        want = evaluate(searcher, labels, every, scope, 5, None)
        want_unfiltered = evaluate(searcher, labels, every, Scope.everything(), 5, None)
        asked = [desk.ask(x.question, save=False) for x in some]

        def refuse(*args: Any, **kwargs: Any) -> list[Chunk]:
            raise AssertionError("evaluation listed every chunk of the store")

        monkeypatch.setattr(desk.store, "chunks", refuse)
        run = desk.evaluate(KESTREL_LABELS, save=False)
        diagnoses = desk.diagnose(some)
        answered = desk.evaluate(some, answers="extractive", save=False)
        hidden = desk.evaluate(some, answers="extractive", save=False, hide_outside_scope=True)
    got = {q.id: q for q in run.questions}
    assert [q.id for q in want] == list(got)
    for r in want:
        q = got[r.id]
        assert (q.rank, q.ranking, q.relevant, q.metrics) == (r.rank, r.ranking, r.relevant, r.metrics)
        assert q.findings == r.findings
    assert run.label_counts_unfiltered == counts_rows(want_unfiltered)
    # diagnose reads the traces eval --answers scores: the same findings, from the gold chunks alone
    assert answered.answers is not None and hidden.answers is not None
    records = answered.answers.records
    assert {d.question_id: d.findings for d in diagnoses} == {r.id: r.findings for r in records if r.findings}
    by_id = {c.id: c for c in every}
    lost = {r.id for r in want if r.findings and r.findings[0].stage == "ingestion"}
    assert {d.question_id for d in diagnoses if d.root.stage == "ingestion"} == lost & {x.id for x in some}
    for x, out, record, inside in zip(some, asked, records, hidden.answers.records, strict=True):
        expected = (out.answer, out.abstained, list(out.citations), list(out.context))
        assert (record.answer, record.abstained, list(record.cited), list(record.context)) == expected
        assert (inside.answer, inside.abstained, list(inside.cited), list(inside.context)) == expected
        # what the generator was shown: a chunk trimmed to its answering units counts by its excerpt
        shown = {c.chunk_id: replace(by_id[c.chunk_id], text=c.text) for c in out.context_candidates}
        gold = x.answerable and any(x.grade_of(shown[cid]) == 2 for cid in out.context)
        assert record.gold_in_context == inside.gold_in_context == gold


def test_an_empty_store_is_still_a_clear_error(tmp_path: Path) -> None:
    with Desk(tmp_path / "empty", parse_settings(BM25)) as desk, pytest.raises(Exception, match="holds no chunks"):
        desk.evaluate(KESTREL_LABELS, save=False)
