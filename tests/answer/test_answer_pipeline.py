"""ask(): every stage recorded in the trace, with timings, findings and the validated answer."""

from __future__ import annotations

import json
from functools import cache

import pytest

from evidencedesk.answer.generators.base import Generation
from evidencedesk.answer.generators.extractive import ExtractiveGenerator
from evidencedesk.answer.pipeline import ask, ask_result
from evidencedesk.evaluation.labels import Gold, Label
from evidencedesk.evaluation.taxonomy import diagnose
from evidencedesk.retrieval.candidates import Candidate, Searcher
from evidencedesk.retrieval.factory import make_searcher
from evidencedesk.retrieval.rerank import OverlapReranker
from evidencedesk.retrieval.rewrite import Rewriter
from evidencedesk.retrieval.scope import Scope
from tests.support.answer import holding, kestrel_by_id, kestrel_chunks

STAGES = ["rewrite", "retrieval", "rerank", "context", "generation", "validation"]
WINDOW = "You can return most items within 30 days of the delivery date."


@cache
def bm25() -> Searcher:
    return make_searcher("bm25", list(kestrel_chunks()))


class Scripted:
    """A generator that always gives the same answer, whatever it is shown (a broken model on purpose)."""

    name = "scripted"

    def __init__(self, answer: str) -> None:
        self.answer = answer

    def generate(self, question: str, context: list[Candidate], prompt: str) -> Generation:
        return Generation(self.answer, raw=self.answer)


def test_trace_holds_every_stage_and_its_timing() -> None:
    checked, trace = ask("How many days do I have to return an item?", bm25(), kestrel_by_id(),
                         ExtractiveGenerator(), Scope(), k=4, candidates=10, reranker=OverlapReranker())  # fmt: skip
    assert list(trace.timings) == STAGES and all(v >= 0 for v in trace.timings.values())
    assert trace.method == "bm25" and trace.rewritten == ["How many days do I have to return an item?"]
    assert len(trace.retrieved) == 10 and len(trace.reranked) == 4
    assert all(c.source == "overlap" for c in trace.reranked)
    assert [c.chunk.id for c in trace.context] == [c.chunk.id for c in trace.reranked]
    assert "<<<CONTEXT" in trace.prompt and "Question: How many days" in trace.prompt
    # a fact question: the fact first, then the sentence that states it
    assert trace.context_tokens > 0 and trace.raw_answer.splitlines()[1].startswith(WINDOW)
    assert trace.raw_answer.startswith("30 days [") and trace.generation["scorer"] == "minilm"
    assert trace.answer == checked.answer and trace.cited == checked.cited
    assert all(c.chunk.metadata.status == "current" for c in trace.retrieved)


def test_ask_result_is_typed_and_its_dict_is_json_with_the_required_keys() -> None:
    checked, trace = ask("How many days do I have to return an item?", bm25(), kestrel_by_id(), ExtractiveGenerator())
    result = ask_result(checked, trace, kestrel_by_id())
    window = holding(WINDOW, "kc-returns-v3")
    assert result.citations == (window.id,)
    assert result.sources[window.id].location == window.location.label
    assert result.validation.citation_status == {window.id: "shown"}
    out = json.loads(json.dumps(result.to_dict()))
    for key in ("answer", "abstained", "citations", "context", "findings", "trace_id", "timings", "validation"):
        assert key in out
    assert out["citations"] == [window.id] and out["sources"][window.id]["doc_id"] == window.doc_id


def test_floor_and_dedup_reach_the_trace() -> None:
    _, trace = ask("returns refunds policy", bm25(), kestrel_by_id(), ExtractiveGenerator(), floor=1e9)
    assert trace.context == [] and {d.reason for d in trace.dropped} == {"floor"}
    assert len(trace.dropped) == len(trace.reranked)


def test_a_wrong_answer_is_caught_and_diagnosed_with_the_label() -> None:
    label = Label("rc01", "How many days do I have to return an item?", (), True, (Gold(WINDOW, 2),))
    window = holding(WINDOW, "kc-returns-v3")
    broken = Scripted(f"Return within 60 days. [{window.id}]")
    chunks = list(kestrel_by_id().values())
    checked, trace = ask(label.question, bm25(), kestrel_by_id(), broken, Scope(),
                         diagnose=lambda t: diagnose(label, t, chunks, 5))  # fmt: skip
    assert checked.abstained and trace.abstained
    assert ("generation", "unsupported_answer") in [(f.stage, f.label) for f in trace.findings]
    assert trace.raw_answer == f"Return within 60 days. [{window.id}]"
    stages = [f.stage for f in trace.findings]
    assert stages == sorted(stages, key=["ingestion", "retrieval", "context", "generation", "citation"].index)


def test_multi_query_rewrite_is_fused_by_rrf() -> None:
    rewrite = Rewriter(paraphrases=["return window days"])
    _, trace = ask("How many days do I have to return an item?", bm25(), kestrel_by_id(), ExtractiveGenerator(),
                   rewrite=rewrite)  # fmt: skip
    assert trace.rewritten == ["How many days do I have to return an item?", "return window days"]
    assert trace.retrieved[0].source.startswith("rrf(")
    assert {p.source for c in trace.retrieved for p in c.parts} == {"bm25@q1", "bm25@q2"}
    assert trace.rewrite_steps[0]["step"] == "multi_query"


def test_arguments_are_validated() -> None:
    with pytest.raises(ValueError, match="question"):
        ask(" ", bm25(), kestrel_by_id(), ExtractiveGenerator())
    with pytest.raises(ValueError, match="candidates"):
        ask("x", bm25(), kestrel_by_id(), ExtractiveGenerator(), k=5, candidates=3)


def test_later_stages_read_the_normalised_question() -> None:
    question = "How many days do I have to rtn an item?"
    rewrite = Rewriter(normalise=True, abbreviations={"rtn": "return"})
    checked, trace = ask(question, bm25(), kestrel_by_id(), ExtractiveGenerator(), rewrite=rewrite)
    assert trace.query == question and trace.rewritten == ["How many days do I have to return an item?"]
    assert "Question: How many days do I have to return an item?" in trace.prompt
    assert checked.answer.startswith("30 days [") and checked.answer.splitlines()[1].startswith(WINDOW)
    _, unexpanded = ask(question, bm25(), kestrel_by_id(), ExtractiveGenerator())
    # the generator read the expanded question: "return" is found in the context, "rtn" is not
    assert trace.generation["features"]["context_words"] > unexpanded.generation["features"]["context_words"]
