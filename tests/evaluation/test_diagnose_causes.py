"""A diagnosis names what really lost an answer that the first stage found, read off ``ask``'s own trace:
the token budget, a duplicate, the reranker (its min_score, or its order), or collapsing (the answer's
chunk folded into another of its page, then dropped as a neighbour)."""

from __future__ import annotations

from evidencedesk.answer.context import count_tokens, render
from evidencedesk.answer.generators import get_generator
from evidencedesk.answer.pipeline import ask
from evidencedesk.documents import Chunk, Location
from evidencedesk.evaluation.labels import Gold, Label
from evidencedesk.evaluation.taxonomy import CAUSES, diagnose
from evidencedesk.retrieval.candidates import Candidate
from evidencedesk.retrieval.collapse import Collapsed
from evidencedesk.retrieval.factory import make_searcher
from evidencedesk.retrieval.rerank.base import reordered


def chunk(n: int, text: str, page: int | None = None, kind: str = "text") -> Chunk:
    pages = (page,) if page is not None else ()
    return Chunk(f"filing:c{n}", "filing", text, kind=kind, location=Location(("Results",), n, n, pages))


QUESTION = "What was the adjusted EBITDA in fiscal 2023?"
ANSWER = chunk(1, "Adjusted EBITDA in fiscal 2023 was $2,018 million, up from $1,990 million in fiscal 2022.")
OTHERS = [chunk(10 + n, f"Fiscal 2023 segment {n} results were reported in the annual report.") for n in range(6)]
LABEL = Label("ebitda", QUESTION, ("figures",), True, (Gold("$2,018 million", 2),))


class Reversed:
    """A reranker that puts the first stage's order upside down."""

    name = "reversed"

    def rerank(self, query: str, candidates: list[Candidate]) -> list[Candidate]:
        return reordered(candidates, [float(c.rank) for c in candidates], self.name)


def lost(findings: list, stage: str):  # type: ignore[no-untyped-def]
    return next(f for f in findings if f.stage == stage and f.label == "missed_evidence")


def test_an_answer_dropped_for_the_budget_is_blamed_on_the_budget() -> None:
    chunks = [ANSWER, *OTHERS]
    searcher = make_searcher("bm25", chunks)
    first = searcher.search(QUESTION, 3)
    assert first[0].chunk.id == ANSWER.id
    _, trace = ask(QUESTION, searcher, {c.id: c for c in chunks}, get_generator("extractive"), k=3,
                   budget_tokens=count_tokens(render([])) + 5)  # fmt: skip
    finding = lost(diagnose(LABEL, trace, chunks, k=3), "context")
    assert finding.cause == "budget" and "retrieved at rank 1 but dropped before the prompt (budget" in finding.detail


def test_an_answer_the_reranker_moves_below_k_is_blamed_on_the_reranker() -> None:
    chunks = [ANSWER, *OTHERS]
    searcher = make_searcher("bm25", chunks)
    _, trace = ask(QUESTION, searcher, {c.id: c for c in chunks}, get_generator("extractive"), k=2, candidates=6,
                   reranker=Reversed())  # fmt: skip
    assert ANSWER.id == trace.retrieved[0].chunk.id and ANSWER.id not in [c.chunk.id for c in trace.reranked]
    finding = lost(diagnose(LABEL, trace, chunks, k=2), "retrieval")
    assert finding.cause == "rerank"
    assert "first-stage rank 1, then the reranker moved it below the top 2" in finding.detail


def test_an_answer_below_the_rerankers_min_score_is_blamed_on_its_min_score() -> None:
    from evidencedesk.retrieval.rerank import get_reranker

    chunks = [ANSWER, *OTHERS]
    searcher = make_searcher("bm25", chunks)
    reranker = get_reranker("cross-encoder", min_score=100.0)  # no passage scores that high: every one is dropped
    _, trace = ask(QUESTION, searcher, {c.id: c for c in chunks}, get_generator("extractive"), k=2, candidates=6,
                   reranker=reranker)  # fmt: skip
    finding = lost(diagnose(LABEL, trace, chunks, k=2), "retrieval")
    assert finding.cause == "not_relevant"
    assert "the reranker scored it below its min_score 100: not about the question" in finding.detail


def test_an_answer_folded_into_its_page_and_dropped_as_a_neighbour_is_blamed_on_collapsing() -> None:
    prose = chunk(2, "Adjusted EBITDA in fiscal 2023 is defined in the notes; adjusted EBITDA in fiscal 2023 grew.", 40)
    table = chunk(3, "| Adjusted EBITDA | $2,018 million |", 40, kind="table")
    chunks = [prose, table, *OTHERS]
    assert [c.chunk.id for c in make_searcher("bm25", chunks).search(QUESTION, 2)] == [prose.id, table.id]
    searcher = Collapsed(make_searcher("bm25", chunks), "page")
    listed = searcher.search(QUESTION, 2)
    assert listed[0].chunk.id == prose.id and [f.chunk.id for f in listed[0].folded] == [table.id]
    budget = count_tokens(render([Candidate(prose, 1.0, 1, "bm25")])) + 2  # the page's listed chunk fits, no more
    _, trace = ask(QUESTION, searcher, {c.id: c for c in chunks}, get_generator("extractive"), k=2,
                   budget_tokens=budget)  # fmt: skip
    assert [c.chunk.id for c in trace.context] == [prose.id]
    finding = lost(diagnose(LABEL, trace, chunks, k=2), "context")
    assert finding.cause == "collapse"
    assert f"collapsed away: {table.id} holds it but shares page 40 with rank 1 ({prose.id})" in finding.detail
    assert "as a same-page neighbour it was dropped before the prompt (budget" in finding.detail


def test_an_answer_the_first_stage_never_found_is_blamed_on_it() -> None:
    chunks = [ANSWER, *OTHERS]
    label = Label("other", "segment results annual report", (), True, (Gold("$2,018 million", 2),))
    searcher = make_searcher("bm25", chunks)
    _, trace = ask(label.question, searcher, {c.id: c for c in chunks}, get_generator("extractive"), k=2)
    finding = lost(diagnose(label, trace, chunks, k=2), "retrieval")
    assert finding.cause == "first_stage" and finding.cause in CAUSES


def test_an_answer_cut_from_a_trimmed_chunk_is_said_to_be_shown_in_part() -> None:
    rows = "\n".join(f"| Cost line {n} | {100 + n} |" for n in range(40))
    text = f"| Item | Fiscal 2023 |\n|---|---|\n| Revenue fiscal 2023 | 9,999 |\n{rows}\n| Warranty reserve | 777 |"
    table = chunk(2, text, kind="table")
    label = Label("reserve", "What was revenue in fiscal 2023?", ("figures",), True, (Gold("Warranty reserve 777", 2),))
    chunks = [table, *OTHERS]
    searcher = make_searcher("bm25", chunks)
    _, trace = ask(label.question, searcher, {c.id: c for c in chunks}, get_generator("extractive"), k=3,
                   budget_tokens=count_tokens(render([])) + 120)  # fmt: skip
    shown = next(c.chunk for c in trace.context if c.chunk.id == table.id)
    assert "Revenue fiscal 2023" in shown.text and "Warranty reserve" not in shown.text  # shown in part
    finding = lost(diagnose(label, trace, chunks, k=3), "context")
    assert finding.cause == "trimmed" and finding.cause in CAUSES
    assert "shown in part, without the units that hold it" in finding.detail
